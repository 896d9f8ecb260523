"""The record of acknowledged writes (issue 17, item 13): what `remember` said it stored.

    scopes/<agent>/<user>/memory/.journal/YYYY-MM.jsonl    one JSON object per line:
        {"id": "k3f9q2", "file": "scopes/main/me/memory/recall/2026-06.md", "line": "- ...", "at": "..."}

Files stay the truth: memory is only ever read from the Markdown files, never from here.
This is a plain file in the scope's own folder (so it travels, and is private, with the
scope; git-ignored in a git vault), appended by the single writer after each acknowledged write. `memdream doctor`
compares it with the files and lists the acknowledged memories no file holds any more (an
editor that saved a torn or stale copy over them, a line deleted by mistake);
`memdream doctor --fix` appends each of those lines back to its file, through the writer.
A hard forget (`forget --hard`, the explicit command that erases history) removes the id from
the record too. A line a person deleted on purpose is listed as well: delete its line here
(or let --fix put it back and forget it with memdream).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memdream.errors import MemdreamError
from memdream.store.vault import JOURNAL_DIR, Scope, Vault  # noqa: F401  (JOURNAL_DIR re-exported: its home is store/vault.py)
from memdream.store.files import NotRegularFile, read_file
from memdream.store.writer import atomic_write


@dataclass(frozen=True)
class Acked:
    id: str
    file: str  # relative to the vault
    line: str
    at: str


def journal_dir(vault: Vault, scope: Scope) -> Path:
    return vault.journal_dir(scope)


def record(vault: Vault, scope: Scope, path: Path, entry_id: str, line: str, when: datetime) -> None:
    """Append one acknowledged write (the caller holds the vault's write lock)."""
    folder = journal_dir(vault, scope)
    item = {"id": entry_id, "file": vault.relpath(path), "line": line, "at": when.isoformat()}
    data = (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            # Not versioned in a git vault: a safety net, not memory; commits stay the memory's diffs.
            (folder / ".gitignore").write_text("*\n", encoding="utf-8")
        target = folder / f"{when:%Y-%m}.jsonl"
        vault.ensure_inside(target)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except (OSError, MemdreamError):
        pass  # the memory itself is written; only its safety net is missing (doctor cannot list it if lost)


def _files(vault: Vault, scope: Scope) -> list[Path]:
    folder = journal_dir(vault, scope)
    try:
        return sorted(folder / n for n in os.listdir(folder) if n.endswith(".jsonl") and not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


def acknowledged(vault: Vault, scope: Scope) -> dict[str, Acked]:
    """Every acknowledged write of the scope by id (a later record of an id wins)."""
    out: dict[str, Acked] = {}
    for p in _files(vault, scope):
        try:
            data, _ = read_file(p)
        except NotRegularFile:
            continue
        for raw in data.decode("utf-8", "surrogateescape").split("\n"):
            try:
                item = json.loads(raw)
                out[item["id"]] = Acked(str(item["id"]), str(item["file"]), str(item["line"]), str(item.get("at", "")))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash
    return out


def erase(vault: Vault, scope: Scope, entry_id: str) -> None:
    """Remove an id from the record (a hard forget); the caller holds the write lock."""
    for p in _files(vault, scope):
        try:
            data, _ = read_file(p)
        except NotRegularFile:
            continue
        lines = data.decode("utf-8", "surrogateescape").split("\n")
        kept = []
        for raw in lines:
            try:
                if json.loads(raw).get("id") == entry_id:
                    continue
            except (ValueError, AttributeError):
                pass
            kept.append(raw)
        if len(kept) != len(lines):
            atomic_write(p, "\n".join(kept).encode("utf-8", "surrogateescape"))
