"""Recall scoring (DESIGN section 6): score = recency + importance + relevance, with a trace.

Pure functions of an entry, the clock and the relevance signals: deterministic and
testable with a frozen clock. The three parts are on purpose not on one scale: recency and
relevance are in [0, 1], importance goes up to 2.0, so an important old warning can beat a
merely similar new fact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from memdream.model.entry import TYPE_PRIOR, Entry

RECENCY_HALF_LIFE_DAYS = 30.0  # recency halves every 30 days since the entry was last touched
IMPORTANCE_CAP = 2.0  # type prior + salience + recall bonus never exceeds this
HIT_BONUS = 0.05  # each successful recall adds this much importance ...
HIT_BONUS_MAX = 0.5  # ... up to this much
# Hybrid relevance with an embedder. "blend" is the source document's 0.7 x cosine + 0.3 x BM25.
# "capped" (the default, measured better: bench/embedders.py) weighs cosine by the embedder's
# own tuned weight and normalizes BM25 by max(best match, CAP_TAU x the query's attainable BM25),
# so a weak accidental keyword match is not stretched to 1.0.
BLEND_COSINE, BLEND_BM25 = 0.7, 0.3
CAP_TAU = 0.5
DEFAULT_COSINE_WEIGHT = 0.5  # for embedders without a measured weight (remote endpoints)
FUSIONS = ("capped", "blend")


@dataclass(frozen=True)
class Trace:
    """Why a hit scored what it did; every part is shown by `recall --explain`."""

    recency: float
    importance: float
    relevance: float
    age_days: float
    prior: float
    salience: float
    hit_bonus: float
    bm25: float  # normalized keyword relevance in [0, 1]
    cosine: float | None  # None without an embedder
    fusion: str  # how relevance was made: "bm25" or the hybrid's name

    @property
    def score(self) -> float:
        return self.recency + self.importance + self.relevance

    def to_json(self) -> dict:
        return {
            "recency": round(self.recency, 4),
            "importance": round(self.importance, 4),
            "relevance": round(self.relevance, 4),
            "age_days": round(self.age_days, 2),
            "prior": self.prior,
            "salience": self.salience,
            "hit_bonus": round(self.hit_bonus, 4),
            "bm25": round(self.bm25, 4),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "fusion": self.fusion,
        }


def last_touched(e: Entry) -> datetime | None:
    """The later of creation and start of validity: what recency decays from.

    Not the last recall: letting each recall reset recency made recalled entries crowd out
    the rest (a measured -0.055 recall@10 on LoCoMo); recalls count through the hit bonus.
    """
    times = [t for t in (e.created_at, e.valid_from) if t is not None]
    return max(times) if times else None


def recency_of(touched: float | None, now: float) -> tuple[float, float]:
    """(recency in [0, 1], age in days) from epoch seconds; no time at all counts as brand new."""
    if touched is None:
        return 1.0, 0.0
    age = max(0.0, (now - touched) / 86400.0)
    return 0.5 ** (age / RECENCY_HALF_LIFE_DAYS), age


def recency(e: Entry, now: datetime) -> tuple[float, float]:
    t = last_touched(e)
    return recency_of(t.timestamp() if t is not None else None, now.timestamp())


def importance_of(type_: str, salience: float, hits: int) -> tuple[float, float, float, float]:
    """(importance, prior, salience, hit bonus); importance is capped at IMPORTANCE_CAP."""
    prior = TYPE_PRIOR.get(type_, TYPE_PRIOR["fact"])
    bonus = min(HIT_BONUS_MAX, HIT_BONUS * max(0, hits))
    sal = max(0.0, salience)
    return min(IMPORTANCE_CAP, prior + sal + bonus), prior, sal, bonus


def importance(e: Entry) -> tuple[float, float, float, float]:
    return importance_of(e.effective_type, e.salience, e.hits)


def blend(bm25_norm: float, cosine: float | None, fusion: str = "capped", weight: float = DEFAULT_COSINE_WEIGHT) -> tuple[float, str]:
    """Relevance in [0, 1]: BM25 alone without an embedder, else the chosen fusion."""
    if cosine is None:
        return bm25_norm, "bm25"
    c = max(0.0, min(1.0, cosine))
    if fusion == "blend":
        return BLEND_COSINE * c + BLEND_BM25 * bm25_norm, "blend-0.7-0.3"
    return weight * c + (1 - weight) * bm25_norm, f"capped-{weight:g}"


def score(e: Entry, now: datetime, bm25_norm: float, cosine: float | None = None) -> Trace:
    t = last_touched(e)
    return score_parts(e.effective_type, e.salience, e.hits, t.timestamp() if t else None, now.timestamp(), bm25_norm, cosine)


def score_parts(
    type_: str,
    salience: float,
    hits: int,
    touched: float | None,
    now: float,
    bm25_norm: float,
    cosine: float | None = None,
    fusion: str = "capped",
    weight: float = DEFAULT_COSINE_WEIGHT,
    span: tuple[float, float] | None = None,
) -> Trace:
    """The score from plain numbers (as the index stores them): the same as `score` on the entry.
    With `span` (the lowest and highest relevance among the candidates), relevance is min-max
    normalized into [0, 1]."""
    rec, age = recency_of(touched, now)
    imp, prior, sal, bonus = importance_of(type_, salience, hits)
    rel, fusion = blend(bm25_norm, cosine, fusion, weight)
    if span is not None:
        rel = (rel - span[0]) / (span[1] - span[0])
    return Trace(rec, imp, rel, age, prior, sal, bonus, bm25_norm, cosine, fusion)


def idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 idf, always positive."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def attainable_bm25(query_terms: list[str], df: dict[str, int], n_docs: int) -> float:
    """The sum of the query terms' idf (an unseen term counts with df 0): what a match of
    every term would roughly score."""
    return sum(idf(df.get(t, 0), n_docs) for t in dict.fromkeys(query_terms))


def normalize_bm25(scores: list[float], attainable: float = 0.0) -> list[float]:
    """BM25 in [0, 1]: divided by max(best candidate, CAP_TAU x attainable). With attainable 0
    (keyword-only recall) the best candidate gets 1; with it (the capped hybrid) a weak
    accidental match stays small."""
    top = max(max(scores, default=0.0), CAP_TAU * attainable)
    if top <= 0:
        return [0.0 for _ in scores]
    return [min(1.0, max(0.0, s) / top) for s in scores]


# BM25 (Robertson/Sparck Jones with Lucene's always-positive IDF), computed over the index's
# tokens so it means the same in every scope and corpus size.
BM25_K1, BM25_B = 1.2, 0.75


def bm25(query_terms: list[str], doc_tokens: list[str], df: dict[str, int], n_docs: int, avgdl: float) -> float:
    if not doc_tokens or n_docs <= 0:
        return 0.0
    tf: dict[str, int] = {}
    wanted = set(query_terms)
    for t in doc_tokens:
        if t in wanted:
            tf[t] = tf.get(t, 0) + 1
    if not tf:
        return 0.0
    dl = len(doc_tokens)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * dl / (avgdl or dl))
    total = 0.0
    for t, f in tf.items():
        total += idf(df.get(t, 0), n_docs) * f * (BM25_K1 + 1) / (f + norm)
    return total
