"""Issue 17, items 6 and 16-20: the web console and the MCP server under attack, each on the
real uvicorn server on loopback (the web console's pages also through Starlette's client)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
httpx = pytest.importorskip("httpx")
import uvicorn  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.web.app import create_app  # noqa: E402
from ports import free_port, wait_for_port  # noqa: E402

TOKEN = "adversarial-token"


def open_mem(vault: Path, user: str, clock) -> Memory:  # type: ignore[no-untyped-def]
    m = Memory(load_config(vault, user, "main", env={}), clock)
    m.vault.init()
    return m


class Served:
    """An ASGI app on a real uvicorn server in a thread, on a free loopback port."""

    def __init__(self, make_app) -> None:  # type: ignore[no-untyped-def]
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(make_app(self.port), host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "Served":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.server.started
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def two_scopes(tmp_path: Path, clock):  # type: ignore[no-untyped-def]
    alice = open_mem(tmp_path / "v", "alice", clock)
    bob = open_mem(tmp_path / "v", "bob", clock)
    alice.remember("alice likes tea 爱喝茶")
    bob.remember("bob keeps his diary private 鲍勃的日记")
    bob_file = bob.vault.resident_file(bob.scope)
    bob_file.parent.mkdir(parents=True, exist_ok=True)
    with open(bob_file, "a", encoding="utf-8") as fh:
        fh.write("- bob's hand line with a broken field <!--m:id=zz9zz9;vf=not-a-date-->\n")
    yield alice, bob
    alice.close()
    bob.close()


# -- item 6


def test_the_console_shows_its_own_scope_only(two_scopes) -> None:
    alice, bob = two_scopes
    c = TestClient(create_app(alice, TOKEN, port=8765), base_url="http://127.0.0.1:8765")
    html = c.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert "main/alice" in html
    assert "main/bob" not in html and "bob" not in html and "not-a-date" not in html and "zz9zz9" not in html
    # bob's own console does show bob's problem
    cb = TestClient(create_app(bob, TOKEN, port=8765), base_url="http://127.0.0.1:8765")
    assert "not-a-date" in cb.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).text


# -- items 16, 17 on the real server


def test_bad_csrf_values_and_forged_hosts_get_4xx_never_500(two_scopes) -> None:
    alice, _ = two_scopes
    eid = alice.list()[0].id
    with Served(lambda port: create_app(alice, TOKEN, port=port)) as s:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        for bad in ("é", "令牌", "\u202e", "x" * 10_000, ""):
            r = httpx.post(f"{s.url}/entry/{eid}/pin", data={"csrf": bad, "version": "x"}, headers=auth, timeout=10)
            assert r.status_code == 403, (bad[:10], r.status_code)
        r = httpx.post(f"{s.url}/entry/{eid}/pin", content=b"--x\r\nbroken", headers={**auth, "Content-Type": "multipart/form-data; boundary=x"}, timeout=10)
        assert 400 <= r.status_code < 500
        # a forged Host with the matching Origin: refused, however consistent the pair
        page = httpx.get(f"{s.url}/entries", headers=auth, timeout=10).text
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        forged = {**auth, "Host": "evil.example:80", "Origin": "http://evil.example:80"}
        r = httpx.post(f"{s.url}/entry/{eid}/pin", data={"csrf": csrf, "version": "x"}, headers=forged, timeout=10)
        assert r.status_code == 421
        other = {**auth, "Origin": "http://evil.example"}
        r = httpx.post(f"{s.url}/entry/{eid}/pin", data={"csrf": csrf, "version": "x"}, headers=other, timeout=10)
        assert r.status_code == 403
        # the real origin still works (409: the version is stale, the checks passed)
        mine = {**auth, "Origin": s.url}
        r = httpx.post(f"{s.url}/entry/{eid}/pin", data={"csrf": csrf, "version": "x"}, headers=mine, timeout=10)
        assert r.status_code == 409
        r = httpx.get(f"{s.url}/?token=" + "é", timeout=10)
        assert r.status_code == 401
        r = httpx.get(f"{s.url}/", headers={"Authorization": "Bearer é".encode()}, timeout=10)
        assert r.status_code == 401
    assert not alice.get(eid).pinned


# -- item 20


def test_memdream_web_does_not_echo_a_supplied_token(tmp_path: Path) -> None:
    port = free_port()
    secret = "my-own-secret-token-31337"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDREAM_")}
    cmd = [sys.executable, "-c", "from memdream.cli.main import main; main()", "web", "--vault", str(tmp_path / "v"), "--port", str(port), "--no-scheduler"]
    outputs = []

    for extra, extra_env in (([ "--token", secret], {}), ([], {"MEMDREAM_WEB_TOKEN": secret})):
        proc = subprocess.Popen(cmd + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**env, **extra_env})
        try:
            wait_for_port(port)
            r = httpx.get(f"http://127.0.0.1:{port}/", headers={"Authorization": f"Bearer {secret}"}, timeout=10)
            assert r.status_code == 200
        finally:
            proc.terminate()
            out, err = proc.communicate(timeout=15)
        outputs.append(out + err)
    for text in outputs:
        assert "web console for scope main/me" in text
        assert secret not in text
    # a generated token is printed (the user needs it)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for_port(port)  # the console line is printed before the server listens (it was a 3 s sleep)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=15)
    assert "?token=" in err and "<your --token>" not in err


# -- items 18, 19: MCP over HTTP

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_mcp_http_takes_the_bearer_scheme_in_any_case_and_caps_idle_sessions(tmp_path: Path, clock) -> None:
    pytest.importorskip("mcp")
    from memdream.mcp.server import http_app

    mem = open_mem(tmp_path / "v", "me", clock)
    token = "mcp-adversarial-token"
    auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
    with Served(lambda port: http_app(mem, "127.0.0.1", token, max_sessions=3, session_idle_s=600.0)) as s:
        url = f"{s.url}/mcp"
        for scheme in ("bearer", "BEARER", "bEaReR"):
            r = httpx.post(url, json=INIT, headers={**ACCEPT, "Authorization": f"{scheme} {token}"}, timeout=10)
            assert r.status_code == 200, (scheme, r.status_code, r.text)
        for bad in (f"Basic {token}", token, f"bearer{token}", "bearer wrong", "bearer é".encode()):
            r = httpx.post(url, json=INIT, headers={**ACCEPT, "Authorization": bad}, timeout=10)
            assert r.status_code == 401, bad
        # 3 sessions are open, never closed: the cap is 3
        got = [httpx.post(url, json=INIT, headers=auth, timeout=10).status_code for _ in range(2)]
        assert got == [503, 503], got
    # idle sessions expire: a session unused for longer than the limit is gone, and its place is free
    with Served(lambda port: http_app(mem, "127.0.0.1", token, max_sessions=1, session_idle_s=1.0)) as s:
        url = f"{s.url}/mcp"
        first = httpx.post(url, json=INIT, headers=auth, timeout=10)
        assert first.status_code == 200
        sid = first.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(2.5)  # longer than the idle limit: a request in between would keep it alive
            if httpx.post(url, json=ping, headers={**auth, "mcp-session-id": sid}, timeout=10).status_code == 404:
                break
        else:
            raise AssertionError("the idle session never expired")
        assert httpx.post(url, json=INIT, headers=auth, timeout=10).status_code == 200
    mem.close()


# -- item 10 in the console: a FIFO freezes no page


def test_fifos_in_the_vault_freeze_no_page_of_the_console(two_scopes) -> None:
    alice, bob = two_scopes
    today = alice.knowledge.log_path(alice.clock.now().date())
    today.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(today)
    os.mkfifo(bob.vault.memory_dir(bob.scope) / "NOW.md")
    (bob.vault.recall_dir(bob.scope) / "2026-01.md").parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(bob.vault.recall_dir(bob.scope) / "2026-01.md")
    dreams = alice.vault.memory_dir(alice.scope) / "dreams"
    dreams.mkdir(parents=True, exist_ok=True)
    os.mkfifo(dreams / "2026-06-01.md")
    with Served(lambda port: create_app(alice, TOKEN, port=port)) as s:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        for path in ("/", "/entries", "/entries?q=tea", "/knowledge", "/dreams", "/conflicts", "/subject/x?as_of=not-a-date",
                     "/entries?layer=nonsense", "/entries?q=" + "长" * 5000, "/api/state"):  # fmt: skip
            r = httpx.get(s.url + path, headers=auth, timeout=20)  # a FIFO that blocked a read would time out here
            assert r.status_code < 500, (path, r.status_code)
        assert "alice likes tea" in httpx.get(s.url + "/entries", headers=auth, timeout=20).text
