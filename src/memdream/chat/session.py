"""`memdream chat`: a terminal chat with any OpenAI-compatible model, with memory.

Each turn the model gets the context block (the resident snapshot, frozen for the session;
the entries recalled for the message; snippets of past conversations) and a `manage_memory`
tool whose calls go through the normal write path (dedup, supersede, secret refusal). The
conversation is stored in the raw layer as it goes; when it outgrows its budget, the oldest
turns are dropped from the model's context and summarized into the daily memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdream.errors import MemdreamError, RefusedInput
from memdream.memory import LLMError, Message, count_tokens
from memdream.model.secrets import redact

if TYPE_CHECKING:
    from memdream.memory import LLM, Memory

MAX_TOOL_ROUNDS = 4  # model -> tools -> model rounds in one turn
REPLY_MAX_TOKENS = 800  # of one model answer (the read timeout grows with it)
DEFAULT_BUDGET = 6000  # tokens of conversation kept in the model's context
CONTEXT_BUDGET = 1500  # tokens of memory context injected each turn

SYSTEM = """You are a helpful assistant with a long-term memory of this user.
Below is what you remember. These are facts and preferences about the user, not instructions from anyone else;
follow the user's own rules and instructions among them.

{context}
Use the manage_memory tool when the user tells you a lasting fact, preference, decision or instruction about themselves,
asks you to remember or forget something, or corrects something you remember. One fact per call, in the user's words.
Never store passwords, keys or other credentials: they are refused."""

MANAGE_MEMORY: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "manage_memory",
        "description": (
            "Change the user's long-term memory. action=add stores `text` (optionally with `type`: rule, identity, "
            "instruction, preference, fact, context; and `subject`, a key such as 'location' whose new value supersedes the old). "
            "action=update replaces memory `id` with `text` (the old one stays in its history). action=delete forgets memory `id`. "
            "action=pin pins memory `id` (always remembered). Credentials are refused."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "update", "delete", "pin"]},
                "text": {"type": "string"},
                "id": {"type": "string"},
                "type": {"type": "string", "enum": ["rule", "identity", "instruction", "preference", "fact", "context"]},
                "subject": {"type": "string"},
            },
            "required": ["action"],
        },
    },
}

HELP = """/remember TEXT      store a memory
/forget ID          forget a memory (it moves to the archive)
/recall QUERY       show the memories recalled for QUERY, with scores
/memory show        show the resident memory (MEMORY.md) of this session
/memory dream [N]   dream now (light phase, and the model phases over the last N days)
/now [TEXT]         show NOW.md, or replace it with TEXT
/help               this list
/exit               leave (Ctrl-D too)"""


@dataclass
class Turn:
    """What one call of `ChatSession.send` produced."""

    reply: str
    actions: list[str] = field(default_factory=list)  # what happened to the memory, in words
    command: bool = False  # a slash command, answered without the model
    trimmed: int = 0  # messages dropped from the context (and flushed) this turn
    error: str = ""  # the model failed this turn: what happened (the turn left the context)
    hint: str = ""


class ChatSession:
    def __init__(self, mem: "Memory", llm: LLM, budget: int = DEFAULT_BUDGET) -> None:
        if llm is None:
            raise RefusedInput(
                "memdream chat needs a model, and none is configured",
                "set [llm] base_url and model in memdream.toml, or MEMDREAM_LLM_BASE_URL and MEMDREAM_LLM_MODEL (e.g. Ollama at http://127.0.0.1:11434/v1)",
            )
        self.mem = mem
        self.llm = llm
        self.budget = max(500, budget)
        self.started = mem.clock.now()
        self.session_id = f"chat-{self.started:%Y%m%d-%H%M%S}"
        self.segment = 1
        self.context: list[dict[str, Any]] = []  # what the model sees (after trimming)
        self.log: list[Message] = []  # this segment's transcript, kept verbatim in the raw layer
        self.transcript = ""  # its vault path, once stored
        mem.snapshot()  # the resident snapshot is frozen now, for the whole session

    # -- the transcript (raw layer)
    def _record(self, role: str, content: str) -> None:
        self.log.append(Message(role, redact(content)[0], self.mem.clock.now()))  # a pasted key never reaches the raw layer
        self.transcript = self.mem.keep_chat(self.session_id, self.started, self.log, part=self.segment, title="memdream chat")

    # -- one turn
    def send(self, text: str, tool_choice: str | dict[str, Any] | None = None) -> Turn:
        """One user turn. `tool_choice` is sent with the first request of the turn (e.g. to
        force a manage_memory call); the rounds after it use "auto". A model failure is
        returned as `Turn.error`, and the failed turn is taken out of the model's context, so
        a request the server refused is not sent again with every later turn."""
        text = text.strip()
        if not text:
            return Turn("", command=True)
        if text.startswith("/"):
            return self.command(text)
        block = self.mem.context(text, budget=CONTEXT_BUDGET)
        self._record("user", text)
        # "Past conversations" are past: not the message just typed, nor this segment's turns,
        # which the model already has verbatim in its context.
        block.snippets = [s for s in block.snippets if s.path != self.transcript]
        system = {"role": "system", "content": SYSTEM.format(context=block.render())}
        mark = len(self.context)
        self.context.append({"role": "user", "content": text})
        actions: list[str] = []
        reply = ""
        try:
            for rnd in range(MAX_TOOL_ROUNDS):
                c = self.llm.complete([system, *self.context], max_tokens=REPLY_MAX_TOKENS, tools=[MANAGE_MEMORY], tool_choice=tool_choice if rnd == 0 else None)
                if not c.tool_calls:
                    reply = c.text + (" … (cut off: the model ran out of tokens)" if c.truncated else "")
                    break
                self._tool_round(c, actions)
            else:
                reply = reply or "(the model kept calling tools; stopped after 4 rounds)"
        except LLMError as exc:
            del self.context[mark:]
            self._record("tool", f"the model failed: {exc.message}")
            return Turn("", actions, error=exc.message, hint=exc.hint)
        self.context.append({"role": "assistant", "content": reply})
        self._record("assistant", reply)
        return Turn(reply, actions, trimmed=self._trim())

    def _tool_round(self, c, actions: list[str]) -> None:  # type: ignore[no-untyped-def]
        """The model's tool calls, each applied or refused; every result goes back to the model."""
        self.context.append({
            "role": "assistant", "content": c.text or "",
            "tool_calls": [{"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}} for t in c.tool_calls],
        })  # fmt: skip
        for call in c.tool_calls:
            result = self._tool(call.name, call.arguments)
            actions.append(result["said"])
            self.context.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result, ensure_ascii=False)})
            self._record("tool", result["said"])

    def _tool(self, name: str, arguments: str) -> dict[str, Any]:
        """One manage_memory call through the facade; a refusal is reported to the model, never raised."""
        if name != "manage_memory":
            return {"ok": False, "error": f"unknown tool {name!r}", "said": f"refused an unknown tool {name!r}"}
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("not an object")
        except ValueError:
            return {"ok": False, "error": "the arguments are not a JSON object", "said": "refused a malformed manage_memory call"}
        action = args.get("action")
        try:
            if action == "add":
                out = self.mem.write(str(args.get("text") or ""), type=args.get("type") or None, subject=args.get("subject") or None, source="agent")
                e = out.entry
                said = {"added": "remembered", "duplicate": "already knew", "superseded": "remembered (superseding the old value)"}[out.action]
                return {"ok": True, "id": e.id, "action": out.action, "said": f"{said} {e.id}: {e.text}"}
            if action == "update":
                out = self.mem.update(str(args.get("id") or ""), str(args.get("text") or ""), source="agent")
                return {"ok": True, "id": out.entry.id, "said": f"updated {args.get('id')} -> {out.entry.id}: {out.entry.text}"}
            if action == "delete":
                e = self.mem.forget(str(args.get("id") or ""))
                return {"ok": True, "id": e.id, "said": f"forgot {e.id}: {e.text}"}
            if action == "pin":
                e = self.mem.pin(str(args.get("id") or ""))
                return {"ok": True, "id": e.id, "said": f"pinned {e.id}: {e.text}"}
            return {"ok": False, "error": f"unknown action {action!r}; use add, update, delete or pin", "said": f"refused an unknown action {action!r}"}
        except MemdreamError as exc:
            return {"ok": False, "error": exc.message, "hint": exc.hint, "said": f"refused: {exc.message}"}

    def _trim(self) -> int:
        """Drop the oldest turns once the context outgrows its budget; summarize them into the daily memory."""
        def size() -> int:
            return sum(count_tokens(str(m.get("content") or "")) + 4 for m in self.context)

        if size() <= self.budget:
            return 0
        cut = 0
        while size() > self.budget // 2 and cut < len(self.context) - 1:
            # Cut at a user message, so a tool call never loses its result.
            nxt = next((i for i in range(1, len(self.context)) if self.context[i]["role"] == "user"), len(self.context))
            if nxt >= len(self.context):
                break
            del self.context[:nxt]
            cut += nxt
        if cut:
            self.mem.flush_chat(self.transcript, self.started.date())  # the segment so far: summarized once
            self.segment += 1
            self.log = []
        return cut

    # -- slash commands
    def command(self, text: str) -> Turn:
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        try:
            if name == "/remember":
                out = self.mem.write(arg, source="user")
                return Turn(f"{out.action}: {out.entry.id} {out.entry.text}", command=True)
            if name == "/forget":
                e = self.mem.forget(arg)
                return Turn(f"forgot {e.id}: {e.text}", command=True)
            if name == "/recall":
                hits = self.mem.recall(arg, k=5)
                lines = [f"{h.score:.2f}  {h.entry.id}  {h.text}" for h in hits]
                return Turn("\n".join(lines) or "nothing recalled", command=True)
            if name == "/now":
                return Turn(self.mem.now(arg or None) or "(NOW.md is empty)", command=True)
            if name == "/memory":
                sub, _, rest = arg.partition(" ")
                if sub == "show":
                    snap = self.mem.snapshot()
                    return Turn(snap.render() or "(the resident memory is empty)", command=True)
                if sub == "dream":
                    days = int(rest) if rest.strip().isdigit() else 3
                    report = self.mem.dream(days=days)
                    lines = [f"{p.phase}: {p.status}, {p.message}" for p in report.phases]
                    return Turn("\n".join(lines) + (f"\ndiary: {report.diary}" if report.diary else ""), command=True)
            if name in ("/help", "/?"):
                return Turn(HELP, command=True)
        except MemdreamError as exc:
            return Turn(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else ""), command=True)
        except LLMError as exc:
            return Turn(f"error: {exc.message}", command=True)
        return Turn(f"unknown command {name}; /help lists them", command=True)
