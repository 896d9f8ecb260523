"""The web console: the token, CSRF, escaping and hand-edit safety over HTTP, then end to end
in headless Chromium (Debian's package, driven by Playwright): every page, an edit, a
resolved conflict, an undone dream, and screenshots for the README."""

from __future__ import annotations

import re
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")
from starlette.testclient import TestClient  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.web.app import create_app  # noqa: E402
from ports import free_port  # noqa: E402

TOKEN = "web-test-token"
XSS = "<script>window.__pwned = 1; alert('x')</script> is just text"


def seeded(vault: Path, clock) -> Memory:  # type: ignore[no-untyped-def]
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=20)
    mem.remember("我在西湖区", subject="所在地")
    mem.remember("以后都用中文回我")
    mem.remember("I prefer window seats on trains", type="preference")
    mem.remember(XSS)
    mem.remember("我吃辣")
    mem.remember("我不吃辣")  # a conflict
    mem.log("完成了数据库迁移", "PostgreSQL 14 -> 16")
    mem.note("lessons", "deploy", "部署前先备份数据库。", priority="🔴")
    mem.now("迁移数据库到 PostgreSQL 16")
    clock.advance(days=1)
    return mem


@pytest.fixture
def client(tmp_path: Path, clock):  # type: ignore[no-untyped-def]
    mem = seeded(tmp_path / "v", clock)
    yield TestClient(create_app(mem, TOKEN, port=8765), base_url="http://127.0.0.1:8765"), mem
    mem.close()


def csrf_of(html: str) -> str:
    return html.split('name="csrf" value="', 1)[1].split('"', 1)[0]


def test_every_page_and_call_needs_the_token(client) -> None:
    c, mem = client
    for path in ("/", "/entries", "/dreams", "/conflicts", "/knowledge", "/subject/所在地", "/api/state"):
        assert c.get(path).status_code == 401
    assert c.post("/dreams/undo").status_code == 401
    assert c.get("/?token=wrong").status_code == 401
    assert c.get("/entries", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    r = c.get("/entries?token=" + TOKEN, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/entries" and "httponly" in r.headers["set-cookie"].lower()
    assert "samesite=strict" in r.headers["set-cookie"].lower()
    assert c.get("/entries").status_code == 200  # the cookie now


def test_memory_text_is_escaped_everywhere(client) -> None:
    c, mem = client
    c.get("/?token=" + TOKEN)
    for path in ("/entries", "/entries?q=pwned", "/entries?layer=recall"):
        html = c.get(path).text
        assert "<script>window.__pwned" not in html and "&lt;script&gt;window.__pwned" in html


def test_changes_need_the_page_token_and_never_overwrite_a_hand_edit(client) -> None:
    c, mem = client
    c.get("/?token=" + TOKEN)
    seat = next(e for e in mem.list() if "window seats" in e.text)
    html = c.get("/entries?layer=resident").text
    csrf = csrf_of(html)
    version = html.split(f'/entry/{seat.id}/pin"><input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="version" value="', 1)[1].split('"', 1)[0]
    assert c.post(f"/entry/{seat.id}/pin", data={"version": version}).status_code == 403  # no CSRF token
    r = c.post(f"/entry/{seat.id}/pin", data={"csrf": csrf, "version": version}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and not mem.get(seat.id).pinned
    # A person edits the line on disk after the page was shown: the form's version is stale.
    path = mem.vault.resident_file(mem.scope)
    path.write_text(path.read_text(encoding="utf-8").replace("I prefer window seats", "I prefer aisle seats"), encoding="utf-8")
    r = c.post(f"/entry/{seat.id}/edit", data={"csrf": csrf, "version": version, "text": "I prefer the quiet car"})
    assert r.status_code == 409 and "Nothing was overwritten" in r.text, r.text[-600:]
    assert "I prefer aisle seats on trains" in path.read_text(encoding="utf-8") and "quiet car" not in path.read_text(encoding="utf-8")


def _chromium() -> str | None:
    for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if p and os.path.exists(p):
            return p
    return None


@pytest.fixture
def browser_page(tmp_path: Path, clock):  # type: ignore[no-untyped-def]
    sync_api = pytest.importorskip("playwright.sync_api")
    exe = _chromium()
    if exe is None:
        why = "Debian's chromium is not installed (apt-get install chromium fonts-wqy-zenhei; .ci/run does it)"
        if os.environ.get("MEMDREAM_BROWSER_TESTS") == "required":  # set by .ci/run: in CI they run, never skip
            pytest.fail(why)
        pytest.skip(why)
    import uvicorn

    mem = seeded(tmp_path / "v", clock)
    mem.dream(["light"])  # a dream to show and undo
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(mem, TOKEN, port=port), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
        yield page, f"http://127.0.0.1:{port}", mem, dialogs
        browser.close()
    server.should_exit = True
    thread.join(10)
    mem.close()


SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


def shot(page, name: str, tmp: Path) -> None:  # type: ignore[no-untyped-def]
    target = SHOTS if os.environ.get("MEMDREAM_SCREENSHOTS") else tmp
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / f"{name}.png"), full_page=True)


def test_in_chromium_browse_edit_resolve_undo(browser_page, tmp_path: Path) -> None:
    page, base, mem, dialogs = browser_page
    page.goto(f"{base}/?token={TOKEN}")
    assert page.locator("h1").inner_text() == "Overview" and "main/me" in page.content()
    shot(page, "overview", tmp_path)

    page.click("text=Entries")
    assert page.locator("td.text", has_text="is just text").count() == 1
    assert page.evaluate("window.__pwned") is None  # the <script> memory is shown, not run
    page.fill("input[name=q]", "我在哪个区")
    page.click("button:has-text('search')")
    assert page.locator(".trace").first.inner_text().startswith("rel ")
    shot(page, "entries", tmp_path)

    page.goto(f"{base}/entries?layer=resident")
    row = page.locator("tr", has_text="I prefer window seats on trains")
    row.locator("summary", has_text="edit").click()
    row.locator("input[name=text]").fill("I prefer aisle seats on trains")
    row.locator("button", has_text="save").click()
    page.wait_for_load_state()
    assert "I prefer aisle seats on trains" in {e.text for e in mem.list()}
    assert "I prefer window seats on trains" in [e.text for e in mem.list(include_ended=True) if e.valid_to]

    page.goto(f"{base}/subject/所在地?as_of=2026-06-05")
    assert "As of 2026-06-05: 我在余杭区" in page.inner_text(".card")
    shot(page, "subject", tmp_path)

    page.click("text=Conflicts")
    page.wait_for_url("**/conflicts*")  # loaded before it is read (a loaded machine was slower than the assertion)
    page.wait_for_load_state()
    assert page.locator(".card", has_text="我不吃辣").count() == 1
    shot(page, "conflicts", tmp_path)
    page.locator(".card", has_text="我不吃辣").locator("button[value=b]").click()
    page.wait_for_load_state()
    assert "No open conflicts" in page.content() and not mem.conflicts()

    page.click("text=Knowledge")
    page.wait_for_url("**/knowledge*")  # loaded before it is read (a loaded machine was slower than the assertion)
    page.wait_for_load_state()
    assert "deploy" in page.content() and "迁移数据库到 PostgreSQL 16" in page.content()
    shot(page, "knowledge", tmp_path)

    page.click("text=Dream diary")
    page.wait_for_url("**/dreams*")  # loaded before it is read (a loaded machine was slower than the assertion)
    page.wait_for_load_state()
    assert "light phase" in page.inner_text("pre.diary")
    shot(page, "dreams", tmp_path)
    archived = [e.id for e in mem.list("archive")]
    page.click("#undo")
    page.wait_for_load_state()
    assert dialogs and "Undo dream" in dialogs[0]
    assert not [i for i in archived if mem.get(i).layer == "archive"]  # the dream's moves are reversed
    assert "undone" in page.content()


def test_in_chromium_a_hand_edit_reloads_the_page(browser_page) -> None:
    page, base, mem, _ = browser_page
    page.goto(f"{base}/entries?layer=recall&token={TOKEN}")
    path = mem.vault.recall_file_for(mem.scope, mem.clock.now())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("- typed by hand while the page was open\n")
    page.wait_for_selector("text=typed by hand while the page was open", timeout=10_000)


def test_odd_and_hostile_names_in_routes_reach_nothing(client, tmp_path: Path) -> None:
    c, mem = client
    c.get("/?token=" + TOKEN)
    other = Memory(load_config(mem.vault.root, "alice", "main", env={}), mem.clock)
    secret = other.remember("Alice's bank is in Zurich")
    csrf = csrf_of(c.get("/entries").text)
    for path in ("/subject/..%2F..%2Falice%2FMEMORY.md", "/subject/" + secret.id, "/subject/%00", "/subject/" + "x" * 5000):
        r = c.get(path)
        assert r.status_code in (404, 400) and "Zurich" not in r.text, path
    for target in (f"/entry/{secret.id}/forget", "/entry/..%2F..%2Fetc%2Fpasswd/forget", f"/entry/{secret.id}/pin"):
        r = c.post(target, data={"csrf": csrf, "version": "x"})
        assert r.status_code in (404, 400, 409), target
    r = c.post("/conflicts/..%2Fx", data={"csrf": csrf, "keep": "a"})
    assert r.status_code in (400, 404)
    assert other.get(secret.id).valid_to is None and not other.get(secret.id).pinned
    assert "Alice&#39;s bank" not in c.get("/entries?q=Zurich bank").text and "Alice" not in c.get("/entries?layer=recall").text
    other.close()


def test_in_chromium_chinese_is_drawn_with_a_cjk_font_from_the_stylesheet(browser_page) -> None:
    """Chinese showed as boxes where no CJK font was installed: the stylesheet names the common
    CJK families (macOS, Windows, Noto/Source Han, WenQuanYi) before the generic fallback, and
    Chromium draws the text with one of them (it asks the platform which font it used)."""
    from memdream.web.pages import BASE

    stack = re.search(r"body\{font:15px/1\.5 ([^;]+);", BASE).group(1)
    families = [f.strip().strip('"') for f in stack.split(",")]
    assert families[-1] == "sans-serif"
    for cjk in ("PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei"):
        assert cjk in families
    page, base, _, _ = browser_page
    page.goto(f"{base}/entries?layer=resident&token={TOKEN}")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    cells = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "td.text"})["nodeIds"]
    used: list[str] = []
    for node in cells:
        html = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
        if "以后都用中文回我" in html:
            used = [f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]
    assert used, "the Chinese memory is not on the page"
    assert any(any(name.lower() in u.lower() for name in ("WenQuanYi", "Noto Sans CJK", "Source Han", "PingFang", "YaHei", "Hiragino")) for u in used), used
