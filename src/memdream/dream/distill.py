"""Distillation (the third source document's Deep Dream): the last N days of daily memory
(memory/YYYY-MM-DD.md) and the current MEMORY.md go to the model, which answers operations:
merge, extract (add), update on conflict, clean and drop redundant (remove). They are checked
like every model proposal and applied through the writer; MEMORY.md is never overwritten.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import TYPE_CHECKING

from memdream.dream.ask import ask, list_schema
from memdream.dream.plan import UNCHANGED, Merge, Move, Plan, Rejected, Remember
from memdream.dream.validate import Ids, Invalid, check_text, common_subject, operations
from memdream.llm.client import LLM
from memdream.model.entry import ARCHIVE, END_EXPIRED, RESIDENT, RULE, TYPES, Entry
from memdream.store.files import decode, read_file

if TYPE_CHECKING:
    from memdream.core import Core

DAILY_MAX_CHARS = 12_000  # of daily memory per run, newest days first
MAX_OPS = 30  # operations accepted per run

SYSTEM = """You maintain MEMORY.md, the long-term memory injected into every conversation with this person. It must stay short: at most {budget} entries.
You get the current entries (each with a short integer id; entries marked fixed are pinned or rules and must not be changed) and the daily memory of the last days.
Answer operations:
- {{"op": "add", "text": "...", "type": "preference|instruction|identity|fact"}}: a new lasting fact from the daily memory (a preference, decision, person, lesson). Not passing events.
- {{"op": "merge", "ids": [1, 2], "text": "..."}}: entries that say related things, as one denser entry.
- {{"op": "update", "id": 3, "text": "..."}}: the daily memory contradicts entry 3 with newer information; the text is the corrected entry.
- {{"op": "remove", "id": 4, "why": "..."}}: a temporary, empty or redundant entry (already covered by another).
Rules: use only what the texts say; never guess or add anything; keep every name, number and date of what you merge or update; write in the language of the memories; one short line per entry.
Answer JSON only: {{"operations": [...]}}, or {{"operations": []}} when MEMORY.md is fine."""
SCHEMA = list_schema("operations", {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["add", "merge", "update", "remove"]},
        "text": {"type": "string"}, "type": {"type": "string", "enum": ["preference", "instruction", "identity", "fact"]},
        "ids": {"type": "array", "items": {"type": "integer"}}, "id": {"type": "integer"}, "why": {"type": "string"},
    },
    "required": ["op"],
})  # fmt: skip
MAX_TOKENS = 2500  # of the answer: about 80 per operation, MAX_OPS of them at most


def daily_files(mem: "Core", days: int) -> list[tuple[str, str]]:
    """(day, text) of the daily memories of the last `days` days, newest first."""
    today = mem.clock.now().date()
    out = []
    for d in range(days):
        day = (today - timedelta(days=d)).isoformat()
        path = mem.vault.memory_dir(mem.scope) / f"{day}.md"
        data, state = read_file(path)
        if state.exists and data.strip():
            out.append((day, decode(data, path)))
    return out


def plan_distill(mem: "Core", llm: LLM, days: int, budget: int, last: str = "") -> Plan:
    plan = Plan("distill")
    daily = daily_files(mem, days)
    if not daily:
        plan.status = f"Skipped: no daily memory in the last {days} days, so there is nothing new to distill."
        return plan
    text, used = "", []
    for day, body in daily:
        if len(text) + len(body) > DAILY_MAX_CHARS:
            body = body[: max(0, DAILY_MAX_CHARS - len(text))]
        if body:
            text += f"\n\n[{day}]\n{body}"
            used.append(day)
    rows = mem.index.entries(mem.scope, (RESIDENT,), current_only=True)
    shown: dict[int, Entry] = {}
    fixed: set[int] = set()
    entries = []
    for n, row in enumerate(rows, 1):
        e = row.entry()
        shown[n] = e
        item = {"id": n, "text": e.text, "type": e.effective_type}
        if e.pinned or e.type == RULE:
            fixed.add(n)
            item["fixed"] = True
        entries.append(item)
    plan.seen = len(shown)
    plan.inputs = hashlib.sha256((text + "\n".join(f"{e.id}:{e.text}" for e in shown.values())).encode()).hexdigest()[:16]
    if last and plan.inputs == last:
        plan.status = UNCHANGED
        return plan
    reply = ask(llm, SYSTEM.format(budget=budget), {"memory_md": entries, "daily_memory": text.strip()}, plan, max_tokens=min(MAX_TOKENS, 400 + 80 * (len(shown) + 5)), schema=SCHEMA)
    ids = Ids(shown, frozenset(fixed))
    try:
        ops = operations(reply)
    except Invalid as exc:
        plan.rejected.append(Rejected("the model's answer", str(exc)))
        return plan
    now = mem.clock.now()
    limit = mem.config.max_text_chars
    for k, op in enumerate(ops, 1):
        what = f"operation {k}"
        try:
            if len(plan.ops) >= MAX_OPS:
                raise Invalid(f"more than {MAX_OPS} operations in one run")
            if not isinstance(op, dict):
                raise Invalid("it is not a JSON object")
            kind = op.get("op")
            if kind == "add":
                what = f"add {str(op.get('text'))[:60]!r}"
                new = check_text(op.get("text"), [text], limit)
                type_ = op.get("type") if op.get("type") in TYPES and op.get("type") != RULE else None
                plan.ops.append(Remember(new, "extracted from the daily memory", type=type_, source="dream"))
            elif kind == "merge":
                chosen = ids.take(op.get("ids"), at_least=2)
                what = f"merge of {', '.join(str(i) for i in chosen)}"
                srcs = [shown[i] for i in chosen]
                subject = common_subject(s.subject for s in srcs)
                new = check_text(op.get("text"), [s.text for s in srcs] + [text], limit, keep_numbers_of=[s.text for s in srcs])
                ids.commit(chosen)
                plan.ops.append(Merge(tuple(srcs), new, srcs[0].effective_type, subject, "merged in distillation", layer=RESIDENT))
            elif kind == "update":
                chosen = ids.take(op.get("id"))
                what = f"update of {chosen[0]}"
                old = shown[chosen[0]]
                new = check_text(op.get("text"), [old.text, text], limit)
                ids.commit(chosen)
                plan.ops.append(Merge((old,), new, old.effective_type, old.subject, "updated from newer daily memory", layer=RESIDENT, end="superseded"))
            elif kind == "remove":
                chosen = ids.take(op.get("id"))
                what = f"removal of {chosen[0]}"
                why = op.get("why")
                if not isinstance(why, str) or not why.strip():
                    raise Invalid("a removal must say why")
                ids.commit(chosen)
                old = shown[chosen[0]]
                row = next(r for r in rows if r.entry().id == old.id)
                plan.ops.append(Move(old, row.path, ARCHIVE, "retire", " ".join(why.split())[:200], valid_to=now, end=END_EXPIRED))
            else:
                raise Invalid(f"unknown operation {kind!r}")
        except Invalid as exc:
            plan.rejected.append(Rejected(what, str(exc)))
    plan.notes.append(f"Read the daily memory of {', '.join(used)} and the {len(shown)} entries of MEMORY.md.")
    return plan
