"""The light phase: the lifecycle table (model/lifecycle.py) run over a scope. Zero LLM.

It reads the index (no file is parsed unless a rule may apply to it) and plans moves and
marks only: archive what ended, supersede near-duplicates, promote what is recalled often,
archive what is old and unimportant, demote idle resident preferences.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdream.dream.plan import Move, Plan
from memdream.model.entry import ARCHIVE, END_MERGED, PREFERENCE, RECALL, RESIDENT, TYPE_PRIOR
from memdream.model.lifecycle import (
    ARCHIVE_IT,
    DEMOTE,
    DEMOTE_IDLE_DAYS,
    PROMOTE,
    PROMOTE_HITS,
    STALE_CONTEXT_DAYS,
    SUPERSEDE,
    UNIMPORTANT_MAX,
    Candidate,
    State,
    decide,
    duplicates,
)
from memdream.store.format import parse_line

if TYPE_CHECKING:
    from memdream.memory import Memory

DAY = 86400.0


def inputs(mem: "Memory") -> str:
    """Changes whenever the files change (the index generation) or a day passes (ageing)."""
    return f"{mem.index.generation()}:{mem.clock.now().date().isoformat()}"


def plan_light(mem: "Memory", budget: int) -> Plan:
    plan = Plan("light", inputs=inputs(mem))
    now = mem.clock.now()
    t_now = now.timestamp()
    db = mem.index.db
    rows = db.execute(
        "SELECT e.id, e.path, e.layer, e.type, e.text, e.line, e.vf, e.vt, e.ca, e.la, e.hits, e.salience, e.pinned, f.tok "
        "FROM entries e JOIN entries_fts f ON f.rowid = e.rowid WHERE e.scope = ? AND e.layer IN (?, ?)",
        (mem.scope.key, RESIDENT, RECALL),
    ).fetchall()
    plan.seen = len(rows)
    df_all: dict[str, int] = {}

    def df(term: str) -> int:
        if term not in df_all:
            r = db.execute("SELECT df FROM terms WHERE term = ?", (term,)).fetchone()
            df_all[term] = r[0] if r else 0
        return df_all[term]

    cands = [
        Candidate(eid, text, layer, hits, ca or vf or 0.0, tok.split(), bool(pinned) or type_ == "rule")
        for eid, _p, layer, type_, text, _l, vf, vt, ca, la, hits, _s, pinned, tok in rows
        if vt is None
    ]
    dups = duplicates(cands, df)
    resident_now = sum(1 for r in rows if r[2] == RESIDENT and r[7] is None)
    leaving = 0
    promotions: list[Move] = []
    for eid, path, layer, type_, _text, line, vf, vt, ca, la, hits, sal, _pin, _tok in rows:
        idle = (t_now - max(t for t in (ca, vf, la, 0.0) if t is not None)) / DAY
        maybe = (
            vt is not None
            or eid in dups
            or (layer == RECALL and hits >= PROMOTE_HITS)
            or (layer == RECALL and not hits and not sal and TYPE_PRIOR.get(type_, 0.4) <= UNIMPORTANT_MAX and idle > STALE_CONTEXT_DAYS)
            or (layer == RESIDENT and type_ == PREFERENCE and idle > DEMOTE_IDLE_DAYS)
        )
        if not maybe:
            continue
        entry = parse_line(line, layer)
        d = decide(State(entry, layer, now, duplicate_of=dups[eid].id if eid in dups else ""))
        if d.action == ARCHIVE_IT:
            plan.ops.append(Move(entry, path, ARCHIVE, "archive", d.reason))
        elif d.action == SUPERSEDE:
            winner = dups[eid]
            reason = f"a near-duplicate of `{winner.id}` {winner.text[:80]!r}"
            plan.ops.append(Move(entry, path, ARCHIVE, "supersede", reason, valid_to=now, end=END_MERGED, superseded_by=winner.id))
        elif d.action == PROMOTE:
            promotions.append(Move(entry, path, RESIDENT, "promote", d.reason))
            continue
        elif d.action == DEMOTE:
            plan.ops.append(Move(entry, path, RECALL, "demote", d.reason))
        else:
            continue
        if layer == RESIDENT:
            leaving += 1
    room = max(0, budget - (resident_now - leaving))
    promotions.sort(key=lambda m: (-m.entry.hits, m.entry.id))
    plan.ops.extend(promotions[:room])
    if len(promotions) > room:
        plan.notes.append(
            f"{len(promotions) - room} more memories were recalled often enough to move into MEMORY.md, "
            f"but it is full ({resident_now - leaving + room}/{budget}); they wait in the recall layer"
        )
    return plan
