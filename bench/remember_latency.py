"""Benchmark: `remember` latency and throughput with 1k, 10k and 100k entries already in the scope.

    .venv/bin/python bench/remember_latency.py [--sizes 1000,10000,100000] [--writes 300] [--report docs/benchmarks.md]

Each size gets a fresh vault whose recall files are written directly (files are the truth)
and indexed with `index rebuild` (its rate is reported too). Then `--writes` new, distinct
facts are remembered one by one through the public API, timing each call. Side by side in
the same run, the floor any durable file-based memory pays: appending one line to a file
with fsync (no lock, no dedup, no index).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import facts  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.model.classify import salience  # noqa: E402
from memdream.model.entry import Entry  # noqa: E402
from memdream.store.format import render_line  # noqa: E402
from memdream.store.vault import RECALL_FILE_MAX_LINES  # noqa: E402

REPORT_START = "<!-- bench:remember:start -->"
REPORT_END = "<!-- bench:remember:end -->"


def cpu_name() -> str:
    """The processor's model name (from /proc/cpuinfo where there is one) for report headers."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def populate(mem: Memory, texts: list[str]) -> None:
    """Write `texts` as recall files the way the writer would lay them out, spread over past months."""
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    by_file: dict[Path, list[str]] = {}
    per_month = max(1, len(texts) // 12 + 1)
    for i, t in enumerate(texts):
        when = start + timedelta(days=30 * (i // per_month), minutes=i)
        month_index = i % per_month
        part = month_index // RECALL_FILE_MAX_LINES + 1
        path = mem.vault.recall_file_for(mem.scope, when, part)
        e = Entry(text=t, id=f"b{i:07d}", type="fact", valid_from=when, created_at=when, confidence=0.9, source="import", salience=salience(t))
        by_file.setdefault(path, []).append(render_line(e))
    for path, lines in by_file.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Recall\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


def bench_size(size: int, writes: int) -> dict:
    corpus = facts(size + writes, seed=11)
    existing, new = corpus[:size], corpus[size:]
    with tempfile.TemporaryDirectory(prefix="memdream-bench-") as tmp:
        mem = Memory(load_config(Path(tmp) / "vault", "me", "main", env={}))
        mem.vault.init()
        populate(mem, existing)
        t0 = time.perf_counter()
        n = mem.index.rebuild(mem.vault.scopes())
        rebuild_s = time.perf_counter() - t0
        assert n == size, (n, size)
        print(f"[bench] {size:,}: rebuilt in {rebuild_s:.1f} s ({size / rebuild_s:,.0f}/s), {len(list(mem.vault.recall_dir(mem.scope).rglob('*.md')))} recall files",
              file=sys.stderr, flush=True)  # fmt: skip
        lat: list[float] = []
        actions: dict[str, int] = {}
        t_all = time.perf_counter()
        for text in new:
            t1 = time.perf_counter()
            out = mem.write(text, type="fact")
            lat.append((time.perf_counter() - t1) * 1000)
            actions[out.action] = actions.get(out.action, 0) + 1
        total = time.perf_counter() - t_all
        mem.close()
        # Baseline: the floor of a durable file write (append + fsync), same disk, same run.
        floor: list[float] = []
        path = Path(tmp) / "floor.md"
        for text in new:
            t1 = time.perf_counter()
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"- {text}\n")
                fh.flush()
                os.fsync(fh.fileno())
            floor.append((time.perf_counter() - t1) * 1000)
    return {
        "size": size,
        "p50": statistics.median(lat),
        "p99": pct(lat, 99),
        "mean": statistics.fmean(lat),
        "throughput": writes / total,
        "rebuild_rate": size / rebuild_s if rebuild_s else 0.0,
        "floor_p50": statistics.median(floor),
        "floor_p99": pct(floor, 99),
        "actions": actions,
    }


def render(results: list[dict], cmd: str, note: str = "") -> str:
    lines = [
        REPORT_START,
        "## remember latency (issue: core)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"SQLite {__import__('sqlite3').sqlite_version}; run on {datetime.now():%Y-%m-%d}." + (f" {note}" if note else ""),
        "",
        "Each row: a fresh vault with N facts already in the scope (half Chinese, half English), then "
        f"{results[0]['writes'] if results else 0} new distinct facts remembered one by one through `Memory.write` "
        "(lock, index sync check, secret check, dedup candidates from the index, atomic file rewrite, index update). "
        "The baseline is the floor of any durable file memory on the same disk in the same run: append one line and fsync.",
        "",
        "| entries in scope | remember p50 (ms) | p99 (ms) | mean (ms) | throughput (writes/s) | baseline append+fsync p50 / p99 (ms) | index rebuild (entries/s) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        lines.append(
            f"| {r['size']:,} | {r['p50']:.2f} | {r['p99']:.2f} | {r['mean']:.2f} | {r['throughput']:.0f} | "
            f"{r['floor_p50']:.3f} / {r['floor_p99']:.3f} | {r['rebuild_rate']:,.0f} |"
        )
    if len(results) >= 2:
        a, b = results[0], results[-1]
        growth = b["p50"] / a["p50"] if a["p50"] else float("nan")
        lines += [
            "",
            f"From {a['size']:,} to {b['size']:,} entries ({b['size'] / a['size']:.0f}x), the p50 grows {growth:.2f}x.",
        ]
    lines.append(REPORT_END)
    return "\n".join(lines) + "\n"


def write_report(path: Path, section: str, start: str = REPORT_START, end: str = REPORT_END) -> None:
    """Put `section` (which begins with `start` and ends with `end`) into the report file."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\nEvery figure here was measured by a script under `bench/`, with the command beside it.\n\n"
    if start in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1] if end in rest else ""
        text = head + section.rstrip("\n") + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--writes", type=int, default=300)
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--note", default="", help="A sentence about the conditions of this run, printed in the report.")
    args = ap.parse_args()
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"[bench] {size:,} entries: populating, rebuilding, then {args.writes} remembers ...", file=sys.stderr, flush=True)
        r = bench_size(size, args.writes)
        r["writes"] = args.writes
        results.append(r)
        rss = __import__("resource").getrusage(__import__("resource").RUSAGE_SELF).ru_maxrss / 1024
        print(f"[bench] {size:,}: p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms, {r['throughput']:.0f}/s, rebuild {r['rebuild_rate']:,.0f}/s, actions {r['actions']}, "
              f"floor {r['floor_p50']:.3f} ms, peak RSS {rss:.0f} MB", file=sys.stderr, flush=True)  # fmt: skip
    cmd = "python bench/remember_latency.py " + " ".join(a for a in sys.argv[1:] if not a.startswith("--note") and a != args.note)
    section = render(results, cmd.strip(), args.note)
    print(section)
    if args.report:
        write_report(Path(args.report), section)


if __name__ == "__main__":
    main()
