"""Temperature and weekly GC of the knowledge vault (DESIGN section 8; the OpenClaw rules).

    temperature = 0.5 x exp(-0.03 x age_days) + 0.3 x min(refs_7d / 3, 1) + 0.2 x priority
    priority: 🔴 1.0, 🟡 0.5, ⚪ 0;  hot > 0.7, warm 0.3 .. 0.7, cold <= 0.3

GC moves to memory/.archive/ (never deletes):
- daily logs older than 30 days with no reference in the last 7 days, if already reflected
  (a reflections/<date>.md exists); otherwise the log gets an [UNREFLECTED] line and stays;
- reflections older than 30 days;
- actions/done/ cards older than 14 days.
Never archived: decisions, people, projects, preferences, 🔴 lessons. Cold 🟡/⚪ lessons get
the tag COLD instead of a move.

References are wiki-links [[name]] and date mentions (YYYY-MM-DD) in files dated within the
last 7 days (by their name, or their frontmatter's last_verified/date): a pure function of
the files and the clock, so a frozen clock gives the same plan every time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memdream.errors import MemdreamError
from memdream.knowledge.notes import as_date, parse_note, render_note
from memdream.model import lazyre as re
from memdream.store.files import decode, read_file
from memdream.store.vault import ARCHIVE_DIR, INDEX_FILE, REFLECTIONS_DIR

LOG_MAX_DAYS = 30  # daily logs older than this may be archived ...
REF_WINDOW_DAYS = 7  # ... unless referenced by a file dated within this window
REFLECTION_MAX_DAYS = 30
DONE_MAX_DAYS = 14
PRIORITY_SCORE = {"🔴": 1.0, "🟡": 0.5, "⚪": 0.0}
HOT, COLD = 0.7, 0.3
NEVER_ARCHIVED = ("decisions", "people", "projects", "preferences")
UNREFLECTED = "> [UNREFLECTED]"

_DATE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def temperature(age_days: float, refs_7d: int, priority: str) -> float:
    return 0.5 * math.exp(-0.03 * max(0.0, age_days)) + 0.3 * min(refs_7d / 3, 1.0) + 0.2 * PRIORITY_SCORE.get(priority, 0.5)


def band(t: float) -> str:
    return "hot" if t > HOT else ("cold" if t <= COLD else "warm")


def file_date(path: Path, text: str) -> date | None:
    """The date a file stands for: its name (YYYY-MM-DD...), else its frontmatter."""
    m = _DATE_NAME.match(path.name)
    if m:
        try:
            return date.fromisoformat(m.group(1))
        except ValueError:
            pass
    if text.startswith("---"):
        note = parse_note(text)
        for key in ("last_verified", "date", "done"):
            d = as_date(note.meta.get(key))
            if d is not None:
                return d
    return None


@dataclass(frozen=True)
class Move:
    src: Path
    dst: Path
    why: str


@dataclass
class Plan:
    moves: list[Move]
    unreflected: list[Path]  # logs that get the [UNREFLECTED] line
    cold: list[Path]  # lessons that get the COLD tag
    kept: list[tuple[Path, str]]  # notable files left alone, and why

    def lines(self, root: Path) -> list[str]:
        rel = lambda p: str(p.relative_to(root))  # noqa: E731
        out = [f"move {rel(m.src)} -> {rel(m.dst)}  ({m.why})" for m in self.moves]
        out += [f"mark {rel(p)} [UNREFLECTED]  (older than {LOG_MAX_DAYS} days, no reflection yet: kept)" for p in self.unreflected]
        out += [f"tag  {rel(p)} COLD  (temperature <= {COLD}; lessons are tagged, not moved)" for p in self.cold]
        out += [f"keep {rel(p)}  ({why})" for p, why in self.kept]
        return out


def _text(p: Path) -> str | None:
    """A knowledge file's text; None for what gc never opens (a FIFO, folder, link: doctor names them)."""
    try:
        data, state = read_file(p)
    except (MemdreamError, OSError):
        return None
    return decode(data, p) if state.exists else None


def recent_files(memory_dir: Path, today: date) -> dict[Path, str]:
    """The text of every file dated within the reference window, read once per plan (reading
    them again for each candidate made a year of logs take seconds)."""
    out = {}
    for p in memory_dir.rglob("*.md"):
        if ARCHIVE_DIR in p.parts or p.name.startswith(".") or p.name == INDEX_FILE:
            continue
        text = _text(p)
        if text is None:
            continue
        d = file_date(p, text)
        if d is not None and 0 <= (today - d).days <= REF_WINDOW_DAYS:
            out[p] = text
    return out


def references(recent: dict[Path, str], exclude: Path) -> str:
    """The text of the recent files, except `exclude` (a file does not reference itself)."""
    return "\n".join(text for p, text in recent.items() if p != exclude)


def count_refs(name: str, corpus: str) -> int:
    return corpus.count(f"[[{name}]]") + (len(re.findall(re.escape(name), corpus)) if _DATE_NAME.match(name) else 0)


def plan(memory_dir: Path, today: date) -> Plan:
    pl = Plan([], [], [], [])
    archive = memory_dir / ARCHIVE_DIR
    recent = recent_files(memory_dir, today)
    # Daily logs.
    for p in sorted(memory_dir.glob("*.md")):
        m = _DATE_NAME.match(p.name)
        if not m or p.stem != m.group(1):
            continue
        age = (today - date.fromisoformat(m.group(1))).days
        if age <= LOG_MAX_DAYS:
            continue
        refs = count_refs(p.stem, references(recent, p))
        if refs:
            pl.kept.append((p, f"referenced {refs} time(s) in the last {REF_WINDOW_DAYS} days"))
        elif (memory_dir / REFLECTIONS_DIR / p.name).exists() or (archive / REFLECTIONS_DIR / p.name).exists():
            pl.moves.append(Move(p, archive / p.name, f"daily log, {age} days old, reflected, no recent reference"))
        elif UNREFLECTED not in (_text(p) or UNREFLECTED):
            pl.unreflected.append(p)
    # Reflections.
    for p in sorted((memory_dir / REFLECTIONS_DIR).glob("*.md")) if (memory_dir / REFLECTIONS_DIR).is_dir() else []:
        d = file_date(p, "")
        if d and (today - d).days > REFLECTION_MAX_DAYS:
            pl.moves.append(Move(p, archive / REFLECTIONS_DIR / p.name, f"reflection, {(today - d).days} days old"))
    # Finished actions.
    done = memory_dir / "actions" / "done"
    for p in sorted(done.glob("*.md")) if done.is_dir() else []:
        if (text := _text(p)) is None:
            continue
        d = file_date(p, text)
        if d and (today - d).days > DONE_MAX_DAYS:
            pl.moves.append(Move(p, archive / "actions" / "done" / p.name, f"done action, {(today - d).days} days old"))
        elif d is None:
            pl.kept.append((p, "no date in its name or frontmatter"))
    # Lessons: never moved; cold 🟡/⚪ ones are tagged.
    lessons = memory_dir / "lessons"
    for p in sorted(lessons.glob("*.md")) if lessons.is_dir() else []:
        if (text := _text(p)) is None:
            continue
        note = parse_note(text)
        if note.priority == "🔴":
            continue
        created = file_date(p, "") or as_date(note.meta.get("date")) or today
        t = temperature((today - created).days, count_refs(p.stem, references(recent, p)), note.priority)
        tags = [str(x) for x in (note.meta.get("tags") or [])]
        if band(t) == "cold" and "COLD" not in tags:
            pl.cold.append(p)
    return pl


def tag_cold(text: str) -> str:
    note = parse_note(text)
    tags = [str(x) for x in (note.meta.get("tags") or [])]
    note.meta["tags"] = [*tags, "COLD"]
    return render_note(note)


def unreflected_line(today: date) -> str:
    return f"\n{UNREFLECTED} kept by memdream gc on {today.isoformat()}: no reflection for this day yet\n"

