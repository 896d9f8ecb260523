"""Benchmark: a long-lived process's warm keyword recall with the kernel's watch on the memory
files (index/watch.py) beside the same process comparing every file before each read.

    .venv/bin/python bench/sync_watch.py [--sizes 100000,400000] [--queries 300] [--report docs/benchmarks.md]

One vault of generated facts a size (bench/corpus.py through the peers' question maker, as
bench/recall_latency.py), two `Memory` objects on it in one process: `Index(watch=True)` (the
shipped default) and `Index(watch=False)` (one `lstat` per memory file at every read, the code
before). Their recalls are interleaved query by query, each side first every other query, so machine
noise and warm caches fall on both alike;
hit counts are not folded into the files during the timed loop (a fold rewrites files, and each
side would then compare them in full). Also times `sync_scope` alone, and counts the files;
then `remember` and the recall right after it, again interleaved (both sides write into the
same vault, so each also sees the other's write: one file to compare for the watched side).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers.questions import make as make_questions  # noqa: E402
from recall_latency import make_queries  # noqa: E402
from remember_latency import populate, write_report  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.index.db import Index  # noqa: E402
from memdream.index.watch import file_system_of  # noqa: E402
from memdream.memory import Memory  # noqa: E402

START, END = "<!-- bench:sync-watch:start -->", "<!-- bench:sync-watch:end -->"


def bench(size: int, nq: int) -> dict:
    texts, _ = make_questions(size, 10)
    queries = make_queries(texts, nq + 30)
    clock = FrozenClock(datetime(2026, 1, 15, tzinfo=timezone.utc))
    with tempfile.TemporaryDirectory(prefix="memdream-bench-") as tmp:
        root = Path(tmp) / "v"
        first = Memory(load_config(root, "me", "main", env={}), clock)
        first.vault.init()
        populate(first, texts)
        first.index.rebuild(first.vault.scopes())
        first.close()
        mems: dict[str, Memory] = {}
        for name, watch in (("watch", True), ("stat", False)):
            m = Memory(load_config(root, "me", "main", env={}), clock)
            m.index.close()
            m.core.index = m.index = Index(m.vault, watch=watch)
            m.hit_flush_after = 10**12
            for q in queries[:30]:  # warm: imports, caches, the postings, the watch
                m.recall(q, k=10)
            m.index.postings_ready()
            mems[name] = m
        out: dict = {"size": size, "fs": file_system_of(str(root)), "watching": mems["watch"].index.watching(mems["watch"].scope)}
        out["files"] = mems["stat"].index.db.execute("SELECT count(*) FROM files").fetchone()[0]
        for k in mems:
            out[k], out[k + "_sync"] = [], []
        for i, q in enumerate(queries[30:]):
            for k, m in sorted(mems.items(), reverse=i % 2 == 1):  # each side goes first every other query
                t = time.perf_counter()
                m.recall(q, k=10)
                out[k].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                m.index.sync_scope(m.scope)
                out[k + "_sync"].append((time.perf_counter() - t) * 1000)
        # Writes: each side remembers a new line, then recalls (the next read after a write
        # compares the file written: the watched side only that one, the other every file).
        for k in mems:
            out[k + "_write"], out[k + "_after"] = [], []
        for i, q in enumerate(queries[30 : 30 + nq // 2]):
            for k, m in sorted(mems.items(), reverse=i % 2 == 1):
                t = time.perf_counter()
                m.remember(f"{k} 第{i}条新记录 new note {i} about {q}", type="fact")
                out[k + "_write"].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                m.recall(q, k=10)
                out[k + "_after"].append((time.perf_counter() - t) * 1000)
        for m in mems.values():
            m.close()
    return out


def render(rows: list[dict], cmd: str) -> str:
    p50 = statistics.median
    lines = [
        START,
        "## A long-lived process's recall with the kernel's watch on the files (bench/sync_watch.py)",
        "",
        f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()}, Python {platform.python_version()}. "
        "Two `Memory` objects on one vault in one process, recalls interleaved query by query (each side first every other query): the shipped "
        "`Index(watch=True)` (index/watch.py: the files are compared only after the kernel reported a change) "
        "and `Index(watch=False)` (one `lstat` per memory file before every read, the code before). "
        "Keyword only, k=10, hit counts not folded during the timed loop. Then half as many `remember` calls, "
        "each followed by a recall, interleaved the same way (both write into the one vault).",
        "",
        f"Command: `{cmd}`",
        "",
        "| entries | memory files | file system | watched | recall p50 / p90, watch | recall p50 / p90, a stat per file | `sync_scope` alone p50, watch / stat | remember p50, watch / stat | recall right after a remember p50, watch / stat |",
        "| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        q = lambda xs: statistics.quantiles(xs, n=10)[-1]  # noqa: E731
        lines.append(
            f"| {r['size']:,} | {r['files']:,} | {r['fs']} | {'yes' if r['watching'] else 'no'} "
            f"| {p50(r['watch']):.2f} / {q(r['watch']):.2f} ms | {p50(r['stat']):.2f} / {q(r['stat']):.2f} ms "
            f"| {p50(r['watch_sync']):.3f} / {p50(r['stat_sync']):.3f} ms "
            f"| {p50(r['watch_write']):.2f} / {p50(r['stat_write']):.2f} ms | {p50(r['watch_after']):.2f} / {p50(r['stat_after']):.2f} ms |"
        )
    lines += ["", END, ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,400000")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--report", default="docs/benchmarks.md")
    args = ap.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"[bench] {size:,} entries ...", file=sys.stderr, flush=True)
        r = bench(size, args.queries)
        print(f"[bench] {size:,}: recall p50 {statistics.median(r['watch']):.2f} ms watched, {statistics.median(r['stat']):.2f} ms with a stat per file ({r['files']} files)", file=sys.stderr, flush=True)
        rows.append(r)
    section = render(rows, ("python bench/sync_watch.py " + " ".join(sys.argv[1:])).strip())
    print(section)
    if args.report:
        write_report(Path(args.report), section, START, END)


if __name__ == "__main__":
    main()
