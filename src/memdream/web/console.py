"""What every page and change of one web console shares: the facade, the templates, the CSRF
token and the origins a change may come from (see app.py for the rules)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from jinja2 import DictLoader, Environment, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from memdream.errors import MemdreamError, NotFound
from memdream.web.pages import TEMPLATES

if TYPE_CHECKING:
    from memdream.memory import Memory

Run = Callable[[dict[str, str]], "Response | None"]


class Console:
    """One console's shared parts: `page` renders, `act` runs one checked change."""

    def __init__(self, mem: "Memory", token: str, origins: set[str]) -> None:
        self.mem = mem
        self.env = Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape(default=True, default_for_string=True))
        self.csrf = hmac.new(token.encode(), b"csrf", "sha256").hexdigest()[:32]
        self.origins = origins

    def page(self, request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        """A page of the console; its script reloads it when the index's generation moves."""
        ctx.update(scope=self.mem.scope.key, csrf=self.csrf, generation=self.mem.generation(), path=request.url.path, tab=template)
        return HTMLResponse(self.env.get_template(f"{template}.html").render(**ctx), status_code=status)

    async def checked_form(self, request: Request) -> dict[str, str]:
        """The form of a change, after the CSRF checks (token and same origin)."""
        origin = request.headers.get("origin")
        if origin and origin not in self.origins:  # the address the console was started on, never the Host header
            raise PermissionError("a request from another site")
        try:
            form = {k: str(v) for k, v in (await request.form()).items()}
        except Exception as exc:  # a body that is no form (bad multipart, bad encoding): the client's fault
            raise PermissionError(f"a request whose form cannot be read ({type(exc).__name__})") from exc
        if not hmac.compare_digest(form.get("csrf", "").encode("utf-8", "surrogatepass"), self.csrf.encode()):
            raise PermissionError("a request without this page's token")
        return form

    async def act(self, request: Request, run: Run, back: Callable[[dict[str, str]], str]) -> Response:
        """One change: the CSRF checks, then `run(form)` through the facade; a refusal becomes a
        page that says why, success a redirect to `back(form)`."""
        try:
            form = await self.checked_form(request)
        except PermissionError as exc:
            return self.page(request, "message", 403, title="Refused", text=f"{exc}; reload the page and try again")
        try:
            answer = run(form)
        except MemdreamError as exc:
            return self.page(request, "message", 400, title="Refused", text=f"{exc.message}. {exc.hint}", reload=back(form))
        return answer or RedirectResponse(back(form), status_code=303)

    def refused(self) -> Callable[[Request, Exception], Awaitable[Response]]:
        """The handler of a refusal no route caught: a page saying why (404 for what is not there)."""

        async def handler(request: Request, exc: Exception) -> Response:
            status = 404 if isinstance(exc, NotFound) else 400
            msg = exc.message if isinstance(exc, MemdreamError) else str(exc)
            hint = exc.hint if isinstance(exc, MemdreamError) else ""
            return self.page(request, "message", status, title="Not found" if status == 404 else "Refused", text=f"{msg}. {hint}".strip())

        return handler


def back_of(form: dict[str, str]) -> str:
    """Where a change returns to: the form's page, if it is one of this console's."""
    back = form.get("back") or "/entries"
    return back if back.startswith("/") and not back.startswith("//") else "/entries"
