"""Small helpers shared by the importers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

MAX_IMPORT_BYTES = 512 * 1024 * 1024  # a bigger file is refused with a hint instead of exhausting memory
# One imported message, daily log or document. The secret scan runs over each before it is
# stored and costs about 2.5 s per million characters: a bigger one is skipped (with this
# reason) before the scan, instead of stalling the import. 500,000 characters is a book
# chapter, far longer than any chat message or daily log.
MAX_IMPORT_TEXT_CHARS = 500_000


@dataclass(frozen=True)
class Skipped:
    where: str
    why: str


def read_text(path: Path) -> str:
    """UTF-8 (with or without BOM); undecodable bytes become U+FFFD instead of failing the import."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def parse_when(value: object) -> datetime | None:
    """Epoch seconds (int/float/str) or ISO 8601; None when absent or unreadable."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)) or (isinstance(value, str) and value.replace(".", "", 1).isdigit()):
            x = float(value)
            if x > 1e12:  # milliseconds
                x /= 1000.0
            return datetime.fromtimestamp(x, tz=timezone.utc)
        if isinstance(value, str):
            d = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return d if d.tzinfo else d.replace(tzinfo=timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return None
