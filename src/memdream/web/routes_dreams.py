"""The dream diary: each day's diary, what each dream changed (a diff by file), and undo."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdream.web.console import Console

SHOWN = 30  # diaries and dreams on the page


def routes(c: Console) -> list[Route]:
    mem = c.mem

    async def dreams(request: Request) -> Response:
        recs = mem.dream_records()
        undone = {r["undo"] for r in recs if "undo" in r}
        runs = [r for r in reversed(recs) if "run" in r and r.get("changes")][:SHOWN]
        # (file, id) -> the line there now, for the added side of the diff
        now = mem.lines_in([(rel, eid) for r in runs for rel, ch in r["changes"].items() for eid in ch.get("added", [])])
        lines = {(rel, eid): line if line is not None else f"{eid} (no longer in this file)" for (rel, eid), line in now.items()}
        return c.page(request, "dreams", diaries=mem.diaries(SHOWN), runs=runs, undone=undone, last=mem.last_dream(), lines=lines)

    async def undo(request: Request) -> Response:
        def run(form: dict[str, str]) -> None:
            mem.undo()

        return await c.act(request, run, lambda form: "/dreams")

    return [Route("/dreams", dreams), Route("/dreams/undo", undo, methods=["POST"])]
