"""Recall: candidates from the index -> score -> hits with a trace (DESIGN section 6).

Keyword candidates come from the full-text index (its rarest query terms, so the cost stays
bounded at any scope size); with an embedder, the nearest vectors are added and relevance
becomes the hybrid. Everything here is read-only: hit counts are recorded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memdream.index.db import Index, Row
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT, Entry  # noqa: F401 (Entry: Hit's type)
from memdream.model.scoring import DEFAULT_COSINE_WEIGHT, Trace, attainable_bm25, bm25, dense_relevance, keyword_relevance, query_weights, score_parts
from memdream.model.tokens import query_tokens
from memdream.store.vault import Scope

CANDIDATES = 100  # keyword candidates scored per query
ENDED_CANDIDATES = 20  # superseded lines matching a query whose current successors are candidates too
SUCCESSION_HOPS = 8  # supersedes followed from an ended line to the line current now


@dataclass(frozen=True)
class Hit:
    """One recalled memory: the entry, its score and the trace of how the score was made."""

    entry: Entry
    score: float
    trace: Trace

    @property
    def text(self) -> str:
        return self.entry.text

    def to_json(self) -> dict:
        out = self.entry.to_json()
        out["score"] = round(self.score, 4)
        out["trace"] = self.trace.to_json()
        return out


@dataclass(frozen=True)
class Dense:
    """The dense side of one query, when an embedder is configured: the cosine of any candidate,
    the nearest entries (candidates keyword search may miss), and the mean and standard deviation
    of the query's cosines over the scope (what dense relevance is measured against)."""

    cosines: Callable[[list[Row]], dict[int, float]]
    nearest: list[Row]
    mean: float
    std: float
    n: int = 1_000_000  # how many cosines the mean and spread were measured over


def recall(
    index: Index,
    scope: Scope,
    query: str,
    k: int,
    now: datetime,
    as_of: datetime | None = None,
    dense: Dense | None = None,
    rank_by: str = "score",
    fusion: str = "weighted",
    cosine_weight: float = DEFAULT_COSINE_WEIGHT,
    postings: bool = True,
) -> list[Hit]:
    """The `k` best memories for `query`, valid now (or at `as_of`), best first.

    The score is relevance lifted by recency and importance (model/scoring.py): relevance
    gates. `rank_by="relevance"` orders by relevance alone (for benchmarks that isolate
    retrieval, and canary checks).
    """
    if k <= 0:
        return []
    layers = (RESIDENT, RECALL) if as_of is None else (RESIDENT, RECALL, ARCHIVE)
    found = index.keyword_candidates(
        scope, query, CANDIDATES, layers=layers, current_only=as_of is None, postings=postings, ended=ENDED_CANDIDATES if as_of is None else 0
    )
    ended = [(row, s) for row, s in found if as_of is None and row.vt is not None]
    rows: dict[int, tuple[Row, float | None]] = {row.rowid: (row, s) for row, s in found if as_of is not None or row.vt is None}
    if dense is not None:
        for row in dense.nearest:
            if row.layer in layers:
                rows.setdefault(row.rowid, (row, None))  # BM25 computed below
    if ended:
        for row, s in _successors(index, scope, ended, layers):
            old = rows.get(row.rowid)
            if old is None or (old[1] is not None and old[1] < s):
                rows[row.rowid] = (row, s)
    when = (as_of or now).timestamp()
    valid: list[tuple[Row, float | None]] = []
    for row, s in rows.values():
        if as_of is None and row.vt is not None:
            continue
        if as_of is not None and not ((row.vt is None or when < row.vt) and (row.vf is None or when >= row.vf)):
            continue
        valid.append((row, s))
    if not valid:
        return []
    terms = query_tokens(query)
    df = index.document_frequency(terms)
    n_docs, avgdl = index.corpus_stats()
    weights = query_weights(terms)
    missing = [row.rowid for row, s in valid if s is None]
    if missing:
        toks = index.tokens_of(missing)
        valid = [(row, s if s is not None else bm25(terms, toks.get(row.rowid, "").split(), df, n_docs, avgdl, weights)) for row, s in valid]
    # Keyword relevance on an absolute scale: BM25 over what a memory holding every query term
    # that occurs in the index would score (terms found nowhere say nothing about any memory).
    attainable = attainable_bm25([t for t in terms if df.get(t)], df, n_docs, weights)
    keyword = [keyword_relevance(s or 0.0, attainable) for _, s in valid]
    cos = dense.cosines([row for row, _ in valid]) if dense is not None else None
    scored: list[tuple[Row, Trace]] = []
    for (row, _), kw in zip(valid, keyword):
        c = d = None
        if cos is not None and dense is not None:
            c = cos.get(row.rowid, 0.0)
            d = dense_relevance(c, dense.mean, dense.std, dense.n)
        touched = max((t for t in (row.ca, row.vf) if t is not None), default=None)  # see scoring.last_touched
        scored.append((row, score_parts(row.type, row.salience, row.hits, touched, when, kw, c, fusion, cosine_weight, d)))
    if rank_by == "relevance":
        scored.sort(key=lambda rt: (-rt[1].relevance, -rt[1].score, rt[0].rowid))
    else:
        scored.sort(key=lambda rt: (-rt[1].score, -rt[1].relevance, rt[0].rowid))
    # Only the winners are parsed back into entries.
    return [Hit(row.entry(), t.score, t) for row, t in scored[:k] if t.relevance > 0]


def _successors(index: Index, scope: Scope, found: list[tuple[Row, float]], layers: tuple[str, ...]) -> list[tuple[Row, float]]:
    """The current lines that superseded the ended candidates `found`, each with the best BM25 of a
    line it replaced: a change stands for the value it ended ("Traded in the Mazda and got a
    Kia" answers what "took the Mazda for a drive" answered), as a duplicate stands for what
    it folded. A supersede links the ended line's vt to its successor's vf (engine/write.py
    writes both with one `now`); the successor must have superseded something (sup=)."""
    from memdream.model.entry import END_SUPERSEDED

    ended: dict[float, float] = {}
    for row, s in found:
        if row.vt is not None and s > ended.get(row.vt, 0.0) and row.entry().end == END_SUPERSEDED:
            ended[row.vt] = s
    out: dict[int, tuple[Row, float]] = {}
    for _ in range(SUCCESSION_HOPS):
        if not ended:
            break
        later: dict[float, float] = {}
        for row in index.superseding_at(scope, sorted(ended), layers):
            s = ended.get(row.vf or 0.0, 0.0)
            e = row.entry()
            if not e.supersedes:
                continue
            if row.vt is None:
                if s > out.get(row.rowid, (row, 0.0))[1]:
                    out[row.rowid] = (row, s)
            elif e.end == END_SUPERSEDED and s > later.get(row.vt, 0.0):
                later[row.vt] = s
        ended = later
    return list(out.values())
