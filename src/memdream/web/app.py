"""`memdream web`: see and steer one scope's memory in a browser (DESIGN 10; issue: web console).

A small Starlette app with server-rendered pages (Jinja2, autoescaped: a memory holding
`<script>` is shown, never run), no external assets. Every page and call needs the token:
`Authorization: Bearer T`, or `?token=T` once, which sets an HttpOnly SameSite=Strict
cookie. Every change is a POST carrying a CSRF token and the version of the line the page
showed; all go through the facade (the single writer). A line changed on disk since the page
was rendered is never overwritten: the request is refused and the page reloads.

This module guards the door (Host, token, cookie); console.py holds what the routes share
(templates, CSRF, one change); the routes are in routes_*.py by area, each a facade call or two.
"""

from __future__ import annotations

import hmac
import secrets
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from memdream.errors import MemdreamError

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from memdream.memory import Memory

COOKIE = "memdream_token"


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
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response

    from memdream.web import routes_dreams, routes_knowledge, routes_memories, routes_overview
    from memdream.web.console import Console

    origins = allowed_origins(host, port)
    hosts = {o.split("://", 1)[1] for o in origins}
    console = Console(mem, token, origins)

    def authorized(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        got = header[7:] if header.lower().startswith("bearer ") else request.cookies.get(COOKIE, "")
        return bool(got) and hmac.compare_digest(got.encode("utf-8", "surrogatepass"), token.encode())

    routes = [*routes_overview.routes(console), *routes_memories.routes(console), *routes_dreams.routes(console), *routes_knowledge.routes(console)]
    inner = Starlette(routes=routes, exception_handlers={MemdreamError: console.refused()})

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
