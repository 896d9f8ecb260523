"""The checks a dream must pass before it stays applied (issue 4, point 8):

- no entry disappears: every id of the scope before the phase is still in its files
  (a merged or superseded entry stays, marked; an archived one moves to .archive/);
- the resident layer stays within its budget (or does not grow, if it was over already);
- the canary queries still find their entries, or the entries that replaced them;
- no line the phase added looks like a credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdream.store.transaction import Transaction
from memdream.model.entry import RESIDENT
from memdream.model.secrets import find_secret
from memdream.recall.search import recall as recall_hits
from memdream.store.format import parse_document
from memdream.store.files import decode, read_file

if TYPE_CHECKING:
    from memdream.core import Core

CANARY_COUNT = 5  # without configured canaries: the most recalled entries, by their own text
CANARY_K = 10  # a canary passes when its entry (or its successor) is among this many hits


@dataclass
class Baseline:
    ids: set[str]
    resident: int
    budget: int
    canaries: list[tuple[str, set[str]]]  # (query, ids it found before)

    @classmethod
    def take(cls, mem: "Core", budget: int, queries: tuple[str, ...], touched: set[str] | None = None) -> "Baseline":
        """`touched`: the ids a plan that only moves and marks will touch (None: a plan that may
        add lines). A default canary whose entry such a plan does not touch cannot lose it
        (texts and the lines that compete with it stay), so it is not queried."""
        if queries:
            canaries = [(q, {h.entry.id for h in _quiet_recall(mem, q)[:3]}) for q in queries]
        else:
            top = mem.index.most_recalled(mem.scope, CANARY_COUNT)
            canaries = []
            for eid, text in top:
                if touched is not None and eid not in touched:
                    continue
                found = {h.entry.id for h in _quiet_recall(mem, text)}
                canaries.append((text, {eid} & found))
        return cls(_ids(mem), _resident(mem), budget, [(q, ids) for q, ids in canaries if ids])


def _quiet_recall(mem: "Core", query: str):  # type: ignore[no-untyped-def]
    """Recall by relevance, without counting hits (a check must not change what it checks).
    Relevance, not the full score: a canary asks whether a memory can still be found, and
    a dream does not change recency or importance."""
    return recall_hits(mem.index, mem.scope, query, CANARY_K, mem.clock.now(), rank_by="relevance", postings=False)


def _ids(mem: "Core") -> set[str]:
    return mem.index.entry_ids(mem.scope)


def _resident(mem: "Core") -> int:
    return sum(n for (layer, _), n in mem.index.count(mem.scope).items() if layer == RESIDENT)


def _successors(mem: "Core", entry_id: str) -> set[str]:
    """The entry and every entry that replaced it, following `by` and `sup` links."""
    out, frontier = {entry_id}, [entry_id]
    while frontier:
        nxt = []
        for eid in frontier:
            for row in mem.index.by_id(mem.scope, eid):
                by = row.entry().superseded_by
                if by and by not in out:
                    out.add(by)
                    nxt.append(by)
            for row in mem.index.by_supersedes(mem.scope, eid):
                e = row.entry()
                if e.id and e.id not in out:
                    out.add(e.id)
                    nxt.append(e.id)
        frontier = nxt
    return out


def check(mem: "Core", base: Baseline, tx: Transaction) -> list[str]:
    """The invariants that fail (empty: the phase may stay applied)."""
    # Files are read at rest: a person's editor half way through saving a file in place would
    # make its ids look gone, and the phase would be rolled back for nothing (issue 17, item 13).
    mem.index.sync_scope(mem.scope, mem.writer.read_at_rest)
    failed: list[str] = []
    lost = base.ids - _ids(mem)
    if lost:
        failed.append(f"{len(lost)} memories would disappear without a trace ({', '.join(sorted(lost)[:5])})")
    resident = _resident(mem)
    limit = max(base.budget, base.resident)
    if resident > limit:
        failed.append(f"the resident layer would hold {resident} memories (budget {base.budget}, before {base.resident})")
    for query, ids in base.canaries:
        found = {h.entry.id for h in _quiet_recall(mem, query)}
        for eid in ids:
            if not (_successors(mem, eid) & found):
                failed.append(f"the canary query {query[:60]!r} no longer finds `{eid}` or what replaced it")
    # New lines only: an id that also left some file was moved or marked, its text unchanged.
    moved = {eid for fc in tx.files.values() for eid in fc.removed}
    for path, fc in tx.files.items():
        added = set(fc.added) - moved
        if not added:
            continue
        data, state = read_file(path)
        for e in parse_document(decode(data, path) if state.exists else "").entries():
            if e.id in added and find_secret(e.text):
                failed.append(f"`{e.id}` in {mem.vault.relpath(path)} looks like a credential")
    return failed
