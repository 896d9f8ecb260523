"""Reading a scope's memories: by id, by layer, a subject's supersede trail, counts."""

from __future__ import annotations

from datetime import datetime, timezone

from memdream.core import Core
from memdream.errors import NotFound, RefusedInput
from memdream.index.db import Row
from memdream.model.entry import ARCHIVE, LAYERS, RECALL, RESIDENT, Entry


def get(core: Core, entry_id: str) -> Entry:
    """The entry with this id (current or ended); `NotFound` if there is none."""
    core.sync()
    return core.find(entry_id).entry()


def entries(core: Core, layer: str | None = None, include_ended: bool = False) -> list[Entry]:
    """Entries by layer (default: resident and recall), oldest first; `include_ended` adds
    superseded ones (the archive layer, asked for by name, always lists its ended entries)."""
    core.sync()
    if layer is not None and layer not in LAYERS:
        raise RefusedInput(f"unknown layer {layer!r}", "use one of: " + ", ".join(LAYERS))
    layers = (layer,) if layer else ((RESIDENT, RECALL, ARCHIVE) if include_ended else (RESIDENT, RECALL))
    # The archive holds ended entries by nature: asking for it means asking for them.
    current_only = not include_ended and layer != ARCHIVE
    return [r.entry() for r in core.index.entries(core.scope, layers, current_only=current_only)]


def history(core: Core, subject_or_id: str) -> list[Entry]:
    """The supersede trail of a subject (or of the entry with that id), oldest first."""
    core.sync()
    rows = core.index.by_subject(core.scope, subject_or_id, current_only=False)
    if not rows:
        by_id = core.index.by_id(core.scope, subject_or_id)
        if not by_id:
            raise NotFound(
                f"no memory with subject or id {subject_or_id!r} in scope {core.scope.key}",
                "subjects are set with 'memdream remember --subject S'; list entries with 'memdream list --all'",
            )
        start = by_id[0].entry()
        rows = core.index.by_subject(core.scope, start.subject, current_only=False) if start.subject else []
        rows += _chain(core, start)
    out: dict[str, Entry] = {}
    for r in rows:
        e = r.entry()
        key = e.id or f"row{r.rowid}"
        if key not in out or out[key].valid_to is not None:
            out[key] = e
    earliest = datetime.min.replace(tzinfo=timezone.utc)
    by_id = {e.id: e for e in out.values() if e.id}

    def depth(e: Entry) -> int:  # how many links of the trail lead to e (ties within a second)
        n, seen = 0, set()
        while e.supersedes in by_id and e.supersedes not in seen:
            seen.add(e.supersedes)
            e, n = by_id[e.supersedes], n + 1
        return n

    return sorted(out.values(), key=lambda e: (e.valid_from or e.created_at or earliest, depth(e), e.id))


def _chain(core: Core, start: Entry) -> list[Row]:
    rows: list[Row] = []
    seen = {start.id}
    frontier = [start.id]
    while frontier:
        nxt: list[str] = []
        for eid in frontier:
            for r in core.index.by_id(core.scope, eid) + core.index.by_supersedes(core.scope, eid):
                rows.append(r)
                e = r.entry()
                for other in (e.id, e.supersedes):
                    if other and other not in seen:
                        seen.add(other)
                        nxt.append(other)
        frontier = nxt
    return rows


def stats(core: Core) -> dict[str, int]:
    """Counts of the scope's currently valid memories, by layer and type."""
    core.sync()
    return {f"{layer}.{type_}": n for (layer, type_), n in core.index.count(core.scope).items()}
