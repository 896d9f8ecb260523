"""Benchmark: what an agent pays to call memdream as a new process (a hook, a CLI call from a tool).

    .venv/bin/python bench/startup.py [--runs 15] [--code NAME=SRC_DIR ...] [--report docs/benchmarks.md]

Times whole processes, median of `--runs` after one warm-up, on a vault of 1,000 memories and
a bilingual user's five personal facts (their subjects in Chinese and English):
`memdream --version`, `recall` and `remember` in English and Chinese, `log`, `recall` with
`MEMDREAM_EMBEDDER=use` (the vault's vectors made beforehand by `memdream index embed`, so the
process pays the model's load and one query embedding), and `memdream serve` spawned until its
answer to MCP's `initialize` arrives on stdout; and beside them, in the same run, `python -c pass`
(the interpreter's floor), `import memdream.memory` alone, and a thin client's floor (a process
that sends its arguments over a Unix socket to a server and prints the answer, importing nothing
of memdream: the least a CLI call served by a resident process could cost).
`--code NAME=SRC_DIR` runs the same commands against another source tree (e.g. a copy of an
older commit's src/) through PYTHONPATH, interleaved run by run with this tree's, so machine
noise falls on both alike. Also reports the slowest modules to import (`python -X importtime`,
the smallest self time of the runs), which is where start-up time goes: reported, never
asserted in the test suite.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from remember_latency import write_report  # noqa: E402

START, END = "<!-- bench:startup:start -->", "<!-- bench:startup:end -->"
ROOT = Path(__file__).resolve().parent.parent
CLI = "from memdream.cli.main import main; main()"

#: an MCP client's first request, as one JSON-RPC line on the server's stdin
INITIALIZE = (
    '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", '
    '"capabilities": {}, "clientInfo": {"name": "bench-startup", "version": "0"}}}\n'
)
MCP = "mcp"  # a case whose process is timed to its answer to `initialize`, then stopped
THIN = (
    "import json, os, socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.connect(sys.argv[1])\n"
    "s.sendall(json.dumps({'argv': sys.argv[2:], 'cwd': os.getcwd(), 'env': {k: v for k, v in os.environ.items() if k.startswith('MEMDREAM_')}}).encode())\n"
    "s.shutdown(socket.SHUT_WR)\n"
    "print(s.makefile().read())\n"
)
SOCKET: list[str] = []  # the echo server's socket, once started
USE = "use"  # a case run with MEMDREAM_EMBEDDER=use

CASES: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("import memdream.memory", ["-c", "import memdream.memory"]),
    ("memdream --version", ["-c", CLI, "--version"]),
    ("memdream recall foo", ["-c", CLI, "recall", "foo"]),
    ("memdream recall 咖啡", ["-c", CLI, "recall", "咖啡"]),
    ('memdream remember "…"', ["-c", CLI, "remember", "RUN"]),
    ('memdream remember "…" (Chinese)', ["-c", CLI, "remember", "RUN_ZH"]),
    ("memdream log", ["-c", CLI, "log", "RUN", "a step finished"]),
    ("memdream recall foo, MEMDREAM_EMBEDDER=use", ["-c", CLI, "recall", "foo", USE]),
    ("memdream serve, spawn to initialize answered", ["-c", CLI, "serve", MCP]),
    # What a CLI call served by a resident process could cost at least (issue 21 point 1): a
    # client that imports nothing of memdream, sends its arguments over a Unix socket and prints
    # the answer (an echo server in this bench's process; the warm call itself adds 1-5 ms).
    ("thin client's floor: python, one Unix-socket round trip", ["-c", THIN, "SOCK", "recall", "咖啡"]),
]


def seed(vault: Path, src: Path) -> None:
    code = (
        "import sys\n"
        "from memdream.memory import open_memory\n"
        "m = open_memory(sys.argv[1])\n"
        # A bilingual user's personal facts, with their subjects (所在地, 公司, phone, ...).
        "for t in ('我住在西湖区', '我在字节上班', '我养了一只橘猫', 'My phone is a Pixel 7', 'I drive a Kia Niro'):\n"
        "    m.remember(t)\n"
        "for i in range(1000):\n"
        "    m.remember(f'fact {i}: project {i % 37} uses port {8000 + i}' if i % 2 else f'第{i}条：周{i % 7}下午和团队{i % 13}开会，地点在{i % 5}号楼')\n"
        "m.close()\n"
    )
    subprocess.run([sys.executable, "-c", code, str(vault)], check=True, env=_env(src, vault))


def embed(vault: Path, src: Path) -> None:
    """A copy of the vault beside it with its vectors made by `use`, so a timed recall embeds only its query."""
    shutil.copytree(vault, vault.with_name("use"))
    vault = vault.with_name("use")
    subprocess.run([sys.executable, "-c", CLI, "index", "embed"], check=True, capture_output=True, env=_env(src, vault, "use"))


def _env(src: Path, vault: Path, embedder: str = "none") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDREAM_")}
    env.update(PYTHONPATH=str(src), MEMDREAM_VAULT=str(vault), MEMDREAM_EMBEDDER=embedder, PYTHONDONTWRITEBYTECODE="")
    env["MEMDREAM_CACHE_DIR"] = str(vault.parent / "model-cache")  # written by the warm-up run, as ~/.cache/memdream would be
    return env


def time_case(args: list[str], src: Path, vault: Path, n: int) -> float:
    embedder = USE if USE in args else "none"
    vault = vault.with_name("use") if USE in args else vault
    note = {"RUN_ZH": f"启动测试第{n}条：{time.time_ns()}号会议改到周三下午", "RUN": f"startup note {n} {time.time_ns()}", "SOCK": SOCKET[0] if SOCKET else ""}
    argv = [sys.executable, *[note.get(a, a) for a in args if a not in (MCP, USE)]]
    if MCP in args:
        return time_mcp(argv, _env(src, vault, embedder), vault.parent)
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=_env(src, vault, embedder), cwd=vault.parent)
    return (time.perf_counter() - t) * 1000


def echo_server(path: str) -> None:
    """A Unix-socket server on a thread of this process that answers each request with one JSON
    line: the floor a resident memdream would add its warm call to."""
    import socket
    import threading

    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(16)

    def serve() -> None:
        while True:
            conn, _ = srv.accept()
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
                conn.sendall(b'{"ok": true, "request_bytes": %d}\n' % len(data))

    threading.Thread(target=serve, daemon=True).start()
    SOCKET.append(path)


def time_mcp(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Spawn the stdio server, send `initialize`, and time until its answer's line arrives."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(INITIALIZE.encode())
        proc.stdin.flush()
        line = proc.stdout.readline()
        ms = (time.perf_counter() - t) * 1000
        if b'"id":1' not in line.replace(b" ", b"") or b"result" not in line:
            raise RuntimeError(f"memdream serve did not answer initialize: {line[:300]!r}")
        return ms
    finally:
        proc.stdin.close()  # end of input: the server exits
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def import_times(src: Path, vault: Path, runs: int = 5) -> list[tuple[float, float, str]]:
    best: dict[str, tuple[float, float]] = {}
    for _ in range(runs):
        res = subprocess.run([sys.executable, "-X", "importtime", "-c", CLI, "recall", "foo"], capture_output=True, text=True, env=_env(src, vault))
        for line in res.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
            if m:
                s, c, name = int(m.group(1)) / 1000, int(m.group(2)) / 1000, m.group(3)
                old = best.get(name)
                best[name] = (min(s, old[0]), min(c, old[1])) if old else (s, c)
    return sorted(((s, c, n) for n, (s, c) in best.items()), reverse=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--code", action="append", default=[], metavar="NAME=SRC_DIR", help="Another source tree to time beside this one.")
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    trees = [("this tree", ROOT / "src")] + [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="memdream-startup-") as tmp:
        echo_server(str(Path(tmp) / "thin.sock"))
        vaults = {}
        for name, src in trees:
            vaults[name] = Path(tmp) / re.sub(r"\W+", "_", name) / "v"
            print(f"[bench] seeding 1,000 memories with {name} ({src}) ...", file=sys.stderr, flush=True)
            seed(vaults[name], src)
            embed(vaults[name], src)
        for label, case in CASES:
            for name, src in trees:
                time_case(case, src, vaults[name], -1)  # warm the page cache and the index
            for n in range(args.runs):
                for name, src in trees:
                    times.setdefault((label, name), []).append(time_case(case, src, vaults[name], n))
            print(f"[bench] {label}: " + ", ".join(f"{name} {statistics.median(times[(label, name)]):.0f} ms" for name, _ in trees), file=sys.stderr, flush=True)
        slow = import_times(trees[0][1], vaults[trees[0][0]])
    lines = [
        START,
        "## Start-up: memdream as a new process (issue 21)",
        "",
        f"Measured {datetime.now():%Y-%m-%d} on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"median of {args.runs} processes after a warm-up, on a vault of 1,000 memories and five personal facts with their subjects (in Chinese and English), keyword only unless `use` is named. {args.note}".rstrip(),
        "",
        f"Command: `python bench/startup.py --runs {args.runs}" + "".join(f" --code {c}" for c in args.code) + "`",
        "",
        "| process | " + " | ".join(name for name, _ in trees) + " |",
        "| --- | " + " | ".join("---:" for _ in trees) + " |",
    ]
    for label, _ in CASES:
        lines.append(f"| `{label}` | " + " | ".join(f"{statistics.median(times[(label, name)]):.0f} ms" for name, _ in trees) + " |")
    lines += [
        "",
        "Where the start-up of `memdream recall foo` goes (this tree; `python -X importtime`, the smallest of 5 runs; self time, then with what it imports):",
        "",
        "| module | self | cumulative |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {n} | {s:.1f} ms | {c:.1f} ms |" for s, c, n in slow[:12]]
    lines += ["", END, ""]
    report = "\n".join(lines)
    print(report)
    if args.report:
        write_report(Path(args.report), report, START, END)


if __name__ == "__main__":
    main()
