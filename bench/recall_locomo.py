"""Benchmark: LoCoMo retrieval with memdream's recall, side by side with a plain BM25.

    .venv/bin/python bench/recall_locomo.py [--quick] [--data ../shared/bench/locomo/locomo10.json]
                                            [--report FILE] [--note TEXT] [--count-hits]
                                            [--no-experiments] [--diagnose N]

Each LoCoMo conversation goes into fresh vaults of its own (one per memory text variant), one
memory per turn, written in order through the public write path, ``Memory.write(text,
type="fact")``, with a FrozenClock at the turn's session date (plus 5 s per turn); the clock is
then set 10 minutes after the last turn and every question (categories 1-4, non-empty
evidence) is asked with ``Memory.recall(question, k=10, ...)``. Memory texts: ``Turn.memory()``
("{speaker}: {text}", with " [image: caption]" when the turn shows a picture), and the same
with the session date first ("[1:56 pm on 8 May, 2023] Caroline: ...").

Configurations, all in the same run:

- memdream keyword-only, default scoring (recency + importance + relevance): ``rank_by="score"``;
- memdream keyword-only, relevance alone: ``rank_by="relevance"``;
- bm25s (Lucene BM25, k1=1.5, b=0.75) with its default tokenizer, English stopwords and
  PyStemmer English stemming, over every turn's text (the same texts, written by no write path).

The write path may refuse a turn (a secret look-alike) and folds repeats into one entry
("Nate: Bye Joanna!" said twice): each entry id maps to the turns it stands for, so a hit
counts for every one of them; refused turns can never be found by memdream (bm25s still
indexes them) and are counted in the report. A memory is one line, so the line breaks inside
37 LoCoMo turns are replaced by a space for every configuration (written as is, 36 of them
would be refused).

Metrics (``bench/locomo.py``): turn recall@5/@10 and session recall@5 over the turns the top-k
hits stand for, MRR@10 of the first hit holding an evidence turn, per category and overall
(micro average), and the p50/p95 latency of one ``recall`` call (bm25s: tokenize + retrieve).

``recall`` counts its hits in a journal that is folded into the memory files every 1,000 hits,
which then raises the recalled entries' importance and recency: across ~150 questions per
conversation this would make each answer depend on the questions asked before it. By default
the journal is deleted after each call (outside the timing), so the append stays in the timed
path and the fold never runs; ``--count-hits`` keeps the facade's behaviour as is. The
experiments section measures the difference.

Experiments (``--no-experiments`` to skip) re-ask the questions on the no-date vaults with one
thing changed by monkeypatching memdream *in this process only* (query term cut, candidate
count, BM25 constants, recency weight), plus bm25s over memdream's own tokens to separate
tokenization from scoring. Single-threaded throughout (BLAS/numba thread pools pinned to 1).
"""

from __future__ import annotations

# one thread everywhere, before numpy (via bm25s) loads
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import sqlite3  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.errors import RefusedInput, SecretRefused  # noqa: E402
from memdream.memory import Memory  # noqa: E402

REPORT_START = "<!-- bench:locomo:start -->"
REPORT_END = "<!-- bench:locomo:end -->"
K = 10
SECONDS_PER_TURN = 5
QUERY_AFTER = timedelta(minutes=10)
METRIC_NAMES = ("R@5", "R@10", "S@5", "MRR")
VARIANTS = {"plain": False, "dated": True}  # memory text variant -> with the session date prefix

# memdream configurations: (name, kwargs). Keys in RECALL_KWARGS go to `Memory.recall`; any
# other key (e.g. "embedder", once the facade takes one) is an *open* option: configurations
# with the same open options share one vault per conversation and text variant, so appending
#     ("memdream hybrid", {"embedder": "e5", "rank_by": "score"})
# ingests once more with that embedder (see `open_memory` below) and is reported alongside.
RECALL_KWARGS = {"rank_by", "as_of"}
MEMDREAM_CONFIGS: list[tuple[str, dict]] = [
    ("memdream score", {"rank_by": "score"}),
    ("memdream relevance", {"rank_by": "relevance"}),
]
# Hybrid configurations, added with --embedders use,e5 (each needs its package installed).
EMBEDDER_CONFIGS = lambda name: [  # noqa: E731
    (f"memdream+{name} score", {"rank_by": "score", "embedder": name}),
    (f"memdream+{name} relevance", {"rank_by": "relevance", "embedder": name}),
]
BM25S_NAME = "bm25s"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


def memory_text(turn: locomo.Turn, with_date: bool) -> str:
    """`Turn.memory()` on one line: the write path refuses line breaks ("a memory is one line"),
    and 37 LoCoMo turns hold some, so their lines are joined with a space, as any caller would."""
    return _BREAKS.sub(" ", turn.memory(with_date)).strip()


_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def parse_date(s: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" -> an aware datetime (UTC)."""
    return datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turn_times(turns: list[locomo.Turn]) -> list[datetime]:
    """Each turn's write time: its session's date plus SECONDS_PER_TURN per turn, in order."""
    out, last_session, i = [], None, 0
    for t in turns:
        if t.session != last_session:
            last_session, i = t.session, 0
        out.append(parse_date(t.session_date) + timedelta(seconds=SECONDS_PER_TURN * i))
        i += 1
    return out


# ---- memdream ---------------------------------------------------------------------------


@dataclass
class Ingested:
    mem: Memory
    clock: FrozenClock
    dias_of: dict[str, list[str]]  # entry id -> the turns it stands for, in order
    refused: list[tuple[str, str]] = field(default_factory=list)  # (dia_id, why)
    duplicates: list[tuple[str, str, str]] = field(default_factory=list)  # (dia_id, entry id it joined, text)
    superseded: int = 0
    write_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0


_EMBEDDERS: dict[str, object] = {}


def open_memory(root: Path, clock: FrozenClock, **open_kwargs: object) -> Memory:
    """A fresh vault for one conversation, with the named embedder if the configuration has one
    (one embedder instance per name for the whole run: the model loads once)."""
    unknown = set(open_kwargs) - {"embedder"}
    if unknown:
        raise NotImplementedError(f"memdream open options not supported: {sorted(unknown)}")
    embedder = None
    name = open_kwargs.get("embedder")
    if name:
        from memdream.embed.embedder import load_embedder

        embedder = _EMBEDDERS.setdefault(str(name), load_embedder(str(name)))
    mem = Memory(load_config(root, "locomo", "bench", env={}), clock, embedder)  # type: ignore[arg-type]
    mem.vault.init()
    return mem


def ingest(conv: locomo.Conversation, with_date: bool, root: Path, **open_kwargs: object) -> Ingested:
    times = turn_times(conv.turns)
    clock = FrozenClock(times[0])
    mem = open_memory(root, clock, **open_kwargs)
    ing = Ingested(mem, clock, {})
    t_all = time.perf_counter()
    for turn, when in zip(conv.turns, times):
        clock.set(when)
        t0 = time.perf_counter()
        try:
            out = mem.write(memory_text(turn, with_date), type="fact")
        except SecretRefused as exc:
            ing.refused.append((turn.dia_id, f"secret: {exc}"))
            continue
        except RefusedInput as exc:
            ing.refused.append((turn.dia_id, str(exc)))
            continue
        finally:
            ing.write_ms.append((time.perf_counter() - t0) * 1000)
        ids = ing.dias_of.setdefault(out.entry.id, [])
        if out.action == "duplicate":
            ing.duplicates.append((turn.dia_id, out.entry.id, memory_text(turn, with_date)))
        elif out.action == "superseded":
            ing.superseded += 1
        ids.append(turn.dia_id)
    ing.seconds = time.perf_counter() - t_all
    mem.embed_pending()  # with an embedder: embed every turn now, outside the timed recalls
    clock.set(max(times) + QUERY_AFTER)
    return ing


def memdream_ranker(
    ing: Ingested, recall_kwargs: dict, count_hits: bool, rewrite: Callable[[str], str] | None = None
) -> Callable[[str], list[list[str]]]:
    journal = ing.mem.hit_journal.path

    def rank(question: str) -> list[list[str]]:
        hits = ing.mem.recall(rewrite(question) if rewrite else question, k=K, **recall_kwargs)
        return [ing.dias_of.get(h.entry.id, []) for h in hits]

    def finish() -> None:
        if not count_hits:
            journal.unlink(missing_ok=True)

    rank.finish = finish  # type: ignore[attr-defined]
    return rank


# ---- bm25s ------------------------------------------------------------------------------


def bm25s_ranker(
    texts: list[str],
    dia_ids: list[str],
    tokenize: Callable[[list[str]], list[list[str]]] | None = None,
    stopwords: str | list[str] = "en",
    **bm25_kwargs: float,
):
    """A bm25s index over `texts`; default: bm25s's own tokenizer (English stopwords, PyStemmer)."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    if tokenize is None:

        def tokenize(xs: list[str]) -> list[list[str]]:
            return bm25s.tokenize(xs, stopwords=stopwords, stemmer=stemmer, return_ids=False, show_progress=False)

    retriever = bm25s.BM25(**bm25_kwargs)
    retriever.index(tokenize(texts), show_progress=False)
    vocab = retriever.vocab_dict

    def rank(question: str) -> list[list[str]]:
        q = [t for t in tokenize([question])[0] if t in vocab]
        if not q:
            return []
        docs, scores = retriever.retrieve([q], k=min(K, len(texts)), show_progress=False, n_threads=0)
        return [[dia_ids[int(d)]] for d, s in zip(docs[0], scores[0]) if s > 0]

    rank.finish = lambda: None  # type: ignore[attr-defined]
    return rank


# ---- scoring ----------------------------------------------------------------------------


def score_ranked(ranked: list[list[str]], evidence: list[str]) -> dict[str, float]:
    """R@5, R@10, S@5 over the turns the top-k hits stand for, and MRR@10 of the first hit."""

    def top(k: int) -> list[str]:
        return [d for dias in ranked[:k] for d in dias]

    t5, t10 = top(5), top(K)
    gold = set(evidence)
    rr = next((1.0 / (i + 1) for i, dias in enumerate(ranked[:K]) if gold.intersection(dias)), 0.0)
    return {
        "R@5": locomo.turn_recall(t5, evidence, len(t5)),
        "R@10": locomo.turn_recall(t10, evidence, len(t10)),
        "S@5": locomo.session_recall(t5, evidence, len(t5)),
        "MRR": rr,
    }


@dataclass
class Result:
    name: str
    base: str = ""  # the configuration an experiment changes one thing of
    rows: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    lat_ms: list[float] = field(default_factory=list)
    ranked: dict[tuple[str, str], list[list[str]]] = field(default_factory=dict)  # (sample, question) -> ranking

    def summary(self) -> dict[str, dict[str, float]]:
        return locomo.summarize(self.rows)


def run_questions(res: Result, conv: locomo.Conversation, rank) -> None:  # type: ignore[no-untyped-def]
    for q in conv.questions:
        t0 = time.perf_counter()
        ranked = rank(q.question)
        res.lat_ms.append((time.perf_counter() - t0) * 1000)
        rank.finish()
        res.rows.append((q.category, score_ranked(ranked, q.evidence)))
        res.ranked[(conv.sample_id, q.question)] = ranked


# ---- experiments (monkeypatching memdream in this process only) ---------------------------


# memdream's recall is still changing: each patch sets a name wherever the recall path reads
# it from (a module that imported it by name keeps its own binding) and fails loudly if none.


def _modules() -> list[object]:
    import importlib

    out = []
    for name in ("memdream.index.db", "memdream.index.postings", "memdream.recall.search", "memdream.model.scoring"):
        try:
            out.append(importlib.import_module(name))
        except ImportError:
            pass
    return out


@contextlib.contextmanager
def patched(name: str, value: object) -> Iterator[None]:
    """Set module global `name` to `value` in every recall module that has it."""
    olds = [(m, getattr(m, name)) for m in _modules() if hasattr(m, name)]
    if not olds:
        raise RuntimeError(f"no recall module defines {name}: the experiment needs updating")
    for m, _ in olds:
        setattr(m, name, value)
    try:
        yield
    finally:
        for m, old in olds:
            setattr(m, name, old)


def max_query_terms(n: int) -> contextlib.AbstractContextManager:
    return patched("MAX_QUERY_TERMS", n)


@contextlib.contextmanager
def weights(recency: float = 1.0, importance: float = 1.0) -> Iterator[None]:
    """Scale the recency and importance parts of the score (relevance stays as it is)."""
    import memdream.recall.search as search

    name = next((n for n in ("score_parts", "score") if callable(getattr(search, n, None))), None)
    if name is None:
        raise RuntimeError("memdream.recall.search has no score function to patch")
    orig = getattr(search, name)

    def scaled(*a, **kw):  # type: ignore[no-untyped-def]
        t = orig(*a, **kw)
        return dataclasses.replace(t, recency=t.recency * recency, importance=t.importance * importance)

    setattr(search, name, scaled)
    try:
        yield
    finally:
        setattr(search, name, orig)


def no_possessive(q: str) -> str:
    return re.sub(r"(?<=\w)['’]s\b", "", q)


def experiments() -> list[tuple[str, str, Callable[[], contextlib.AbstractContextManager], Callable[[str], str] | None]]:
    """(name, rank_by, patch, query rewrite) run on the no-date vaults."""
    return [
        ("relevance, MAX_QUERY_TERMS 8 -> 4", "relevance", lambda: max_query_terms(4), None),
        ("relevance, MAX_QUERY_TERMS 8 -> 16", "relevance", lambda: max_query_terms(16), None),
        ("relevance, MAX_QUERY_TERMS 8 -> all", "relevance", lambda: max_query_terms(1000), None),
        ("relevance, CANDIDATES 100 -> 1000", "relevance", lambda: patched("CANDIDATES", 1000), None),
        ("relevance, all terms + 1000 candidates", "relevance",
         lambda: _stack(max_query_terms(1000), patched("CANDIDATES", 1000)), None),
        ("relevance, BM25 k1 1.2 -> 1.5", "relevance", lambda: patched("BM25_K1", 1.5), None),
        ("relevance, BM25 k1 1.2 -> 0.9, b 0.75 -> 0.4", "relevance",
         lambda: _stack(patched("BM25_K1", 0.9), patched("BM25_B", 0.4)), None),
        ("relevance, BM25 b 0.75 -> 0.4", "relevance", lambda: patched("BM25_B", 0.4), None),
        ("relevance, query without possessive 's", "relevance", contextlib.nullcontext, no_possessive),
        ("score, recency x 0.25", "score", lambda: weights(recency=0.25), None),
        ("score, recency x 0 (importance + relevance)", "score", lambda: weights(recency=0.0), None),
        ("score, recency and importance x 0.1", "score", lambda: weights(recency=0.1, importance=0.1), None),
    ]


@contextlib.contextmanager
def _stack(*cms: contextlib.AbstractContextManager) -> Iterator[None]:
    with contextlib.ExitStack() as st:
        for cm in cms:
            st.enter_context(cm)
        yield


def _plus_stopwords() -> list[str]:
    from bm25s.stopwords import STOPWORDS_EN

    from memdream.model.tokens import EN_STOPWORDS

    return sorted(set(STOPWORDS_EN) | set(EN_STOPWORDS))


BM25S_PLUS_MEMDREAM_STOPWORDS: list[str] = []  # filled in main (imports bm25s lazily)


def memdream_tokenize(xs: list[str]) -> list[list[str]]:
    from memdream.model.tokens import tokens

    return [tokens(x) for x in xs]


# ---- report -------------------------------------------------------------------------------


def machine() -> str:
    from remember_latency import cpu_name

    cpu = cpu_name()
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}")


def code_version() -> str:
    """The commit measured, and whether src/ had uncommitted changes (read-only git calls)."""
    import subprocess

    root = HERE.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "memdream (version unknown)"
    return f"memdream at {head}" + (" with uncommitted changes in src/" if dirty else "")


def fmt(x: float) -> str:
    return f"{x:.3f}"


def overall_table(results: list[Result], bases: dict[str, Result] | None = None) -> list[str]:
    """One row per configuration; with `bases`, a column for R@10 minus its base's R@10."""
    delta = bases is not None
    head = "| configuration | " + " | ".join(METRIC_NAMES) + (" | ΔR@10 vs base" if delta else "") + " | p50 ms | p95 ms |"
    sep = "| --- | " + " | ".join("---:" for _ in METRIC_NAMES) + (" | ---:" if delta else "") + " | ---: | ---: |"
    lines = [head, sep]
    for r in results:
        s = r.summary()["all"]
        cells = " | ".join(fmt(s[m]) for m in METRIC_NAMES)
        if delta:
            b = bases.get(r.base) if r.base else None
            cells += " | " + (f"{s['R@10'] - b.summary()['all']['R@10']:+.3f}" if b is not None else "(base)")
        lat = f" | {statistics.median(r.lat_ms):.2f} | {pct(r.lat_ms, 95):.2f} |"
        lines.append(f"| {r.name} | {cells}{lat}")
    return lines


def category_table(results: list[Result]) -> list[str]:
    lines = ["| category | configuration | " + " | ".join(METRIC_NAMES) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in METRIC_NAMES) + " |"]
    sums = [r.summary() for r in results]
    for cat in [str(c) for c in locomo.CATEGORIES] + ["all"]:
        if cat not in sums[0]:
            continue
        n = int(sums[0][cat]["n"])
        label = f"{cat} {locomo.CATEGORIES[int(cat)]} (n={n})" if cat != "all" else f"all (n={n})"
        best = {m: max(s[cat][m] for s in sums) for m in METRIC_NAMES}
        for i, (r, s) in enumerate(zip(results, sums)):
            cells = " | ".join(f"**{fmt(s[cat][m])}**" if s[cat][m] == best[m] else fmt(s[cat][m]) for m in METRIC_NAMES)
            lines.append(f"| {label if i == 0 else ''} | {r.name} | {cells} |")
    return lines


def reading(results: dict[str, Result], exps: list[Result]) -> list[str]:
    s = {name: r.summary() for name, r in results.items()}
    out = []
    cats = [str(c) for c in locomo.CATEGORIES if str(c) in next(iter(s.values()))]
    winners = []
    for cat in cats + ["all"]:
        best = max(s, key=lambda n: s[n][cat]["R@10"])
        label = "overall" if cat == "all" else locomo.CATEGORIES[int(cat)]
        winners.append(f"{label}: {best} ({s[best][cat]['R@10']:.3f})")
    out.append("- Best R@10 per category: " + "; ".join(winners) + ".")
    for v in VARIANTS:
        rel, sco, bm = (f"memdream relevance [{v}]", f"memdream score [{v}]", f"{BM25S_NAME} [{v}]")
        if rel in s and bm in s:
            d10 = s[rel]["all"]["R@10"] - s[bm]["all"]["R@10"]
            d5 = s[rel]["all"]["R@5"] - s[bm]["all"]["R@5"]
            dm = s[rel]["all"]["MRR"] - s[bm]["all"]["MRR"]
            verdict = "beats" if d10 > 0.005 else "trails" if d10 < -0.005 else "ties with"
            out.append(
                f"- {v} text: memdream relevance {verdict} bm25s: R@10 {s[rel]['all']['R@10']:.3f} vs "
                f"{s[bm]['all']['R@10']:.3f} ({d10:+.3f}), R@5 {d5:+.3f}, MRR {dm:+.3f}."
            )
        if rel in s and sco in s:
            d = s[sco]["all"]["R@10"] - s[rel]["all"]["R@10"]
            out.append(
                f"- {v} text: the default score (recency + importance + relevance) changes R@10 by {d:+.3f} "
                f"against relevance alone ({s[sco]['all']['R@10']:.3f} vs {s[rel]['all']['R@10']:.3f})."
            )
    p, d = "memdream relevance [plain]", "memdream relevance [dated]"
    if p in s and d in s:
        out.append(
            f"- The session-date prefix changes memdream relevance R@10 by {s[d]['all']['R@10'] - s[p]['all']['R@10']:+.3f} "
            f"overall and by {s[d]['2']['R@10'] - s[p]['2']['R@10']:+.3f} on temporal questions."
            if "2" in s[p] else ""
        )
    if exps:
        e = {r.name: r.summary()["all"] for r in exps}

        def d(name: str) -> str:
            r = next(x for x in exps if x.name == name)
            return f"{e[name]['R@10'] - s[r.base]['all']['R@10']:+.3f}" if r.base in s else "?"

        cut = [n for n in e if "MAX_QUERY_TERMS" in n or "CANDIDATES" in n or "candidates" in n]
        if cut:
            free = all(abs(float(d(n))) < 0.005 for n in cut if "->" in n and ("all" in n or "1000" in n))
            out.append("- The candidate cut (the 8 rarest query terms, 100 candidates) "
                       + ("costs nothing measurable here" if free else "matters here") + ": R@10 "
                       + ", ".join(f"{d(n)} with {n.split(', ', 1)[1]}" for n in cut) + ".")
        stop, tok, bm = "bm25s, its tokenizer with memdream's stopwords added", "bm25s over memdream's tokens", "bm25s [plain]"
        if stop in e and bm in s and "memdream relevance [plain]" in s:
            gap = s["memdream relevance [plain]"]["all"]["R@10"] - s[bm]["all"]["R@10"]
            closed = e[stop]["R@10"] - s[bm]["all"]["R@10"]
            out.append(
                f"- Where the gap to bm25s comes from: bm25s with memdream's stopwords added to its own 33 reaches R@10 "
                f"{e[stop]['R@10']:.3f} ({d(stop)}), bm25s over memdream's tokens {e[tok]['R@10']:.3f} ({d(tok)}), against "
                f"memdream relevance {s['memdream relevance [plain]']['all']['R@10']:.3f} (gap {gap:+.3f})"
                + (": the stopword list (what, did, when, how, ... are not stopwords in bm25s's Lucene list) makes most of "
                   "the difference, not the scoring." if gap > 0 and closed >= 2 / 3 * gap else ".")
            )
        bm25_exps = [n for n in e if "BM25 " in n]
        if bm25_exps:
            out.append("- BM25 constants (memdream k1 1.2, b 0.75): " + ", ".join(f"{n.split(', ', 1)[1]} {d(n)}" for n in bm25_exps)
                       + " R@10 (tuned on the test data itself: indicative only).")
        sc = [n for n in e if n.startswith("score, ")]
        if sc:
            out.append("- The default score: " + ", ".join(f"{n.split(', ', 1)[1]} {d(n)}" for n in sc)
                       + " R@10 against the default score. Recency (0..1, halving every 30 days) weighs as much as relevance, so on "
                       "conversations spanning months the last sessions crowd out older evidence.")
    return [x for x in out if x]


def render(results: list[Result], exps: list[Result], stats: dict, cmd: str, note: str, seconds: float) -> str:
    by_name = {r.name: r for r in results}
    lines = [
        REPORT_START,
        "## LoCoMo retrieval: memdream recall vs bm25s",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}; run on {datetime.now():%Y-%m-%d}, single-threaded, {seconds:.0f} s in all; {code_version()}."
        + (f" {note}" if note else ""),
        "",
        f"Data: LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0, read from outside the repository), "
        f"{stats['convs']} conversations, {stats['turns']:,} turns, {stats['questions']:,} questions of categories 1-4 with "
        "evidence (see `bench/locomo.py` for the 9 evidence-id repairs). One memory per turn, each conversation in fresh "
        "vaults of its own, written in order through `Memory.write(text, type=\"fact\")` with a frozen clock at the session "
        f"date (+{SECONDS_PER_TURN} s per turn); questions asked 10 minutes after the last turn with `Memory.recall(q, k={K})`. "
        "`[plain]` memories are `Speaker: text` (plus ` [image: caption]`), `[dated]` ones start with `[1:56 pm on 8 May, 2023] `. "
        "bm25s: Lucene BM25 (k1 1.5, b 0.75), its default tokenizer with English stopwords and PyStemmer stemming, over every "
        "turn. Turn recall R@k = share of evidence turns among the turns the top-k hits stand for; S@5 the same over sessions; "
        "MRR = 1/rank of the first hit holding an evidence turn (0 beyond 10). Latency: one `recall` call (bm25s: tokenize + "
        "retrieve), in ms.",
        "",
        "Write path: " + "; ".join(
            f"`[{v}]` {st['refused']} turns refused, {st['duplicates']} folded into an earlier entry as duplicates, "
            f"{st['superseded']} superseded, write p50 {st['write_p50']:.2f} ms"
            for v, st in stats["variants"].items()
        ) + ". A duplicate's entry counts for every turn it stands for; a refused turn cannot be recalled "
        f"({stats['refused_questions']} questions have a refused turn among their evidence). "
        f"{stats['joined']} turns hold line breaks, which the write path refuses (a memory is one line): their lines are "
        "joined with a space for every configuration, bm25s included."
        + "".join(
            f" Duplicates `[{v}]`: " + "; ".join(f"`{x}`" for x in st["dup_examples"][:4]) + ("; ..." if len(st["dup_examples"]) > 4 else "") + "."
            for v, st in stats["variants"].items() if st["dup_examples"]
        )
        + "".join(
            f" Refused `[{v}]`: " + "; ".join(f"`{x}`" for x in st["refused_examples"][:4]) + "."
            for v, st in stats["variants"].items() if st["refused_examples"]
        ),
        "",
        ("Hit counting: as in the facade (journal folded into the files every 1,000 hits)."
         if stats["count_hits"] else
         "Hit counting: the journal append stays in the timed path, but the journal is emptied after each call (outside "
         "the timing), so the fold every 1,000 hits never runs and answers do not depend on the questions asked before; "
         "`--count-hits` keeps the facade's behaviour (see the experiments)."),
        "",
        "### Overall",
        "",
        *overall_table(results),
        "",
        "### By category (bold: best of the row's metric)",
        "",
        *category_table(results),
    ]
    if exps:
        lines += [
            "",
            "### Experiments: one change at a time, `[plain]` vaults (memdream monkeypatched in the benchmark process only)",
            "",
            *overall_table([by_name[n] for n in ("memdream score [plain]", "memdream relevance [plain]", "bm25s [plain]") if n in by_name] + exps, by_name),
        ]
    lines += ["", "### Reading", "", *reading(by_name, exps), REPORT_END]
    return "\n".join(lines) + "\n"


def write_report(path: Path, section: str) -> None:
    from remember_latency import write_report as write_section

    write_section(path, section, REPORT_START, REPORT_END)


# ---- diagnosis ----------------------------------------------------------------------------


def diagnose(convs: list[locomo.Conversation], a: Result, b: Result, n: int, ingested: dict) -> None:
    """Print (stderr) up to n questions where `b` finds more evidence in its top 10 than `a`."""
    from memdream.model.tokens import query_tokens

    shown = 0
    for conv in convs:
        turns = {t.dia_id: t for t in conv.turns}
        ing = ingested.get(conv.sample_id)
        for q in conv.questions:
            ra, rb = a.ranked[(conv.sample_id, q.question)], b.ranked[(conv.sample_id, q.question)]
            ga = set(q.evidence) & {d for x in ra for d in x}
            gb = set(q.evidence) & {d for x in rb for d in x}
            if len(gb) <= len(ga):
                continue
            shown += 1
            print(f"\n[{conv.sample_id}] cat {q.category}: {q.question}", file=sys.stderr)
            terms = query_tokens(q.question)
            if ing is not None:
                df = ing.mem.index.document_frequency(terms)
                print("  memdream query terms (df): " + ", ".join(f"{t}({df.get(t, 0)})" for t in terms), file=sys.stderr)
                print("  searched (8 rarest): " + ", ".join(ing.mem.index.rare_terms(q.question, 8)), file=sys.stderr)
            for e in q.evidence:
                pos_a = next((i + 1 for i, x in enumerate(ra) if e in x), None)
                pos_b = next((i + 1 for i, x in enumerate(rb) if e in x), None)
                print(f"  {e} {a.name}@{pos_a} {b.name}@{pos_b}: {turns[e].memory()[:160]}", file=sys.stderr)
            if shown >= n:
                return


# ---- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    ap.add_argument("--quick", action="store_true", help="2 conversations instead of 10")
    ap.add_argument("--report", default="", help="Markdown file to write the section into (between the locomo markers)")
    ap.add_argument("--note", default="", help="A sentence about the conditions of this run, printed in the report.")
    ap.add_argument("--count-hits", action="store_true", help="let recall fold its hit counts into the files, as the facade does")
    ap.add_argument("--no-experiments", action="store_true")
    ap.add_argument("--embedders", default="", help="comma-separated embedders (use, e5, ...) to add hybrid configurations for")
    ap.add_argument("--diagnose", type=int, default=0, help="print N questions where bm25s beats memdream relevance (stderr)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    for name in filter(None, (x.strip() for x in args.embedders.split(","))):
        MEMDREAM_CONFIGS.extend(EMBEDDER_CONFIGS(name))

    convs = locomo.load(args.data)
    if args.quick:
        convs = convs[:2]
    results: dict[str, Result] = {}

    def res(name: str) -> Result:
        return results.setdefault(name, Result(name))

    for v in VARIANTS:  # fix the column order: memdream configs, then bm25s, per variant
        for name, _ in MEMDREAM_CONFIGS:
            res(f"{name} [{v}]")
        res(f"{BM25S_NAME} [{v}]")
    exp_defs = [] if args.no_experiments else experiments()
    if exp_defs:
        BM25S_PLUS_MEMDREAM_STOPWORDS[:] = _plus_stopwords()
    exps: dict[str, Result] = {name: Result(name, f"memdream {rank_by} [plain]") for name, rank_by, *_ in exp_defs}
    exps_hits = Result("score, hits counted as the facade does (fold every 1,000)", "memdream score [plain]")
    exps_tok = Result("bm25s over memdream's tokens", "bm25s [plain]")
    exps_stop = Result("bm25s, its tokenizer with memdream's stopwords added", "bm25s [plain]")
    stats: dict = {"convs": len(convs), "turns": sum(len(c.turns) for c in convs),
                   "joined": sum(bool(_BREAKS.search(t.text)) for c in convs for t in c.turns),
                   "questions": sum(len(c.questions) for c in convs), "variants": {}, "count_hits": args.count_hits}
    refused_dias: set[tuple[str, str]] = set()
    keep_plain: dict[str, Ingested] = {}
    open_groups: dict[tuple, list[tuple[str, dict]]] = {}
    for name, kw in MEMDREAM_CONFIGS:
        okw = tuple(sorted((k, v) for k, v in kw.items() if k not in RECALL_KWARGS))
        open_groups.setdefault(okw, []).append((name, {k: v for k, v in kw.items() if k in RECALL_KWARGS}))

    with tempfile.TemporaryDirectory(prefix="memdream-locomo-") as tmp:
        for ci, conv in enumerate(convs):
            for v, with_date in VARIANTS.items():
                st = stats["variants"].setdefault(
                    v, {"refused": 0, "duplicates": 0, "superseded": 0, "write_ms": [], "dup_examples": [], "refused_examples": []}
                )
                for gi, (okw, configs) in enumerate(open_groups.items()):
                    root = Path(tmp) / f"{conv.sample_id}-{v}-{gi}"
                    ing = ingest(conv, with_date, root, **dict(okw))
                    if gi == 0:
                        st["refused"] += len(ing.refused)
                        st["duplicates"] += len(ing.duplicates)
                        st["dup_examples"] += [f"{conv.sample_id} {d}: {t[:60]}" for d, _, t in ing.duplicates]
                        st["refused_examples"] += [f"{conv.sample_id} {d}: {why[:80]}" for d, why in ing.refused]
                        st["superseded"] += ing.superseded
                        st["write_ms"] += ing.write_ms
                        refused_dias |= {(conv.sample_id, d) for d, _ in ing.refused}
                    print(f"[locomo] {conv.sample_id} [{v}]: {len(conv.turns)} turns in {ing.seconds:.1f} s, "
                          f"{len(ing.refused)} refused, {len(ing.duplicates)} duplicates; {len(conv.questions)} questions",
                          file=sys.stderr, flush=True)
                    for name, rkw in configs:
                        run_questions(res(f"{name} [{v}]"), conv, memdream_ranker(ing, rkw, args.count_hits))
                    if v == "plain" and gi == 0 and (exp_defs or args.diagnose):
                        for name, rank_by, patch, rewrite in exp_defs:
                            with patch():
                                run_questions(exps[name], conv, memdream_ranker(ing, {"rank_by": rank_by}, args.count_hits, rewrite))
                    if v == "plain" and gi == 0 and exp_defs:
                        # last: mutates the vault (hit counts folded into its files; terms unchanged)
                        run_questions(exps_hits, conv, memdream_ranker(ing, {"rank_by": "score"}, True))
                    if v == "plain" and gi == 0 and args.diagnose:
                        keep_plain[conv.sample_id] = ing
                    else:
                        ing.mem.close()
                texts = [memory_text(t, with_date) for t in conv.turns]
                dia_ids = [t.dia_id for t in conv.turns]
                run_questions(res(f"{BM25S_NAME} [{v}]"), conv, bm25s_ranker(texts, dia_ids))
                if v == "plain" and exp_defs:
                    run_questions(exps_tok, conv, bm25s_ranker(texts, dia_ids, tokenize=memdream_tokenize))
                    run_questions(exps_stop, conv, bm25s_ranker(texts, dia_ids, stopwords=BM25S_PLUS_MEMDREAM_STOPWORDS))
        if args.diagnose:
            diagnose(convs, results["memdream relevance [plain]"], results["bm25s [plain]"], args.diagnose, keep_plain)
            for ing in keep_plain.values():
                ing.mem.close()

    for st in stats["variants"].values():
        st["write_p50"] = statistics.median(st.pop("write_ms")) if st.get("write_ms") else float("nan")
    stats["refused_questions"] = sum(
        any((c.sample_id, e) in refused_dias for e in q.evidence) for c in convs for q in c.questions
    )
    exp_list = list(exps.values()) + [r for r in (exps_tok, exps_stop) if r.rows] + ([exps_hits] if exps_hits.rows else [])
    seconds = time.perf_counter() - t_start
    cmd = "python bench/recall_locomo.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("--note") and a != args.note
    )
    section = render(list(results.values()), exp_list, stats, cmd.strip(), args.note, seconds)
    print(section)
    if args.report:
        write_report(Path(args.report), section)
    print(f"[locomo] done in {seconds:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
