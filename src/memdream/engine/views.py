"""What the shells show and the precondition of their edits: each current line's version
(a change made against one version is refused once the line reads otherwise), the scope's
files as text (MEMORY.md, daily logs, dream diaries), and a chat's transcript kept as it goes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

from memdream.core import Core
from memdream.errors import ChangedOnDisk, NotFound, RefusedInput
from memdream.model.entry import ARCHIVE, LAYERS, RECALL, RESIDENT, Entry
from memdream.store.format import line_version
from memdream.store.transcripts import Message, Transcript
from memdream.store.transcripts import render as render_transcript
from memdream.store.files import NotRegularFile, decode, read_file

DAY_FILE = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].md"


def versioned(core: Core, layer: str | None = None) -> list[tuple[Entry, str]]:
    """The current entries of `layer` (resident and recall by default), each with its line's version."""
    core.sync()
    if layer is not None and layer not in LAYERS:
        raise RefusedInput(f"unknown layer {layer!r}", "use one of: " + ", ".join(LAYERS))
    rows = core.index.entries(core.scope, (layer,) if layer else (RESIDENT, RECALL), current_only=layer != ARCHIVE)
    return [(r.entry(), line_version(r.line)) for r in rows]


def versions(core: Core, entry_ids: Iterable[str]) -> dict[str, str]:
    """The version of the current line of each of `entry_ids` (an id without one is left out)."""
    core.sync()
    return {eid: line_version(r.line) for eid in entry_ids for r in core.index.by_id(core.scope, eid) if r.vt is None}


@contextmanager
def at_version(core: Core, entry_id: str, version: str | None) -> Iterator[Entry]:
    """The writer lock, held while the current line of `entry_id` is the one at `version`.
    NotFound if it has no current line; ChangedOnDisk if it reads otherwise now."""
    with core.writer.locked():
        core.sync()
        rows = [r for r in core.index.by_id(core.scope, entry_id) if r.vt is None]
        if not rows:
            raise NotFound(f"no current memory {entry_id!r}", "it may have been forgotten or superseded meanwhile")
        if version != line_version(rows[0].line):
            raise ChangedOnDisk(f"memory {entry_id} was changed since that version", "nothing was overwritten; read it again and change its current version")
        yield rows[0].entry()


def lines_in(core: Core, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """For each (vault path, entry id): the line of that id in that file now, or None."""
    core.sync()
    return {(rel, eid): next((r.line for r in core.index.by_id(core.scope, eid) if r.path == rel), None) for rel, eid in wanted}


def text_of(path: Path, odd: bool = False) -> str:
    """A file's text ("" if it is missing). What memdream never opens (a FIFO, a folder, a
    link) raises, or with `odd` is said in its place."""
    try:
        data, state = read_file(path)
    except NotRegularFile as exc:
        if not odd:
            raise
        return f"({exc.message})"
    return decode(data, path) if state.exists else ""


def newest_days(folder: Path, n: int, pattern: str = DAY_FILE) -> list[tuple[str, str]]:
    """The newest `n` day files of `folder` as (day, text), newest first."""
    paths = sorted(folder.glob(pattern), reverse=True)[:n] if folder.is_dir() else []
    return [(p.stem, text_of(p, odd=True)) for p in paths]


def resident_text(core: Core) -> str:
    core.sync()
    return text_of(core.vault.resident_file(core.scope))


def daily_log(core: Core, day: date | None = None) -> str:
    return text_of(core.knowledge.log_path(day or core.clock.now().date()))


def keep_chat(core: Core, session_id: str, started: datetime, messages: list[Message], part: int = 1, title: str = "memdream chat") -> str:
    """Store a chat's transcript so far in the raw layer, rewritten as the chat goes on; returns its vault path."""
    name = session_id + (f"-{part}" if part > 1 else "")
    path = core.vault.sessions_dir(core.scope) / f"{started:%Y-%m-%d}" / f"{name}.md"
    text = render_transcript(Transcript("chat", messages, title=title, started_at=started, source_id=session_id))
    core.writer.write_text(path, lambda old: text)
    return core.vault.relpath(path)
