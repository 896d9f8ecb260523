"""Benchmark: recall and context latency at 10k and 100k entries, keyword and hybrid, and index rebuild rate.

    .venv/bin/python bench/recall_latency.py [--sizes 10000,100000] [--queries 200] [--report docs/benchmarks.md]
    .venv/bin/python bench/recall_latency.py --sizes 1000000 --keyword-only --report ""   # a million entries

Each size: a fresh vault whose recall files are written directly, `index rebuild` timed, then
the same queries (2-3 content words of stored facts, Chinese and English) through
`Memory.recall(k=10)` keyword-only, `Memory.context(...)`, and hybrid. The hybrid run uses a
384-d stand-in embedder (hashed character n-grams, the same vector shape as e5-small) so the
vector search and fusion cost is measured at full size without hours of real embedding; the
real models' per-query embedding time is reported separately by bench/embedders.py and is
to be added to the hybrid figure. Side by side, the floor of the same index: one FTS5 query
for the same words (no scoring).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import facts  # noqa: E402
from remember_latency import pct, populate, write_report  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.embed.fake import HashEmbedder  # noqa: E402
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


def bench(size: int, nq: int, hybrid: bool = True) -> dict:
    texts = facts(size, seed=11)
    queries = make_queries(texts, nq)
    clock = FrozenClock(datetime(2026, 1, 15, tzinfo=timezone.utc))
    with tempfile.TemporaryDirectory(prefix="memdream-bench-") as tmp:
        cfg = load_config(Path(tmp) / "v", "me", "main", env={})
        mem = Memory(cfg, clock)
        mem.vault.init()
        populate(mem, texts)
        t = time.perf_counter()
        n = mem.index.rebuild(mem.vault.scopes())
        rebuild = n / (time.perf_counter() - t)
        mem.recall(queries[0])  # warm up imports and caches
        kw = timed(lambda q: mem.recall(q, k=10), queries)
        ctx = timed(lambda q: mem.context(query=q, budget=2000), queries[: nq // 2])
        db = mem.index.db
        floor = timed(lambda q: db.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? LIMIT 100", (match_expression(query_tokens(q)[:8]),)).fetchall(), queries)
        index_mb = sum(os.path.getsize(str(mem.vault.index_path) + x) for x in ("", "-wal") if os.path.exists(str(mem.vault.index_path) + x)) / 1e6
        files = len(list(mem.vault.recall_dir(mem.scope).rglob("*.md")))
        mem.close()
        extra = {"index_mb": index_mb, "files": files, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        if not hybrid:
            return {"size": size, "rebuild": rebuild, "kw": kw, "ctx": ctx, "hyb": [float("nan")], "floor": floor, "stand_in_embed_s": 0.0, **extra}
        hyb_mem = Memory(cfg, clock, HashEmbedder(dim=384))
        t = time.perf_counter()
        hyb_mem.embed_pending()
        embed_s = time.perf_counter() - t
        hyb_mem.recall(queries[0])
        hyb = timed(lambda q: hyb_mem.recall(q, k=10), queries)
        hyb_mem.close()
    return {
        "size": size, "rebuild": rebuild, "kw": kw, "ctx": ctx, "hyb": hyb, "floor": floor, "stand_in_embed_s": embed_s, **extra,
    }  # fmt: skip


def render(rows: list[dict], cmd: str, note: str) -> str:
    lines = [
        START,
        "## recall latency (issue: recall)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; run on {datetime.now():%Y-%m-%d}." + (f" {note}" if note else ""),
        "",
        "Queries are 2-3 content words of stored facts (Chinese and English), k=10, warm process. "
        "Hybrid uses a 384-d stand-in embedder (query embedding of a real model not included: see the embedders table). "
        "Floor: one unscored FTS5 query for the same words on the same index.",
        "",
        "| entries | keyword recall p50 / p95 (ms) | context p50 (ms) | hybrid recall p50 / p95 (ms, excl. query embedding) | FTS5 floor p50 (ms) | index rebuild (entries/s) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {statistics.median(r['kw']):.2f} / {pct(r['kw'], 95):.2f} | {statistics.median(r['ctx']):.2f} | "
            f"{statistics.median(r['hyb']):.2f} / {pct(r['hyb'], 95):.2f} | {statistics.median(r['floor']):.2f} | {r['rebuild']:,.0f} |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--note", default="")
    ap.add_argument("--keyword-only", action="store_true", help="skip the hybrid run (embedding every entry with the stand-in)")
    args = ap.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"[bench] {size:,} entries ...", file=sys.stderr, flush=True)
        r = bench(size, args.queries, hybrid=not args.keyword_only)
        print(f"[bench] {size:,}: keyword p50 {statistics.median(r['kw']):.2f} / p95 {pct(r['kw'], 95):.2f} ms, context p50 {statistics.median(r['ctx']):.2f} ms, "
              f"hybrid p50 {statistics.median(r['hyb']):.2f} ms, FTS5 floor p50 {statistics.median(r['floor']):.2f} ms, rebuild {r['rebuild']:,.0f}/s; "
              f"{r['files']} recall files, index {r['index_mb']:.0f} MB, peak RSS {r['rss_mb']:.0f} MB", file=sys.stderr, flush=True)  # fmt: skip
        rows.append(r)
    cmd = "python bench/recall_latency.py " + " ".join(a for a in sys.argv[1:] if a != args.note and not a.startswith("--note"))
    section = render(rows, cmd.strip(), args.note)
    print(section)
    if args.report:
        write_report(Path(args.report), section, START, END)


if __name__ == "__main__":
    main()
