"""Moving memory between a folder vault and the team store, both ways.

`push(store, VAULT)` makes each scope of the folder vault in the database exactly what its
files are (idempotent: a second push writes nothing). `export(store, DIR)` writes the files
of every scope (or one) as the folder store holds them, byte for byte: a vault `memdream`
opens as it is. The index is derived on both sides and never moved; memdream.toml stays
with the machine that reads it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memdream.errors import RefusedInput, VaultError
from memdream.store.files import read_file
from memdream.store.vault import Scope, Vault
from memdream.team.store import local_files

if TYPE_CHECKING:
    from collections.abc import Callable

    from memdream.store.backup import ExportReport
    from memdream.team.store import TeamStore


@dataclass
class Moved:
    scopes: list[str] = field(default_factory=list)
    files: int = 0
    written: int = 0
    deleted: int = 0
    bytes: int = 0

    def to_json(self) -> dict:
        return {"scopes": self.scopes, "files": self.files, "written": self.written, "deleted": self.deleted, "bytes": self.bytes}


def vault_scope_files(root: Path, scope: Scope) -> dict[str, bytes]:
    """The files of one scope of a folder vault, as the store keeps them."""
    out: dict[str, bytes] = {}
    for rel in sorted(local_files(root, scope)):
        data, state = read_file(root / rel)
        if state.exists:
            out[rel] = data
    return out


def push(store: "TeamStore", vault: str | os.PathLike[str], only: Scope | None = None, progress: "Callable[[str], None]" = lambda s: None) -> Moved:
    v = Vault(vault)
    v.require()
    scopes = v.scopes()
    if only is not None:
        if only not in scopes:
            raise RefusedInput(f"there is no scope {only.user}/{only.agent} in {v.root}", "leave --scope out to push every scope")
        scopes = [only]
    moved = Moved()
    for scope in scopes:
        v.ensure_scope_unlinked(scope)
        files = vault_scope_files(v.root, scope)
        written, deleted = store.put_scope_files(scope, files)
        moved.scopes.append(scope.key)
        moved.files += len(files)
        moved.written += written
        moved.deleted += deleted
        moved.bytes += sum(len(d) for d in files.values())
        progress(f"{scope.key}: {len(files)} file(s), {written} written, {deleted} deleted")
    return moved


def export(store: "TeamStore", to: str | os.PathLike[str], only: Scope | None = None, progress: "Callable[[str], None]" = lambda s: None) -> "ExportReport":
    from memdream.store.backup import ExportReport

    dest = Path(to).expanduser().absolute()
    if dest.name.endswith((".tar.gz", ".tgz")):
        raise RefusedInput("a store is exported to a folder, not an archive", f"export to a folder (--to {dest.name.split('.')[0]}), then tar it if you need one file")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise RefusedInput(f"{dest} exists and is not an empty folder", "export into a new or empty folder")
    scopes = store.scopes()
    if only is not None:
        if only not in scopes:
            raise RefusedInput(f"the store has no scope {only.user}/{only.agent}", "memdream token list --store ... shows the scopes with tokens; leave --scope out to export all")
        scopes = [only]
    Vault(dest).init()
    report = ExportReport(to=str(dest))
    for scope in scopes:
        files = store.scope_files(scope)
        for rel, data in files.items():
            path = dest / rel
            if not path.resolve().is_relative_to(dest.resolve()):
                raise VaultError(f"the store holds a path outside a vault: {rel!r}", "this is a bug or a tampered database: nothing more is exported")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            report.files.append(rel)
            report.bytes += len(data)
        progress(f"{scope.key}: {len(files)} file(s)")
    return report
