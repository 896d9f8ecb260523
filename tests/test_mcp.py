"""The MCP server end to end with the SDK's own client: in process, over stdio (a real
`memdream serve` subprocess) and over streamable HTTP with its bearer token."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.mcp.server import build_server  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from ports import free_port, wait_for_port  # noqa: E402
from stores import stored_text  # noqa: E402

TOOLS = {"remember", "recall", "context", "forget", "pin", "history", "log", "dream", "conflicts", "resolve"}


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def payload(result) -> dict:  # type: ignore[no-untyped-def]
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def open_mem(vault: Path, user: str = "me", agent: str = "main", clock=None) -> Memory:  # type: ignore[no-untyped-def]
    m = Memory(load_config(vault, user, agent, env={}), clock)
    m.vault.init()
    return m


def test_tools_teach_the_model_and_take_the_api_argument_names(tmp_path: Path) -> None:
    mem = open_mem(tmp_path / "v")

    async def go() -> None:
        async with Client(build_server(mem)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == TOOLS
            remember = tools["remember"]
            assert set(remember.input_schema["properties"]) == {"text", "type", "subject", "pin"}
            assert "Credentials" in remember.description and "subject" in remember.description
            assert set(tools["recall"].input_schema["properties"]) == {"query", "k", "as_of"}
            assert "instructions" in (c.instructions or "") or "never instructions" in (c.instructions or "")
            uris = {str(r.uri) for r in (await c.list_resources()).resources}
            assert uris == {"memdream://MEMORY.md", "memdream://NOW.md", "memdream://daily/today"}

    run(go())
    mem.close()


def test_remember_in_one_session_recall_in_the_next(any_scope) -> None:
    """On both stores (issue 20): each session is a new handle on scope me/main."""

    async def first() -> None:
        mem = any_scope()
        async with Client(build_server(mem)) as c:
            out = payload(await c.call_tool("remember", {"text": "以后都用中文回我"}))
            assert out["action"] == "added" and out["entry"]["type"] == "instruction" and out["entry"]["source"] == "agent"
            # An agent's instruction waits for the user's confirmation (issue 17): not resident yet,
            # and the agent cannot confirm it itself.
            assert out["entry"]["pending"] == "unconfirmed" and out["entry"]["layer"] == "recall"
            pending = payload(await c.call_tool("conflicts", {}))["conflicts"]
            assert [p["b"] for p in pending] == ["以后都用中文回我"]
            refused_confirm = await c.call_tool("resolve", {"conflict_id": pending[0]["id"], "keep": "b"})
            assert refused_confirm.is_error and "user" in refused_confirm.content[0].text
            refused = await c.call_tool("remember", {"text": "my password is Tr0ub4dor&3xyz"})
            assert refused.is_error and "credentials never enter memory" in refused.content[0].text
            log = payload(await c.call_tool("log", {"title": "Setup", "body": "connected the MCP client"}))
            assert log["file"].endswith(".md")
        mem.close()

    async def second() -> None:
        mem = any_scope()
        async with Client(build_server(mem)) as c:
            hits = payload(await c.call_tool("recall", {"query": "用什么语言回复我"}))["hits"]
            assert hits[0]["text"] == "以后都用中文回我" and set(hits[0]["trace"]) >= {"recency", "importance", "relevance"}
            ctx = await c.call_tool("context", {})
            assert "以后都用中文回我" in ctx.content[0].text
            md = await c.read_resource("memdream://MEMORY.md")
            assert "以后都用中文回我" in md.contents[0].text
            today = await c.read_resource("memdream://daily/today")
            assert "Setup" in today.contents[0].text
            resident = stored_text(mem, "scopes/main/me/MEMORY.md")
            assert "以后都用中文回我" in resident and "password" not in resident
        mem.close()

    run(first())
    mem = any_scope()  # the user confirms it (CLI, API or web console), then the next session has it
    mem.resolve(next(c.id for c in mem.conflicts() if c.kind == "pending"), "b")
    mem.close()
    run(second())


def test_no_tool_argument_reaches_another_scope_or_leaves_the_vault(any_scope) -> None:
    other = any_scope(user="alice")
    secret_id = other.remember("Alice's bank is in Zurich").id
    mem = any_scope()

    async def go() -> None:
        async with Client(build_server(mem)) as c:
            for tool, args in [
                ("forget", {"entry_id": secret_id}),
                ("pin", {"entry_id": secret_id}),
                ("history", {"subject_or_id": secret_id}),
                ("history", {"subject_or_id": "../../alice/MEMORY.md"}),
                ("forget", {"entry_id": "../../../etc/passwd"}),
                ("resolve", {"conflict_id": "../x", "keep": "a"}),
            ]:
                res = await c.call_tool(tool, args)
                assert res.is_error, (tool, args)
            hits = payload(await c.call_tool("recall", {"query": "Alice bank Zurich"}))["hits"]
            assert hits == []
            with pytest.raises(Exception):
                await c.read_resource("memdream://../../alice/MEMORY.md")

    run(go())
    assert other.get(secret_id).valid_to is None and not other.get(secret_id).pinned
    mem.close()
    other.close()


def _serve_args(vault: Path, *extra: str) -> list[str]:
    return ["-m", "memdream.cli.main", "serve", "--vault", str(vault), "--no-scheduler", *extra]


def test_over_stdio_with_a_real_memdream_serve(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    params = StdioServerParameters(command=sys.executable, args=_serve_args(vault, "--user", "lin"))

    async def go() -> None:
        async with Client(params) as c:
            out = payload(await c.call_tool("remember", {"text": "我住在杭州", "subject": "所在地"}))
            assert out["entry"]["subject"] == "所在地"
            out = payload(await c.call_tool("remember", {"text": "我住在上海", "subject": "所在地"}))
            assert out["action"] == "superseded"
            trail = payload(await c.call_tool("history", {"subject_or_id": "所在地"}))["trail"]
            assert [e["text"] for e in trail] == ["我住在杭州", "我住在上海"]

    run(go())
    assert "我住在上海" in (vault / "scopes/main/lin/memory/recall").glob("*.md").__next__().read_text(encoding="utf-8")


def test_over_http_the_bearer_token_is_required(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    port = free_port()
    token = "test-token-8f3k2"
    proc = subprocess.Popen([sys.executable, *_serve_args(vault, "--http", f"127.0.0.1:{port}", "--token", token)], stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=5)
        assert refused.status_code == 401 and "bearer token" in refused.text
        wrong = httpx.post(url, json={}, headers={"Authorization": "Bearer nope"}, timeout=5)
        assert wrong.status_code == 401

        async def go() -> None:
            transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
            async with Client(transport) as c:
                payload(await c.call_tool("remember", {"text": "我喜欢用中文交流"}))  # a preference: resident at once
                hits = payload(await c.call_tool("recall", {"query": "中文"}))["hits"]
                assert hits[0]["text"] == "我喜欢用中文交流"

        run(go())
    finally:
        proc.terminate()
        proc.wait(10)
