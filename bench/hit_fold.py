"""Benchmark: folding a batch of recall counts into the files at 100k entries, and the recall
that pays for it.

    python bench/hit_fold.py [--size 100000] [--recalls 1100] [--code before=/path/to/older/src] [--report docs/benchmarks.md]

A recall appends its hits to the scope's journal; once `Memory.hit_flush_after` hits wait
(5,000 by default: the hits of 500 recalls of k=10), the next recall folds them into the memory
files (recall/hits.py, engine/hits.py). At 100k entries such a batch touches about a hundred
recall files, so that one recall is far slower than the others. Measured, on a fresh vault of
the synthetic corpus of bench/corpus.py (recall files written directly, then indexed):

- `--recalls` recalls of k=10 (2-3 content words of stored facts, as bench/recall_latency.py
  asks) with the default batch: p50, p99 and the slowest, and the recalls over 100 ms; from
  the second recall of a process on the in-process postings (index/postings.py) are loaded,
  in a thread of their own since 2026-12-06 (the searches meanwhile ask FTS5, as the first
  does); before, the second recall loaded them itself and was slow whatever the batch. So
  recalls #2-#100 are reported apart: the slowest, their sum and how many took over 20 ms;
- then 495 more recalls with folding held back, and `Memory.flush_hits()` of their 4,950 hits
  timed alone.

`--code NAME=SRC` runs the same measurement, in a child process, on the code under SRC (for
example a `git worktree` of an older commit), so both are reported from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

START, END = "<!-- bench:hit-fold:start -->", "<!-- bench:hit-fold:end -->"


def measure(size: int, recalls: int) -> dict:
    import recall_latency as rl
    from memdream.clock import FrozenClock
    from memdream.config import load_config
    from memdream.memory import Memory

    texts, _ = rl.make_questions(size, 10)
    queries = rl.make_queries(texts, recalls + 495)
    clock = FrozenClock(datetime(2026, 1, 15, tzinfo=timezone.utc))
    with tempfile.TemporaryDirectory(prefix="md-fold-") as tmp:
        mem = Memory(load_config(Path(tmp) / "v", "me", "main", env={}), clock)
        mem.vault.init()
        rl.populate(mem, texts)
        mem.index.rebuild(mem.vault.scopes())
        ms = []
        for q in queries[:recalls]:
            t = time.perf_counter()
            mem.recall(q, k=10)
            ms.append((time.perf_counter() - t) * 1000)
        mem.flush_hits()
        mem.hit_flush_after = 10**9
        for q in queries[recalls:]:
            mem.recall(q, k=10)
        t = time.perf_counter()
        folded = mem.flush_hits()
        fold_s = time.perf_counter() - t
        mem.close()
    s = sorted(ms)
    return {
        "p50": statistics.median(ms), "p99": s[int(len(s) * 0.99)], "max": s[-1],
        "slow": [(i + 1, round(x)) for i, x in enumerate(ms) if x > 100], "fold_s": fold_s, "folded": folded,
        "early_max": max(ms[1:100]), "early_sum": sum(ms[1:100]), "early_over_20": sum(1 for x in ms[1:100] if x > 20),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--recalls", type=int, default=1100)
    ap.add_argument("--code", action="append", default=[], help="NAME=SRC: the same measurement on the code under SRC")
    ap.add_argument("--report", default="")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child run: print the figures as JSON
    args = ap.parse_args()
    if args.json:
        print(json.dumps(measure(args.size, args.recalls)))
        return
    rows: list[tuple[str, dict]] = []
    for name, src in [("this code", "")] + [tuple(c.split("=", 1)) for c in args.code]:  # type: ignore[misc]
        env = dict(os.environ, PYTHONPATH=src) if src else dict(os.environ)
        out = subprocess.run([sys.executable, __file__, "--json", "--size", str(args.size), "--recalls", str(args.recalls)],
                             env=env, check=True, capture_output=True, text=True)  # fmt: skip
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append((name, r))
        print(f"[fold] {name}: recall p50 {r['p50']:.2f} p99 {r['p99']:.2f} max {r['max']:.0f} ms, over 100 ms {r['slow']}; "
              f"flush of {r['folded']} hits {r['fold_s']:.2f} s", file=sys.stderr, flush=True)  # fmt: skip
    cmd = "python bench/hit_fold.py" + "".join(f" --code {c.split('=', 1)[0]}=SRC" for c in args.code) + (f" --report {args.report}" if args.report else "")
    lines = [
        START,
        "## Folding recall counts into the files at 100k entries (bench/hit_fold.py)",
        "",
        f"Command: `{cmd}`  ",
        f"Run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {args.size:,} entries, {args.recalls:,} recalls of k=10 with the default batch (5,000 hits).",
        "",
        "| code | recall p50 (ms) | p99 (ms) | slowest (ms) | recalls over 100 ms (which: ms) | recalls #2-#100: slowest / in all (ms), over 20 ms | `flush_hits()` of 4,950 hits (s) |",
        "| --- | ---: | ---: | ---: | --- | --- | ---: |",
    ]
    for name, r in rows:
        slow = ", ".join(f"#{i}: {x}" for i, x in r["slow"])
        early = f"{r['early_max']:.0f} / {r['early_sum']:.0f}, {r['early_over_20']}"
        lines.append(f"| {name} | {r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.0f} | {slow} | {early} | {r['fold_s']:.2f} |")
    lines += ["", "Recall #2 starts the load of the in-process postings: in the search itself before 2026-12-06, in a thread "
              "of their own since (the recalls meanwhile ask FTS5, as a process's first does); #500 and #1000 fold a batch.", END, ""]
    text = "\n".join(lines)
    print(text)
    if args.report:
        from remember_latency import write_report

        write_report(Path(args.report), text, START, END)


if __name__ == "__main__":
    main()
