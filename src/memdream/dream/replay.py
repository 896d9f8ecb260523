"""Replay (the first source document's replay phase): re-read old conversation transcripts
not yet replayed and write the lasting facts that were missed at the time, through the
normal write path (dedup, supersede, secret refusal). Bounded per run; low frequency.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

from memdream.dream import ledger
from memdream.dream.ask import ask, list_schema
from memdream.dream.plan import UNCHANGED, Plan, Rejected, Remember
from memdream.dream.validate import Invalid, check_text, operations
from memdream.llm.client import LLM
from memdream.model.entry import RULE, TYPES
from memdream.store.files import decode, read_file

if TYPE_CHECKING:
    from memdream.core import Core

MAX_TRANSCRIPTS = 3  # per run: replay is a slow background habit, not a batch job
MAX_CHARS = 8_000  # of one transcript shown to the model (the start of it)
MAX_FACTS = 10  # accepted per transcript

SYSTEM = """You read an old conversation between a person and an assistant and list the lasting facts about the person that are worth remembering:
preferences, decisions, people, places, plans, habits, lessons. Not small talk, not passing events, not what the assistant said about itself.
Each fact is one short line in the language of the conversation, using only words and facts found in the conversation. Never guess.
Never include passwords, keys or other credentials.
Answer JSON only: {"facts": [{"text": "...", "type": "preference|instruction|identity|fact"}]}, or {"facts": []}."""
SCHEMA = list_schema("facts", {
    "type": "object",
    "properties": {"text": {"type": "string"}, "type": {"type": "string", "enum": ["preference", "instruction", "identity", "fact"]}},
    "required": ["text"],
})  # fmt: skip
MAX_TOKENS = 900  # of the answer: MAX_FACTS short lines


def pending(mem: "Core") -> list[str]:
    """Transcripts (relative paths, oldest first) not yet replayed."""
    root = mem.vault.sessions_dir(mem.scope)
    done = ledger.read_set(mem, "replayed")
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            rel = mem.vault.relpath(os.path.join(dirpath, f))
            if f.endswith(".md") and rel not in done and mem.vault.is_inside(os.path.join(dirpath, f)):
                out.append(rel)
    return out


def plan_replay(mem: "Core", llm: LLM, last: str = "") -> Plan:
    plan = Plan("replay")
    todo = pending(mem)[:MAX_TRANSCRIPTS]
    if not todo:
        plan.status = "Skipped: every stored conversation has been replayed already."
        return plan
    plan.inputs = hashlib.sha256("\n".join(todo).encode()).hexdigest()[:16]
    if last and plan.inputs == last:
        plan.status = UNCHANGED
        return plan
    for rel in todo:
        path = mem.vault.root / rel
        data, state = read_file(path)
        if not state.exists:
            continue
        text = decode(data, path)[:MAX_CHARS]
        reply = ask(llm, SYSTEM, {"conversation": text}, plan, max_tokens=MAX_TOKENS, schema=SCHEMA)
        plan.replayed.append(rel)
        plan.seen += 1
        try:
            facts = operations(reply, "facts")
        except Invalid as exc:
            plan.rejected.append(Rejected(f"the answer for {rel}", str(exc)))
            continue
        for k, fact in enumerate(facts[:MAX_FACTS], 1):
            what = f"fact {k} from {os.path.basename(rel)}"
            try:
                if not isinstance(fact, dict):
                    raise Invalid("it is not a JSON object")
                new = check_text(fact.get("text"), [text], mem.config.max_text_chars)
            except Invalid as exc:
                plan.rejected.append(Rejected(what, str(exc)))
                continue
            type_ = fact.get("type") if fact.get("type") in TYPES and fact.get("type") != RULE else None
            plan.ops.append(Remember(new, f"found replaying {os.path.basename(rel)}", type=type_, source="replay"))
        if len(facts) > MAX_FACTS:
            plan.rejected.append(Rejected(f"{len(facts) - MAX_FACTS} more facts from {os.path.basename(rel)}", f"at most {MAX_FACTS} per conversation"))
    plan.notes.append(f"Replayed {len(plan.replayed)} conversation(s): " + ", ".join(os.path.basename(r) for r in plan.replayed) + ".")
    return plan
