"""The daily flush (the third source document's "conversation -> daily memory"): a model
summarizes a conversation into key events, appended to the daily memory memory/YYYY-MM-DD.md
as a "### HH:MM — Conversation summary" block. Triggers: the chat trimmed its context, the
scheduler's 23:55 run, or an overflow; `memdream flush` does it by hand.

The conversation itself is always kept verbatim in the raw layer first, so nothing is lost
when there is no model (the flush is then skipped with a status line) or the model fails.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any

from memdream.dream import ledger
from memdream.dream.ask import ask, list_schema
from memdream.dream.plan import Plan
from memdream.dream.validate import Invalid, check_text, operations
from memdream.llm.client import LLMError
from memdream.store.files import decode, read_file

if TYPE_CHECKING:
    from memdream.core import Core

MAX_TRANSCRIPTS = 20  # per flush
MAX_CHARS = 12_000  # of one conversation shown to the model (its end: the freshest part)
MAX_EVENTS = 8  # bullet points per conversation
EVENT_CHARS = 300

SYSTEM = """Summarize this conversation for the person's daily memory: the key events, decisions, preferences, facts and open tasks, as at most 8 short bullet points.
Use only what the conversation says; never guess or add anything. Write in the language of the conversation. Skip small talk.
Never include passwords, keys or other credentials.
Answer JSON only: {"events": ["...", "..."]}, or {"events": []} when nothing is worth keeping."""
SCHEMA = list_schema("events", {"type": "string"})
MAX_TOKENS = 800  # of the answer: MAX_EVENTS short lines


@dataclass
class FlushReport:
    day: str
    status: str  # flushed | nothing kept | nothing to flush | skipped
    message: str
    flushed: list[str] = field(default_factory=list)  # transcripts summarized
    empty: list[str] = field(default_factory=list)  # transcripts the model kept nothing of: not marked flushed
    events: int = 0
    rejected: list[dict[str, str]] = field(default_factory=list)
    log: str = ""  # the daily memory file written
    tokens: tuple[int, int] = (0, 0)
    seconds: float = 0.0  # time spent on the model, every attempt counted

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "status": self.status,
            "message": self.message,
            "flushed": self.flushed,
            "empty": self.empty,
            "events": self.events,
            "rejected": self.rejected,
            "log": self.log,
            "tokens": {"prompt": self.tokens[0], "completion": self.tokens[1]},
            "seconds": round(self.seconds, 1),
        }


def unflushed(mem: "Core", day: date) -> list[str]:
    folder = mem.vault.sessions_dir(mem.scope) / day.isoformat()
    if not folder.is_dir() or not mem.vault.is_inside(folder):
        return []
    done = ledger.read_set(mem, "flushed")
    return [
        rel
        for f in sorted(os.listdir(folder))
        if f.endswith(".md") and not f.startswith(".")
        for rel in [mem.vault.relpath(folder / f)]
        if rel not in done and mem.vault.is_inside(folder / f)
    ]


def flush(mem: "Core", day: date, transcripts: list[str] | None = None) -> FlushReport:
    """Summarize the day's conversations not yet flushed (or `transcripts`) into the daily memory."""
    todo = (transcripts if transcripts is not None else unflushed(mem, day))[:MAX_TRANSCRIPTS]
    report = FlushReport(day.isoformat(), "nothing to flush", f"no conversation of {day.isoformat()} is waiting to be summarized")
    if not todo:
        return report
    llm = mem.llm
    if llm is None:
        report.status = "skipped"
        report.message = (
            f"no model is configured, so {len(todo)} conversation(s) were not summarized; they stay in the raw layer "
            "(set [llm] base_url and model in memdream.toml)"
        )
        return report
    plan = Plan("flush")
    lines: list[str] = []
    done: list[str] = []
    for rel in todo:
        path = mem.vault.root / rel
        data, state = read_file(path)
        if not state.exists:
            continue
        text = decode(data, path)[-MAX_CHARS:]
        try:
            reply = ask(llm, SYSTEM, {"conversation": text}, plan, max_tokens=MAX_TOKENS, schema=SCHEMA)
            events = operations(reply, "events")
        except (LLMError, Invalid) as exc:
            report.rejected.append({"what": os.path.basename(rel), "why": getattr(exc, "message", str(exc))})
            continue
        kept = []
        for k, ev in enumerate(events[:MAX_EVENTS], 1):
            try:
                kept.append("- " + check_text(ev, [text], EVENT_CHARS))
            except Invalid as exc:
                report.rejected.append({"what": f"event {k} of {os.path.basename(rel)}", "why": str(exc)})
        if kept:
            done.append(rel)
            lines += kept
        else:
            report.empty.append(rel)  # recorded, not marked flushed: a better model (or a second try) may find more
    report.tokens, report.seconds = plan.tokens, plan.seconds
    now = mem.clock.now()
    if not done:
        if report.empty:
            ledger.append(mem, {"flush": day.isoformat(), "at": now.isoformat(), "empty": report.empty, "events": 0})
            report.status = "nothing kept"
            report.message = (
                f"the model kept no event of {len(report.empty)} conversation(s)"
                + (f" ({len(report.rejected)} proposal(s) rejected)" if report.rejected else " (it answered an empty list)")
                + "; they stay in the raw layer, not marked flushed, and 'memdream flush' tries them again"
            )
        else:
            report.status = "skipped"
            report.message = "the model gave no usable summary; the conversations stay in the raw layer and will be tried again"
        return report
    when = now if now.date() == day else datetime.combine(day, time(23, 55), tzinfo=now.tzinfo)
    if lines:
        names = ", ".join(os.path.splitext(os.path.basename(r))[0] for r in done)
        path, _ = mem.knowledge.log("Conversation summary", "\n".join(lines) + f"\n\n_from {names}_", when=when)
        report.log = mem.vault.relpath(path)
    ledger.append(mem, {"flush": day.isoformat(), "at": now.isoformat(), "flushed": done, "events": len(lines), **({"empty": report.empty} if report.empty else {})})
    report.status, report.flushed, report.events = "flushed", done, len(lines)
    report.message = f"{len(lines)} key events from {len(done)} conversation(s) went into the daily memory" + (
        f"; the model kept nothing of {len(report.empty)} other(s), which can be flushed again" if report.empty else ""
    )
    return report


def flush_chat(core: "Core", messages: list[dict] | None, day: date | None) -> FlushReport:
    """With `messages` (a chat's trimmed part), keep them in the raw layer, then summarize
    them into today's daily memory; without, summarize the stored conversations of `day`
    (today by default) not yet flushed."""
    from memdream.engine.flush import store_trimmed

    when = day or core.clock.now().date()
    if messages is None:
        return flush(core, when)
    stored = store_trimmed(core, messages)
    return flush(core, core.clock.now().date(), [stored]) if stored else flush(core, when, [])
