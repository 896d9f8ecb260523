"""What a test on both stores (conftest's `any_mem`) needs to look at files without caring
which store holds them: the files as stored (the vault folder's, or the database's rows as
`memdream export` would write them), and a person's hand edit (typed into the folder, or
made to an exported file and pushed back, which is how a file is edited on the team server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_team_store(mem: Any) -> bool:
    from memdream.team.proxy import StoreMemory

    return isinstance(mem, StoreMemory)


def engine(mem: Any) -> Any:
    """The Memory that runs `mem`'s calls (the team store's local copy of the scope): for the
    test seams that are attributes (hit_flush_after), not calls."""
    return mem.team_store.memory_of(mem.scope) if on_team_store(mem) else mem


def rel(mem: Any, path: Path | str) -> str:
    """A vault file's path relative to the vault (a path of the local copy on the team store)."""
    p = Path(path)
    return (p.relative_to(mem.vault.root) if p.is_absolute() else p).as_posix()


def stored_files(mem: Any) -> dict[str, bytes]:
    """Every file of the scope (vault-relative path -> bytes), as the store holds it: on the
    team store read from the database, not from the process's copy."""
    if on_team_store(mem):
        return mem.team_store.scope_files(mem.scope)
    from memdream.team.store import local_files

    root = mem.vault.root
    return {r: (root / r).read_bytes() for r in local_files(root, mem.scope)}


def stored_text(mem: Any, path: Path | str) -> str:
    """One file's text as the store holds it ('' when it is not stored)."""
    return stored_files(mem).get(rel(mem, path), b"").decode("utf-8")


def hand_write(mem: Any, path: Path | str, text: str) -> None:
    """A person replaces a file's text: in the vault folder, or (team store) in the scope's
    files pushed back to the database, as `memdream export`, an editor and `memdream push` do."""
    if not on_team_store(mem):
        Path(path).write_text(text, encoding="utf-8")
        return
    files = mem.team_store.scope_files(mem.scope)
    files[rel(mem, path)] = text.encode("utf-8")
    mem.team_store.put_scope_files(mem.scope, files)


def hand_append(mem: Any, path: Path | str, text: str) -> None:
    """A person appends lines to a file by hand (see hand_write)."""
    hand_write(mem, path, stored_text(mem, path) + text)
