"""Recall: candidates from the index -> score -> hits with a trace (DESIGN section 6).

Keyword candidates come from the full-text index (its rarest query terms, so the cost stays
bounded at any scope size); with an embedder, the nearest vectors are added and relevance
becomes the hybrid. Everything here is read-only: hit counts are recorded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta

from memdream.index.db import Index, Row
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT, Entry  # noqa: F401 (Entry: Hit's type)
from memdream.model.dates import day_spellings, named_days, names_day, names_past_span
from memdream.model.scoring import CONVERSATION_GAP, DEFAULT_COSINE_WEIGHT, NEIGHBOUR_SHARE, NEXT_TURNS, QUESTION_SHARE, Trace, asks, attainable_bm25, blend, bm25, dense_relevance, idf, keyword_relevance, lift_for, query_tense, query_weights, score_parts
from memdream.store.vault import Scope

CANDIDATES = 100  # keyword candidates scored per query
MAX_QUERY_DAYS, DAY_CANDIDATES = 3, 200  # days a query may name; memories said on one, read as candidates
CONTEXT_SOURCES, CONTEXT_SOURCES_MAX = 20, 50  # the best-matching memories (2 x k within these) whose neighbours get a floor
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
    when = (as_of or now).timestamp()
    n_docs, avgdl = index.corpus_stats()
    rows: dict[int, tuple[Row, float | None]] = {}
    # A day the query names ("在5月6号…", "on 1 February, 2023") is a query term held by every
    # memory said that day, with the idf of how many were (model/dates.py). Its words stand for
    # the day, not for themselves: they leave the query's terms (5, 月, 6, 号 would match any
    # memory holding a 5 or a 月) and the day weighs as many terms as they were.
    # A memory that writes the day out ("the parcel arrives on July 3") is about that day as
    # much as one said on it: it holds the day too (`naming`), or taking the day's words out of
    # the query would leave it without the very words that matched.
    days: list[tuple[str, float, float, float]] = []  # (day, start, end, weighted idf)
    naming: dict[int, str] = {}  # rowid -> the day its text writes out
    named = named_days(query, as_of or now)[:MAX_QUERY_DAYS]
    terms_text = query
    tz = (as_of or now).tzinfo
    for d, (a, b) in reversed(named):
        start = datetime.combine(d, time(0), tzinfo=tz).timestamp()
        end = datetime.combine(d + timedelta(days=1), time(0), tzinfo=tz).timestamp()
        said, on_day = index.created_between(scope, layers, start, end, DAY_CANDIDATES)
        if said:
            day_terms = index.query_terms(query[a:b])
            days.append((d.isoformat(), start, end, max(1, len(day_terms)) * idf(said, n_docs)))
            terms_text = terms_text[:a] + " " + terms_text[b:]
            for row in on_day:
                rows[row.rowid] = (row, None)  # BM25 computed below
            # The day as the query writes it, then in the other ways a memory may ("3 July" finds
            # 7月3日 and 2025-07-03): the memories holding most of its words are read.
            others = [t for t in dict.fromkeys(index.query_terms(" ".join(day_spellings(d)))) if t not in day_terms]
            found = [
                hit
                for words in (day_terms, others) if words
                for hit in index.keyword_candidates(scope, "", DAY_CANDIDATES, layers=layers, current_only=as_of is None, postings=postings, terms=words)
            ]
            for row, _ in found:
                if row.rowid not in naming and row.ca is not None and names_day(row.line.split("<!--", 1)[0], d, datetime.fromtimestamp(row.ca, tz).date()):
                    naming[row.rowid] = d.isoformat()
                    rows.setdefault(row.rowid, (row, None))
    # A question about the past, or about a day, a month or a year before today: recency does
    # not lift; one about now: recency lifts as much as it can (scoring.query_tense, LIFT_NOW).
    tense = query_tense(query)
    past = tense == "past" or any(d < (as_of or now).date() for d, _ in named) or names_past_span(query, as_of or now)
    about_now = not past and tense == "now"
    terms = index.query_terms(terms_text)  # cut once (a lookup of its pieces in the index), used for candidates and scores
    found = index.keyword_candidates(
        scope, terms_text, CANDIDATES, layers=layers, current_only=as_of is None, postings=postings, ended=ENDED_CANDIDATES if as_of is None else 0, terms=terms
    )
    ended = [(row, s) for row, s in found if as_of is None and row.vt is not None]
    for row, score in found:
        if as_of is not None or row.vt is None:
            rows[row.rowid] = (row, score)
    if dense is not None:
        for row in dense.nearest:
            if row.layer in layers:
                rows.setdefault(row.rowid, (row, None))  # BM25 computed below
    heirs: dict[int, tuple[Row, float]] = {}  # a current line -> the ended line it stands for, and its BM25
    if ended:
        for row, sc, src in _successors(index, scope, ended, layers):
            heirs[row.rowid] = (src, sc)
            old = rows.get(row.rowid)
            if old is None or (old[1] is not None and old[1] < sc):
                rows[row.rowid] = (row, sc)

    def is_valid(row: Row) -> bool:
        if row.layer not in layers:
            return False
        if as_of is None:
            return row.vt is None
        return (row.vt is None or when < row.vt) and (row.vf is None or when >= row.vf)

    valid = [(row, s) for row, s in rows.values() if is_valid(row)]
    if not valid:
        return []
    df = index.document_frequency(terms)
    weights = query_weights(terms)
    # Keyword relevance on an absolute scale: BM25 over what a memory holding every query term
    # that occurs in the index would score (terms found nowhere say nothing about any memory).
    # A named day counts as its words' number of terms, each held once at average length: idf.
    attainable = attainable_bm25([t for t in terms if df.get(t)], df, n_docs, weights) + sum(w for *_, w in days)

    def on_days(row: Row) -> tuple[str | None, float]:
        named_here = naming.get(row.rowid)
        hit = [(day, w) for day, start, end, w in days if (row.ca is not None and start <= row.ca < end) or day == named_here]
        return (hit[0][0] if hit else None), sum(w for _, w in hit)

    def score_all(pairs: list[tuple[Row, float | None]]) -> list[_Scored]:
        missing = [row.rowid for row, s in pairs if s is None]
        if missing:  # the dense side's nearest, a named day's lines and the neighbours: BM25 over their tokens
            toks = index.tokens_of(missing)
            # A successor brought in first by the dense side or a named day still stands for the
            # line it ended: it keeps that line's BM25 when its own is lower.
            pairs = [
                (row, s if s is not None else max(bm25(terms, toks.get(row.rowid, "").split(), df, n_docs, avgdl, weights), heirs.get(row.rowid, (row, 0.0))[1]))
                for row, s in pairs
            ]
        cos = None
        if dense is not None and pairs:
            srcs = [heirs[row.rowid][0] for row, _ in pairs if row.rowid in heirs]
            cos = dense.cosines([row for row, _ in pairs] + srcs)
        out: list[_Scored] = []
        for row, s in pairs:
            c = d = None
            if cos is not None and dense is not None:
                c = cos.get(row.rowid, 0.0)
                if row.rowid in heirs:  # a change stands for the value it ended on the dense side too
                    c = max(c, cos.get(heirs[row.rowid][0].rowid, 0.0))
                d = dense_relevance(c, dense.mean, dense.std, dense.n)
            day, w = on_days(row) if days else (None, 0.0)
            kw = keyword_relevance((s or 0.0) + w, attainable)
            rel = blend(kw, c, fusion, cosine_weight, d)[0]
            asked = None
            if rel > 0 and asks(row.line):  # as Trace.asking
                asked, rel = rel, rel * QUESTION_SHARE
            out.append(_Scored(row, kw, c, d, day, rel, asked, lift_for(row.type, row.salience, row.hits, _touched(row), when, past, about_now)))
        return out

    def trace(x: _Scored) -> Trace:
        """The whole trace of a winner: `score_parts` on the numbers it was ranked by."""
        t = score_parts(x.row.type, x.row.salience, x.row.hits, _touched(x.row), when, x.kw, x.cos, fusion, cosine_weight, x.dense, past, about_now)
        if x.asked is not None:
            t = t.asking()
        if x.near is not None:
            t = t.with_context(x.relevance, x.near)
        if not x.day:
            return t
        said = any(day == x.day and x.row.ca is not None and start <= x.row.ca < end for day, start, end, _ in days)
        return replace(t, day=x.day, day_written=not said)

    scored = score_all(valid)
    scored = _with_context(index, scope, scored, layers, is_valid, score_all, min(CONTEXT_SOURCES_MAX, max(CONTEXT_SOURCES, 2 * k)))
    if rank_by == "relevance":
        scored.sort(key=lambda x: (-x.relevance, -x.score, x.row.rowid))
    else:
        scored.sort(key=lambda x: (-x.score, -x.relevance, x.row.rowid))
    # Only the winners are traced and parsed back into entries.
    return [Hit(x.row.entry(), t.score, t) for x in scored[:k] if x.relevance > 0 for t in (trace(x),)]


def _touched(row: Row) -> float | None:
    """What recency decays from (scoring.last_touched), from a row's numbers."""
    return max((t for t in (row.ca, row.vf) if t is not None), default=None)


class _Scored:
    """One candidate as recall ranks it: the numbers of its trace, without the trace (a few
    hundred candidates are scored a query; only the winners are traced, search.recall's
    `trace`, from these same numbers)."""

    __slots__ = ("row", "kw", "cos", "dense", "day", "relevance", "asked", "near", "lift")

    def __init__(self, row: Row, kw: float, cos: float | None, dense: float | None, day: str | None, relevance: float, asked: float | None, lift: float) -> None:
        self.row, self.kw, self.cos, self.dense, self.day = row, kw, cos, dense, day
        self.relevance, self.asked, self.lift = relevance, asked, lift
        self.near: str | None = None  # the neighbour whose match raised relevance (Trace.with_context)

    @property
    def score(self) -> float:
        """Relevance lifted by recency and importance (Trace.score)."""
        return self.relevance * self.lift

    @property
    def match(self) -> float:
        """How well it matched, before a question's share (Trace.match)."""
        return self.asked if self.asked is not None else self.relevance


def _with_context(
    index: Index,
    scope: Scope,
    scored: list[_Scored],
    layers: tuple[str, ...],
    is_valid: Callable[[Row], bool],
    score_all: Callable[[list[tuple[Row, float | None]]], list[_Scored]],
    sources: int,
) -> list[_Scored]:
    """Each of the best-matching memories raises the relevance of the NEXT_TURNS memories said
    next after it (within a conversation's gap) to NEIGHBOUR_SHARE of its own: a reply leans on the turn it
    answers (model/scoring.py, NEIGHBOUR_SHARE). Only for a memory that matches the query itself,
    if only a little; a floor from a memory's own relevance, so nothing is lifted twice over, and
    nothing is lowered."""
    best = [(x, x.match) for x in sorted((x for x in scored if x.relevance > 0), key=lambda x: (-x.match, x.row.rowid))[:sources]]
    if not best:
        return scored
    around = index.said_after(scope, [x.row for x, _ in best], layers, CONVERSATION_GAP, NEXT_TURNS)
    if not around:
        return scored
    by_id = {x.row.rowid: x for x in scored}
    new = {n.rowid: n for ns in around.values() for n in ns if n.rowid not in by_id and is_valid(n)}
    if new:
        for x in score_all([(n, None) for n in new.values()]):
            by_id[x.row.rowid] = x
            scored.append(x)
    for src, own in best:  # best first; `own` is the source's match before any floor
        floor = NEIGHBOUR_SHARE * own
        name = ""
        for n in around.get(src.row.rowid, ()):
            x = by_id.get(n.rowid)
            if x is None or not 0 < x.relevance < floor:
                continue  # it must match the query itself, if only a little: nothing is lent to what does not
            name = name or src.row.entry().id
            x.relevance, x.near = floor, name  # as Trace.with_context
    return scored


def _successors(index: Index, scope: Scope, found: list[tuple[Row, float]], layers: tuple[str, ...]) -> list[tuple[Row, float, Row]]:
    """The current lines that superseded the ended candidates `found`, each with the best BM25 of a
    line it replaced, and that line: a change stands for the value it ended ("Traded in the Mazda and got a
    Kia" answers what "took the Mazda for a drive" answered), as a duplicate stands for what
    it folded. A supersede links the ended line's vt to its successor's vf (engine/write.py
    writes both with one `now`); the successor must have superseded something (sup=)."""
    from memdream.model.entry import END_SUPERSEDED

    ended: dict[float, tuple[float, Row]] = {}  # vt -> (best BM25, the ended line that had it)
    for row, s in found:
        if row.vt is not None and s > ended.get(row.vt, (0.0, row))[0] and row.entry().end == END_SUPERSEDED:
            ended[row.vt] = (s, row)
    out: dict[int, tuple[Row, float, Row]] = {}
    for _ in range(SUCCESSION_HOPS):
        if not ended:
            break
        later: dict[float, tuple[float, Row]] = {}
        for row in index.superseding_at(scope, sorted(ended), layers):
            if (row.vf or 0.0) not in ended:
                continue
            s, src = ended[row.vf or 0.0]
            e = row.entry()
            if not e.supersedes:
                continue
            if row.vt is None:
                if row.rowid not in out or s > out[row.rowid][1]:
                    out[row.rowid] = (row, s, src)
            elif e.end == END_SUPERSEDED and s > later.get(row.vt, (0.0, src))[0]:
                later[row.vt] = (s, src)
        ended = later
    return list(out.values())
