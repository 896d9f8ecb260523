"""The team server's soak: many server processes over one PostgreSQL, many MCP clients, kill -9
(issue 20, acceptance).

    .venv/bin/python bench/soak_server.py [--servers 4] [--clients 8] [--scopes 4] [--ops 500] [--kills 100] [--report docs/reliability.md]

A throwaway PostgreSQL cluster (tests/pgcluster.py); `--servers` real `memdream serve --http
--store` subprocesses, each on its own port, with their dream schedulers (the lease, the
interval and the tick shortened by MEMDREAM_DREAM_LEASE_S/EVERY_S/TICK_S); `--clients`
client processes, each with its own token, over `--scopes` scopes (two clients share a scope
by default), speaking MCP streamable HTTP with the SDK's client. A client runs bursts of 1-12
operations on one server picked at random, then moves to another: remember (Chinese and
English), recall (both), forget, pin and dream, mixed. Every acknowledged remember (its id,
text and outcome), forget and pin is recorded.

1. Concurrency: every client runs `--ops` operations. Then `memdream export --store` writes
   the vault, and the checks: every acknowledged remember is in it (current unless it was
   forgotten or superseded by an acknowledged write), with its text; every acknowledged
   forget ended its entry; every acknowledged pin holds (unless a later pin of the entry went
   unanswered, its server killed: either value may then hold); no id is in two places of a scope;
   every file parses (memdream's parser); `memdream doctor` is clean on the export and on the
   store.
2. Crash injection: the clients run on while one server at a time is killed with SIGKILL and
   restarted, `--kills` times: half at a random moment of the writes, half the moment a
   server is seen holding a dream lease (memdream_dream_jobs). Then the same checks over
   everything acknowledged in both phases, and each lease a killed server held is taken over:
   its row names another holder or none, and its run count grew, within the lease's expiry.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests"))

from remember_latency import write_report  # noqa: E402

START, END = "<!-- soak-server:start -->", "<!-- soak-server:end -->"
ZH = ["龙井茶", "咖啡", "围棋", "火锅", "自行车", "钢琴"]
EN = ["tea", "coffee", "chess", "hotpot", "bicycle", "piano"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def md(env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """A memdream CLI command."""
    return subprocess.run([sys.executable, "-m", "memdream.cli.main", *args], env=env, capture_output=True, text=True, timeout=timeout)


class Team:
    """A throwaway PostgreSQL cluster, one database, and `memdream serve --http --store` processes."""

    def __init__(self, work: Path, servers: int, lease_s: float = 3.0, every_s: float = 0.5, tick_s: float = 0.25, scheduler: bool = True, extra_env: dict | None = None, cluster=None) -> None:  # type: ignore[no-untyped-def]
        from pgcluster import Cluster  # type: ignore[import-not-found]

        self.work = work
        self.own_cluster = cluster is None  # else one the caller started (the suite's), left running
        self.cluster = Cluster().start() if cluster is None else cluster
        self.dsn = self.cluster.new_database(f"team_{os.getpid()}_{int(time.time() * 1000) % 10**8}")
        (work / "cache").mkdir(parents=True, exist_ok=True)
        self.env = dict(
            os.environ, MEMDREAM_STORE=self.dsn, MEMDREAM_VAULT=str(work / "no-vault"), MEMDREAM_TEAM_CACHE=str(work / "cache"),
            MEMDREAM_DREAM_LEASE_S=str(lease_s), MEMDREAM_DREAM_EVERY_S=str(every_s), MEMDREAM_DREAM_TICK_S=str(tick_s),
            **(extra_env or {}),
        )  # fmt: skip
        self.lease_s, self.tick_s = lease_s, tick_s
        self.scheduler = scheduler
        self.ports = [free_port() for _ in range(servers)]
        self.procs: list[subprocess.Popen | None] = [None] * servers
        self.log = open(work / "servers.log", "a")  # noqa: SIM115 - closed in stop()
        self.starts = 0
        self.store = None

    def open_store(self):  # type: ignore[no-untyped-def]
        """This process's own handle on the database (tokens, lease rows)."""
        if self.store is None:
            from memdream.config import load_config
            from memdream.team import open_store

            self.store = open_store(self.dsn, load_config(self.work / "no-vault", env={}), cache_dir=self.work / "cache", pool_size=2)
        return self.store

    def token(self, user: str, agent: str = "main") -> str:
        """A token for user/agent, as `memdream token create` makes it (the same function, in process)."""
        from memdream.store.vault import Scope
        from memdream.team import create_token

        return create_token(self.open_store(), Scope(user, agent), "soak")

    def start(self, i: int) -> None:
        args = [sys.executable, "-m", "memdream.cli.main", "serve", "--http", f"127.0.0.1:{self.ports[i]}"]
        if not self.scheduler:
            args.append("--no-scheduler")
        self.procs[i] = subprocess.Popen(args, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log)
        self.starts += 1

    def healthy(self, i: int) -> bool:
        import httpx

        p = self.procs[i]
        if p is None or p.poll() is not None:
            return False
        try:
            return httpx.get(f"http://127.0.0.1:{self.ports[i]}/healthz", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_healthy(self, idx: list[int] | None = None, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        for i in idx if idx is not None else range(len(self.ports)):
            while not self.healthy(i):
                p = self.procs[i]
                if p is not None and p.poll() is not None:
                    raise RuntimeError(f"server {i} exited with {p.returncode}; see {self.work / 'servers.log'}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server {i} not healthy after {timeout:.0f} s; see {self.work / 'servers.log'}")
                time.sleep(0.05)

    def start_all(self) -> None:
        for i in range(len(self.ports)):
            self.start(i)
        self.wait_healthy()

    def kill(self, i: int) -> int:
        p = self.procs[i]
        assert p is not None
        p.send_signal(signal.SIGKILL)
        p.wait()
        return p.pid

    def stop(self) -> None:
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.terminate()
        for p in self.procs:
            if p is not None:
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.store is not None:
            self.store.close()
        if self.own_cluster:
            self.cluster.stop()
        self.log.close()

    def jobs(self) -> list[tuple]:
        """memdream_dream_jobs: (scope, holder, lease held now, runs, last_status)."""
        with self.open_store().pool.connection() as conn:
            rows = conn.execute("SELECT scope, holder, lease_until > now(), runs, last_status FROM memdream_dream_jobs ORDER BY scope").fetchall()
            conn.rollback()
        return rows


# -- the clients (spawned processes: each its own event loop and MCP client)

def _transport(port: int, token: str):  # type: ignore[no-untyped-def]
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    return streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))


def _text(result) -> str:  # type: ignore[no-untyped-def]
    return result.content[0].text if result.content else ""


async def _client(c: int, ports: list[int], token: str, ops: int, stop, seed: int, base: int = 0) -> dict:  # type: ignore[no-untyped-def]
    from mcp.client import Client

    rng = random.Random(seed)
    out: dict = {"remembered": [], "forgotten": [], "forget_unacked": [], "pins": {}, "pins_unknown": [], "kinds": Counter(), "acked": 0, "unacked": 0, "timeouts": 0, "refused": Counter(), "connects_failed": 0}
    mine: list[str] = []  # this client's acknowledged, not forgotten ids
    n = base  # numbers each phase's texts apart: no two remembers of a run say the same
    forgetting: list[str] = []  # the id of a forget in flight
    pinning: list[str] = []  # the id of a pin in flight: if its server dies, either value may hold

    def more() -> bool:
        return n < base + ops if ops else not stop.is_set()

    async def one(cl) -> None:  # type: ignore[no-untyped-def]
        r = rng.random()
        num = c * 1_000_000 + n
        if r < 0.45 or not mine:
            if n % 2:
                text, kind = f"工人{c}的第{n}条记录：客户{num}订了{rng.randint(2, 9)}箱{rng.choice(ZH)}", "remember_zh"
            else:
                text, kind = f"client {c} note {n}: customer {num} ordered {rng.randint(2, 9)} boxes of {rng.choice(EN)}", "remember_en"
            res = await cl.call_tool("remember", {"text": text, "type": "fact"})
            if res.is_error:
                out["refused"][_text(res)[:120]] += 1
                return
            got = json.loads(_text(res))
            e = got["entry"]
            out["remembered"].append({"id": e["id"], "text": text, "action": got["action"], "ended": [s["id"] for s in got.get("superseded", [])], "pending": bool(e.get("pending"))})
            if got["action"] != "duplicate" and not e.get("pending"):
                mine.append(e["id"])
        elif r < 0.70:
            kind = "recall_zh" if n % 2 else "recall_en"
            who = c * 1_000_000 + rng.randrange(max(1, n))
            q = f"客户{who}订了几箱{rng.choice(ZH)}" if n % 2 else f"how many boxes of {rng.choice(EN)} did customer {who} order"
            res = await cl.call_tool("recall", {"query": q, "k": 5})
            if res.is_error:
                out["refused"][_text(res)[:120]] += 1
                return
            json.loads(_text(res))["hits"]
        elif r < 0.80:
            kind = "forget"
            eid = mine.pop(rng.randrange(len(mine)))
            forgetting.append(eid)  # until acknowledged: if its server dies now, it may or may not have committed
            res = await cl.call_tool("forget", {"entry_id": eid})
            forgetting.remove(eid)
            if res.is_error:
                out["refused"][_text(res)[:120]] += 1
                mine.append(eid)
                return
            out["forgotten"].append(eid)
            out["pins"].pop(eid, None)
        elif r < 0.96:
            kind = "pin"
            eid = rng.choice(mine)
            pinned = rng.random() < 0.6
            pinning.append(eid)
            res = await cl.call_tool("pin", {"entry_id": eid, "pinned": pinned})
            pinning.remove(eid)
            if res.is_error:
                out["refused"][_text(res)[:120]] += 1
                return
            out["pins"][eid] = pinned
            if eid in out["pins_unknown"]:
                out["pins_unknown"].remove(eid)  # acknowledged since: this value holds
        else:
            kind = "dream"
            res = await cl.call_tool("dream", {"days": 1})
            if res.is_error:
                out["refused"][_text(res)[:120]] += 1
                return
        out["kinds"][kind] += 1
        out["acked"] += 1

    while more():
        port = rng.choice(ports)
        burst = rng.randint(1, 12)
        inflight = False
        try:
            async with Client(_transport(port, token)) as cl:
                for _ in range(burst):
                    if not more():
                        break
                    n += 1
                    inflight = True
                    async with asyncio.timeout(120):
                        await one(cl)
                    inflight = False
        except TimeoutError:
            out["timeouts"] += 1
            out["unacked"] += 1
            out["forget_unacked"] += forgetting
            forgetting.clear()
            _pin_unknown(out, pinning)
        except (Exception, asyncio.CancelledError):  # the server was killed (or is restarting): nothing acknowledged
            if inflight:
                out["unacked"] += 1
                out["forget_unacked"] += forgetting
                forgetting.clear()
                _pin_unknown(out, pinning)
            else:
                out["connects_failed"] += 1
            await asyncio.sleep(0.05)
    out["ops"] = n - base
    return out


def _pin_unknown(out: dict, pinning: list[str]) -> None:
    """A pin whose answer never came (its server was killed) may or may not have committed:
    the entry's pin state is unknown until a later pin of it is acknowledged, so the check
    leaves it out (as it counts an unacknowledged forget apart)."""
    for eid in pinning:
        out["pins"].pop(eid, None)
        if eid not in out["pins_unknown"]:
            out["pins_unknown"].append(eid)
    pinning.clear()


def _client_proc(c: int, ports: list[int], token: str, ops: int, stop, seed: int, base: int, q) -> None:  # type: ignore[no-untyped-def]
    try:
        q.put((c, asyncio.run(_client(c, ports, token, ops, stop, seed, base))))
    except BaseException as exc:  # noqa: BLE001 - reported: the run fails naming it
        q.put((c, {"crashed": f"{type(exc).__name__}: {exc} | {traceback.format_exc()[-1500:]}"}))


def run_clients(team: Team, tokens: list[str], ops: int, seed: int, during=None, base: int = 0) -> list[dict]:  # type: ignore[no-untyped-def]
    """The clients, `ops` operations each; with `during` (ops=0): they run until it returns."""
    ctx = mp.get_context("spawn")
    q, stop = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_client_proc, args=(c, team.ports, tok, ops, stop, seed * 1000 + c, base, q)) for c, tok in enumerate(tokens)]
    for p in procs:
        p.start()
    if during is not None:
        try:
            during()
        finally:
            stop.set()
    got = dict(q.get(timeout=3600) for _ in procs)
    for p in procs:
        p.join()
    crashed = [f"client {c}: {r['crashed']}" for c, r in got.items() if "crashed" in r]
    if crashed:
        raise RuntimeError("; ".join(crashed))
    return [got[c] for c in range(len(tokens))]


# -- the crash phase's controller

def kill_loop(team: Team, kills: int, rng: random.Random, res: dict) -> None:
    """Kill one server at a time, `kills` times, and restart it: odd kills at a random moment,
    even ones the moment a server holds a dream lease. At most half the servers are down."""
    n = len(team.ports)
    max_down = max(1, n // 2)
    down: set[int] = set()
    for k in range(kills):
        # wait until a kill leaves at most max_down servers down
        deadline = time.monotonic() + 120
        while True:
            down = {i for i in down if not team.healthy(i)}
            if len(down) < max_down:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"servers {sorted(down)} did not come back in 120 s; see {team.work / 'servers.log'}")
            time.sleep(0.05)
        up = [i for i in range(n) if i not in down]
        time.sleep(rng.uniform(0.2, 0.8))  # writes go on meanwhile
        victim, lease = None, None
        if k % 2 == 0:  # during a dream: the first server seen holding a lease
            holders = {team.procs[i].pid: i for i in up if team.procs[i] is not None}
            end = time.monotonic() + 5
            while victim is None and time.monotonic() < end:
                for scope, holder, held, runs, _ in team.jobs():
                    pid = int(holder.split(":")[1]) if holder else -1
                    if held and pid in holders:
                        victim, lease = holders[pid], (scope, holder, runs)
                        break
                else:
                    time.sleep(0.005)
        if victim is None:
            victim = rng.choice(up)
            res["write_kills"] += 1
        pid = team.kill(victim)
        if lease is not None:
            # Did it die holding it? (it may have finished between the look and the kill)
            row = [r for r in team.jobs() if r[0] == lease[0]][0]
            if row[1] == lease[1]:
                res["held_at_kill"].append({"scope": lease[0], "holder": lease[1], "runs": row[3], "killed_at": time.monotonic()})
            else:
                res["finished_before_kill"] += 1
            res["dream_kills"] += 1
        res["kills"] += 1
        team.start(victim)
        down.add(victim)
        if res["kills"] % 10 == 0:
            print(f"[soak-server]   {res['kills']} kills ({len(res['held_at_kill'])} holding a dream lease)", file=sys.stderr, flush=True)
    team.wait_healthy()


class Takeovers(threading.Thread):
    """Watches the leases killed servers held (`held`, appended by the kill loop): one is taken
    over when its row names another holder or none and its run count grew since the kill
    (the dead holder never finishes, so another process ran the job)."""

    def __init__(self, team: Team, held: list[dict]) -> None:
        super().__init__(daemon=True)
        self.team, self.held = team, held
        self.done: dict[int, float] = {}  # index in held -> seconds from the kill to the takeover
        self.stop_event = threading.Event()

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.look()
            time.sleep(0.1)

    def look(self) -> None:
        rows = {r[0]: r for r in self.team.jobs()}
        now = time.monotonic()
        for j, h in enumerate(list(self.held)):
            r = rows[h["scope"]]
            if j not in self.done and r[1] != h["holder"] and r[3] > h["runs"]:
                self.done[j] = now - h["killed_at"]

    def finish(self, timeout: float) -> tuple[int, float]:
        """Wait up to `timeout` for the rest; (taken over, the longest wait from a kill to its takeover)."""
        end = time.monotonic() + timeout
        while len(self.done) < len(self.held) and time.monotonic() < end:
            time.sleep(0.2)
        self.stop_event.set()
        self.join()
        self.look()
        return len(self.done), max(self.done.values(), default=0.0)


# -- the checks, on an exported vault

def check_export(team: Team, dest: Path, results: list[dict], scopes: list[str]) -> dict:
    """Export the store with the CLI and check it against what the clients were acknowledged."""
    from memdream.store.format import parse_document

    got = md(team.env, "export", "--to", str(dest), "--json")
    if got.returncode != 0:
        raise RuntimeError(f"memdream export failed: {got.stderr[-1500:]}")
    entries: dict[str, dict[str, list]] = {s: {} for s in scopes}  # scope -> id -> [(path, entry)]
    problems, files = [], 0
    for p in sorted(dest.rglob("*.md")):
        if p.name.startswith("."):
            continue
        files += 1
        rel = p.relative_to(dest).as_posix()
        doc = parse_document(p.read_bytes().decode("utf-8"))
        problems += [f"{rel}:{n}: {'; '.join(ln.problems)}" for n, ln in enumerate(doc.lines, 1) if ln.problems]
        parts = rel.split("/")
        scope = f"{parts[1]}/{parts[2]}" if parts[0] == "scopes" and len(parts) > 3 else ""
        for e in doc.entries():
            if e.id:
                entries.setdefault(scope, {}).setdefault(e.id, []).append((rel, e))
    out = {"files": files, "parse_problems": len(problems), "problems": problems[:5], "lost": [], "text_changed": [], "forget_lost": [], "pin_lost": [], "ended_unexplained": Counter(), "ended_examples": [], "forgotten_unacked": 0}
    out["duplicate_ids"] = sum(1 for s in entries.values() for v in s.values() if len(v) > 1)
    out["entries"] = sum(len(s) for s in entries.values())
    acked = forgot = pins = 0
    for c, r in enumerate(results):
        scope = scopes[c % len(scopes)]
        have = entries.get(scope, {})
        ended_by_write = {i for m in r["remembered"] for i in m["ended"]}
        forgotten = set(r["forgotten"])
        maybe_forgotten = set(r.get("forget_unacked", []))
        for m in r["remembered"]:
            acked += 1
            found = have.get(m["id"])
            if not found:
                out["lost"].append(f"{scope} {m['id']} {m['text']}")
                continue
            e = found[0][1]
            if m["action"] != "duplicate" and e.text != m["text"]:
                out["text_changed"].append(f"{scope} {m['id']}: {m['text']!r} -> {e.text!r}")
            if e.valid_to is not None and m["id"] not in forgotten and m["id"] not in ended_by_write:
                if e.end == "forgotten" and m["id"] in maybe_forgotten:
                    out["forgotten_unacked"] += 1  # its forget committed, and the server died before the answer
                else:
                    out["ended_unexplained"][e.end or "?"] += 1
                    out["ended_examples"].append(f"{scope} {m['id']} end={e.end} {m['text']}")
        for eid in forgotten:
            forgot += 1
            found = have.get(eid)
            if not found or found[0][1].valid_to is None:
                out["forget_lost"].append(f"{scope} {eid}")
        for eid, pinned in r["pins"].items():
            pins += 1
            found = have.get(eid)
            if found and found[0][1].valid_to is None and found[0][1].pinned != pinned:
                out["pin_lost"].append(f"{scope} {eid} pinned={pinned}")
    out.update(acked_remembers=acked, acked_forgets=forgot, acked_pins=pins)
    doc_export = md(team.env | {"MEMDREAM_STORE": ""}, "doctor", "--vault", str(dest), "--json")
    out["doctor_export"] = json.loads(doc_export.stdout)["problems"] if doc_export.stdout.strip() else [doc_export.stderr[-500:]]
    doc_store = md(team.env, "doctor", "--json")
    out["doctor_store"] = json.loads(doc_store.stdout)["problems"] if doc_store.stdout.strip() else [doc_store.stderr[-500:]]
    return out


def summarize(results: list[dict]) -> dict:
    kinds: Counter = Counter()
    refused: Counter = Counter()
    for r in results:
        kinds.update(r["kinds"])
        refused.update(r["refused"])
    return {
        "ops": sum(r["ops"] for r in results), "acked_ops": sum(r["acked"] for r in results), "kinds": dict(kinds),
        "unacked": sum(r["unacked"] for r in results), "pins_unknown": sum(len(r["pins_unknown"]) for r in results), "timeouts": sum(r["timeouts"] for r in results),
        "connects_failed": sum(r["connects_failed"] for r in results), "refused": dict(refused.most_common(5)), "refused_count": sum(refused.values()),
    }  # fmt: skip


def soak(servers: int = 4, clients: int = 8, scopes: int = 4, ops: int = 500, kills: int = 100, seed: int = 7, lease_s: float = 3.0, work: Path | None = None, cluster=None, check_between: bool = True) -> dict:  # type: ignore[no-untyped-def]  # noqa: PLR0913
    """Both phases; returns every figure and check (`check_between=False`: the checks after the
    crash phase only, which cover the first phase's writes too)."""
    tmp = tempfile.TemporaryDirectory(prefix="memdream-soak-server-") if work is None else None
    root = Path(tmp.name) if tmp else work
    assert root is not None
    rng = random.Random(seed)
    team = Team(root, servers, lease_s=lease_s, cluster=cluster)
    try:
        names = [f"user{s}" for s in range(scopes)]
        scope_keys = [f"main/{u}" for u in names]
        tokens = [team.token(names[c % scopes]) for c in range(clients)]
        t0 = time.perf_counter()
        team.start_all()
        print(f"[soak-server] {servers} servers up in {time.perf_counter() - t0:.1f} s; concurrency: {clients} clients x {ops} ops over {scopes} scopes ...", file=sys.stderr, flush=True)
        t1 = time.perf_counter()
        first = run_clients(team, tokens, ops, seed)
        res: dict = {"servers": servers, "clients": clients, "scopes": scopes, "ops": ops, "lease_s": lease_s}
        res["concurrency"] = summarize(first) | {"seconds": time.perf_counter() - t1}
        if check_between or not kills:
            res["concurrency_check"] = check_export(team, root / "export1", first, scope_keys)
        res["jobs_after_concurrency"] = [list(r) for r in team.jobs()]
        print(f"[soak-server] {json.dumps(res['concurrency'], ensure_ascii=False, default=str)}", file=sys.stderr, flush=True)
        if kills:
            print(f"[soak-server] crash injection: {kills} kills ...", file=sys.stderr, flush=True)
            k: dict = {"kills": 0, "dream_kills": 0, "write_kills": 0, "held_at_kill": [], "finished_before_kill": 0}
            t2 = time.perf_counter()
            watch = Takeovers(team, k["held_at_kill"])
            watch.start()
            second = run_clients(team, tokens, 0, seed + 1, during=lambda: kill_loop(team, kills, rng, k), base=500_000)
            k["seconds"] = time.perf_counter() - t2
            taken, longest = watch.finish(timeout=lease_s + 30)
            k.update(taken_over=taken, longest_takeover_s=longest, server_starts=team.starts)
            res["crash"] = k | summarize(second)
            merged = [
                {"remembered": a["remembered"] + b["remembered"], "forgotten": a["forgotten"] + b["forgotten"], "forget_unacked": b["forget_unacked"], "pins": {**a["pins"], **b["pins"]}}
                for a, b in zip(first, second)
            ]  # a client's phase-2 pins are later than its phase-1 ones
            for m, b in zip(merged, second):  # an id forgotten in phase 2 has no pin to check,
                for eid in b["forgotten"] + b["pins_unknown"]:  # nor one whose last pin went unanswered
                    m["pins"].pop(eid, None)
            res["crash_check"] = check_export(team, root / "export2", merged, scope_keys)
            res["jobs_after_crash"] = [list(r) for r in team.jobs()]
            res["crash"]["held_at_kill"] = len(k["held_at_kill"])
        res["seconds"] = time.perf_counter() - t0
        return res
    finally:
        team.stop()
        if tmp:
            tmp.cleanup()


def bad_figures(check: dict) -> dict:
    """The checks that must be zero (or empty)."""
    return {
        "lost": len(check["lost"]), "duplicate_ids": check["duplicate_ids"], "parse_problems": check["parse_problems"],
        "text_changed": len(check["text_changed"]), "forget_lost": len(check["forget_lost"]), "pin_lost": len(check["pin_lost"]),
        "ended_unexplained": sum(check["ended_unexplained"].values()), "doctor_export": len(check["doctor_export"]), "doctor_store": len(check["doctor_store"]),
    }  # fmt: skip


def mix(kinds: dict) -> str:
    g = kinds.get
    return f"{g('remember_zh', 0)} + {g('remember_en', 0)} / {g('recall_zh', 0)} + {g('recall_en', 0)} / {g('forget', 0)} / {g('pin', 0)} / {g('dream', 0)}"


def failures(res: dict) -> dict:
    """Every check of the run that did not hold (empty: all held)."""
    bad = {f"concurrency {k}": v for k, v in bad_figures(res["concurrency_check"]).items() if v} if res.get("concurrency_check") else {}
    if res.get("crash_check"):
        bad |= {f"crash {k}": v for k, v in bad_figures(res["crash_check"]).items() if v}
        if res["crash"]["taken_over"] < res["crash"]["held_at_kill"]:
            bad["leases not taken over"] = res["crash"]["held_at_kill"] - res["crash"]["taken_over"]
    return bad


def report(res: dict, cmd: str) -> str:
    c, cc = res["concurrency"], res["concurrency_check"]
    k, kc = res.get("crash", {}), res.get("crash_check", {})

    def row(label: str, a: object, b: object = "") -> str:
        return f"| {label} | {a} | {b} |"

    lines = [
        START,
        "## Team server soak (bench/soak_server.py)",
        "",
        f"Command: `{cmd}` ({res['seconds'] / 60:.1f} min)  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, PostgreSQL 15 (a throwaway cluster, fsync off); run on {datetime.now():%Y-%m-%d}.  ",
        f"{res['servers']} `memdream serve --http --store` processes with their dream schedulers (lease {res['lease_s']:g} s), {res['clients']} MCP client processes "
        f"(the SDK's streamable HTTP client, one token each) over {res['scopes']} scopes, bursts of 1-12 operations per server at random. "
        "Checked on `memdream export --store` of the database after each phase.",
        "",
        "| check | concurrency | crash injection (kill -9) |",
        "| --- | --- | --- |",
        row("operations (acknowledged)", f"{c['ops']} ({c['acked_ops']}) in {c['seconds']:.0f} s", f"{k.get('ops', 0)} ({k.get('acked_ops', 0)}) in {k.get('seconds', 0):.0f} s" if k else "not run"),
        row("of which remember (zh + en) / recall (zh + en) / forget / pin / dream", mix(c["kinds"]), mix(k["kinds"]) if k else ""),
        row("servers killed with SIGKILL (at a random moment / holding a dream lease)", "", f"{k.get('kills', 0)} ({k.get('write_kills', 0)} / {k.get('held_at_kill', 0)}; {k.get('finished_before_kill', 0)} more finished their job between the look and the kill)" if k else ""),
        row("requests in flight when their server died (never acknowledged)", c["unacked"], k.get("unacked", "")),
        row("entries whose last pin went unanswered (left out of the pin check)", c.get("pins_unknown", 0), k.get("pins_unknown", "")),
        row("requests that timed out (120 s)", c["timeouts"], k.get("timeouts", "")),
        row("operations refused with an error", c["refused_count"], k.get("refused_count", "")),
        row("acknowledged remembers / forgets / pins checked", f"{cc['acked_remembers']} / {cc['acked_forgets']} / {cc['acked_pins']}", f"{kc['acked_remembers']} / {kc['acked_forgets']} / {kc['acked_pins']}" if kc else ""),
        row("**acknowledged remembers missing from the export**", f"**{len(cc['lost'])}**", f"**{len(kc['lost'])}**" if kc else ""),
        row("forgets in flight when their server died that had committed (the entry ended, the answer never came)", cc["forgotten_unacked"], kc.get("forgotten_unacked", "")),
        row("acknowledged remembers whose text changed / ended though never forgotten nor superseded", f"{len(cc['text_changed'])} / {sum(cc['ended_unexplained'].values())}", f"{len(kc['text_changed'])} / {sum(kc['ended_unexplained'].values())}" if kc else ""),
        row("acknowledged forgets not in effect / acknowledged pins not in effect", f"{len(cc['forget_lost'])} / {len(cc['pin_lost'])}", f"{len(kc['forget_lost'])} / {len(kc['pin_lost'])}" if kc else ""),
        row("**ids in two places of a scope**", f"**{cc['duplicate_ids']}**", f"**{kc['duplicate_ids']}**" if kc else ""),
        row("**lines that do not parse** (exported .md files)", f"**{cc['parse_problems']}** ({cc['files']} files, {cc['entries']} entries)", f"**{kc['parse_problems']}** ({kc['files']} files, {kc['entries']} entries)" if kc else ""),
        row("doctor problems: on the export / on the store", f"{len(cc['doctor_export'])} / {len(cc['doctor_store'])}", f"{len(kc['doctor_export'])} / {len(kc['doctor_store'])}" if kc else ""),
        row("**dream leases a killed server held, taken over by another process** (longest wait after the kill)", "", f"**{k.get('taken_over', 0)} of {k.get('held_at_kill', 0)}** ({k.get('longest_takeover_s', 0):.1f} s)" if k else ""),
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", type=int, default=4)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--scopes", type=int, default=4)
    ap.add_argument("--ops", type=int, default=500)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--lease", type=float, default=3.0, help="the dream lease in seconds (MEMDREAM_DREAM_LEASE_S of the servers)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--report", default="docs/reliability.md")
    ap.add_argument("--work", default=None, help="keep the run's folder here (servers.log, the exports) instead of a temporary one")
    args = ap.parse_args()
    res = soak(args.servers, args.clients, args.scopes, args.ops, args.kills, args.seed, args.lease, Path(args.work) if args.work else None)
    print(f"[soak-server] {json.dumps(res, ensure_ascii=False, default=str)}", file=sys.stderr, flush=True)
    cmd = f"python bench/soak_server.py --servers {args.servers} --clients {args.clients} --scopes {args.scopes} --ops {args.ops} --kills {args.kills}"
    section = report(res, cmd)
    print(section)
    bad = failures(res)
    if args.report:
        path = Path(args.report)
        write_report(path, section, START, END)
    if bad:
        print(f"[soak-server] FAILED: {bad}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
