"""Entries (browse and search), a subject's trail as of a day, and the changes to one entry:
each made against the version of the line the page showed."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdream.errors import ChangedOnDisk
from memdream.model.entry import LAYERS
from memdream.web.console import Console, back_of

CHANGED = "This memory was changed since the page was shown (by hand, or by another program). Nothing was overwritten; the page shows the current version."


def routes(c: Console) -> list[Route]:
    mem = c.mem

    async def entries(request: Request) -> Response:
        layer = request.query_params.get("layer") or ""
        q = request.query_params.get("q", "").strip()
        hits, rows = [], []
        if q:
            hits = mem.recall(q, k=30)
        else:
            rows = mem.versioned(layer if layer in LAYERS else None)
        versions = mem.versions([h.entry.id for h in hits]) if hits else {}  # the version of each hit's current line
        return c.page(request, "entries", layer=layer, q=q, hits=hits, rows=rows, versions=versions, warning=mem.last_warning)

    async def subject(request: Request) -> Response:
        name = request.path_params["name"]
        trail = mem.history(name)
        as_of = request.query_params.get("as_of", "").strip()
        valid = None
        if as_of:
            when = mem.as_of(as_of)
            valid = next((e for e in reversed(trail) if e.is_valid_at(when)), None)  # type: ignore[arg-type]
        return c.page(request, "subject", name=name, trail=trail, as_of=as_of, valid=valid)

    async def change(request: Request) -> Response:
        entry_id = request.path_params["entry_id"]
        action = request.path_params["action"]

        def run(form: dict[str, str]) -> Response | None:
            try:
                with mem.at_version(entry_id, form.get("version")):
                    if action == "edit":
                        mem.update(entry_id, form.get("text", ""), source="user")
                    elif action == "pin":
                        mem.pin(entry_id)
                    elif action == "unpin":
                        mem.unpin(entry_id)
                    elif action == "forget":
                        mem.forget(entry_id)
                    else:
                        return c.page(request, "message", 404, title="Unknown action", text=action)
            except ChangedOnDisk:
                return c.page(request, "message", 409, title="Changed on disk", text=CHANGED, reload=back_of(form))
            return None

        return await c.act(request, run, back_of)

    return [
        Route("/entries", entries),
        Route("/subject/{name:path}", subject),
        Route("/entry/{entry_id}/{action}", change, methods=["POST"]),
    ]
