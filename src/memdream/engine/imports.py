"""Applying imports: conversation transcripts into the raw layer, a copy that `export` wrote,
and other memory systems' folders (list items through the write path, daily logs into the
daily memory, the rest verbatim). Importing twice adds nothing."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from memdream.core import Core
from memdream.engine.write import write
from memdream.errors import MemdreamError, RefusedInput
from memdream.importers import MAX_IMPORT_TEXT_CHARS, Skipped
from memdream.importers import read as read_transcripts
from memdream.index.raw import sync_raw
from memdream.model.secrets import find_secret, redact
from memdream.store.transcripts import render as render_transcript

IMPORT_HINTS = {
    "chatgpt": "give the ChatGPT export's .zip as downloaded (Settings > Data controls > Export data), or the conversations.json inside it",
    "jsonl": 'give a file with one JSON object per line, e.g. {"role": "user", "content": "..."}',
    "markdown": "give a Markdown chat log (User: / Assistant: turns) or any Markdown file",
}


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)  # files written (transcripts, documents, daily memory)
    unchanged: list[str] = field(default_factory=list)  # files already imported
    skipped: list[tuple[str, str]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # ids of memories written
    known: int = 0  # memories already there (importing twice adds nothing)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (where, why): secrets and bad lines

    def to_json(self) -> dict:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "skipped": [{"where": w, "why": y} for w, y in self.skipped],
            "memories_added": self.added,
            "memories_known": self.known,
            "refused": [{"where": w, "why": y} for w, y in self.refused],
        }


def _too_long(text: str) -> bool:
    return len(text) > MAX_IMPORT_TEXT_CHARS  # checked before the secret scan, whose cost grows with the text


TOO_LONG = f"longer than {MAX_IMPORT_TEXT_CHARS:,} characters; split it first"


def _admitted(report: ImportReport, where: str, text: str, refused: str) -> bool:
    """Whether a whole file's text may be kept: a too long one is skipped (before the secret
    scan), one holding a credential is refused with `refused` as the reason."""
    if _too_long(text):
        report.skipped.append((where, TOO_LONG))
        return False
    if find_secret(text):
        report.refused.append((where, refused))
        return False
    return True


def import_transcripts(core: Core, fmt: str, path: str | os.PathLike[str]) -> ImportReport:
    """Store conversation transcripts verbatim in the raw layer (idempotent), except for lines
    that hold a credential: those are replaced by a note and reported as refused."""
    report = ImportReport()
    for item in read_transcripts(fmt, Path(path)):
        if isinstance(item, Skipped):
            report.skipped.append((item.where, item.why))
            continue
        when = item.started_at or core.clock.now()
        target = core.vault.sessions_dir(core.scope) / f"{when:%Y-%m-%d}" / f"{item.session_id}.md"
        big = next((n for n, m in enumerate(item.messages, 1) if _too_long(m.content)), 0)
        if big:
            report.skipped.append((f"{item.session_id} message {big}", TOO_LONG))
            continue
        clean = []
        for n, m in enumerate(item.messages, 1):
            content, kinds = redact(m.content)
            report.refused += [(f"{item.session_id} message {n}", f"a line holding {k} was left out") for k in kinds]
            clean.append(replace(m, content=content))
        text = render_transcript(replace(item, messages=clean, source_id=item.source_id or item.digest()))
        state = core.writer.write_text(target, lambda old, text=text: text if old is None else None)
        (report.imported if state is not None else report.unchanged).append(core.vault.relpath(target))
    if not report.imported and not report.unchanged:
        # Nothing could be read: a failure, not an empty success.
        reasons = "; ".join(f"{w}: {y}" for w, y in report.skipped[:3]) or "no conversation in it"
        raise RefusedInput(f"nothing in {path} could be imported as {fmt} ({reasons})", IMPORT_HINTS.get(fmt, "check the file and --from"))
    sync_raw(core.index, core.scope)
    return report


def import_vault(core: Core, path: str | os.PathLike[str]) -> ImportReport:
    """Restore a copy that `export` wrote: each file the vault lacks is written; a file
    already there with other content is kept and reported. The index follows."""
    from memdream.config import CONFIG_TEMPLATE
    from memdream.store.backup import restore

    src = Path(path).expanduser()
    if not src.exists():
        raise RefusedInput(f"{src} does not exist", "check the path")
    imported, unchanged, skipped = restore(core.vault, core.writer, src, pristine_config=CONFIG_TEMPLATE)
    report = ImportReport(imported=imported, unchanged=unchanged, skipped=skipped)
    if not imported and not unchanged:
        raise RefusedInput(
            f"nothing in {src} could be restored ({'; '.join(f'{w}: {y}' for w, y in skipped[:3])})",
            "restore into a new, empty vault: memdream import --from vault COPY --vault NEW_FOLDER",
        )
    core.sync()
    return report


def check_import_source(core: Core, path: str | os.PathLike[str], from_scope: str | None = None) -> None:
    """Refuse to import from another scope of this vault (its memories would cross into
    this scope without a word) unless `from_scope` names that scope ("agent/user")."""
    real = os.path.realpath(path)
    scopes = os.path.realpath(core.vault.scopes_dir)
    if real == scopes or scopes.startswith(real + os.sep):
        raise RefusedInput(
            f"{path} holds this vault's scopes; importing it would copy every scope's memories into {core.scope.key}",
            "import one scope's folder, with --from-scope AGENT/USER naming it",
        )
    if not real.startswith(scopes + os.sep):
        return
    parts = real[len(scopes) + 1 :].split(os.sep)
    owner = "/".join(parts[:2])
    if from_scope != owner:
        said = f" (--from-scope {from_scope} was given)" if from_scope else ""
        raise RefusedInput(
            f"{path} is inside scope {owner} of this vault{said}; importing it copies that scope's memories into {core.scope.key}",
            f"if that is what you mean, say so: --from-scope {owner}",
        )


def import_folder(core: Core, fmt: str, path: str | os.PathLike[str], from_scope: str | None = None) -> ImportReport:
    """Import another memory system's folder (claude-code, openclaw, cowagent): list items
    become memories through the write path; daily logs join the daily memory; the rest is
    kept verbatim in the raw layer. A folder of another scope of this vault is refused
    unless `from_scope` names it."""
    check_import_source(core, path, from_scope)

    from memdream.importers.folders import FOLDER_FORMATS, read_folder

    if fmt not in FOLDER_FORMATS:
        raise RefusedInput(f"unknown folder format {fmt!r}", "use one of: " + ", ".join(FOLDER_FORMATS))
    src = Path(path)
    if not src.exists():
        raise RefusedInput(f"{src} does not exist", "check the path")
    folder = read_folder(fmt, src)
    report = ImportReport(skipped=list(folder.skipped))
    for item in folder.memories:
        core.sync()
        if core.index.has_current_text(core.scope, item.text):
            report.known += 1
            continue
        try:
            out = write(core, item.text, source="import")
        except MemdreamError as exc:
            report.refused.append((item.where, exc.message))
            continue
        if out.action == "duplicate":
            report.known += 1
        else:
            report.added.append(out.entry.id)
    for day, text, where in folder.daily:
        if not _admitted(report, where, text, "the file holds something that looks like a credential; import it after removing it"):
            continue
        mark = f"<!-- memdream:import {fmt} {hashlib.sha256(text.encode()).hexdigest()[:16]} -->"
        target = core.knowledge.log_path(date.fromisoformat(day))

        def add(old: str | None, text: str = text, mark: str = mark) -> str | None:
            if old is not None and mark in old:
                return None
            block = text.rstrip("\n") + "\n" + mark + "\n"
            if old is None:
                return block
            return old.rstrip("\n") + f"\n\n### 00:00 — Imported from {fmt}\n\n" + block

        (report.imported if core.writer.write_text(target, add) else report.unchanged).append(core.vault.relpath(target))
    folder_dir = core.vault.sessions_dir(core.scope) / f"import-{fmt}"
    for name, text, where in folder.documents:
        if not _admitted(report, where, text, "not kept as a document: it holds something that looks like a credential (its lines were imported one by one)"):
            continue
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:100] or "document"
        target = folder_dir / (safe if safe.endswith(".md") else safe + ".md")
        state = core.writer.write_text(target, lambda old, text=text: text if old != text else None)
        (report.imported if state else report.unchanged).append(core.vault.relpath(target))
    sync_raw(core.index, core.scope)
    return report
