"""The overview (health, dreams, counts) and /api/state, which the pages poll to reload."""

from __future__ import annotations

from datetime import datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memdream.web.console import Console


def routes(c: Console) -> list[Route]:
    mem = c.mem

    async def overview(request: Request) -> Response:
        # This scope only: the console is started for one scope, and its token covers that one.
        by_kind = {tuple(key.split(".", 1)): n for key, n in mem.stats().items()}  # "layer.type": a layer has no dot
        counts = [(mem.scope.key, sorted(by_kind.items()), sum(by_kind.values()))]
        dreams = [r for r in mem.dream_records() if "run" in r]
        stale = [n for n in mem.notes() if n.stale]
        return c.page(
            request, "overview", counts=counts, last=dreams[-1] if dreams else None, due=mem.dreams_due(), nightly=mem.config.dream.nightly_at,
            conflicts=len(mem.conflicts()), stale=stale, problems=mem.scope_problems(),
        )  # fmt: skip

    async def state(request: Request) -> Response:
        return JSONResponse({"generation": mem.generation(), "at": datetime.now().isoformat(timespec="seconds")})

    return [Route("/", overview), Route("/api/state", state)]
