"""`memdream doctor`: every file parses, ids are unique, and the index agrees with the files."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdream.config import MAX_TEXT_CHARS
from memdream.errors import MemdreamError
from memdream.index.db import LINE_INDEX_MAX, Index, bounded_line
from memdream.model.secrets import find_secret
from memdream.store import journal
from memdream.store.format import parse_document, parse_line
from memdream.store.vault import MEMORY_HEADER, NAME_RE, Scope, Vault
from memdream.store.files import NotRegularFile, decode, read_file, what_is
from memdream.store.writer import TEMP_NAME, Writer

TEMP_MIN_AGE = 60.0  # seconds; a younger temp file may belong to a write in progress elsewhere


@dataclass(frozen=True)
class Problem:
    path: str
    line: int  # 1-based; 0 when the problem is about the whole file
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "message": self.message}


def check_vault(vault: Vault, index: Index, scopes: list[Scope] | None = None) -> list[Problem]:
    """Every problem of the vault's scopes (or of `scopes` only: what one scope's console may show)."""
    problems: list[Problem] = []
    seen_ids: dict[str, tuple[str, int]] = {}
    base = vault.scopes_dir
    if scopes is None and base.is_dir():
        for agent_dir in sorted(base.iterdir()):
            if agent_dir.is_symlink():
                problems.append(Problem(vault.relpath(agent_dir), 0, "agent folder is a symlink: memdream never follows it (replace it with a real folder)"))
                continue
            if not agent_dir.is_dir():
                continue
            for user_dir in sorted(agent_dir.iterdir()):
                if user_dir.is_symlink():
                    problems.append(Problem(vault.relpath(user_dir), 0, "scope folder is a symlink: memdream never follows it (replace it with a real folder)"))
                    continue
                if not user_dir.is_dir():
                    continue
                if not (NAME_RE.fullmatch(agent_dir.name) and NAME_RE.fullmatch(user_dir.name)):
                    problems.append(Problem(vault.relpath(user_dir), 0, "folder name is not a valid scope name; memdream ignores it"))
    for scope in vault.scopes() if scopes is None else scopes:
        problems.extend(odd_paths(vault, scope))
        index.sync_scope(scope)
        expected: list[tuple[str, str, str]] = []
        present: set[str] = set()
        for rel, layer in vault.list_entry_files(scope):
            path = vault.root / rel
            if not vault.is_inside(path):
                continue  # links are reported above; the index does not read them either
            try:
                data, state = read_file(path)
            except NotRegularFile:
                continue  # reported by odd_paths; the index does not read it either
            if not state.exists:
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = data[: exc.start].count(b"\n") + 1
                problems.append(Problem(rel, line, "not valid UTF-8 (kept as typed; shown and indexed as U+FFFD)"))
                text = data.decode("utf-8", errors="replace")
            doc = parse_document(text)
            present.update(e.id for e in doc.entries() if e.id)
            for n, ln in enumerate(doc.lines, start=1):
                if ln.entry is None:
                    continue
                for message in ln.problems:
                    problems.append(Problem(rel, n, message))
                # (an over-long hand line is named below; its indexed prefix is all memdream shows of it)
                kind = find_secret(ln.entry.text[:LINE_INDEX_MAX]) or find_secret(ln.entry.subject[:LINE_INDEX_MAX])
                if kind:  # typed by hand (the write path refuses it): left as is, shown redacted
                    problems.append(Problem(rel, n, f"holds {kind}: memdream shows it redacted; move the secret to a password manager and delete it here"))
                if len(ln.entry.text) > MAX_TEXT_CHARS:
                    problems.append(Problem(
                        rel, n, f"the memory is {len(ln.entry.text):,} characters long (at most {MAX_TEXT_CHARS:,}): left in the file as typed,"
                        f" only its first {MAX_TEXT_CHARS:,} characters are indexed and shown; split it or move it to a knowledge note",
                    ))  # fmt: skip
                eid = ln.entry.id
                if eid:
                    if eid in seen_ids and seen_ids[eid][0] != rel or (eid in seen_ids and seen_ids[eid][1] != n):
                        first = seen_ids[eid]
                        problems.append(Problem(rel, n, f"id {eid!r} is also used at {first[0]}:{first[1]}"))
                    else:
                        seen_ids[eid] = (rel, n)
                expected.append((rel, layer, bounded_line(ln.raw.rstrip("\r"))))
        lost = [a for a in journal.acknowledged(vault, scope).values() if a.id not in present]
        for a in lost[:20]:
            problems.append(Problem(a.file, 0, f"acknowledged memory {a.id} ({a.line[:60]!r}, written {a.at[:16]}) is in no file of the scope any more (overwritten by an editor's save? 'memdream doctor --fix' puts it back)"))
        if len(lost) > 20:
            problems.append(Problem(vault.relpath(journal.journal_dir(vault, scope)), 0, f"{len(lost) - 20} more acknowledged memories are missing ('memdream doctor --fix' puts them back)"))
        for tmp in temp_files(vault, scope):
            problems.append(Problem(vault.relpath(tmp), 0, "temp file left by an interrupted write; never read as memory (memdream doctor --fix deletes it)"))
        actual = index.indexed_lines(scope)
        if sorted(expected) != actual:
            missing = set(expected) - set(actual)
            extra = set(actual) - set(expected)
            for rel, _, line in sorted(missing)[:20]:
                problems.append(Problem(rel, 0, f"index is missing a line: {line[:80]!r} (run 'memdream index rebuild')"))
            for rel, _, line in sorted(extra)[:20]:
                problems.append(Problem(rel, 0, f"index holds a line the file does not: {line[:80]!r} (run 'memdream index rebuild')"))
    return problems


def odd_paths(vault: Vault, scope: Scope) -> list[Problem]:
    """What in a scope's folder memdream refuses to open: links, FIFOs, devices, sockets,
    folders named like a memdream file (MEMORY.md, NOW.md, a daily log, INDEX.md), and
    files with more than one hard link. By lstat only: nothing is opened."""
    out: list[Problem] = []
    top = vault.scope_dir(scope)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            rel = vault.relpath(p)
            if stat.S_ISLNK(st.st_mode) or not vault.is_inside(p):
                out.append(Problem(rel, 0, "symlink or path outside the vault: ignored (replace it with a real file)"))
            elif stat.S_ISDIR(st.st_mode):
                if name.endswith(".md"):
                    out.append(Problem(rel, 0, "a folder where memdream keeps a file: its memories cannot be read or written (move the folder away)"))
            elif not stat.S_ISREG(st.st_mode):
                out.append(Problem(rel, 0, f"{what_is(st.st_mode)} where memdream keeps plain files: never opened (move it out of the vault)"))
            elif st.st_nlink > 1:
                out.append(Problem(rel, 0, f"has {st.st_nlink} hard links (another name, maybe in another scope, shares it): memdream does not read or write it (give it its own copy)"))
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def temp_files(vault: Vault, scope: Scope) -> Iterator[Path]:
    """The temp files interrupted writes left in a scope (names only atomic_write makes)."""
    return (t for t in sorted(vault.scope_dir(scope).rglob(".*.tmp")) if TEMP_NAME.match(t.name))


def remove_temp_files(vault: Vault, writer: Writer, min_age: float = TEMP_MIN_AGE) -> list[str]:
    """Delete the temp files interrupted writes left in the scopes (`memdream doctor --fix`).

    Only those older than `min_age` seconds, and under the vault's write lock: every write
    holds it from creating its temp file to renaming it, so none is in flight. Returns the
    removed paths, relative to the vault."""
    removed: list[str] = []
    with writer.locked():
        now = time.time()
        for scope in vault.scopes():
            for tmp in temp_files(vault, scope):
                try:
                    if tmp.is_file() and not tmp.is_symlink() and now - tmp.stat().st_mtime >= min_age:
                        tmp.unlink()
                        removed.append(vault.relpath(tmp))
                except FileNotFoundError:
                    continue
    return removed


def entry_ids(vault: Vault, scope: Scope) -> set[str]:
    """The id of every entry in the scope's files (the truth; what cannot be opened holds none)."""
    out: set[str] = set()
    for rel, _ in vault.list_entry_files(scope):
        path = vault.root / rel
        if not vault.is_inside(path):
            continue
        try:
            data, state = read_file(path)
        except NotRegularFile:
            continue
        out.update(e.id for e in parse_document(decode(data, path)).entries() if e.id)
    return out


def restore_acknowledged(vault: Vault, writer: Writer) -> tuple[list[str], list[str]]:
    """Put back every acknowledged memory no file of its scope holds (`memdream doctor --fix`):
    its line as written, appended to the file it was written to, through the writer.
    Returns (restored "file: id" items, ones that could not be restored with the reason)."""
    restored: list[str] = []
    failed: list[str] = []
    with writer.locked():
        for scope in vault.scopes():
            acked = journal.acknowledged(vault, scope)
            if not acked:
                continue
            present = entry_ids(vault, scope)
            for a in acked.values():
                if a.id in present:
                    continue
                path = vault.root / a.file
                layer = vault.layer_of(scope, path)
                entry = parse_line(a.line, layer)
                if entry.id != a.id or not a.file.startswith(vault.relpath(vault.scope_dir(scope)) + "/"):
                    failed.append(f"{a.file}: {a.id}: the record is not a line of this scope")
                    continue
                header = MEMORY_HEADER if layer == "resident" else ""

                def put_back(doc, entry=entry):  # type: ignore[no-untyped-def]
                    if doc.find(entry.id) < 0:
                        doc.append_entry(entry)

                try:
                    writer.update(path, put_back, header=header)
                except MemdreamError as exc:
                    failed.append(f"{a.file}: {a.id}: {exc.message}")
                    continue
                restored.append(f"{a.file}: {a.id}")
                present.add(a.id)
    return restored, failed
