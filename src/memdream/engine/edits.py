"""Edits of existing memories: forget (soft or hard), update, pin, adopt. Each runs under the
writer lock, after a sync, and changes lines by id through `Core.update`."""

from __future__ import annotations

from memdream.core import Core, set_entry
from memdream.engine.write import WriteOutcome, write
from memdream.model.entry import ARCHIVE, END_FORGOTTEN, END_SUPERSEDED, Entry
from memdream.store import journal
from memdream.store.format import Document, parse_line


def forget(core: Core, entry_id: str, hard: bool = False) -> Entry:
    """Soft: end the entry's validity and move its line to the archive. Hard: delete the line."""
    with core.writer.locked():
        core.sync()
        if hard:
            rows = core.index.by_id(core.scope, entry_id)
            if not rows:
                core.find(entry_id)
            removed: Entry | None = None
            for row in rows:

                def drop(doc: Document) -> Entry | None:
                    i = doc.find(entry_id)
                    return doc.remove(i) if i >= 0 else None

                upd = core.update(core.path(row), drop)
                removed = upd.result or removed
            assert removed is not None
            journal.erase(core.vault, core.scope, entry_id)  # erased history leaves no copy behind
            return removed
        row = core.find(entry_id, current_only=True)
        now = core.clock.now()
        # The line as typed (row.entry() shows a hand-typed credential redacted): the archive keeps it verbatim.
        ended = parse_line(row.line, row.layer).evolve(valid_to=now, end=END_FORGOTTEN)
        if row.layer == ARCHIVE:
            return core.update(core.path(row), set_entry(entry_id, lambda e: ended)).result.evolve(layer=ARCHIVE)
        # Copy into the archive first, then remove: a crash in between duplicates, never loses.
        archive, header = core.file_for_new(ARCHIVE, now)
        core.update(archive, lambda doc: doc.append_entry(ended) if doc.find(entry_id) < 0 else None, header=header)

        def drop_current(doc: Document) -> None:
            i = doc.find(entry_id)
            if i >= 0:
                doc.remove(i)

        core.update(core.path(row), drop_current)
        return ended.evolve(layer=ARCHIVE)


def update(core: Core, entry_id: str, text: str, source: str = "user") -> WriteOutcome:
    """Replace a memory's text: a new line supersedes the old one (`sup`), which ends and
    stays in the history. The type, subject and pin carry over."""
    with core.writer.locked():
        core.sync()
        row = core.find(entry_id, current_only=True)
        old = row.entry()
        out = write(core, text, type=old.type or None, subject=old.subject or None, pin=old.pinned, source=source)
        if out.entry.id == old.id or out.entry.pending:
            return out  # the same thing said again; or a replacement that waits for the user (the old one stays)
        if out.action == "superseded" and any(e.id == old.id for e in out.superseded):
            return out  # the subject did it
        now = core.clock.now()
        new_id = out.entry.id
        core.update(core.path(core.find(new_id, current_only=True)), set_entry(new_id, lambda e: e.evolve(supersedes=e.supersedes or old.id)))
        upd = core.update(core.path(row), set_entry(old.id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
        ended = (upd.result or old).evolve(layer=row.layer)
        return WriteOutcome("superseded", out.entry.evolve(supersedes=out.entry.supersedes or old.id), (*out.superseded, ended))


def pin(core: Core, entry_id: str, pinned: bool = True) -> Entry:
    """Pin (or unpin) a memory: always in the resident snapshot, never touched by dreams."""
    with core.writer.locked():
        core.sync()
        row = core.find(entry_id, current_only=True)
        upd = core.update(core.path(row), set_entry(entry_id, lambda e: e.evolve(pinned=pinned)))
        return (upd.result or row.entry()).evolve(layer=row.layer)


def adopt(core: Core) -> int:
    """Give every hand-written line of the scope an id (its text untouched); returns how many."""
    n = 0
    with core.writer.locked():
        core.sync()
        paths = core.index.unadopted_paths(core.scope)
        for rel in paths:
            n += len(core.update(core.vault.root / rel, lambda doc: None).adopted_ids)
    return n
