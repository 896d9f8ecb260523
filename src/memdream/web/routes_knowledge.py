"""The conflict inbox (resolve one) and the knowledge vault: INDEX.md, NOW.md, the daily logs."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdream.web.console import Console

DAILY_LOGS = 7  # the newest daily logs on the page


def routes(c: Console) -> list[Route]:
    mem = c.mem

    async def conflicts(request: Request) -> Response:
        return c.page(request, "conflicts", conflicts=mem.conflicts())

    async def resolve(request: Request) -> Response:
        def run(form: dict[str, str]) -> None:
            mem.resolve(request.path_params["conflict_id"], form.get("keep", ""), form.get("text") or None)

        return await c.act(request, run, lambda form: "/conflicts")

    async def knowledge(request: Request) -> Response:
        return c.page(request, "knowledge", notes=mem.notes(), now_text=mem.now(), daily=mem.daily_logs(DAILY_LOGS))

    return [
        Route("/conflicts", conflicts),
        Route("/conflicts/{conflict_id}", resolve, methods=["POST"]),
        Route("/knowledge", knowledge),
    ]
