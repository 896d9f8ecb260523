"""The light phase: the lifecycle table (model/lifecycle.py) run over a scope. Zero LLM.

It reads the index (no file is parsed unless a rule may apply to it) and plans moves and
marks only: archive what ended, supersede near-duplicates, promote what is recalled often,
archive what is old and unimportant, demote idle resident preferences.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from itertools import chain
from sys import intern
from typing import TYPE_CHECKING

from memdream.dream.pause import collector_paused
from memdream.dream.plan import Drop, Move, Plan
from memdream.index.db import LifecycleDue
from memdream.model.entry import ARCHIVE, CONTEXT, END_MERGED, PREFERENCE, RECALL, RESIDENT, TYPE_PRIOR, Entry
from memdream.model.script import is_cjk
from memdream.model.lifecycle import (
    ARCHIVE_IT,
    DEMOTE,
    DEMOTE_IDLE_DAYS,
    PROMOTE,
    PROMOTE_HITS,
    STALE_CONTEXT_DAYS,
    STALE_DAYS,
    SUPERSEDE,
    UNIMPORTANT_MAX,
    Candidate,
    State,
    decide,
    duplicates,
)
from memdream.model.similarity import may_fold_by_meaning, restatement_cosine, word_count
from memdream.store.format import parse_line


if TYPE_CHECKING:
    from memdream.core import Core

DAY = 86400.0
# A new line's partners: the entries sharing the most of its 8 rarest terms that are not
# common (OR, best BM25 first), at most 50. A duplicate either way shares nearly all of them.
DEDUP_QUERY_TERMS = 8
DEDUP_PARTNERS = 50
DEDUP_COMMON_SHARE, DEDUP_COMMON_MIN = 0.01, 50  # terms in more entries than 1% (at least 50) are too common to query
RESTATEMENT_NEIGHBOURS = 5  # nearest lines compared with each new line (at the embedder's restatement_cosine, model/similarity.py)


def _from_columns(eid: str, type_: str, text: str, vf, ca, la, hits: int, sal: float, layer: str, now: datetime) -> Entry:  # type: ignore[no-untyped-def]
    """The fields the lifecycle reads, from the index's columns (no parsing): for a current,
    unpinned entry. A move re-reads the line from its file before writing anything."""
    tz = now.tzinfo

    def dt(x: float | None) -> datetime | None:
        return datetime.fromtimestamp(x, tz) if x is not None else None

    return Entry(text=text, id=eid, type=type_, valid_from=dt(vf), created_at=dt(ca), last_recalled=dt(la), hits=hits, salience=sal, layer=layer)


def inputs(mem: "Core") -> str:
    """Changes whenever the files change (the index generation) or a day passes (ageing)."""
    return f"{mem.index.generation()}:{mem.clock.now().date().isoformat()}"


def _candidates(rows: list[tuple]) -> list[Candidate]:
    """Candidates from the index's tokened rows (Index.current_with_tokens, Index.with_tokens).

    Each entry's tokens are a tuple of interned strings: a scope says the same few words over
    and over, and a string object per token of every entry was the largest part of the first
    dream's memory (46 of 120 MB at 30k entries, tracemalloc; 8.7 GB of peak RSS at 1M)."""
    return [
        Candidate(eid, text, intern(layer), hits, ca or vf or 0.0, tuple(map(intern, tok.split())), bool(pinned) or type_ == "rule")
        for _rowid, eid, layer, type_, text, vf, ca, hits, pinned, tok in rows
    ]


def _near_duplicates(mem: "Core", since_rowid: int) -> dict[str, Candidate]:
    """Near-duplicate groups among the scope's current entries. With `since_rowid` (the index's
    high-water mark at the last light dream), only lines new or changed since are compared,
    each with the entries that share most of its rarest terms (an index query): pairs of older lines
    were settled by earlier dreams. Without, every entry is compared (the first dream)."""
    if not since_rowid:
        cands = _candidates(mem.index.current_with_tokens(mem.scope, (RESIDENT, RECALL)))
        df = Counter(chain.from_iterable(set(c.tokens) for c in cands))  # the scope's own document frequencies
        return duplicates(cands, df.__getitem__)
    fresh = _candidates(mem.index.current_with_tokens(mem.scope, (RESIDENT, RECALL), since_rowid))
    if not fresh:
        return {}
    pool: dict[str, Candidate] = {c.id: c for c in fresh}
    n_docs = mem.index.corpus_stats()[0]
    common = max(DEDUP_COMMON_MIN, int(n_docs * DEDUP_COMMON_SHARE))
    for c in fresh:
        anchors = [t for t in dict.fromkeys(c.tokens) if not t.startswith("memdream") and not (len(t) == 1 and is_cjk(t))]
        df = mem.index.document_frequency(anchors)
        ranked = sorted((t for t in anchors if df.get(t)), key=lambda t: (df[t], t))
        rare = [t for t in ranked if df[t] <= common][:DEDUP_QUERY_TERMS]
        if rare:  # OR over the rare terms: a posting list walk that stays short
            found = mem.index.match(mem.scope, rare, DEDUP_PARTNERS, (RESIDENT, RECALL), True, op="OR")
        elif ranked:  # only common words: the entries holding all of the three rarest
            found = mem.index.match(mem.scope, ranked[:3], DEDUP_PARTNERS, (RESIDENT, RECALL), True, op="AND")
        else:
            continue
        rowids = [row.rowid for row, _ in found]
        if rowids:
            for p in _candidates(mem.index.with_tokens(rowids)):
                pool.setdefault(p.id, p)
    df_all = mem.index.document_frequency(sorted({t for c in pool.values() for t in c.tokens}))
    return duplicates(pool.values(), lambda t: df_all.get(t, 0))


def says_more(a: Candidate, b: Candidate) -> bool:
    """Does `a` say more than `b` (more plain words; then the original, older wording)?"""
    wa, wb = word_count(a.text), word_count(b.text)
    return (wa, -a.created, a.id) > (wb, -b.created, b.id)


def _restatements(mem: "Core", since_rowid: int, plan: Plan) -> dict[str, Candidate]:
    """{id of a line: the line that says the same fact and more}, by the embedder's cosine
    (at least the embedder's `restatement_cosine`, and `may_fold_by_meaning`). Only with an embedder;
    each line new since the last light dream is compared with its nearest lines."""
    vectors = mem.vectors
    if vectors is None:
        return {}
    try:
        vectors.embed_pending(mem.scope)
    except Exception as exc:  # noqa: BLE001 - the embedder failing only leaves restatements for a later night
        plan.notes.append(f"restatements not compared: the embedder failed ({exc})")
        return {}
    threshold = restatement_cosine(vectors.embedder, mem.config.embedder_options)
    fresh = mem.index.current_rowids(mem.scope, (RESIDENT, RECALL), since_rowid)
    rowids, mat = vectors.matrix(mem.scope)
    pos = {r: i for i, r in enumerate(rowids)}
    pairs: list[tuple[float, int, int]] = []
    for rid in fresh:
        if rid not in pos:
            continue
        for other, cos in vectors.nearest(mem.scope, mat[pos[rid]], RESTATEMENT_NEIGHBOURS + 1):
            if other != rid and cos >= threshold:
                pairs.append((cos, min(rid, other), max(rid, other)))
    if not pairs:
        return {}
    need = sorted({r for _, a, b in pairs for r in (a, b)})
    got = mem.index.with_tokens(need)
    cands = dict(zip([r[0] for r in got], _candidates(got)))
    out: dict[str, Candidate] = {}
    for _cos, a, b in sorted(set(pairs), reverse=True):  # strongest pairs first
        ca, cb = cands.get(a), cands.get(b)
        if ca is None or cb is None or ca.protected or cb.protected or not ca.id or not cb.id or ca.id == cb.id:
            continue
        if ca.id in out or cb.id in out or not may_fold_by_meaning(ca.text, cb.text):
            continue
        keep, drop = (ca, cb) if says_more(ca, cb) else (cb, ca)
        if any(w.id == drop.id for w in out.values()):
            continue  # a line that absorbed another stays
        out[drop.id] = keep
    return out


LAYER_ORDER = {RESIDENT: 0, RECALL: 1, ARCHIVE: 2}


def _copies(mem: "Core", plan: Plan) -> set[str]:
    """Lines whose id sits in two files (a move or an undo cut short by a crash): keep one
    copy, drop the others when they say the same; report them when they do not."""
    ids = mem.index.ids_in_several_files(mem.scope)
    out: set[str] = set()
    for eid in ids:
        rows = mem.index.by_id(mem.scope, eid)
        entries = [(r, r.entry()) for r in rows]
        if len({e.text for _, e in entries}) > 1:
            plan.notes.append(f"`{eid}` is in {len(rows)} files with different texts; left as it is (see memdream doctor)")
            continue
        # Keep an ended copy over a current one (the end mark is the newer fact), then by layer.
        keep = min(entries, key=lambda re: (re[1].valid_to is None, LAYER_ORDER.get(re[0].layer, 3), re[0].path))
        for r, e in entries:
            if r is not keep[0]:
                plan.ops.append(Drop(e, r.path, f"a second copy of the line in {keep[0].path} (a move was cut short)"))
        out.add(eid)
    return out


def high_water(mem: "Core") -> int:
    return mem.index.high_water()


def plan_light(mem: "Core", budget: int, since_rowid: int = 0, bulk: bool = True) -> Plan:
    """The light phase's plan. `bulk` (the default) asks the index for the rows a rule may apply
    to (one query, Index.lifecycle_due) and counts the rest in SQL; without it every row of the
    scope is read and looked at here. Both give the same plan (tests/test_light_bulk.py).
    Near-duplicates are grouped the same way in both (model/lifecycle.py duplicates). The
    cycle collector is paused meanwhile (dream/pause.py)."""
    with collector_paused():
        return _plan_light(mem, budget, since_rowid, bulk)


def _plan_light(mem: "Core", budget: int, since_rowid: int, bulk: bool) -> Plan:
    plan = Plan("light", inputs=inputs(mem))
    now = mem.clock.now()
    t_now = now.timestamp()
    layers = (RESIDENT, RECALL)
    if not bulk:
        rows = mem.index.entries_for_lifecycle(mem.scope, layers)
        plan.seen = len(rows)
    healed = _copies(mem, plan)
    dups = {k: v for k, v in _near_duplicates(mem, since_rowid).items() if k not in healed}
    for k, v in _restatements(mem, since_rowid, plan).items():
        if k not in healed and k not in dups and v.id not in dups:
            dups[k] = v
    # Recall counts not yet folded into the files: a real dream folds them before planning, so
    # none are left then; a dry run counts them in, to plan what the real run would apply.
    pending = mem.hit_journal.peek()
    if bulk:
        plan.seen = mem.index.count_entries(mem.scope, layers)
        resident_now = mem.index.count_entries(mem.scope, (RESIDENT,), current_only=True)
        due = LifecycleDue(
            now=t_now, promote_hits=PROMOTE_HITS, important_types=tuple(sorted(t for t, p in TYPE_PRIOR.items() if p > UNIMPORTANT_MAX)),
            stale_days=STALE_DAYS, stale_context_days=STALE_CONTEXT_DAYS, context_type=CONTEXT, demote_idle_days=DEMOTE_IDLE_DAYS,
            preference_type=PREFERENCE, ids=frozenset(dups) | frozenset(pending),
        )  # fmt: skip
        rows = mem.index.lifecycle_due(mem.scope, due)
    else:
        resident_now = sum(1 for r in rows if r[2] == RESIDENT and r[7] is None)
    leaving = 0
    promotions: list[Move] = []
    for eid, path, layer, type_, text, line, vf, vt, ca, la, hits, sal, _pin in rows:
        bump = pending.get(eid) if eid else None
        if bump is not None:
            hits, la = hits + bump.count, max(la or 0.0, bump.last.timestamp())
        idle = (t_now - max(t for t in (ca, vf, la, 0.0) if t is not None)) / DAY
        maybe = (
            vt is not None
            or eid in dups
            or (layer == RECALL and hits >= PROMOTE_HITS)
            or (layer == RECALL and not hits and not sal and TYPE_PRIOR.get(type_, 0.4) <= UNIMPORTANT_MAX and idle > (STALE_CONTEXT_DAYS if type_ == CONTEXT else STALE_DAYS))
            or (layer == RESIDENT and type_ == PREFERENCE and idle > DEMOTE_IDLE_DAYS)
        )
        if not maybe or eid in healed:
            continue
        entry = parse_line(line, layer) if vt is not None or "pin=" in line else _from_columns(eid, type_, text, vf, ca, la, hits, sal, layer, now)
        if bump is not None and entry.hits != hits:
            entry = entry.evolve(hits=hits, last_recalled=datetime.fromtimestamp(la, now.tzinfo))
        d = decide(State(entry, layer, now, duplicate_of=dups[eid].id if eid in dups else ""))
        if d.action == ARCHIVE_IT:
            plan.ops.append(Move(entry, path, ARCHIVE, "archive", d.reason, rule=d.state))
        elif d.action == SUPERSEDE:
            winner = dups[eid]
            reason = f"a near-duplicate of `{winner.id}` {winner.text[:80]!r}"
            plan.ops.append(Move(entry, path, ARCHIVE, "supersede", reason, valid_to=now, end=END_MERGED, superseded_by=winner.id, rule=d.state))
        elif d.action == PROMOTE:
            promotions.append(Move(entry, path, RESIDENT, "promote", d.reason, rule=d.state))
            continue
        elif d.action == DEMOTE:
            plan.ops.append(Move(entry, path, RECALL, "demote", d.reason, rule=d.state))
        else:
            continue
        if layer == RESIDENT and vt is None:
            leaving += 1  # a current resident line leaves (an ended one never counted)
    room = max(0, budget - (resident_now - leaving))
    promotions.sort(key=lambda m: (-m.entry.hits, m.entry.id))
    plan.ops.extend(promotions[:room])
    if len(promotions) > room:
        plan.notes.append(
            f"{len(promotions) - room} more memories were recalled often enough to move into MEMORY.md, "
            f"but it is full ({resident_now - leaving + room}/{budget}); they wait in the recall layer"
        )
    return plan
