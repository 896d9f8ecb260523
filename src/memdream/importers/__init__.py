"""Readers of conversation exports: each turns a file into `Transcript`s for the raw layer.

    read(fmt, path) -> Iterator[Transcript | Skipped]

Formats: ``jsonl`` (one {"role", "content"} message per line), ``chatgpt`` (a ChatGPT data
export: the .zip as downloaded, or its conversations.json), ``markdown`` (a chat log with "User:" /
"Assistant:" style turns, or any Markdown file). A record that cannot be read is reported
as `Skipped` with its place, never silently dropped and never a crash.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memdream.errors import RefusedInput
from memdream.importers.common import MAX_IMPORT_BYTES, MAX_IMPORT_TEXT_CHARS, Skipped
from memdream.store.transcripts import Transcript

FORMATS = ("jsonl", "chatgpt", "markdown")
__all__ = ["FORMATS", "MAX_IMPORT_BYTES", "MAX_IMPORT_TEXT_CHARS", "Skipped", "read"]


def read(fmt: str, path: Path) -> Iterator[Transcript | Skipped]:
    if fmt not in FORMATS:
        raise RefusedInput(f"unknown import format {fmt!r}", "use one of: " + ", ".join(FORMATS))
    if not path.exists():
        raise RefusedInput(f"{path} does not exist", "check the path")
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")) if path.is_dir() else [path]
    if fmt == "chatgpt" and path.is_dir():  # an unpacked export: its JSON (and any zips), not its images and HTML
        files = [f for f in files if f.suffix.lower() in (".json", ".zip")]
    for f in files:
        if f.stat().st_size > MAX_IMPORT_BYTES:
            yield Skipped(str(f), f"larger than {MAX_IMPORT_BYTES // 2**20} MiB; split it first")
            continue
        if fmt == "jsonl":
            from memdream.importers.jsonl import read_jsonl

            yield from read_jsonl(f)
        elif fmt == "chatgpt":
            from memdream.importers.chatgpt import read_chatgpt

            yield from read_chatgpt(f)
        else:
            from memdream.importers.markdown import read_markdown

            yield from read_markdown(f)
