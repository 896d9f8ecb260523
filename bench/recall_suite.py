"""The recall suite: every set of bench/sets/ through memdream's public API, beside bm25s and
a relevance-only ranking, in one run.

    python bench/recall_suite.py                      # all sets, all configurations
    python bench/recall_suite.py --sets locomo --configs memdream,bm25s
    python bench/recall_suite.py --report docs/benchmarks.md
    python bench/recall_suite.py --diagnose memorybank_zh --diagnose-config memdream

Each memory is one message written with `Memory.write(text)` (type and subject worked out by
memdream, as a user's agent would call it) on a frozen clock at the message's time; each
conversation is its own vault and scope. Questions are asked at the set's `asked_at` time.
Recall counts are not folded into the files between questions (so every configuration sees
the same files). A hit stands for every message folded into its entry (a duplicate write
returns the entry it joined).

Configurations: `memdream` (keyword, the default ranking), `memdream relevance` (keyword,
ranked by relevance alone), the same two with the `use` embedder, and bm25s over the same
messages: English stemmed with stopwords, Chinese as jieba words (rjieba, the same segmenter
and dictionary as jieba) or character bigrams.

Data sets are read from ../shared/bench (or --data); never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench.sets import Memory as SetMemory  # noqa: E402
from bench.sets import Question, SuiteSet  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.errors import RefusedInput, SecretRefused  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.store.format import quick_id  # noqa: E402

SETS = ("locomo", "memorybank_zh", "memorybank_en", "filler", "changing")
CONFIGS = ("memdream", "memdream relevance", "memdream+use", "memdream+use relevance", "bm25s", "bm25s bigrams")
_BREAKS = re.compile(r"\s*[\r\n]+\s*")
# Experiments (configuration "memdream~NAME"): other ways recency and importance could lift relevance.
LIFTS: dict[str, Callable[[float, float], float]] = {
    "L0.25": lambda r, i: 1 + 0.25 * (r + i) / 3,
    "L0.5": lambda r, i: 1 + 0.5 * (r + i) / 3,
    "L1": lambda r, i: 1 + 1.0 * (r + i) / 3,
    "imp2": lambda r, i: 1 + 0.5 * (r + 2 * i) / 5,
    "imp-only": lambda r, i: 1 + 0.5 * i / 2,
    "rec-only": lambda r, i: 1 + 0.5 * r,
    "imp-L0.5": lambda r, i: 1 + 0.5 * i / 3,
    "rec-L0.5": lambda r, i: 1 + 0.5 * r / 3,
    "none": lambda r, i: 1.0,
}


def load_set(name: str, data_dir: Path | None, seed: int) -> SuiteSet:
    import importlib

    return importlib.import_module(f"bench.sets.{name}").load(data_dir, seed)


# ---- memdream -----------------------------------------------------------------------------


@dataclass
class Conv:
    """One conversation's vault: the memdream scope and which messages each entry stands for."""

    mem: Memory
    clock: FrozenClock
    ids_of: dict[str, list[str]] = field(default_factory=dict)  # entry id -> message ids
    refused: int = 0
    duplicates: int = 0
    superseded: int = 0


_EMBEDDERS: dict[str, object] = {}


def _embedder(name: str):  # type: ignore[no-untyped-def]
    from memdream.embed.embedder import load_embedder

    if name not in _EMBEDDERS:
        _EMBEDDERS[name] = load_embedder(name)
    return _EMBEDDERS[name]


def ingest(root: Path, conv: str, memories: list[SetMemory]) -> Conv:
    clock = FrozenClock(memories[0].at)
    mem = Memory(load_config(root, "suite", "bench", env={}), clock)
    mem.vault.init()
    mem.hit_flush_after = 10**12  # counts stay in the journal: every configuration sees the same files
    c = Conv(mem, clock)
    for m in memories:
        clock.set(m.at)
        text = _BREAKS.sub(" ", m.text).strip()
        try:
            out = mem.write(text)
        except (SecretRefused, RefusedInput):
            c.refused += 1
            continue
        c.ids_of.setdefault(out.entry.id, []).append(m.id)
        if out.action == "duplicate":
            c.duplicates += 1
        elif out.action == "superseded":
            c.superseded += 1
    return c


FUSION: str | None = None  # --fusion


def reopen(c: Conv, embedder: str | None) -> Memory:
    """The same vault, with or without an embedder (vectors are stored in the index once)."""
    if embedder is None:
        return c.mem
    import dataclasses

    config = dataclasses.replace(c.mem.config, fusion=FUSION) if FUSION else c.mem.config
    mem = Memory(config, c.clock, _embedder(embedder))  # type: ignore[arg-type]
    mem.hit_flush_after = 10**12
    mem.embed_pending()
    return mem


# ---- bm25s --------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\W_]+", re.UNICODE)


def bm25s_tokenizer(cjk: str) -> Callable[[str], list[str]]:
    """bm25s's English (stopwords, Snowball stems) with Chinese runs as jieba words or bigrams."""
    import bm25s.stopwords
    import rjieba
    import Stemmer

    stem = Stemmer.Stemmer("english").stemWord
    stop = set(bm25s.stopwords.STOPWORDS_EN)

    def tok(text: str) -> list[str]:
        out: list[str] = []
        for m in _WORD.finditer(text.lower()):
            run = m.group(0)
            if _CJK.fullmatch(run):
                if cjk == "words":
                    out.extend(w for w in rjieba.cut(run) if w.strip() and _WORD.fullmatch(w))
                else:
                    out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
            elif run not in stop:
                out.append(stem(run))
        return out

    return tok


def bm25s_ranker(memories: list[SetMemory], tok: Callable[[str], list[str]], k: int) -> Callable[[str], list[list[str]]]:
    import bm25s

    texts = [tok(m.text) for m in memories]
    retriever = bm25s.BM25()
    retriever.index(texts, show_progress=False)
    vocab = retriever.vocab_dict
    ids = [m.id for m in memories]

    def rank(q: str) -> list[list[str]]:
        terms = [t for t in tok(q) if t in vocab]
        if not terms:
            return []
        docs, scores = retriever.retrieve([terms], k=min(k, len(texts)), show_progress=False, n_threads=0)
        return [[ids[int(d)]] for d, s in zip(docs[0], scores[0]) if s > 0]

    return rank


# ---- metrics ------------------------------------------------------------------------------


def measure(metric: str, k: int, ranked: list[list[str]], q: Question) -> float:
    top = ranked[:k]
    gold = set(q.gold)
    if metric == "recall":
        got = {i for ids in top for i in ids if i in gold}
        return len(got) / len(gold) if gold else 0.0
    if metric == "hit":
        return 1.0 if any(i in gold for ids in top for i in ids) else 0.0
    if metric == "current":
        old = set(q.old)
        for ids in top:  # the first hit that is gold or old decides
            if any(i in gold for i in ids):
                return 1.0
            if any(i in old for i in ids):
                return 0.0
        return 0.0
    raise ValueError(metric)


@dataclass
class Result:
    config: str
    scores: list[float] = field(default_factory=list)
    by_cat: dict[str, list[float]] = field(default_factory=dict)
    ms: list[float] = field(default_factory=list)

    def add(self, q: Question, v: float, ms: float) -> None:
        self.scores.append(v)
        self.by_cat.setdefault(q.category or "all", []).append(v)
        self.ms.append(ms)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else float("nan")


def run_set(s: SuiteSet, configs: list[str], work: Path, diagnose: str | None = None, limit_convs: int | None = None) -> tuple[dict[str, Result], dict]:
    by_conv: dict[str, list[SetMemory]] = {}
    for m in s.memories:
        by_conv.setdefault(m.conv, []).append(m)
    convs = sorted(by_conv)
    if limit_convs:
        convs = convs[:limit_convs]
    qs = [q for q in s.questions if q.conv in set(convs)]
    results = {c: Result(c) for c in configs}
    stats = {"memories": 0, "refused": 0, "duplicates": 0, "superseded": 0, "questions": len(qs), "conversations": len(convs)}
    t0 = time.perf_counter()
    for conv in convs:
        mems = sorted(by_conv[conv], key=lambda m: m.at)
        stats["memories"] += len(mems)
        conv_qs = [q for q in qs if q.conv == conv]
        if not conv_qs:
            continue
        rankers: dict[str, Callable[[str], list[list[str]]]] = {}
        needs_memdream = any(c.startswith(("memdream", "use")) for c in configs)
        c = ingest(work / conv.replace("/", "_"), conv, mems) if needs_memdream else None
        if c is not None:
            stats["refused"] += c.refused
            stats["duplicates"] += c.duplicates
            stats["superseded"] += c.superseded
            c.clock.set(s.asked_at.get(conv, mems[-1].at))
        opened: dict[str | None, Memory] = {}
        for cfg in configs:
            if cfg.startswith("memdream"):
                assert c is not None
                emb = "use" if cfg.startswith("memdream+use") else None
                if emb not in opened:
                    opened[emb] = reopen(c, emb)
                mem = opened[emb]
                rank_by = "relevance" if cfg.endswith(" relevance") else "score"
                variant = LIFTS.get(cfg.split("~", 1)[1]) if "~" in cfg else None

                def rank(q: str, mem: Memory = mem, rank_by: str = rank_by, c: Conv = c, variant=variant) -> list[list[str]]:
                    if variant is not None:  # an experiment: another lift, over the 100 most relevant
                        hits = mem.recall(q, k=100, rank_by="relevance")
                        hits.sort(key=lambda h: -h.trace.relevance * variant(h.trace.recency, h.trace.importance))
                        return [c.ids_of.get(h.entry.id, []) for h in hits[: max(10, s.k)]]
                    return [c.ids_of.get(h.entry.id, []) for h in mem.recall(q, k=max(10, s.k), rank_by=rank_by)]

                rankers[cfg] = rank
            elif cfg == "use dense":
                if "use" not in opened:
                    opened["use"] = reopen(c, "use")
                dmem = opened["use"]

                def rank(q: str, dmem: Memory = dmem, c: Conv = c) -> list[list[str]]:
                    vs = dmem.vectors
                    near = vs.nearest(dmem.scope, vs.query_vector(q), max(10, s.k))
                    rows = {r.rowid: r for r in dmem.index.rows([rid for rid, _ in near])}
                    return [c.ids_of.get(quick_id(rows[rid].line), []) for rid, _ in near if rid in rows]

                rankers[cfg] = rank
            elif cfg == "bm25s":
                rankers[cfg] = bm25s_ranker(mems, bm25s_tokenizer("words"), max(10, s.k))
            elif cfg == "bm25s bigrams":
                rankers[cfg] = bm25s_ranker(mems, bm25s_tokenizer("bigrams"), max(10, s.k))
        for q in conv_qs:
            for cfg, rank in rankers.items():
                t = time.perf_counter()
                ranked = rank(q.text)
                ms = (time.perf_counter() - t) * 1000
                v = measure(s.metric, s.k, ranked, q)
                results[cfg].add(q, v, ms)
                if diagnose and cfg == diagnose and v < 1.0 and c is not None:
                    _diagnose(s, q, ranked, c, opened)
        for mem in opened.values():
            mem.close()
        if c is not None:
            c.mem.close()
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    return results, stats


def _diagnose(s: SuiteSet, q: Question, ranked: list[list[str]], c: Conv, opened: dict) -> None:
    text = {m.id: m.text for m in s.memories if m.conv == q.conv}
    print(f"\n[{q.category}] {q.text}")
    for g in q.gold:
        print(f"   gold {g}: {text.get(g, '?')[:120]}")
    for o in q.old:
        print(f"   old  {o}: {text.get(o, '?')[:120]}")
    mem = next(iter(opened.values()))
    for h in mem.recall(q.text, k=s.k):
        ids = c.ids_of.get(h.entry.id, [])
        mark = "G" if set(ids) & set(q.gold) else ("O" if set(ids) & set(q.old) else " ")
        t = h.trace
        print(f"   {mark} {h.score:.3f} rel={t.relevance:.3f} rec={t.recency:.2f} imp={t.importance:.2f} [{h.entry.effective_type}] {h.text[:90]}")


# ---- report -------------------------------------------------------------------------------


def fmt(x: float) -> str:
    return "-" if x != x else f"{x:.3f}"


def render(all_results: dict[str, tuple[SuiteSet, dict[str, Result], dict]], configs: list[str], cmd: str, seconds: float) -> str:
    names = list(all_results)
    out = [
        "## Recall suite (issue 14): every set, beside bm25s and relevance alone",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}; run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {seconds / 60:.1f} min in all.",
        "",
        "Each memory is one message written with `Memory.write(text)` (automatic type and subject) on a frozen clock at its time, "
        "one vault per conversation; recall counts are not folded between questions. bm25s indexes the same messages "
        "(English stemmed with stopwords; Chinese as jieba words, or as character bigrams).",
        "",
        "| configuration | " + " | ".join(f"{n} ({all_results[n][0].metric}@{all_results[n][0].k})" for n in names) + " |",
        "| --- | " + " | ".join("---:" for _ in names) + " |",
    ]
    for cfg in configs:
        cells = []
        for n in names:
            r = all_results[n][1].get(cfg)
            cells.append(fmt(r.mean) if r and r.scores else "-")
        out.append(f"| {cfg} | " + " | ".join(cells) + " |")
    out += ["", "| set | memories | conversations | questions | refused writes | folded as duplicates | superseded | seconds |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in names:
        st = all_results[n][2]
        out.append(f"| {n} | {st['memories']:,} | {st['conversations']} | {st['questions']:,} | {st['refused']} | {st['duplicates']} | {st['superseded']} | {st['seconds']} |")
    for n in names:
        s, res, _ = all_results[n]
        cats = sorted({c for r in res.values() for c in r.by_cat})
        if len(cats) <= 1:
            continue
        out += ["", f"{n} by category ({s.metric}@{s.k}):", "", "| configuration | " + " | ".join(f"{c} (n={len(next(iter(res.values())).by_cat.get(c, []))})" for c in cats) + " |", "| --- | " + " | ".join("---:" for _ in cats) + " |"]
        for cfg in configs:
            r = res.get(cfg)
            if r is None or not r.scores:
                continue
            out.append(f"| {cfg} | " + " | ".join(fmt(sum(r.by_cat.get(c, [])) / len(r.by_cat[c])) if r.by_cat.get(c) else "-" for c in cats) + " |")
    # Where the default ranking stands against bm25s, question by question.
    out += ["", "Question by question, the default ranking (`memdream`) against bm25s: better / worse / same.", ""]
    for n in names:
        res = all_results[n][1]
        a, b = res.get("memdream"), res.get("bm25s")
        if a and b and a.scores and len(a.scores) == len(b.scores):
            better = sum(1 for x, y in zip(a.scores, b.scores) if x > y)
            worse = sum(1 for x, y in zip(a.scores, b.scores) if x < y)
            out.append(f"- {n}: {better} / {worse} / {len(a.scores) - better - worse}")
    out += ["", "Recall latency p50 in these runs (ms, warm process, small scopes):", ""]
    for n in names:
        res = all_results[n][1]
        parts = []
        for cfg in configs:
            r = res.get(cfg)
            if r and r.ms:
                ms = sorted(r.ms)
                parts.append(f"{cfg} {ms[len(ms) // 2]:.2f}")
        out.append(f"- {n}: " + ", ".join(parts))
    return "\n".join(out) + "\n"


def write_report(path: Path, section: str) -> None:
    start, end = "<!-- bench:recall-suite:start -->", "<!-- bench:recall-suite:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = f"{start}\n{section}{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--data", type=Path, default=None, help="a folder holding the public data (default ../shared/bench/<set>)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", type=int, default=0, metavar="N", help="only the first N conversations of each set")
    ap.add_argument("--report", default=None, help="write the section into this Markdown file (an empty value writes none)")
    ap.add_argument("--json", type=Path, default=None, help="also write every per-question score here")
    ap.add_argument("--diagnose", default=None, help="print the misses of one set")
    ap.add_argument("--diagnose-config", default="memdream")
    ap.add_argument("--fusion", default=None, help="override [recall] fusion for the embedder configurations")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="MODULE.NAME=VALUE",
                    help="an experiment: set a constant of a memdream module for the whole run (e.g. model.scoring.LIFT=0.25)")
    args = ap.parse_args(argv)
    for o in args.overrides:
        import importlib

        target, value = o.split("=", 1)
        mod, name = target.rsplit(".", 1)
        module = importlib.import_module(f"memdream.{mod}")
        setattr(module, name, type(getattr(module, name))(value) if not isinstance(getattr(module, name), bool) else value in ("1", "true", "True"))
    global FUSION
    FUSION = args.fusion
    sets = [x for x in args.sets.split(",") if x]
    configs = [x for x in args.configs.split(",") if x]
    t0 = time.perf_counter()
    all_results: dict[str, tuple[SuiteSet, dict[str, Result], dict]] = {}
    work = Path(tempfile.mkdtemp(prefix="recall-suite-"))
    try:
        for name in sets:
            try:
                s = load_set(name, args.data, args.seed)
            except (FileNotFoundError, ModuleNotFoundError) as exc:
                print(f"{name}: skipped ({exc})", file=sys.stderr)
                continue
            res, stats = run_set(s, configs, work / name, args.diagnose_config if args.diagnose == name else None, args.quick or None)
            all_results[name] = (s, res, stats)
            print(f"{name}: " + ", ".join(f"{c} {fmt(r.mean)}" for c, r in res.items()) + f"  ({stats['seconds']} s)", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cmd = "python bench/recall_suite.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:]) if (argv if argv is not None else sys.argv[1:]) else "")
    section = render(all_results, configs, cmd, time.perf_counter() - t0)
    print(section)
    if args.report:
        write_report(Path(args.report), section)
    if args.json:
        args.json.write_text(json.dumps({n: {c: r.scores for c, r in res.items()} for n, (_, res, _) in all_results.items()}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
