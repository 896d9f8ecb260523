"""Open conflicts of a scope and their resolution: contradictory knowledge paragraphs
(knowledge/base.py), contradictory memories (cf=, id e-<entry id>), and memories waiting for
the user's confirmation (pend=, id p-<entry id>)."""

from __future__ import annotations

from memdream.core import Core, set_entry
from memdream.engine.checks import no_secret
from memdream.engine.edits import forget
from memdream.engine.write import write
from memdream.errors import NotFound, RefusedInput
from memdream.knowledge.base import MAX_NOTE_CHARS, Conflict, check_size
from memdream.model.entry import END_SUPERSEDED, layer_for_type
from memdream.model.hostile import PENDING_INJECTION
from memdream.store.format import parse_line


def conflicts(core: Core) -> list[Conflict]:
    """Every open conflict: knowledge paragraphs, memories, memories waiting for the user."""
    return core.knowledge.conflicts() + entry_conflicts(core) + pending_conflicts(core)


def pending_conflicts(core: Core) -> list[Conflict]:
    core.sync()
    rows = core.index.current_pending(core.scope)
    out = []
    for row in rows:
        e = row.entry()
        if not e.pending:
            continue
        day = (e.valid_from or e.created_at).date().isoformat() if (e.valid_from or e.created_at) else ""
        why = "it tells the agent to send data or ignore its instructions" if e.pending == PENDING_INJECTION else f"a {e.effective_type} from src={e.source or '?'}, not from you"
        out.append(Conflict(f"p-{e.id}", row.path, day, f"(not resident: {why}; --keep b makes it resident, --keep a drops it)", e.text, "pending", f"{row.path}#{e.id}"))
    return out


def entry_conflicts(core: Core) -> list[Conflict]:
    core.sync()
    out = []
    rows = core.index.current_conflicting(core.scope)
    for row in rows:
        b = row.entry()
        others = [r for r in core.index.by_id(core.scope, b.conflicts_with) if r.vt is None]
        if not b.conflicts_with or not others:
            continue
        a = others[0].entry()
        day = (b.valid_from or b.created_at).date().isoformat() if (b.valid_from or b.created_at) else ""
        out.append(Conflict(f"e-{b.id}", row.path, day, a.text, b.text, "entry", f"{others[0].path}#{a.id}"))
    return out


def resolve(core: Core, conflict_id: str, keep: str, text: str | None = None) -> Conflict:
    """Close a conflict: the side not kept is superseded (memories) or marked superseded (knowledge)."""
    if text:
        check_size(text, MAX_NOTE_CHARS, "the resolved text", "say the settled fact in a few lines")  # before the scan
        no_secret(text)
    if conflict_id.startswith("p-"):
        return _resolve_pending(core, conflict_id, keep, text)
    if not conflict_id.startswith("e-"):
        return core.knowledge.resolve(conflict_id, keep, text)
    if keep not in ("a", "b", "both", "edit") or (keep == "edit" and not (text or "").strip()):
        raise RefusedInput("--keep must be a, b, both, or edit with --text", 'memdream resolve ID --keep edit --text "..."')
    match = next((c for c in entry_conflicts(core) if c.id == conflict_id), None)
    if match is None:
        raise NotFound(f"no open conflict {conflict_id!r}", "list them with 'memdream conflicts'")
    b_id = conflict_id[2:]
    a_id = match.a_source.rsplit("#", 1)[1]
    with core.writer.locked():
        now = core.clock.now()
        b_row = core.find(b_id, current_only=True)
        a_row = core.find(a_id, current_only=True)
        clear = set_entry(b_id, lambda e: e.evolve(conflicts_with=""))
        if keep == "a":
            core.update(core.path(b_row), set_entry(b_id, lambda e: e.evolve(conflicts_with="", valid_to=now, end=END_SUPERSEDED)))
        elif keep == "b":
            core.update(core.path(b_row), set_entry(b_id, lambda e: e.evolve(conflicts_with="", supersedes=e.supersedes or a_id)))
            core.update(core.path(a_row), set_entry(a_id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
        elif keep == "both":
            core.update(core.path(b_row), clear)
        else:
            core.update(core.path(b_row), clear)
            out = write(core, text or "", source="user")
            for rid, row in ((a_id, a_row), (b_id, b_row)):
                if rid != out.entry.id:
                    core.update(core.path(row), set_entry(rid, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
    return match


def _resolve_pending(core: Core, conflict_id: str, keep: str, text: str | None) -> Conflict:
    if keep not in ("a", "b", "edit") or (keep == "edit" and not (text or "").strip()):
        raise RefusedInput("for a pending memory --keep must be b (confirm), a (drop) or edit with --text", f"memdream resolve {conflict_id} --keep b")
    match = next((c for c in pending_conflicts(core) if c.id == conflict_id), None)
    if match is None:
        raise NotFound(f"no open conflict {conflict_id!r}", "list them with 'memdream conflicts'")
    eid = conflict_id[2:]
    if keep == "a":
        forget(core, eid)  # to the archive, with end=forgotten: history kept
        return match
    if keep == "edit":
        forget(core, eid)
        write(core, text or "", source="user")
        return match
    with core.writer.locked():
        row = core.find(eid, current_only=True)
        old = parse_line(row.line, row.layer)
        now = core.clock.now()
        # Confirmed by the user: a new line in the layer its type belongs to, superseding the pending one.
        new = old.evolve(id=core.new_id(), pending="", supersedes=old.id, valid_from=now, created_at=now, layer="", hits=0)
        path, header = core.file_for_new(layer_for_type(old.type), now)
        core.update(path, lambda doc: doc.append_entry(new), header=header)
        core.update(core.path(row), set_entry(eid, lambda e: e.evolve(pending="", valid_to=now, end=END_SUPERSEDED)))
    return match
