"""A dream phase as a transaction: every file it writes is recorded, so the phase can be
rolled back exactly (its invariants failed) or undone later by entry id (`memdream undo`).

All writes of a phase go through `Core.update(path, change, tx=...)` (the single writer plus
the index), which reports each file to the transaction it is given before its first change.
The writer lock is held for the whole transaction, so the pre-image read then is the file as
the phase found it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memdream.store.format import quick_id
from memdream.store.files import FileState, read_file
from memdream.store.writer import Update


@dataclass
class FileChange:
    """One file's part of a transaction: its text before, and the entry lines that left and came."""

    before: bytes | None  # None: the file did not exist
    removed: dict[str, str] = field(default_factory=dict)  # id -> the raw line that left
    added: list[str] = field(default_factory=list)  # ids of the lines that came in

    def to_json(self) -> dict:
        return {"removed": self.removed, "added": self.added}


class Transaction:
    def __init__(self) -> None:
        self.files: dict[Path, FileChange] = {}

    def touch(self, path: Path, read: Callable[[Path], tuple[bytes, FileState]] = read_file) -> None:
        """Called before the first change of `path` in this transaction. `read` is the writer's
        read of a file at rest: a pre-image taken while an editor was half way through saving
        in place would, restored by a rollback, cut off the lines after the tear."""
        if path not in self.files:
            data, state = read(path)
            self.files[path] = FileChange(data if state.exists else None)

    def record(self, path: Path, upd: Update) -> None:
        fc = self.files[path]
        added = set(fc.added)
        for raw in upd.removed:
            eid = quick_id(raw)
            if eid:
                if eid in added:
                    fc.added.remove(eid)  # added and changed again within the phase: one addition
                    added.discard(eid)
                elif eid not in fc.removed:
                    fc.removed[eid] = raw
        adopted = set(upd.adopted_ids)  # a person's lines, only given an id: not the dream's to undo
        for ln in upd.added:
            eid = quick_id(ln.raw)
            if eid and eid not in adopted:
                fc.added.append(eid)

    @property
    def changed(self) -> bool:
        return any(fc.removed or fc.added for fc in self.files.values())

    def delta(self, rel) -> dict[str, dict]:  # type: ignore[no-untyped-def]
        """The changes by file (paths relative to the vault), for the ledger and undo: also
        where each removed line stood (its line number and the id of the entry line above it,
        so undo puts it back in place) and whether the phase created the file."""
        out = {}
        for p, fc in self.files.items():
            if not (fc.removed or fc.added):
                continue
            ch = fc.to_json()
            if fc.removed and fc.before is not None:
                ch["at"] = _positions(fc.before.decode("utf-8", "replace"), set(fc.removed))
            if fc.before is None:
                ch["created"] = True
            out[rel(p)] = ch
        return out


def _positions(text: str, ids: set[str]) -> dict[str, list]:
    """id -> [line number, id of the entry line just above or ""] in `text`."""
    out: dict[str, list] = {}
    above = ""
    for n, raw in enumerate(text.split("\n")):
        eid = quick_id(raw)
        if eid in ids and eid not in out:
            out[eid] = [n, above]
        if eid:
            above = eid
        elif raw.strip():
            above = ""  # a heading or paragraph in between: the line number places it
    return out
