"""Export and restore: a vault's truth as a self-contained copy.

What a copy holds: every Markdown file (memories, archive, transcripts, daily logs, knowledge,
diaries), each dream ledger (`memory/dreams/ledger.jsonl`, what `memdream undo` reads), the
record of acknowledged writes (`memory/.journal/`, what `memdream doctor` checks the files
against) and `memdream.toml`. What it leaves out: `.memdream/` (the index and the scheduler's state, all
derived: `memdream index rebuild` makes them again), `.git/`, and temp files of interrupted
writes. A copy is a folder or a `.tar.gz`; restoring one writes, through the single writer,
each file the target vault lacks, and never overwrites a different file already there.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memdream.errors import RefusedInput
from memdream.store.vault import CONFIG_FILE, DREAMS_DIR, JOURNAL_DIR, LEDGER_FILE, STATE_DIR, Scope, Vault
from memdream.store.files import decode, read_file
from memdream.store.writer import Writer

MAX_MEMBER_BYTES = 512 * 1024 * 1024  # one file of a copy; a bigger one is refused, not read into memory


@dataclass
class ExportReport:
    to: str
    files: list[str] = field(default_factory=list)
    bytes: int = 0

    def to_json(self) -> dict:
        return {"to": self.to, "files": self.files, "bytes": self.bytes}


def is_truth(rel: PurePosixPath) -> bool:
    """Whether a vault-relative path belongs in a copy (see the module docstring)."""
    if not rel.parts or rel.parts[0] in (STATE_DIR, ".git") or ".." in rel.parts:
        return False
    if len(rel.parts) >= 2 and rel.parts[-2] == JOURNAL_DIR:  # the record of acknowledged writes travels with its scope
        return rel.suffix == ".jsonl" or rel.name == ".gitignore"
    if rel.name.startswith("."):
        return False  # temp files of interrupted writes, editors' swap files
    if str(rel) == CONFIG_FILE:
        return True
    return rel.suffix == ".md" or (rel.name == LEDGER_FILE and rel.parent.name == DREAMS_DIR)


def truth_files(vault: Vault, scope: Scope | None = None) -> list[PurePosixPath]:
    """The files a copy holds, sorted; with `scope`, that scope's folder and memdream.toml."""
    base = vault.scope_dir(scope) if scope is not None else vault.root
    out = []
    for p in base.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue  # a link could point outside the vault: never followed
        rel = PurePosixPath(p.relative_to(vault.root).as_posix())
        if is_truth(rel):
            out.append(rel)
    if scope is not None and vault.config_path.is_file():
        out.append(PurePosixPath(CONFIG_FILE))
    return sorted(set(out))


def export(vault: Vault, writer: Writer, to: Path, scope: Scope | None = None) -> ExportReport:
    """Copy the vault's truth (or one scope's) to a new folder or a `.tar.gz`, under the
    writer's lock so the copy is one consistent moment of the vault."""
    gz = to.name.endswith((".tar.gz", ".tgz"))
    if to.exists() and (gz or not to.is_dir() or any(to.iterdir())):
        raise RefusedInput(f"{to} already exists", "give a new folder (or an empty one) or a new FILE.tar.gz")
    if vault.is_inside(to.parent if not to.exists() else to) and not gz:
        raise RefusedInput(f"{to} is inside the vault", "export to a folder outside the vault")
    report = ExportReport(str(to))
    with writer.locked():
        files = truth_files(vault, scope)
        if gz:
            to.parent.mkdir(parents=True, exist_ok=True)
            tmp = to.with_name(f".{to.name}.part")
            with tarfile.open(tmp, "w:gz") as tar:
                for rel in files:
                    data, state = read_file(vault.root / rel)
                    if not state.exists:
                        continue
                    info = tarfile.TarInfo(str(rel))
                    info.size, info.mtime, info.mode = len(data), int((vault.root / rel).stat().st_mtime), 0o644
                    tar.addfile(info, io.BytesIO(data))
                    report.files.append(str(rel))
                    report.bytes += len(data)
            tmp.replace(to)
        else:
            for rel in files:
                data, state = read_file(vault.root / rel)
                if not state.exists:
                    continue
                target = to / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                report.files.append(str(rel))
                report.bytes += len(data)
    return report


def read_copy(src: Path) -> list[tuple[PurePosixPath, bytes]]:
    """The files of a copy (a folder or a .tar.gz), checked: relative paths that stay inside,
    regular files only, and only what an export writes."""
    out: list[tuple[PurePosixPath, bytes]] = []
    if src.is_dir():
        for p in sorted(src.rglob("*")):
            if p.is_symlink() or not p.is_file():
                continue
            rel = PurePosixPath(p.relative_to(src).as_posix())
            if is_truth(rel):
                out.append((rel, p.read_bytes()))
        return out
    if not tarfile.is_tarfile(src):
        raise RefusedInput(f"{src} is neither a folder nor a .tar.gz", "give what 'memdream export --to' wrote")
    with tarfile.open(src, "r:*") as tar:
        for m in tar.getmembers():
            rel = PurePosixPath(m.name)
            if m.isdir():
                continue
            if not m.isfile() or rel.is_absolute() or ".." in rel.parts:
                raise RefusedInput(f"{src} holds {m.name!r}, which is not a plain file inside the copy", "give what 'memdream export --to' wrote")
            if not is_truth(rel):
                continue
            if m.size > MAX_MEMBER_BYTES:
                raise RefusedInput(f"{m.name} in {src} is larger than {MAX_MEMBER_BYTES // 2**20} MiB", "split the vault, or copy the folder by hand")
            fh = tar.extractfile(m)
            if fh is not None:
                out.append((rel, fh.read()))
    return out


def restore(vault: Vault, writer: Writer, src: Path, pristine_config: str = "") -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Write each file of the copy that the vault lacks: (imported, unchanged, skipped with why).
    A file already there with other content is kept and reported; so is a different
    memdream.toml, unless the vault's is still the untouched template `pristine_config`."""
    files = read_copy(src)
    if not files:
        raise RefusedInput(f"{src} holds no memdream files", "give what 'memdream export --to' wrote (a folder or a .tar.gz)")
    imported: list[str] = []
    unchanged: list[str] = []
    skipped: list[tuple[str, str]] = []
    with writer.locked():
        for rel, data in files:
            path = vault.root / rel
            text = decode(data, path)
            old, state = read_file(path)
            if state.exists and old == data:
                unchanged.append(str(rel))
                continue
            may_replace = str(rel) == CONFIG_FILE and pristine_config and state.exists and decode(old, path) == pristine_config
            if state.exists and not may_replace:
                skipped.append((str(rel), "already in the vault with other content; kept (restore into an empty vault, or move the file aside)"))
                continue
            writer.write_text(path, lambda cur, text=text, replace=may_replace: text if cur is None or replace else None)
            imported.append(str(rel))
    return imported, unchanged, skipped
