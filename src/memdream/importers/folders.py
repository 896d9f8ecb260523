"""Readers of other memory systems' folders (DESIGN 10; issue: agent interfaces).

- ``claude-code``: a Claude Code memory folder (MEMORY.md, an index of links, and topic
  files with frontmatter), or a single CLAUDE.md / MEMORY.md file;
- ``openclaw``: an OpenClaw workspace (MEMORY.md, NOW.md, memory/YYYY-MM-DD.md daily logs,
  memory/<category>/*.md knowledge files);
- ``cowagent``: a CowAgent workspace (MEMORY.md, memory/YYYY-MM-DD.md daily memory,
  memory/dreams/YYYY-MM-DD.md dream diaries).

What they hold becomes:
- list items (and one-line paragraphs of Claude Code topic files) -> memories, through the
  normal write path (secret refusal, dedup, classification);
- daily logs -> the daily memory memory/YYYY-MM-DD.md;
- knowledge files, dream diaries and topic files -> kept verbatim as documents in the raw
  layer, searchable.
Pure reading: nothing here writes; `Memory.import_folder` does, idempotently.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memdream.importers.common import read_text
from memdream.model import lazyre as re

FOLDER_FORMATS = ("claude-code", "openclaw", "cowagent")
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_ITEM_CHARS = 1000  # a longer list item is a paragraph, not a memory: kept in the document only

_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_ITEM = re.compile(r"^\s{0,3}[-*+]\s+(?:\[[ xX]\]\s+)?(.+?)\s*$")
_LINK_ONLY = re.compile(r"^\[[^\]]*\]\([^)]*\)\s*(?:[-—–:]\s*.*)?$")  # "[Title](file.md) — what it is": an index line
_FRONTMATTER = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.S)
_META = re.compile(r"\s*<!--.*?-->\s*$")


@dataclass
class Item:
    text: str
    where: str  # file:line


@dataclass
class Folder:
    memories: list[Item] = field(default_factory=list)
    daily: list[tuple[str, str, str]] = field(default_factory=list)  # (YYYY-MM-DD, text, where)
    documents: list[tuple[str, str, str]] = field(default_factory=list)  # (name, text, where)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _clean(line: str) -> str:
    """A list item's text: markdown emphasis and a trailing HTML comment (another tool's metadata) removed."""
    text = _META.sub("", line).strip()
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text)
    return text.strip()


def list_items(text: str, where: str, paragraphs: bool = False) -> Iterator[Item]:
    """The list items of a Markdown text (outside code fences), as memories; with `paragraphs`,
    also one-line paragraphs (a topic file's facts)."""
    body = _FRONTMATTER.sub("", text, count=1)
    offset = text.count("\n", 0, len(text) - len(body))
    fenced = False
    lines = body.split("\n")
    for n, raw in enumerate(lines, 1 + offset):
        s = raw.rstrip()
        if s.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not s.strip():
            continue
        m = _ITEM.match(s)
        if m:
            item = _clean(m.group(1))
        elif paragraphs and not s.lstrip().startswith(("#", ">", "|", "<!--")) and not raw.startswith((" ", "\t")):
            i = n - 1 - offset
            alone_before = i == 0 or not lines[i - 1].strip() or lines[i - 1].lstrip().startswith("#")
            alone_after = i + 1 >= len(lines) or not lines[i + 1].strip()
            if not (alone_before and alone_after):
                continue  # part of a longer paragraph: it stays in the document
            item = _clean(s)
        else:
            continue
        if not item or _LINK_ONLY.match(item) or len(item) > MAX_ITEM_CHARS:
            continue
        yield Item(item, f"{where}:{n}")


def _read(path: Path, root: Path, out: Folder) -> str | None:
    rel = str(path.relative_to(root)) if path != root else path.name
    try:
        if path.is_symlink():
            out.skipped.append((rel, "a symlink; memdream does not follow it"))
            return None
        if path.stat().st_size > MAX_FILE_BYTES:
            out.skipped.append((rel, f"larger than {MAX_FILE_BYTES // 2**20} MiB"))
            return None
        return read_text(path)
    except OSError as exc:
        out.skipped.append((rel, f"cannot be read: {exc.strerror or exc}"))
        return None


def read_folder(fmt: str, path: Path) -> Folder:
    out = Folder()
    root = path if path.is_dir() else path.parent
    files = sorted(p for p in path.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(path).parts)) if path.is_dir() else [path]
    for f in files:
        text = _read(f, root, out)
        if text is None:
            continue
        rel = str(f.relative_to(root))
        parts = Path(rel).parts
        day = _DAY.match(f.name)
        if f.name in ("MEMORY.md", "CLAUDE.md", "memory.md") and len(parts) <= 2:
            out.memories += list(list_items(text, rel))
            out.documents.append((f"{fmt}-{'-'.join(parts)}", text, rel))
        elif fmt == "claude-code":
            out.memories += list(list_items(text, rel, paragraphs=True))
            out.documents.append((f"{fmt}-{'-'.join(parts)}", text, rel))
        elif day and "dreams" not in parts:
            out.daily.append((day.group(1), text, rel))
        elif f.name == "NOW.md" and len(parts) == 1:
            out.documents.append((f"{fmt}-NOW.md", text, rel))
        else:
            out.documents.append((f"{fmt}-{'-'.join(parts)}", text, rel))
    return out
