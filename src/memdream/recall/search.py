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
from memdream.model.scoring import DEFAULT_COSINE_WEIGHT, Trace, attainable_bm25, blend, bm25, normalize_bm25, score_parts
from memdream.model.tokens import query_tokens
from memdream.store.vault import Scope

CANDIDATES = 100  # keyword candidates scored per query


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


# (query, rows) -> {rowid: cosine}; supplied when an embedder is configured.
VectorScorer = Callable[[str, list[Row]], dict[int, float]]
# query -> rows nearest by vector (extra candidates keyword search may miss).
VectorCandidates = Callable[[str, int], list[Row]]


def recall(
    index: Index,
    scope: Scope,
    query: str,
    k: int,
    now: datetime,
    as_of: datetime | None = None,
    cosine: VectorScorer | None = None,
    nearest: VectorCandidates | None = None,
    rank_by: str = "score",
    fusion: str = "capped",
    cosine_weight: float = DEFAULT_COSINE_WEIGHT,
    postings: bool = True,
) -> list[Hit]:
    """The `k` best memories for `query`, valid now (or at `as_of`), best first.

    `rank_by="relevance"` orders by relevance alone (for benchmarks that isolate retrieval);
    the default orders by the full score.
    """
    if k <= 0:
        return []
    layers = (RESIDENT, RECALL) if as_of is None else (RESIDENT, RECALL, ARCHIVE)
    found = index.keyword_candidates(scope, query, CANDIDATES, layers=layers, current_only=as_of is None, postings=postings)
    rows: dict[int, tuple[Row, float | None]] = {row.rowid: (row, s) for row, s in found}
    if nearest is not None:
        for row in nearest(query, CANDIDATES):
            if row.layer in layers:
                rows.setdefault(row.rowid, (row, None))  # BM25 computed below
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
    missing = [row.rowid for row, s in valid if s is None]
    if missing:
        toks = index.tokens_of(missing)
        valid = [(row, s if s is not None else bm25(terms, toks.get(row.rowid, "").split(), df, n_docs, avgdl)) for row, s in valid]
    cos = cosine(query, [row for row, _ in valid]) if cosine is not None else None
    # Keyword only: BM25 over the best candidate's. Hybrid "capped": over max(best, tau x attainable),
    # so an accidental keyword match does not outweigh the cosine side (bench/embedders.py).
    capped = cos is not None and fusion == "capped"
    norm = normalize_bm25([s or 0.0 for _, s in valid], attainable_bm25(terms, df, n_docs) if capped else 0.0)
    cosines = [None if cos is None else cos.get(row.rowid, 0.0) for row, _ in valid]
    # Relevance is min-max normalized over the candidates, as Generative Agents does: the best
    # gets 1, the weakest 0. Otherwise relevances bunch together (fused cosines all sit near
    # 0.5) and recency alone decides the order. On LoCoMo's 2-conversation quick run this took
    # the default score from R@10 0.423 to 0.466 keyword-only, and from 0.294 to 0.365 with USE
    # (bench/recall_locomo.py). The range is found first, so each trace is made once.
    raw = [blend(b, c, fusion, cosine_weight)[0] for b, c in zip(norm, cosines)]
    low, top = min(raw), max(raw)
    span = (low, top) if len(raw) > 1 and top > low else None
    scored: list[tuple[Row, Trace]] = []
    for (row, _), b, c in zip(valid, norm, cosines):
        touched = max((t for t in (row.ca, row.vf) if t is not None), default=None)  # see scoring.last_touched
        scored.append((row, score_parts(row.type, row.salience, row.hits, touched, when, b, c, fusion, cosine_weight, span)))
    if rank_by == "relevance":
        scored.sort(key=lambda rt: (-rt[1].relevance, -rt[1].score, rt[0].rowid))
    else:
        scored.sort(key=lambda rt: (-rt[1].score, rt[0].rowid))
    # Only the winners are parsed back into entries.
    return [Hit(row.entry(), t.score, t) for row, t in scored[:k]]
