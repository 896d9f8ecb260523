"""Knowledge files: Markdown with YAML frontmatter under memory/{lessons,decisions,people,projects,preferences}/.

    ---
    title: "部署流程"
    date: 2026-02-13
    category: lessons
    priority: 🔴
    status: active
    last_verified: 2026-02-26
    tags: [deploy]
    ---

    部署时先备份数据库，再升级。

    > [Superseded 2026-02-26]
    旧的做法……

    新的做法……
    > ⚠️ CONFLICT (2026-02-27): 与上方内容矛盾，待人工裁决

The body is append-only for the machine: a paragraph is never rewritten, only marked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memdream.errors import RefusedInput
from memdream.model import lazyre as re

CATEGORIES = ("lessons", "decisions", "people", "projects", "preferences")
PRIORITIES = ("🔴", "🟡", "⚪")
STATUSES = ("active", "superseded", "conflict")
FIELD_ORDER = ("title", "date", "category", "priority", "status", "last_verified", "tags")
STALE_DAYS = 30  # a file not verified for this long is flagged stale in INDEX.md

SUPERSEDED_RE = re.compile(r"^> \[Superseded (\d{4}-\d{2}-\d{2})\]\s*$")
CONFLICT_RE = re.compile(r"^> ⚠️ CONFLICT \((\d{4}-\d{2}-\d{2})\)(?::.*)?$")
RESOLVED_RE = re.compile(r"^> \[Resolved (\d{4}-\d{2}-\d{2}): kept (a|b|both|edit)\]\s*$")
_SLUG_DROP = re.compile(r"[^\w\u4e00-\u9fff-]+")


def slugify(topic: str) -> str:
    """A file name for a topic: letters (any script), digits, '-'; nothing that leaves the folder."""
    slug = _SLUG_DROP.sub("-", topic.strip().lower()).strip("-_.")[:60]
    slug = re.sub(r"-{2,}", "-", slug)
    if not slug:
        raise RefusedInput(f"the topic {topic!r} has no letters or digits", "name the topic, e.g. 'deploy' or '部署流程'")
    return slug


@dataclass
class Note:
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    has_frontmatter: bool = True

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "active"))

    @property
    def priority(self) -> str:
        p = str(self.meta.get("priority", "🟡"))
        return p if p in PRIORITIES else "🟡"

    @property
    def last_verified(self) -> date | None:
        return as_date(self.meta.get("last_verified")) or as_date(self.meta.get("date"))

    @property
    def title(self) -> str:
        return str(self.meta.get("title", ""))


def as_date(v: Any) -> date | None:
    """A frontmatter value as a date (YAML gives dates; hand edits may give strings), or None."""
    if isinstance(v, date):
        return v
    try:
        return date.fromisoformat(str(v)[:10]) if v else None
    except ValueError:
        return None


def parse_note(text: str) -> Note:
    """Split the frontmatter (YAML, read with python-frontmatter's handler) from the body, kept exactly."""
    from frontmatter.default_handlers import YAMLHandler

    if text.startswith("---\n") or text.startswith("---\r\n"):
        end = re.search(r"^---\s*$", text[4:], re.M)
        if end:
            head = text[4 : 4 + end.start()]
            body = text[4 + end.end() :]
            body = body[1:] if body.startswith("\n") else body
            try:
                meta = YAMLHandler().load(head) or {}
            except Exception:  # noqa: BLE001 - a broken header must not lose the file: keep it as body
                return Note({}, text, False)
            if isinstance(meta, dict):
                return Note(dict(meta), body, True)
    return Note({}, text, False)


def _scalar(v: Any) -> str:
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    s = str(v)
    if s in PRIORITIES or re.fullmatch(r"[\w\u4e00-\u9fff.-]+", s) and s.lower() not in ("yes", "no", "true", "false", "null", "on", "off"):
        return s
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def render_note(note: Note) -> str:
    from frontmatter.default_handlers import YAMLHandler

    known = [k for k in FIELD_ORDER if k in note.meta]
    lines = [f"{k}: {_scalar(note.meta[k])}" for k in known]
    rest = {k: v for k, v in note.meta.items() if k not in FIELD_ORDER}
    if rest:
        lines.append(YAMLHandler().export(rest, sort_keys=False, allow_unicode=True).rstrip("\n"))
    return "---\n" + "\n".join(lines) + "\n---\n\n" + note.body.lstrip("\n")


@dataclass(frozen=True)
class Paragraph:
    start: int  # line index in the body (0-based), first line of text
    end: int  # one past the last line
    text: str
    superseded: bool
    conflict: bool  # this paragraph carries an open CONFLICT marker below it


def paragraphs(body: str) -> list[Paragraph]:
    """Text blocks of the body, with their markers; headings and marker lines are not paragraphs."""
    lines = body.split("\n")
    out: list[Paragraph] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].startswith("#") or _is_marker(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("#") and not _is_marker(lines[i]):
            i += 1
        text = "\n".join(lines[start:i]).strip()
        above = _marker_above(lines, start)
        below = lines[i] if i < len(lines) else ""
        out.append(Paragraph(start, i, text, bool(above and SUPERSEDED_RE.match(above)), bool(CONFLICT_RE.match(below))))
    return out


def _is_marker(line: str) -> bool:
    return bool(SUPERSEDED_RE.match(line) or CONFLICT_RE.match(line) or RESOLVED_RE.match(line))


def _marker_above(lines: list[str], start: int) -> str:
    return lines[start - 1] if start > 0 and _is_marker(lines[start - 1]) else ""


def mark_superseded(body: str, p: Paragraph, day: str) -> str:
    lines = body.split("\n")
    lines.insert(p.start, f"> [Superseded {day}]")
    return "\n".join(lines)


def append_paragraph(body: str, text: str, conflict_day: str | None = None) -> str:
    base = body.rstrip("\n")
    out = (base + "\n\n" if base else "") + text.strip() + "\n"
    if conflict_day:
        out += f"> ⚠️ CONFLICT ({conflict_day}): 与上方内容矛盾，待人工裁决 / contradicts the text above, waiting for a person to decide\n"
    return out
