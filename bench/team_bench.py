"""Benchmark of the team server (issue 20): throughput with 1, 2 and 4 server processes against
one process on the folder vault, the cost of one MCP request end to end, recall p50 at 100k
(and 1M) rows in one scope.

    .venv/bin/python bench/team_bench.py [--clients 8] [--seconds 15] [--sizes 100000] [--report docs/benchmarks.md]

Every request goes through the same client path: the MCP SDK's streamable HTTP client (a
bearer token), to real `memdream serve --http` subprocesses, with `--store` (a throwaway
PostgreSQL 15 cluster, tests/pgcluster.py) or without it (the folder vault). Schedulers off
(`--no-scheduler`), so only the clients' requests run.

1. Latency: one client, one request at a time: `remember` then `recall` (keyword), p50/p95,
   through the team server and through the folder server; beside them the same calls on a
   `Memory` in process (no MCP, no HTTP, no database): what the server path adds.
2. Throughput: `--clients` client processes, each its own token; on the team server each
   its own scope, spread evenly over 1, 2 and 4 server processes; once more with every
   client on one scope (4 servers: the per-scope lock). The folder server serves one scope,
   so its clients share it. `--seconds` of remembers, then `--seconds` of recalls; ops/s
   counted over the window. The CPU time each group of processes used in the window (the
   servers, PostgreSQL, the clients, anything else on the machine) says where the limit is.
3. Scale: a folder vault of N entries (bench/corpus.py's facts, as bench/recall_latency.py
   writes them) is loaded with `memdream push`, one server serves it; its first request (the
   process's local copy fetched and indexed) is timed, then keyword recalls of 2-3 content
   words of stored facts, p50/p95.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests"))

from corpus import facts  # noqa: E402
from remember_latency import pct, populate, write_report  # noqa: E402
from soak_server import Team, free_port  # noqa: E402

START, END = "<!-- bench:team:start -->", "<!-- bench:team:end -->"
HZ = os.sysconf("SC_CLK_TCK")


def _transport(port: int, token: str, read_timeout: float | None = None):  # type: ignore[no-untyped-def]
    """The SDK's client; `read_timeout` (seconds) for a first request that indexes a big scope."""
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    timeout = None
    if read_timeout is not None:
        import httpx2

        timeout = httpx2.Timeout(30.0, read=read_timeout)
    return streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}, timeout=timeout))


# -- CPU accounting from /proc

def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process used so far; 0 if it is gone."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / HZ
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0


def children_of(ppid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == ppid:
                    out.append(int(p.name))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, idle seconds) so far."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = f[3] + f[4]
    return (sum(f[:8]) - idle) / HZ, idle / HZ


class CpuWindow:
    """CPU seconds per group of processes between `start()` and `stop()`."""

    def __init__(self, groups: dict[str, "callable"]) -> None:  # type: ignore[valid-type]
        self.groups = groups  # name -> a function giving the group's pids now

    def sample(self) -> dict[str, float]:
        out = {name: sum(cpu_of(p) for p in pids()) for name, pids in self.groups.items()}
        out["_busy"], out["_idle"] = machine_cpu()
        out["_t"] = time.monotonic()
        return out

    @staticmethod
    def share(a: dict, b: dict) -> dict[str, float]:
        """Per group: the share of the machine's cores used over the window (1.0 = one core)."""
        wall = b["_t"] - a["_t"]
        out = {k: (b[k] - a[k]) / wall for k in a if not k.startswith("_")}
        out["other"] = max(0.0, (b["_busy"] - a["_busy"]) / wall - sum(out.values()))
        out["idle"] = (b["_idle"] - a["_idle"]) / wall
        return out


def postgres_pids(team: Team) -> list[int]:
    head = (team.cluster.data / "postmaster.pid").read_text().split()[0]
    return [int(head), *children_of(int(head))]


# -- clients

async def _throughput_client(c: int, port: int, token: str, texts: list[str], queries: list[str], ready, go, t0v, seconds: float) -> dict:  # type: ignore[no-untyped-def]
    from mcp.client import Client

    out = {"remember": 0, "recall": 0, "errors": 0}
    async with Client(_transport(port, token)) as cl:
        await cl.call_tool("recall", {"query": "warm up"})
        ready.put(c)
        while not go.is_set():
            await asyncio.sleep(0.01)
        t0 = t0v.value
        await asyncio.sleep(max(0.0, t0 - time.time()))
        for kind, end in (("remember", t0 + seconds), ("recall", t0 + 2 * seconds + 1.0)):
            if kind == "recall":
                await asyncio.sleep(max(0.0, t0 + seconds + 1.0 - time.time()))  # the writes in flight settle
            i = 0
            while time.time() < end:
                if kind == "remember":
                    res = await cl.call_tool("remember", {"text": texts[i % len(texts)] + f" #{c}-{i}", "type": "fact"})
                else:
                    res = await cl.call_tool("recall", {"query": queries[i % len(queries)], "k": 10})
                i += 1
                if res.is_error:
                    out["errors"] += 1
                elif time.time() <= end:
                    out[kind] += 1
    return out


def _throughput_proc(c, port, token, texts, queries, ready, go, t0v, seconds, q) -> None:  # type: ignore[no-untyped-def]
    try:
        q.put((c, asyncio.run(_throughput_client(c, port, token, texts, queries, ready, go, t0v, seconds))))
    except BaseException as exc:  # noqa: BLE001 - the run fails naming it
        ready.put(c)
        q.put((c, {"crashed": f"{type(exc).__name__}: {exc}"}))


def throughput(label: str, ports: list[int], tokens: list[str], seconds: float, cpu_groups: dict, seed: int = 3) -> dict:
    """Client c on server c % len(ports) with tokens[c]: remembers for `seconds`, then recalls."""
    from recall_latency import make_queries

    ctx = mp.get_context("spawn")
    ready, q, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    t0v = ctx.Value("d", 0.0)
    corpus = facts(len(tokens) * 400, seed=seed)
    queries = make_queries(corpus, 400, seed=seed)
    procs = []
    for c, tok in enumerate(tokens):
        texts = corpus[c * 400 : (c + 1) * 400]
        procs.append(ctx.Process(target=_throughput_proc, args=(c, ports[c % len(ports)], tok, texts, queries, ready, go, t0v, seconds, q)))
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=300)
    groups = dict(cpu_groups, clients=lambda: [p.pid for p in procs])
    win = CpuWindow(groups)
    t0 = time.time() + 0.5
    t0v.value = t0
    go.set()
    time.sleep(max(0.0, t0 - time.time()))
    a = win.sample()
    time.sleep(max(0.0, t0 + seconds - time.time()))
    b = win.sample()
    time.sleep(max(0.0, t0 + seconds + 1.0 - time.time()))
    c_ = win.sample()
    time.sleep(max(0.0, t0 + 2 * seconds + 1.0 - time.time()))
    d = win.sample()
    got = dict(q.get(timeout=600) for _ in procs)
    for p in procs:
        p.join()
    crashed = [r["crashed"] for r in got.values() if "crashed" in r]
    if crashed:
        raise RuntimeError(f"{label}: {crashed[:2]}")
    res = {
        "label": label, "servers": len(ports), "clients": len(tokens),
        "remember_ops": sum(r["remember"] for r in got.values()) / seconds, "recall_ops": sum(r["recall"] for r in got.values()) / seconds,
        "errors": sum(r["errors"] for r in got.values()), "cpu_remember": CpuWindow.share(a, b), "cpu_recall": CpuWindow.share(c_, d),
    }  # fmt: skip
    print(f"[team-bench] {json.dumps(res)}", file=sys.stderr, flush=True)
    return res


async def _latency(port: int, token: str, texts: list[str], queries: list[str]) -> dict:
    from mcp.client import Client

    out: dict[str, list[float]] = {"remember": [], "recall": []}
    async with Client(_transport(port, token)) as cl:
        await cl.call_tool("recall", {"query": "warm up"})
        for t in texts:
            s = time.perf_counter()
            res = await cl.call_tool("remember", {"text": t, "type": "fact"})
            out["remember"].append((time.perf_counter() - s) * 1000)
            assert not res.is_error, res
        for qy in queries:
            s = time.perf_counter()
            res = await cl.call_tool("recall", {"query": qy, "k": 10})
            out["recall"].append((time.perf_counter() - s) * 1000)
            assert not res.is_error, res
    return out


def stats(xs: list[float]) -> dict:
    return {"p50": pct(xs, 50), "p95": pct(xs, 95), "n": len(xs)}


# -- the folder server

class FolderServer:
    def __init__(self, root: Path) -> None:
        self.vault = root / "folder-vault"
        self.port = free_port()
        self.token = "bench-token-" + os.urandom(6).hex()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdream.cli.main", "serve", "--vault", str(self.vault), "--user", "shared", "--no-scheduler", "--http", f"127.0.0.1:{self.port}", "--token", self.token],
            env=dict(os.environ, MEMDREAM_STORE=""), stdout=subprocess.DEVNULL, stderr=open(root / "folder.log", "a"),  # noqa: SIM115
        )  # fmt: skip
        import httpx

        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.post(f"http://127.0.0.1:{self.port}/mcp", json={}, timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"the folder server did not start; see {root / 'folder.log'}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(15)


def in_process(root: Path, texts: list[str], queries: list[str]) -> dict:
    """The same calls on a Memory in process: no MCP, no HTTP, no database."""
    from memdream.config import load_config
    from memdream.memory import Memory

    mem = Memory(load_config(root / "inproc-vault", "me", "main", env={}))
    mem.vault.init()
    mem.recall("warm up")
    out: dict[str, list[float]] = {"remember": [], "recall": []}
    for t in texts:
        s = time.perf_counter()
        mem.write(t, type="fact", source="agent")
        out["remember"].append((time.perf_counter() - s) * 1000)
    for qy in queries:
        s = time.perf_counter()
        mem.recall(qy, k=10)
        out["recall"].append((time.perf_counter() - s) * 1000)
    mem.close()
    return out


def scale(root: Path, size: int, nq: int) -> dict:
    """A scope of `size` entries pushed with `memdream push`, then recalled through one server."""
    from recall_latency import make_queries

    from memdream.config import load_config
    from memdream.memory import Memory

    texts = facts(size, seed=11)
    queries = make_queries(texts, nq)
    src = root / f"vault-{size}"
    mem = Memory(load_config(src, "big", "main", env={}))
    mem.vault.init()
    populate(mem, texts)
    mem.close()
    team = Team(root / f"team-{size}", 1, scheduler=False)
    try:
        s = time.perf_counter()
        got = subprocess.run([sys.executable, "-m", "memdream.cli.main", "push", str(src), "--json"], env=team.env, capture_output=True, text=True, timeout=7200)
        push_s = time.perf_counter() - s
        if got.returncode != 0:
            raise RuntimeError(f"push failed: {got.stderr[-800:]}")
        with team.open_store().pool.connection() as conn:
            conn.execute("SELECT set_config('memdream.scope', 'main/big', true)")
            rows = conn.execute("SELECT count(*) FROM memdream_lines WHERE entry_id IS NOT NULL").fetchone()[0]
            conn.rollback()
        token = team.token("big")
        team.start_all()

        async def go() -> dict:
            from mcp.client import Client

            out: dict = {"recall": []}
            async with Client(_transport(team.ports[0], token, read_timeout=7200)) as cl:
                s = time.perf_counter()
                res = await cl.call_tool("recall", {"query": queries[0], "k": 10})
                out["first_s"] = time.perf_counter() - s
                assert not res.is_error, res
                for qy in queries:
                    s = time.perf_counter()
                    res = await cl.call_tool("recall", {"query": qy, "k": 10})
                    out["recall"].append((time.perf_counter() - s) * 1000)
                    assert not res.is_error, res
                    out.setdefault("hits", 0)
                    out["hits"] += bool(json.loads(res.content[0].text)["hits"])
            return out

        out = asyncio.run(go())
        res = {"size": size, "rows": rows, "push_s": push_s, "first_s": out["first_s"], "recall": stats(out["recall"]), "with_hits": out["hits"], "queries": len(queries)}
        print(f"[team-bench] scale {json.dumps(res)}", file=sys.stderr, flush=True)
        return res
    finally:
        team.stop()


def render(res: dict, cmd: str) -> str:
    lat = res["latency"]

    def ms(d: dict) -> str:
        return f"{d['p50']:.1f} / {d['p95']:.1f}"

    lines = [
        START,
        "## Team server",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with the clients and PostgreSQL (and with other work: the 'other' column), Python {platform.python_version()}, "
        f"PostgreSQL 15 (a throwaway cluster, fsync off, Unix socket); run on {datetime.now():%Y-%m-%d %H:%M}. "
        "Every request: the MCP SDK's streamable HTTP client to a real `memdream serve --http` process (`--no-scheduler`).",
        "",
        "**The cost of one request** (one client, one request at a time, keyword recall k=10, a scope of a few hundred entries):",
        "",
        "| path | remember p50 / p95 (ms) | recall p50 / p95 (ms) |",
        "| --- | --- | --- |",
        f"| team server (`serve --http --store`) | {ms(lat['store']['remember'])} | {ms(lat['store']['recall'])} |",
        f"| folder server (`serve --http`) | {ms(lat['folder']['remember'])} | {ms(lat['folder']['recall'])} |",
        f"| `Memory` in process (no MCP, no HTTP, no database) | {ms(lat['inproc']['remember'])} | {ms(lat['inproc']['recall'])} |",
        "",
        f"**Throughput** ({res['clients']} client processes, {res['seconds']:g} s of remembers then {res['seconds']:g} s of recalls; CPU: the share of a core each group used over the window, 2.0 = both cores):",
        "",
        "| setup | remember ops/s | recall ops/s | CPU in the remember window: servers / PostgreSQL / clients / other / idle | ... in the recall window |",
        "| --- | --- | --- | --- | --- |",
    ]
    for t in res["throughput"]:
        def cpu(d: dict) -> str:
            return " / ".join(f"{d.get(k, 0):.2f}" for k in ("servers", "postgres", "clients", "other", "idle"))

        lines.append(f"| {t['label']} | {t['remember_ops']:.1f} | {t['recall_ops']:.1f} | {cpu(t['cpu_remember'])} | {cpu(t['cpu_recall'])} |")
    lines += ["", "**Recall in one big scope** (loaded with `memdream push`, one server, keyword, k=10):", "", "| entries (rows) | push | first request (local copy fetched and indexed) | recall p50 / p95 (ms) | queries with hits |", "| --- | --- | --- | --- | --- |"]
    for s in res["scale"]:
        lines.append(f"| {s['size']:,} ({s['rows']:,}) | {s['push_s']:.0f} s | {s['first_s']:.1f} s | {ms(s['recall'])} | {s['with_hits']} of {s['queries']} |")
    if not any(s["size"] >= 1_000_000 for s in res["scale"]):
        lines.append("| 1,000,000 | not measured in this run | | | |")
    lines += ["", res.get("note", ""), END]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--latency-ops", type=int, default=200)
    ap.add_argument("--servers", default="1,2,4")
    ap.add_argument("--sizes", default="100000", help="entries in one scope for the recall-at-scale part ('' to skip)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--note", default="", help="A sentence about the conditions of this run, printed in the report.")
    ap.add_argument("--report", default="docs/benchmarks.md")
    args = ap.parse_args()
    from recall_latency import make_queries

    res: dict = {"clients": args.clients, "seconds": args.seconds, "throughput": [], "scale": [], "note": args.note}
    with tempfile.TemporaryDirectory(prefix="memdream-team-bench-") as tmp:
        root = Path(tmp)
        lat_texts = facts(args.latency_ops, seed=21)  # the same texts on each path, each in its own scope
        lat_q = make_queries(lat_texts[: args.latency_ops], args.latency_ops, seed=21)
        # 1. latency, and 2. throughput on the team server
        res["latency"] = {"inproc": {k: stats(v) for k, v in in_process(root, lat_texts[: args.latency_ops], lat_q).items()}}
        for n in (int(x) for x in args.servers.split(",")):
            team = Team(root / f"team{n}", n, scheduler=False)
            try:
                team.start_all()
                groups = {"servers": lambda team=team: [p.pid for p in team.procs if p], "postgres": lambda team=team: postgres_pids(team)}
                if n == 1:
                    tok = team.token("latency")
                    out = asyncio.run(_latency(team.ports[0], tok, lat_texts[: args.latency_ops], lat_q))
                    res["latency"]["store"] = {k: stats(v) for k, v in out.items()}
                    print(f"[team-bench] latency {json.dumps(res['latency'])}", file=sys.stderr, flush=True)
                tokens = [team.token(f"tenant{c}") for c in range(args.clients)]
                res["throughput"].append(throughput(f"team server, {n} process{'es' if n > 1 else ''}, a scope per client", team.ports, tokens, args.seconds, groups))
                if n == max(int(x) for x in args.servers.split(",")):
                    shared = [team.token("shared")] * args.clients
                    res["throughput"].append(throughput(f"team server, {n} process{'es' if n > 1 else ''}, every client on one scope", team.ports, shared, args.seconds, groups))
            finally:
                team.stop()
        folder = FolderServer(root)
        try:
            out = asyncio.run(_latency(folder.port, folder.token, lat_texts[: args.latency_ops], lat_q))
            res["latency"]["folder"] = {k: stats(v) for k, v in out.items()}
            groups = {"servers": lambda: [folder.proc.pid], "postgres": lambda: []}
            res["throughput"].insert(0, throughput("folder server, 1 process, one scope (its clients share it)", [folder.port], [folder.token] * args.clients, args.seconds, groups))
        finally:
            folder.stop()
        save(res, args)
        # 3. recall at scale (the report is written after each size: a long 1M run stopped
        # half-way leaves the figures measured before it)
        for size in (int(x) for x in args.sizes.split(",") if x):
            res["scale"].append(scale(root, size, args.queries))
            save(res, args)
    print(render(res, command(args)))


def command(args: argparse.Namespace) -> str:
    return f"python bench/team_bench.py --clients {args.clients} --seconds {args.seconds:g} --servers {args.servers} --sizes {args.sizes}"


def save(res: dict, args: argparse.Namespace) -> None:
    if args.report:
        write_report(Path(args.report), render(res, command(args)), START, END)


if __name__ == "__main__":
    main()
