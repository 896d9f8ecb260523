"""The team server's acceptance tests (issue 20), on real `memdream serve --http --store`
processes over a throwaway PostgreSQL, with the MCP SDK's own client:

- two processes on different ports: a memory remembered through one is recalled through
  the other at once;
- a token for alice/main cannot read, recall, forget or see the existence of bob/main's
  entries through any tool or resource, and bob's files are byte-identical afterwards;
- a revoked token is refused at once, by every process; /healthz answers a load balancer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("psycopg")
pytest.importorskip("mcp")
from mcp.client import Client  # noqa: E402
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client  # noqa: E402

from memdream.store.vault import Scope  # noqa: E402
from ports import free_port  # noqa: E402

BOB = Scope("bob", "main")
TOOLS = {"remember", "recall", "context", "forget", "pin", "history", "log", "dream", "conflicts", "resolve"}
RESOURCES = ("memdream://MEMORY.md", "memdream://NOW.md", "memdream://daily/today")


@pytest.fixture
def team_env(pg_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of the CLI and the servers: the store, and no vault folder to fall back on."""
    return dict(os.environ, MEMDREAM_STORE=pg_url, MEMDREAM_VAULT=str(tmp_path / "no-vault"), MEMDREAM_TEAM_CACHE=str(tmp_path))


def md(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memdream.cli.main", *args], env=env, capture_output=True, text=True, timeout=120)


def new_token(env: dict[str, str], user: str) -> str:
    out = md(env, "token", "create", "--user", user, "--agent", "main", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["user"], data["agent"]) == (user, "main")
    return data["token"]


@pytest.fixture
def servers(team_env: dict[str, str], pg_url: str):  # type: ignore[no-untyped-def]
    """Start `memdream serve --http 127.0.0.1:PORT --store URL --no-scheduler` processes;
    each is ready when its /healthz answers 200. Stopped after the test."""
    procs: list[subprocess.Popen] = []

    def start() -> str:
        port = free_port()
        cmd = [sys.executable, "-m", "memdream.cli.main", "serve", "--http", f"127.0.0.1:{port}", "--store", pg_url, "--no-scheduler"]
        proc = subprocess.Popen(cmd, env=team_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"memdream serve --store exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                health = httpx.get(base + "/healthz", timeout=2)
                if health.status_code == 200:
                    assert health.json()["ok"] is True
                    return base
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("memdream serve --store did not answer /healthz within 60 s")
            time.sleep(0.1)

    yield start
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def client(base: str, token: str) -> Client:
    return Client(streamable_http_client(base + "/mcp", http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})))


def payload(result) -> dict:  # type: ignore[no-untyped-def]
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.is_error, result.content
    return result.content[0].text


def test_two_servers_on_one_store_share_each_write_at_once_and_refuse_a_revoked_token_at_once(team_env, servers) -> None:
    """A memory remembered through one process is recalled through the other at once; then the
    token is revoked and both refuse it on the next request (no process keeps a token)."""
    a, b = servers(), servers()
    token = new_token(team_env, "alice")

    async def go() -> None:
        async with client(a, token) as ca, client(b, token) as cb:
            out = payload(await ca.call_tool("remember", {"text": "我住在杭州西湖区", "subject": "所在地"}))
            assert out["action"] == "added"
            hits = payload(await cb.call_tool("recall", {"query": "杭州"}))["hits"]
            assert [h["text"] for h in hits][:1] == ["我住在杭州西湖区"] and hits[0]["id"] == out["entry"]["id"]
            # ... and back, in English: a supersede through b is the trail through a at once.
            payload(await cb.call_tool("remember", {"text": "Lin's flight to Lisbon lands at 9 on Friday"}))
            assert [h["text"] for h in payload(await ca.call_tool("recall", {"query": "when does Lin land in Lisbon"}))["hits"]][:1] == [
                "Lin's flight to Lisbon lands at 9 on Friday"
            ]
            moved = payload(await cb.call_tool("remember", {"text": "我搬到上海了", "subject": "所在地"}))
            assert moved["action"] == "superseded" and moved["entry"]["supersedes"] == out["entry"]["id"]
            trail = payload(await ca.call_tool("history", {"subject_or_id": "所在地"}))["trail"]
            assert [e["text"] for e in trail] == ["我住在杭州西湖区", "我搬到上海了"] and trail[0]["valid_to"] is not None
            # Alternating writes: each one is there through the other process on the next request.
            for i in range(6):
                writer, reader = (ca, cb) if i % 2 else (cb, ca)
                text = f"Project codename {i} is stored in bucket zone{i}"
                payload(await writer.call_tool("remember", {"text": text, "type": "fact"}))
                got = payload(await reader.call_tool("recall", {"query": f"codename {i} zone{i}", "k": 1}))["hits"]
                assert [h["text"] for h in got] == [text]

    run(go())
    # Every request is checked against the database: /healthz answers, a wrong token is refused.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def post(base: str, tok: str | None, scheme: str = "Bearer") -> httpx.Response:
        h = dict(headers, **({"Authorization": f"{scheme} {tok}".strip()} if tok is not None else {}))
        return httpx.post(base + "/mcp", json=body, headers=h, timeout=10)

    for base in (a, b):
        health = httpx.get(base + "/healthz", timeout=5)
        assert health.status_code == 200 and health.json()["ok"] is True
        ok = post(base, token)
        assert ok.status_code == 200 and "remember" in ok.text
        for wrong, scheme in ((None, "Bearer"), ("", "Bearer"), ("mdt_not-a-token", "Bearer"), (token + "x", "Bearer"), (token, "Basic")):
            refused = post(base, wrong, scheme)
            assert refused.status_code == 401 and "bearer token" in refused.text, (wrong, scheme, refused.text)
    revoked = md(team_env, "token", "revoke", token)
    assert revoked.returncode == 0, revoked.stderr
    for base in (a, b):  # no process keeps a token the database no longer holds
        refused = post(base, token)
        assert refused.status_code == 401 and refused.headers.get("www-authenticate") == "Bearer"
        assert httpx.get(base + "/healthz", timeout=5).status_code == 200


def _seed_bob(base: str, token: str) -> dict:
    """Bob's memory through his own token: a fact with a subject, a Chinese one, a pinned
    (resident) preference, an open conflict, a daily log block."""

    async def go() -> dict:
        async with client(base, token) as c:
            bank = payload(await c.call_tool("remember", {"text": "Bob's bank account is at Zurich Kantonalbank", "subject": "bank"}))["entry"]
            cat = payload(await c.call_tool("remember", {"text": "鲍勃的猫叫咪咪，住在苏黎世"}))["entry"]
            job = payload(await c.call_tool("remember", {"text": "Bob works at Globex in Basel", "subject": "employer"}))["entry"]
            pinned = payload(await c.call_tool("remember", {"text": "Bob prefers replies in Swiss German", "type": "preference", "pin": True}))["entry"]
            coffee = payload(await c.call_tool("remember", {"text": "鲍勃每天早上喝咖啡", "type": "fact"}))["entry"]
            out = payload(await c.call_tool("remember", {"text": "鲍勃每天早上不喝咖啡了", "type": "fact"}))
            assert out["contradicts"] is not None, out
            conflicts = payload(await c.call_tool("conflicts", {}))["conflicts"]
            conflict = next(x for x in conflicts if x["kind"] == "entry")
            payload(await c.call_tool("log", {"title": "Bob's Zurich offsite", "body": "budget 4200 CHF"}))
            return {"bank": bank, "cat": cat, "job": job, "pinned": pinned, "coffee": coffee, "conflict": conflict["id"]}

    return run(go())


def test_alices_token_cannot_reach_bobs_entries_through_any_tool_or_resource(team_env, servers, team_store) -> None:
    base = servers()
    alice, bob = new_token(team_env, "alice"), new_token(team_env, "bob")
    seen = _seed_bob(base, bob)
    bob_ids = [seen[k]["id"] for k in ("bank", "cat", "job", "pinned", "coffee")]
    bob_texts = [seen[k]["text"] for k in ("bank", "cat", "job", "pinned", "coffee")] + ["Bob's Zurich offsite", "budget 4200 CHF"]
    from memdream.team import scope_handle

    scope_handle(team_store, "bob", "main").now("# NOW\n\n- Bob: 准备苏黎世的季度汇报\n")
    bob_texts.append("准备苏黎世的季度汇报")
    before = team_store.scope_files(BOB)
    assert any(rel.endswith("MEMORY.md") for rel in before) and any(rel.endswith("NOW.md") for rel in before)
    fake_id = "zz" + bob_ids[0][2:]  # an id of the same shape that no scope holds
    assert fake_id not in bob_ids

    shared = "鲍勃的猫叫咪咪，住在苏黎世"  # alice stores these words herself too

    def no_bob(text: str) -> None:
        for t in bob_texts + bob_ids + [seen["conflict"]]:
            assert t == shared or t not in text, (t, text)

    def same_failure(got: str, wanted: str, bob_value: str, fake_value: str) -> None:
        # Bob's id fails exactly as an id that exists nowhere: nothing tells alice it exists.
        assert got.replace(bob_value, "<ID>") == wanted.replace(fake_value, "<ID>"), (got, wanted)

    async def go() -> set[str]:
        tried: set[str] = set()
        async with client(base, alice) as c:
            assert {t.name for t in (await c.list_tools()).tools} == TOOLS
            # remember: bob's exact words and his subject are new to alice (no dedup, no supersede across scopes)
            for text, subject in ((shared, None), ("Alice's bank account is at Zurich Kantonalbank", "bank")):
                out = payload(await c.call_tool("remember", {"text": text, **({"subject": subject} if subject else {})}))
                assert out["action"] == "added" and out["entry"]["supersedes"] in (None, "") and out["entry"]["id"] not in bob_ids, out
            tried.add("remember")
            # recall and context: bob's words find only alice's own
            for query in ("Bob Zurich bank", "where does Bob work, Globex Basel", "鲍勃 猫 咪咪", "Swiss German replies", "咖啡", "offsite budget CHF", "苏黎世 季度汇报"):
                hits = payload(await c.call_tool("recall", {"query": query, "k": 100}))["hits"]
                assert all(h["id"] not in bob_ids for h in hits)
                assert {h["text"] for h in hits} <= {shared, "Alice's bank account is at Zurich Kantonalbank"}
                as_of = payload(await c.call_tool("recall", {"query": query, "as_of": "2099-01-01"}))["hits"]
                assert all(h["id"] not in bob_ids for h in as_of)
                no_bob((await c.call_tool("context", {"query": query, "budget": 200000})).content[0].text)
            tried |= {"recall", "context"}
            # forget and pin: bob's id fails exactly like an id nobody has
            for tool, args in (("forget", {}), ("pin", {}), ("pin", {"pinned": False})):
                for bid in bob_ids:
                    got = error(await c.call_tool(tool, {"entry_id": bid, **args}))
                    wanted = error(await c.call_tool(tool, {"entry_id": fake_id, **args}))
                    same_failure(got, wanted, bid, fake_id)
                tried.add(tool)
            # history: of bob's ids and of his subject, as of a subject nobody has
            for bid in bob_ids:
                got = await c.call_tool("history", {"subject_or_id": bid})
                wanted = await c.call_tool("history", {"subject_or_id": fake_id})
                assert got.is_error == wanted.is_error
                if got.is_error:
                    same_failure(error(got), error(wanted), bid, fake_id)
                else:
                    assert payload(got) == payload(wanted) == {"trail": []}
            got = error(await c.call_tool("history", {"subject_or_id": "employer"}))  # a subject only bob has ...
            same_failure(got, error(await c.call_tool("history", {"subject_or_id": "favourite band"})), "employer", "favourite band")  # ... as one nobody has
            assert [e["text"] for e in payload(await c.call_tool("history", {"subject_or_id": "bank"}))["trail"]] == [
                "Alice's bank account is at Zurich Kantonalbank"
            ]
            tried.add("history")
            # log: alice's own daily log; bob's block is not in it
            log = payload(await c.call_tool("log", {"title": "Alice's standup", "body": "nothing about Zurich"}))
            assert log["file"].startswith("scopes/main/alice/memory/") and log["file"].endswith(".md"), log
            tried.add("log")
            # conflicts and resolve: bob's conflict is not listed, and resolving it fails like one that does not exist
            listed = payload(await c.call_tool("conflicts", {}))["conflicts"]
            assert seen["conflict"] not in {x["id"] for x in listed}
            no_bob(json.dumps(listed, ensure_ascii=False))
            fake_conflict = "zz" + seen["conflict"][2:]
            for keep in ("a", "b", "both"):
                got = error(await c.call_tool("resolve", {"conflict_id": seen["conflict"], "keep": keep}))
                wanted = error(await c.call_tool("resolve", {"conflict_id": fake_conflict, "keep": keep}))
                same_failure(got, wanted, seen["conflict"], fake_conflict)
            tried |= {"conflicts", "resolve"}
            # dream: alice's dream plans over alice's scope only (and its report names none of bob's)
            for dry in (True, False):
                report = payload(await c.call_tool("dream", {"dry_run": dry}))
                no_bob(json.dumps(report, ensure_ascii=False))
            tried.add("dream")
            # the resources: alice's files
            for uri in RESOURCES:
                text = (await c.read_resource(uri)).contents[0].text
                no_bob(text)
            today = (await c.read_resource("memdream://daily/today")).contents[0].text
            assert "Alice's standup" in today
        return tried

    assert run(go()) == TOOLS  # every tool was tried
    assert team_store.scope_files(BOB) == before  # bob's files, byte for byte
    # and bob still has all of it through his own token
    async def bobs_view() -> None:
        async with client(base, bob) as c:
            hits = payload(await c.call_tool("recall", {"query": "Zurich Kantonalbank bank"}))["hits"]
            assert hits[0]["id"] == seen["bank"]["id"]
            assert "Bob prefers replies in Swiss German" in (await c.read_resource("memdream://MEMORY.md")).contents[0].text

    run(bobs_view())
