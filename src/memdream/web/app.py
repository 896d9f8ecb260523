"""`memdream web`: see and steer one scope's memory in a browser (DESIGN 10; issue: web console).

A small Starlette app with server-rendered pages (Jinja2, autoescaped: a memory holding
`<script>` is shown, never run), no external assets. Every page and call needs the token:
`Authorization: Bearer T`, or `?token=T` once, which sets an HttpOnly SameSite=Strict
cookie. Every change is a POST carrying a CSRF token and the version of the line the page
showed; all go through the facade (the single writer). A line changed on disk since the page
was rendered is never overwritten: the request is refused and the page reloads.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from memdream.errors import MemdreamError, NotFound
from memdream.web.pages import TEMPLATES

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from memdream.memory import Memory

COOKIE = "memdream_token"


def line_version(raw: str) -> str:
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def allowed_origins(host: str, port: int) -> set[str]:
    """The origins a page of the console started on host:port has (loopback by either name)."""
    names = {host}
    if host in ("127.0.0.1", "localhost"):
        names = {"127.0.0.1", "localhost"}
    elif host == "::1":
        names = {"[::1]"}
    return {f"http://{n}:{port}" for n in names} | ({f"http://{n}" for n in names} if port == 80 else set())


def create_app(mem: "Memory", token: str, host: str = "127.0.0.1", port: int = 8765) -> "Starlette":
    """The console of `mem`'s scope as started on host:port: a request's Origin and Host must
    be that address (a forged pair of headers does not pass; DNS rebinding gets 421)."""
    from jinja2 import DictLoader, Environment, select_autoescape
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
    from starlette.routing import Route

    env = Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape(default=True, default_for_string=True))
    csrf = hmac.new(token.encode(), b"csrf", "sha256").hexdigest()[:32]
    origins = allowed_origins(host, port)
    hosts = {o.split("://", 1)[1] for o in origins}

    def authorized(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        got = header[7:] if header.lower().startswith("bearer ") else request.cookies.get(COOKIE, "")
        return bool(got) and hmac.compare_digest(got.encode("utf-8", "surrogatepass"), token.encode())

    def page(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        mem.sync()
        ctx.update(scope=mem.scope.key, csrf=csrf, generation=mem.index.generation(), path=request.url.path, tab=template)
        return HTMLResponse(env.get_template(f"{template}.html").render(**ctx), status_code=status)

    async def checked_form(request: Request) -> dict[str, str]:
        """The form of a change, after the CSRF checks (token and same origin)."""
        origin = request.headers.get("origin")
        if origin and origin not in origins:  # the address the console was started on, never the Host header
            raise PermissionError("a request from another site")
        try:
            form = {k: str(v) for k, v in (await request.form()).items()}
        except Exception as exc:  # a body that is no form (bad multipart, bad encoding): the client's fault
            raise PermissionError(f"a request whose form cannot be read ({type(exc).__name__})") from exc
        if not hmac.compare_digest(form.get("csrf", "").encode("utf-8", "surrogatepass"), csrf.encode()):
            raise PermissionError("a request without this page's token")
        return form

    def shown(p) -> str:  # type: ignore[no-untyped-def]
        """A file's text for a page; what memdream never opens (a FIFO, folder, link) says so."""
        from memdream.store.writer import NotRegularFile, decode, read_file

        try:
            data, _ = read_file(p)
        except NotRegularFile as exc:
            return f"({exc.message})"
        return decode(data, p)

    def current(entry_id: str):  # type: ignore[no-untyped-def]
        mem.sync()
        rows = [r for r in mem.index.by_id(mem.scope, entry_id) if r.vt is None]
        if not rows:
            raise NotFound(f"no current memory {entry_id!r}", "it may have been forgotten or superseded meanwhile")
        return rows[0]

    # -- pages
    async def overview(request: Request) -> Response:
        from memdream.dream import ledger
        from memdream.dream.schedule import jobs_due

        # This scope only: the console is started for one scope, and its token covers that one.
        mem.sync()
        c = mem.index.count(mem.scope)
        counts = [(mem.scope.key, sorted(c.items()), sum(c.values()))]
        dreams = [r for r in ledger.records(mem) if "run" in r]
        state = ledger.load_state(mem)
        due = jobs_due(mem.clock.now(), state, mem.config.dream)
        notes = mem.knowledge.notes()
        stale = [n for n in notes if n.stale]
        from memdream.doctor import check_vault

        problems = check_vault(mem.vault, mem.index, scopes=[mem.scope])
        return page(
            request, "overview", counts=counts, last=dreams[-1] if dreams else None, due=due, nightly=mem.config.dream.nightly_at,
            conflicts=len(mem.conflicts()), stale=stale, problems=problems,
        )  # fmt: skip

    async def entries(request: Request) -> Response:
        layer = request.query_params.get("layer") or ""
        q = request.query_params.get("q", "").strip()
        hits, rows = [], []
        if q:
            hits = mem.recall(q, k=30)
        else:
            from memdream.model.entry import LAYERS

            layers = (layer,) if layer in LAYERS else ("resident", "recall")
            mem.sync()
            rows = [(r.entry(), line_version(r.line)) for r in mem.index.entries(mem.scope, layers, current_only=layer != "archive")]
        # The version of each hit's current line (recall has just synced the index: no sync per hit).
        versions = {h.entry.id: line_version(r.line) for h in hits for r in mem.index.by_id(mem.scope, h.entry.id) if r.vt is None}
        return page(request, "entries", layer=layer, q=q, hits=hits, rows=rows, versions=versions, warning=mem.last_warning)

    async def subject(request: Request) -> Response:
        name = request.path_params["name"]
        trail = mem.history(name)
        as_of = request.query_params.get("as_of", "").strip()
        valid = None
        if as_of:
            when = mem._as_of(as_of)
            valid = next((e for e in reversed(trail) if e.is_valid_at(when)), None)  # type: ignore[arg-type]
        return page(request, "subject", name=name, trail=trail, as_of=as_of, valid=valid)

    async def dreams(request: Request) -> Response:
        from memdream.dream import ledger

        folder = mem.vault.memory_dir(mem.scope) / "dreams"
        diaries = []
        for p in sorted(folder.glob("*.md"), reverse=True)[:30] if folder.is_dir() else []:
            diaries.append((p.stem, shown(p)))
        recs = ledger.records(mem)
        undone = {r["undo"] for r in recs if "undo" in r}
        runs = [r for r in reversed(recs) if "run" in r and r.get("changes")][:30]
        lines: dict[tuple[str, str], str] = {}  # (file, id) -> the line there now, for the added side of the diff
        for r in runs:
            for rel, ch in r["changes"].items():
                for eid in ch.get("added", []):
                    found = [row.line for row in mem.index.by_id(mem.scope, eid) if row.path == rel]
                    lines[(rel, eid)] = found[0] if found else f"{eid} (no longer in this file)"
        last = ledger.last_dream(mem)
        return page(request, "dreams", diaries=diaries, runs=runs, undone=undone, last=last, lines=lines)

    async def conflicts(request: Request) -> Response:
        return page(request, "conflicts", conflicts=mem.conflicts())

    async def knowledge(request: Request) -> Response:
        logs = sorted(mem.vault.memory_dir(mem.scope).glob("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md"), reverse=True)[:7]
        daily = [(p.stem, shown(p)) for p in logs]
        return page(request, "knowledge", notes=mem.knowledge.notes(), now_text=mem.now(), daily=daily)

    # -- changes
    async def act(request: Request, run: Callable[[dict[str, str]], Response | None], back: Callable[[dict[str, str]], str]) -> Response:
        """One change: the CSRF checks, then `run(form)` through the facade; a refusal becomes a
        page that says why, success a redirect to `back(form)`."""
        try:
            form = await checked_form(request)
        except PermissionError as exc:
            return page(request, "message", 403, title="Refused", text=f"{exc}; reload the page and try again")
        try:
            answer = run(form)
        except MemdreamError as exc:
            return page(request, "message", 400, title="Refused", text=f"{exc.message}. {exc.hint}", reload=back(form))
        return answer or RedirectResponse(back(form), status_code=303)

    def back_of(form: dict[str, str]) -> str:
        back = form.get("back") or "/entries"
        return back if back.startswith("/") and not back.startswith("//") else "/entries"

    async def change(request: Request) -> Response:
        entry_id = request.path_params["entry_id"]
        action = request.path_params["action"]

        def run(form: dict[str, str]) -> Response | None:
            with mem.writer.locked():
                row = current(entry_id)
                if form.get("version") != line_version(row.line):
                    return page(
                        request, "message", 409, title="Changed on disk",
                        text="This memory was changed since the page was shown (by hand, or by another program). Nothing was overwritten; the page shows the current version.",
                        reload=back_of(form),
                    )  # fmt: skip
                if action == "edit":
                    mem.update(entry_id, form.get("text", ""), source="user")
                elif action == "pin":
                    mem.pin(entry_id)
                elif action == "unpin":
                    mem.unpin(entry_id)
                elif action == "forget":
                    mem.forget(entry_id)
                else:
                    return page(request, "message", 404, title="Unknown action", text=action)
            return None

        return await act(request, run, back_of)

    async def resolve(request: Request) -> Response:
        def run(form: dict[str, str]) -> None:
            mem.resolve(request.path_params["conflict_id"], form.get("keep", ""), form.get("text") or None)

        return await act(request, run, lambda form: "/conflicts")

    async def undo(request: Request) -> Response:
        def run(form: dict[str, str]) -> None:
            mem.undo()

        return await act(request, run, lambda form: "/dreams")

    async def state(request: Request) -> Response:
        mem.sync()
        return JSONResponse({"generation": mem.index.generation(), "at": datetime.now().isoformat(timespec="seconds")})

    routes = [
        Route("/", overview),
        Route("/entries", entries),
        Route("/subject/{name:path}", subject),
        Route("/dreams", dreams),
        Route("/dreams/undo", undo, methods=["POST"]),
        Route("/conflicts", conflicts),
        Route("/conflicts/{conflict_id}", resolve, methods=["POST"]),
        Route("/knowledge", knowledge),
        Route("/entry/{entry_id}/{action}", change, methods=["POST"]),
        Route("/api/state", state),
    ]
    async def refused(request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, NotFound) else 400
        msg = exc.message if isinstance(exc, MemdreamError) else str(exc)
        hint = exc.hint if isinstance(exc, MemdreamError) else ""
        return page(request, "message", status, title="Not found" if status == 404 else "Refused", text=f"{msg}. {hint}".strip())

    inner = Starlette(routes=routes, exception_handlers={MemdreamError: refused})

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        request = Request(scope, receive)
        if request.headers.get("host", "") not in hosts:
            body = "This memdream console answers only on the address it was started on."
            await Response(body, status_code=421, media_type="text/plain")(scope, receive, send)
            return
        given = request.query_params.get("token")
        if given is not None:
            if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode()):
                await HTMLResponse("wrong token", status_code=401)(scope, receive, send)
                return
            rest = {k: v for k, v in request.query_params.items() if k != "token"}
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            resp = RedirectResponse(target, status_code=303)
            resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
            await resp(scope, receive, send)
            return
        if not authorized(request):
            body = "This memdream console needs its token: open the link `memdream web` printed, or send Authorization: Bearer TOKEN."
            await Response(body, status_code=401, media_type="text/plain", headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        await inner(scope, receive, send)

    return app  # type: ignore[return-value]


def new_token() -> str:
    return secrets.token_urlsafe(18)
