"""Recall (DESIGN section 6): the keyword and dense sides joined, scored with traces, and the
context block an agent injects each turn."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from memdream.core import Core
from memdream.engine.hits import count_hits
from memdream.errors import RefusedInput
from memdream.model.entry import RECALL, RESIDENT
from memdream.model.scoring import DEFAULT_COSINE_WEIGHT, dense_weight
from memdream.recall.search import CANDIDATES as DENSE_CANDIDATES
from memdream.recall.search import Dense, Hit
from memdream.recall.search import recall as recall_hits
from memdream.recall.slots import collapse as collapse_slots
from memdream.recall.snapshot import RESIDENT_SHARE, SNIPPET_SHARE, ContextBlock, Snapshot, Snippet, build_snapshot, count_tokens, fit

if TYPE_CHECKING:
    from memdream.knowledge.lookup import LookupResult

EMBED_AT_RECALL = 256  # a recall embeds at most this many new entries first; `memdream index embed` does the rest


def recall(core: Core, query: str, k: int = 10, as_of: datetime | str | None = None, rank_by: str = "score", flush_after: int = 0) -> list[Hit]:
    """The `k` best memories for `query`: relevance lifted by recency and importance, with traces.

    Only currently valid entries, or those valid at `as_of` (a datetime, or a date / ISO
    string; a bare date means the end of that day). Hits are counted (batched: folded into
    the files once `flush_after` are gathered)."""
    if not isinstance(query, str):
        raise RefusedInput("the query must be a string", "pass the question as plain text")
    when = parse_as_of(core, as_of)
    core.sync()
    if rank_by not in ("score", "relevance"):
        raise RefusedInput(f"unknown ranking {rank_by!r}", "use 'score' (relevance lifted by recency and importance) or 'relevance'")
    dense = _dense(core, query)
    hits = recall_hits(
        core.index, core.scope, query, max(0, int(k)), core.clock.now(), as_of=when, rank_by=rank_by,
        dense=dense, fusion=core.config.fusion,
        cosine_weight=_dense_weight(core, query) if dense else DEFAULT_COSINE_WEIGHT,
    )  # fmt: skip
    hits = [h for h in hits if not h.entry.pending]  # waiting for the user's confirmation: never served
    if when is None:
        hits = collapse_slots(hits)
    if hits and when is None:
        count_hits(core, [h.entry.id for h in hits], flush_after)
    return hits


def embed_pending(core: Core, limit: int | None = None, progress=None) -> int:  # type: ignore[no-untyped-def]
    """Embed the scope's entries that lack a vector for the configured model (0 without an embedder)."""
    vectors = core.vectors
    if vectors is None:
        return 0
    core.sync()
    return vectors.embed_pending(core.scope, limit, progress)


def _dense_weight(core: Core, query: str) -> float:
    latin = getattr(core.embedder, "cosine_weight", DEFAULT_COSINE_WEIGHT)
    return dense_weight(query, latin, getattr(core.embedder, "cosine_weight_cjk", latin))


def _dense(core: Core, query: str) -> Dense | None:
    """The dense side of recall, or None: keyword only, by choice or because it failed."""
    core.last_warning = ""
    vectors = core.vectors
    if vectors is None or not query.strip():
        return None
    try:
        vectors.embed_pending(core.scope, limit=EMBED_AT_RECALL)
        qvec = vectors.query_vector(query)
        near, mean, std, n = vectors.search(core.scope, qvec, DENSE_CANDIDATES)
    except Exception as exc:  # noqa: BLE001 - any embedder failure degrades to keyword recall
        core.last_warning = f"embedder unavailable, keyword relevance only: {exc}"
        return None
    return Dense(lambda rows: vectors.cosines(core.scope, qvec, rows), core.index.rows([rid for rid, _ in near]), mean, std, n)


def parse_as_of(core: Core, as_of: datetime | str | None) -> datetime | None:
    """An as-of time: a datetime (naive ones in the vault's zone), an ISO time, or a date
    (meaning the end of that day); RefusedInput with the accepted forms otherwise."""
    if as_of is None or isinstance(as_of, datetime):
        if isinstance(as_of, datetime) and as_of.tzinfo is None:
            return as_of.replace(tzinfo=core.clock.now().tzinfo)
        return as_of
    text = str(as_of).strip()
    try:
        if len(text) == 10:
            d = datetime.fromisoformat(text)
            return d.replace(hour=23, minute=59, second=59, tzinfo=core.clock.now().tzinfo)
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return d if d.tzinfo else d.replace(tzinfo=core.clock.now().tzinfo)
    except ValueError as exc:
        raise RefusedInput(f"cannot read the date {text!r}", "use YYYY-MM-DD or an ISO 8601 time such as 2026-06-20T18:00") from exc


def resident_snapshot(core: Core, budget: int) -> Snapshot:
    """The resident layer plus pinned recall-layer facts, as a token-bounded snapshot."""
    core.sync()
    resident = [e for r in core.index.entries(core.scope, (RESIDENT,), current_only=True) if not (e := r.entry()).pending]
    resident += [e for r in core.index.pinned(core.scope, (RECALL,)) if not (e := r.entry()).pending]
    return build_snapshot(resident, budget, core.clock.now())


def context(
    snap: Snapshot,
    query: str | None,
    budget: int,
    k: int,
    search: Callable[[str, int], list[Hit]],
    snippets: Callable[[str], list[Snippet]],
) -> ContextBlock:
    """The block an agent injects each turn: the frozen resident snapshot `snap`, then the
    entries `search` recalls for `query`, then `snippets` of past conversations, each part
    fitted into what the budget leaves."""
    block = ContextBlock(snap, budget=budget, query=query or "")
    if not query:
        return block
    shown = {e.id for e in snap.entries}
    left = budget - snap.tokens
    hits = [h for h in search(query, k + len(shown)) if h.entry.id not in shown][:k]
    block.recalled = fit(hits, max(0, left - int(budget * SNIPPET_SHARE)), lambda h: count_tokens(h.text) + 2)
    left -= sum(count_tokens(h.text) + 2 for h in block.recalled)
    block.snippets = fit(snippets(query), max(0, left), lambda s: count_tokens(s.text) + 8)
    return block


def resident_budget(budget: int) -> int:
    """The share of a context budget the resident snapshot gets."""
    if budget < 1:
        raise RefusedInput("the budget must be at least 1 token", "pass --budget 2000 or so")
    return max(1, int(budget * RESIDENT_SHARE))


def lookup(core: Core, recall: Callable[[str], list[Hit]], query: str, archive: bool = False) -> "LookupResult":
    """INDEX.md, then the named file, then search (memories by `recall`, then knowledge
    files, logs and reflections); the result says which level answered."""
    from memdream.index.raw import search_raw, sync_raw
    from memdream.knowledge.lookup import lookup as three_levels

    def search(q: str, include_archive: bool) -> list[dict]:
        hits = [{"kind": "memory", "path": h.entry.id, "text": h.text, "score": round(h.score, 3)} for h in recall(q)]
        sync_raw(core.index, core.scope)
        docs = search_raw(core.index, core.scope, q, 5, kinds=("note", "log", "reflection"), archived=include_archive)
        hits += [{"kind": "document", "path": s.path, "text": s.text, "score": round(s.score, 3)} for s in docs]
        return hits

    return three_levels(core.knowledge, query, search, archive)
