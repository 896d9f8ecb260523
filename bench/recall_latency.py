"""Benchmark: recall and context latency at 10k and 100k entries, keyword and hybrid, index
rebuild rate, and recall@10 of paraphrased questions on the same corpus.

    .venv/bin/python bench/recall_latency.py [--sizes 10000,100000] [--queries 200] [--embedder hash384|use] [--report docs/benchmarks.md]
    .venv/bin/python bench/recall_latency.py --sizes 1000000 --keyword-only --report ""   # a million entries

Each size: a fresh vault whose recall files are written directly (the synthetic corpus of
bench/corpus.py, the same facts bench/peers/run.py uses), `index rebuild` timed, then the same
queries (2-3 content words of stored facts, Chinese and English) through `Memory.recall(k=10)`
keyword-only, `Memory.context(...)`, and hybrid. Quality: the paraphrased questions of
bench/peers/questions.py (half Chinese), recall@10 ranked by relevance (as bench/peers/run.py
measures it) and by the default score, keyword-only and hybrid.

Last, recall right after a write (keyword, then hybrid): 20 times a memory remembered, then one
recall timed, as an agent that writes and recalls in turns.

Hybrid runs twice on the same vectors: the shipped vector search (binary sign codes, a coarse pass
and an exact re-rank, index/vectors.py) and the numpy float32 scan of every vector
(`vectors.COARSE_MIN_VECTORS` raised above the scope's size), the baseline. Query embedding is
excluded: every query is embedded before the timed loop (the stand-in `hash384`, hashed
character n-grams of the shape of e5-small, or the real `use` model with `--embedder use`).
Side by side, the floor of the same index: one FTS5 query for the same words (no scoring).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers.questions import make as make_questions  # noqa: E402
from remember_latency import pct, populate, write_report  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.embed.fake import HashEmbedder  # noqa: E402
from memdream.index import vectors as vectors_module  # noqa: E402
from memdream.index.fts import match_expression  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.model.tokens import query_tokens  # noqa: E402

START, END = "<!-- bench:recall-latency:start -->", "<!-- bench:recall-latency:end -->"


def make_queries(texts: list[str], n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    out = []
    for t in rng.sample(texts, n):
        words = [w for w in query_tokens(t) if len(w) > 1]
        out.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 3)))))
    return out


def timed(fn, items) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t) * 1000)
    return out


class QueryCache:
    """The configured embedder, with every benchmark query embedded up front: recall's query
    embedding is then a dictionary look-up, so the timings exclude it (bench/embedders.py
    reports each model's query time)."""

    def __init__(self, inner, queries: list[str]) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.dim, self.model_id = inner, inner.dim, inner.model_id
        for name in ("cosine_weight", "cosine_weight_cjk"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))
        qs = list(dict.fromkeys(queries))
        self.cache = {q: v for start in range(0, len(qs), 64) for q, v in zip(qs[start : start + 64], inner.embed(qs[start : start + 64], kind="query"))}

    def embed(self, texts, kind="document"):  # type: ignore[no-untyped-def]
        import numpy as np

        if kind == "query" and all(t in self.cache for t in texts):
            return np.stack([self.cache[t] for t in texts])
        return self.inner.embed(texts, kind=kind)


def recall_at(mem: Memory, questions: list[dict], rank_by: str, k: int = 10) -> float:
    found = 0
    for q in questions:
        ids = {h.entry.id for h in mem.recall(q["q"], k=k, rank_by=rank_by)}
        found += any(f"b{i:07d}" in ids for i in q["relevant"])
    return found / len(questions)


AFTER_WRITES = 20


def after_writes(mem: Memory, queries: list[str]) -> list[float]:
    """Recall right after a write, as an agent that remembers and recalls in turns: each of
    AFTER_WRITES memories remembered, then one recall timed (the index follows the write
    first: the changed file, the in-process postings and vectors, what is waiting for a vector)."""
    out = []
    for i in range(AFTER_WRITES):
        mem.remember(f"bench write {i}: 第{i}次写入后马上回忆 remember then recall")
        t = time.perf_counter()
        mem.recall(queries[i % len(queries)], k=10)
        out.append((time.perf_counter() - t) * 1000)
    return out


def bench(size: int, nq: int, embedder: str, nquestions: int) -> dict:
    texts, questions = make_questions(size, nquestions)
    queries = make_queries(texts, nq)
    clock = FrozenClock(datetime(2026, 1, 15, tzinfo=timezone.utc))
    out: dict = {"size": size}
    with tempfile.TemporaryDirectory(prefix="memdream-bench-") as tmp:
        cfg = load_config(Path(tmp) / "v", "me", "main", env={})
        mem = Memory(cfg, clock)
        mem.vault.init()
        populate(mem, texts)
        t = time.perf_counter()
        n = mem.index.rebuild(mem.vault.scopes())
        out["rebuild"] = n / (time.perf_counter() - t)
        mem.recall(queries[0])  # warm up imports and caches
        mem.recall(queries[0])
        if hasattr(mem.index, "postings_ready"):  # the in-process postings load in the background: wait, to time the warm process
            mem.index.postings_ready()
        out["kw"] = timed(lambda q: mem.recall(q, k=10), queries)
        out["ctx"] = timed(lambda q: mem.context(query=q, budget=2000), queries[: nq // 2])
        db = mem.index.db
        out["floor"] = timed(lambda q: db.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? LIMIT 100", (match_expression(query_tokens(q)[:8]),)).fetchall(), queries)
        out["q_kw_relevance"] = recall_at(mem, questions, "relevance")
        out["q_kw_score"] = recall_at(mem, questions, "score")
        out["kw_after_write"] = after_writes(mem, queries)
        mem.close()
        if embedder:
            if embedder == "hash384":
                inner = HashEmbedder(dim=384)
            else:
                from memdream.embed.embedder import load_embedder

                inner = load_embedder(embedder)
            emb = QueryCache(inner, queries + [q["q"] for q in questions])
            hyb_mem = Memory(cfg, clock, emb)
            t = time.perf_counter()
            hyb_mem.embed_pending()
            out["embed_s"] = time.perf_counter() - t
            out["embedder"] = inner.model_id
            coarse_min = vectors_module.COARSE_MIN_VECTORS
            modes = {"scan": size + 1, "coarse": coarse_min}  # the float32 scan of every vector (baseline), the shipped search
            for mode, threshold in modes.items():
                vectors_module.COARSE_MIN_VECTORS = threshold
                hyb_mem.recall(queries[0])
                out[f"hyb_{mode}"] = timed(lambda q: hyb_mem.recall(q, k=10), queries)
            for rank_by in ("relevance", "score"):  # question by question in both modes, so recall counts weigh alike
                found = dict.fromkeys(modes, 0)
                for q in questions:
                    for mode, threshold in modes.items():
                        vectors_module.COARSE_MIN_VECTORS = threshold
                        ids = {h.entry.id for h in hyb_mem.recall(q["q"], k=10, rank_by=rank_by)}
                        found[mode] += any(f"b{i:07d}" in ids for i in q["relevant"])
                for mode in modes:
                    out[f"q_hyb_{mode}_{rank_by}"] = found[mode] / len(questions)
            vectors_module.COARSE_MIN_VECTORS = coarse_min
            out["hyb_after_write"] = after_writes(hyb_mem, queries)
            hyb_mem.close()
    return out


def render(rows: list[dict], cmd: str, note: str) -> str:
    emb = next((r["embedder"] for r in rows if "embedder" in r), "")
    lines = [
        START,
        "## recall latency (issue: recall)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; run on {datetime.now():%Y-%m-%d %H:%M}." + (f" {note}" if note else ""),
        "",
        "Corpus: the synthetic facts of bench/corpus.py (half Chinese), written as recall files. Latency queries are 2-3 content words of stored facts, k=10, warm process. "
        f"Hybrid: embedder `{emb}`, query embedding excluded (every query embedded before the timed loop). "
        "The shipped vector search (binary codes, a coarse pass, the exact cosine of its best "
        f"{vectors_module.RERANK}; the exact scan below {vectors_module.COARSE_MIN_VECTORS:,} vectors) beside the numpy float32 scan of every vector, in the same process on the same vectors. "
        "Floor: one unscored FTS5 query for the same words on the same index.",
        "",
        "| entries | keyword recall p50 / p95 (ms) | context p50 (ms) | hybrid recall p50 / p95 (ms) | hybrid with the float32 scan p50 / p95 (ms) | right after a write p50, keyword / hybrid (ms) | FTS5 floor p50 (ms) | index rebuild (entries/s) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def p50(r: dict, key: str) -> str:
        return f"{statistics.median(r[key]):.2f}" if key in r else "-"

    def ms(r: dict, key: str) -> str:
        return f"{statistics.median(r[key]):.2f} / {pct(r[key], 95):.2f}" if key in r else "-"

    for r in rows:
        lines.append(
            f"| {r['size']:,} | {ms(r, 'kw')} | {statistics.median(r['ctx']):.2f} | {ms(r, 'hyb_coarse')} | {ms(r, 'hyb_scan')} | "
            f"{p50(r, 'kw_after_write')} / {p50(r, 'hyb_after_write')} | {statistics.median(r['floor']):.2f} | {r['rebuild']:,.0f} |"
        )
    lines += [
        "",
        f"Recall@10 of {rows[0].get('nquestions', 400)} paraphrased questions a size (bench/peers/questions.py, half Chinese; the answer is one known fact), ranked by relevance / by the default score:",
        "",
        "| entries | keyword | hybrid | hybrid with the float32 scan |",
        "| ---: | ---: | ---: | ---: |",
    ]

    def q(r: dict, key: str) -> str:
        return f"{r[key + '_relevance']:.3f} / {r[key + '_score']:.3f}" if key + "_relevance" in r else "-"

    for r in rows:
        lines.append(f"| {r['size']:,} | {q(r, 'q_kw')} | {q(r, 'q_hyb_coarse')} | {q(r, 'q_hyb_scan')} |")
    lines.append(END)
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--questions", type=int, default=400, help="paraphrased questions a size (recall@10)")
    ap.add_argument("--embedder", default="hash384", help="hash384 (a stand-in, no model) or a local embedder name (use); empty: keyword only")
    ap.add_argument("--keyword-only", action="store_true", help="no dense side (the same as --embedder ''): a million entries without embedding each")
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    if args.questions < 1 or args.queries < 1:
        ap.error("--questions and --queries need at least 1 (the report has a recall@10 and a latency row for each size)")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"[bench] {size:,} entries ...", file=sys.stderr, flush=True)
        r = bench(size, args.queries, "" if args.keyword_only else args.embedder, args.questions)
        r["nquestions"] = args.questions
        hyb = f", hybrid p50 {statistics.median(r['hyb_coarse']):.2f} ms (float32 scan {statistics.median(r['hyb_scan']):.2f})" if "hyb_coarse" in r else ""
        print(f"[bench] {size:,}: keyword p50 {statistics.median(r['kw']):.2f} ms{hyb}, rebuild {r['rebuild']:,.0f}/s; recall@10 "
              + ", ".join(f"{k[2:]} {v:.3f}" for k, v in r.items() if k.startswith("q_")), file=sys.stderr, flush=True)
        rows.append(r)
    cmd = "python bench/recall_latency.py " + " ".join(a for a in sys.argv[1:] if a != args.note and not a.startswith("--note"))
    section = render(rows, cmd.strip(), args.note)
    print(section)
    if args.report:
        write_report(Path(args.report), section, START, END)


if __name__ == "__main__":
    main()
