"""Recall scoring (DESIGN section 6, as issue 14 amended it): relevance lifted by recency and
importance, with a trace.

    score = relevance x (1 + LIFT x (recency + importance) / (1 + IMPORTANCE_CAP))

Pure functions of an entry, the clock and the relevance signals: deterministic and testable
with a frozen clock. Recency (0..1) and importance (up to 2.0, so it weighs up to twice what
recency does: an important old warning beats merely similar new trivia) keep the source
document's meaning, but they only reorder memories that match the query comparably well;
relevance (0..1, on an absolute scale) gates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime

from memdream.model.entry import TYPE_PRIOR, Entry
from memdream.model import lazyre as re

# BM25 (Robertson/Sparck Jones with Lucene's always-positive IDF), computed over the index's
# tokens so it means the same in every scope and corpus size.
BM25_K1, BM25_B = 1.2, 0.75
RECENCY_HALF_LIFE_DAYS = 30.0  # recency halves every 30 days since the entry was last touched
IMPORTANCE_CAP = 2.0  # type prior + salience + recall bonus never exceeds this
HIT_BONUS = 0.05  # each successful recall adds this much importance ...
HIT_BONUS_MAX = 0.5  # ... up to this much
# Relevance gates (issue 14). The parts keep the source document's meaning (recency halves every
# 30 days; importance = type prior + salience + recalls, capped at 2.0; relevance in [0, 1]), but
# they no longer add up: recency and importance *lift* relevance, by at most a half:
#     score = relevance x (1 + LIFT x (recency + importance) / (1 + IMPORTANCE_CAP))
# so they reorder memories that match the query comparably well, and never lift one that barely
# matches above one that matches well: the lift runs from 1.07 (an old plain fact) to 1.5, so a
# memory must match at least 0.71 as well as another to pass it. Importance weighs up to twice
# what recency does, as in the seed (an important old warning beats similar new trivia). An
# additive score let any candidate sharing one common word collect recency and importance for
# free: on LoCoMo it ranked 0.42 at recall@10 against 0.61 for relevance alone. LIFT 0.5 against
# 1 (at most doubling), on the five sets of bench/recall_suite.py, each against relevance alone
# (docs/recall.md has the table): the worst loss of any set is smaller (LoCoMo 0.001 against
# 0.007 keyword-only), the gain on changing facts smaller too (0.031 against 0.041).
LIFT = 0.5
# Relevance is on an absolute scale, so "how well it matched" survives: keyword relevance is
# BM25 divided by the most the query can score, (k1 + 1) x the sum of its terms' idf (a memory
# holding each query term once, at average length, gets about 0.45); dense relevance is how far the
# cosine stands above the scope's own cosines for this query, in standard deviations, DENSE_FULL_Z
# of them counting as a full match (so it is calibrated per embedder and per query, whatever
# range an embedder's cosines live in).
DENSE_FULL_Z = 4.0
DENSE_PRIOR_N, DENSE_PRIOR_STD = 10, 0.1
# Fusion with an embedder. "weighted" (the default): relevance = (1 - w) x keyword + w x dense,
# both on their absolute scales, with w the embedder's measured weight for the query's script
# (model/scoring.dense_weight): a multilingual embedder is not equally good in every language
# (USE: LoCoMo dense 0.31 against keyword 0.61; MemoryBank Chinese dense 0.81 against 0.76), so
# one weight for both made fusion lose to its best part on one of them. "blend" is the source
# document's 0.7 x cosine + 0.3 x BM25; "capped" is the earlier default's form, w x cosine +
# (1 - w) x keyword relevance (the keyword side now on its absolute scale, which is what its cap
# approximated), kept by name.
BLEND_COSINE, BLEND_BM25 = 0.7, 0.3
DEFAULT_COSINE_WEIGHT = 0.2  # for embedders without a measured weight (remote endpoints)
FUSIONS = ("weighted", "capped", "blend")
# What was said right after a match (docs/recall.md, "What was said next"). A conversation's
# turns lean on each other: the answer to "what did Melanie paint?" is the turn after "what did
# you paint?", and it may share no word with the question. So the memory said next after a
# matching one (the entry of the scope created next, strictly later and at most CONVERSATION_GAP
# seconds later: the usual 30-minute sessionization timeout) is relevant at least NEIGHBOUR_SHARE
# times as much as that match, if it matches the query itself at all (two notes remembered one
# after the other are not a conversation: the second is not lent relevance for words it lacks
# entirely). A floor, never a sum: it lifts what matched less (or not at all)
# and lowers nothing, and at a half it never puts the reply above the memory that matched (a sum
# lost on the filler set, where chat on the topic came to outrank the one statement that
# matters). Only the next memory, not the one before: answers follow what they answer, and a
# floor for the memory said before a match also lifted whatever was written just before a strong
# match (the seed's trivia written before the wiki line outranked the old warning).
NEIGHBOUR_SHARE = 0.5

# A memory that ends asking ("你计划去哪里旅行？", "Wow! What did you paint?") holds no answer
# to a question about its topic: it echoes that question's words. Its relevance counts this
# share of its match; the memories said next after it still lean on its whole match (the
# reply holds the answer).
QUESTION_SHARE = 0.5


def asks(text: str) -> bool:
    """Does the memory's text (a line's metadata aside) end with a question mark?"""
    return text.split("<!--", 1)[0].strip().rstrip(" \t\"'”’)）]").endswith(("?", "？"))


CONVERSATION_GAP = 30 * 60.0
# The next two memories, not one: an exchange is the other side's reply and the turn after it
# (bm25s over the suite, the floor on the next 1 / 2 / 3 / 4 turns: LoCoMo 0.584 / 0.595 / 0.595
# / 0.594, MemoryBank 0.716 / 0.731 / 0.726 / 0.719, filler 0.357 throughout, changing facts
# 0.168 / 0.171 / 0.175 / 0.175; two is as good as more everywhere but changing facts).
NEXT_TURNS = 2


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
    bm25: float  # keyword relevance in [0, 1] (BM25 over the query's attainable BM25)
    cosine: float | None  # None without an embedder
    fusion: str  # how relevance was made: "bm25" or the hybrid's name
    dense: float | None = None  # dense relevance in [0, 1] (the cosine's standing in the scope)
    context: float | None = None  # the floor a neighbouring match gave relevance, when it raised it
    near: str | None = None  # the id of that neighbour
    day: str | None = None  # the day the query names that this memory was said on (its idf is in bm25)
    day_written: bool = False  # ... not said on it: its text writes that day out ("arrives on July 3")
    asked: float | None = None  # a memory that ends asking: its whole match (relevance is QUESTION_SHARE of it)
    past: bool = False  # the query asks about the past: recency does not lift (`asks_about_past`)
    now: bool = False  # the query asks about now: the lift is LIFT_NOW (`query_tense`)

    @property
    def match(self) -> float:
        """How well the memory matched, before a question's share (what its replies lean on)."""
        return self.asked if self.asked is not None else self.relevance

    def asking(self) -> "Trace":
        """This trace for a memory that ends asking (`asks`)."""
        return replace(self, relevance=self.relevance * QUESTION_SHARE, asked=self.relevance)

    def with_context(self, floor: float, near: str) -> "Trace":
        """This trace with relevance raised to `floor` (NEIGHBOUR_SHARE x the relevance of `near`,
        a memory said next to it)."""
        return replace(self, relevance=floor, context=floor, near=near) if floor > self.relevance else self

    @property
    def lift(self) -> float:
        return lift_of(0.0 if self.past else self.recency, self.importance, LIFT_NOW if self.now else LIFT)

    @property
    def score(self) -> float:
        return self.relevance * self.lift

    def to_json(self) -> dict:
        return {
            "recency": round(self.recency, 4),
            "importance": round(self.importance, 4),
            "relevance": round(self.relevance, 4),
            "lift": round(self.lift, 4),
            "age_days": round(self.age_days, 2),
            "prior": self.prior,
            "salience": self.salience,
            "hit_bonus": round(self.hit_bonus, 4),
            "bm25": round(self.bm25, 4),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "dense": None if self.dense is None else round(self.dense, 4),
            "fusion": self.fusion,
            "context": None if self.context is None else round(self.context, 4),
            "near": self.near,
            "day": self.day,
            "day_written": self.day_written,
            "asked": None if self.asked is None else round(self.asked, 4),
            "past": self.past,
            "now": self.now,
        }


_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def cjk_share(text: str) -> float:
    """The share of the text's letters that are Chinese, Japanese or Korean characters."""
    letters = _LETTER.findall(text)
    return sum(1 for ch in letters if _CJK_CHAR.match(ch)) / len(letters) if letters else 0.0


def dense_weight(query: str, latin: float, cjk: float) -> float:
    """The embedder's fusion weight for this query: its measured weight for Latin-script text and
    for CJK text, mixed by the query's share of CJK characters."""
    s = cjk_share(query)
    return latin * (1.0 - s) + cjk * s


# A question about the past ("When did Melanie paint a sunrise?", "What did I tell you on May 2?",
# 你曾经给我推荐过哪些书？, 上次我们聊了什么？) asks about something that happened, and what happened
# stays true: that a memory is newer says nothing about whether it is the answer. Recency (whether a
# memory is still current) lifts only for a question about now ("Where do I live these days?",
# 我现在在哪上班？), or one that says neither; a word for now ("What did she paint recently?", 最近)
# keeps it.
_PAST_EN = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|used to|ago|yesterday|once|earlier|previously|back then"
    r"|last (?:week|month|year|time|night|weekend|summer|winter|spring|fall|autumn))\b",
    re.IGNORECASE,
)
_SUPPOSING = re.compile(r"\b(?:if|as if|wish) (?:i|you|he|she|we|they|it) were\b", re.IGNORECASE)  # "If you were ordering ...": not the past
_NOW_EN = re.compile(r"\b(?:now|currently|current|these days|nowadays|lately|recently|latest|still|anymore|today)\b", re.IGNORECASE)
# 过 after a verb marks an experience (去过, 推荐过); not in 不过, 通过, 难过, 过来, 过程, 过敏, 过生日 ...
_PAST_ZH = re.compile(r"曾|以前|之前|上次|那次|那天|当时|那时|昨天|前天|去年|上周|上个月|[\u4e00-\u9fff](?<![不通超经难太度越错路放改])过(?![来去程度分头敏生年节])")
_NOW_ZH = re.compile(r"现在|目前|如今|最近|当前|这些天|近来|还在|今天")


def query_tense(query: str) -> str:
    """"now" when the query says it asks about now (now, these days, currently, 现在, 最近, ...),
    "past" when it asks about something that happened, else ""."""
    if _NOW_EN.search(query) or _NOW_ZH.search(query):
        return "now"
    return "past" if _PAST_EN.search(_SUPPOSING.sub(" ", query)) or _PAST_ZH.search(query) else ""


def asks_about_past(query: str) -> bool:
    """Does the query ask about something that happened, and not about now?"""
    return query_tense(query) == "past"


# A question that says it asks about now ("What car do I drive these days?", 我现在在哪上班？)
# wants what holds now: among memories that match it comparably well, the newer is likelier the
# answer, so the lift is as strong as it was before issue 14's second round (at most doubling).
LIFT_NOW = 1.0


def lift_of(recency: float, importance: float, strength: float | None = None) -> float:
    """How much recency and importance raise relevance: 1 + LIFT (or `strength`) x their share of the most they can be."""
    return 1.0 + (LIFT if strength is None else strength) * (recency + importance) / (1.0 + IMPORTANCE_CAP)


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


def keyword_relevance(bm25_score: float, attainable: float) -> float:
    """BM25 on an absolute scale, in [0, 1]: over the most the query can score, (k1 + 1) x the
    sum of its terms' idf (BM25's bound as term frequency grows and length shrinks). A memory
    holding each query term once, at average length, scores 1 / (k1 + 1), about 0.45."""
    if attainable <= 0 or bm25_score <= 0:
        return 0.0
    return min(1.0, bm25_score / ((BM25_K1 + 1.0) * attainable))


def dense_relevance(cosine: float, mean: float, std: float, n: int = 1_000_000) -> float:
    """A cosine's standing among the scope's `n` cosines for the query, in [0, 1]: DENSE_FULL_Z
    standard deviations above their mean count as a full match. A small scope says little about
    what an unrelated cosine looks like, so its mean and spread are shrunk towards a prior (mean
    0, spread DENSE_PRIOR_STD) worth DENSE_PRIOR_N cosines."""
    k = DENSE_PRIOR_N
    m = n * mean / (n + k)
    var = (n * (std * std + (mean - m) ** 2) + k * (DENSE_PRIOR_STD * DENSE_PRIOR_STD + m * m)) / (n + k)
    sd = math.sqrt(var)
    if sd <= 1e-9:
        return 0.0
    return max(0.0, min(1.0, (cosine - m) / (DENSE_FULL_Z * sd)))


def blend(
    keyword: float,
    cosine: float | None,
    fusion: str = "weighted",
    weight: float = DEFAULT_COSINE_WEIGHT,
    dense: float | None = None,
) -> tuple[float, str]:
    """Relevance in [0, 1]: keyword relevance alone without an embedder, else the chosen fusion."""
    if cosine is None:
        return keyword, "bm25"
    c = max(0.0, min(1.0, cosine))
    if fusion == "blend":
        return BLEND_COSINE * c + BLEND_BM25 * keyword, "blend-0.7-0.3"
    if fusion == "capped":
        return weight * c + (1 - weight) * keyword, f"capped-{weight:g}"
    d = dense if dense is not None else 0.0
    return (1 - weight) * keyword + weight * d, f"weighted-{weight:.2g}"


def lift_for(type_: str, salience: float, hits: int, touched: float | None, now: float, past: bool = False, about_now: bool = False) -> float:
    """`score_parts(...).lift` without building the trace: recall ranks a few hundred candidates
    by relevance x this, and traces only the ones it returns. The same functions on the same
    numbers, so the same float as the trace's (whose score is relevance x lift too)."""
    rec = 0.0 if past else recency_of(touched, now)[0]
    return lift_of(rec, importance_of(type_, salience, hits)[0], LIFT_NOW if about_now else LIFT)


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
    fusion: str = "weighted",
    weight: float = DEFAULT_COSINE_WEIGHT,
    dense: float | None = None,
    past: bool = False,
    about_now: bool = False,
) -> Trace:
    """The score from plain numbers (as the index stores them): the same as `score` on the entry.
    `past` / `about_now`: the query asks about the past / about now (`query_tense`)."""
    rec, age = recency_of(touched, now)
    imp, prior, sal, bonus = importance_of(type_, salience, hits)
    rel, name = blend(bm25_norm, cosine, fusion, weight, dense)
    return Trace(rec, imp, rel, age, prior, sal, bonus, bm25_norm, cosine, name, dense, past=past, now=about_now)


def idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 idf, always positive."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


# A one-character Chinese query word (新, 要, 加, 住) says less about a memory than a word of two
# or more (接口, 支付): it counts half, unless the query has nothing longer (茶, 住哪).
SINGLE_CJK_WEIGHT = 0.5


def query_weights(query_terms: list[str]) -> dict[str, float]:
    """The weight of each query term in BM25: 1, or SINGLE_CJK_WEIGHT for a single Chinese
    character in a query that also has longer Chinese terms."""
    singles = [t for t in query_terms if len(t) == 1 and _CJK_CHAR.match(t)]
    if not singles or not any(len(t) > 1 and _CJK_CHAR.match(t) for t in query_terms):
        return {}
    return {t: SINGLE_CJK_WEIGHT for t in singles}


def attainable_bm25(query_terms: list[str], df: dict[str, int], n_docs: int, weights: dict[str, float] | None = None) -> float:
    """The sum of the query terms' (weighted) idf, an unseen term counting with df 0: what a
    match of every term would roughly score."""
    w = weights or {}
    return sum(w.get(t, 1.0) * idf(df.get(t, 0), n_docs) for t in dict.fromkeys(query_terms))




def bm25(
    query_terms: list[str], doc_tokens: list[str], df: dict[str, int], n_docs: int, avgdl: float, weights: dict[str, float] | None = None
) -> float:
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
    w = weights or {}
    total = 0.0
    for t, f in tf.items():
        total += w.get(t, 1.0) * idf(df.get(t, 0), n_docs) * f * (BM25_K1 + 1) / (f + norm)
    return total
