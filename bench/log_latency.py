"""Benchmark: is `memdream log` fast enough to call on every event?

    .venv/bin/python bench/log_latency.py [--blocks 1000] [--report docs/benchmarks.md]

Appends `--blocks` blocks to one day's log through `Memory.log` (lock, secret check, re-read,
atomic replace), then times whole `memdream log` processes (what an agent's shell hook pays).
Side by side in the same run: the source document's memlog.sh way, `printf >> file` from a
shell (no lock, no atomicity, no secret check).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from remember_latency import pct, write_report  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.memory import Memory  # noqa: E402

START, END = "<!-- bench:log:start -->", "<!-- bench:log:end -->"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=1000)
    ap.add_argument("--processes", type=int, default=30)
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdream-log-") as tmp:
        mem = Memory(load_config(Path(tmp) / "v", "me", "main", env={}))
        mem.vault.init()
        api = []
        for i in range(args.blocks):
            t = time.perf_counter()
            mem.log(f"事件 {i}: deploy step finished", f"第 {i} 步完成，耗时 {i % 60} 秒。")
            api.append((time.perf_counter() - t) * 1000)
        size = sum(p.stat().st_size for p in (mem.vault.memory_dir(mem.scope)).glob("20*.md"))
        mem.close()
        exe = str(Path(sys.executable).parent / "memdream")
        env = dict(os.environ, MEMDREAM_VAULT=str(Path(tmp) / "v"))
        cli = []
        for i in range(args.processes):
            t = time.perf_counter()
            subprocess.run([exe, "log", f"cli event {i}", "body"], check=True, capture_output=True, env=env)
            cli.append((time.perf_counter() - t) * 1000)
        shell = []
        target = Path(tmp) / "memlog.md"
        for i in range(args.processes):
            t = time.perf_counter()
            subprocess.run(["sh", "-c", f'printf "\\n### %s — %s\\n\\n%s\\n" "$(date +%H:%M)" "event {i}" "body" >> "{target}"'], check=True)
            shell.append((time.perf_counter() - t) * 1000)
    lines = [
        START,
        "## daily log append latency (issue: knowledge vault)",
        "",
        f"Command: `python bench/log_latency.py --blocks {args.blocks} --processes {args.processes}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; run on {datetime.now():%Y-%m-%d}." + (f" {args.note}" if args.note else ""),
        "",
        "| what | p50 (ms) | p99 (ms) |",
        "| --- | ---: | ---: |",
        f"| `Memory.log` in a running process, {args.blocks} blocks into one day's file (ends at {size / 1024:.0f} KiB) | {statistics.median(api):.2f} | {pct(api, 99):.2f} |",
        f"| `memdream log` as a new process each time ({args.processes} runs) | {statistics.median(cli):.1f} | {pct(cli, 99):.1f} |",
        f"| baseline: `printf >> file` from sh (memlog.sh; no lock, no atomic replace) | {statistics.median(shell):.1f} | {pct(shell, 99):.1f} |",
        END,
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.report:
        write_report(Path(args.report), section, START, END)


if __name__ == "__main__":
    main()
