"""The checks every text passes before it reaches a file: one line, bounded, no credential."""

from __future__ import annotations

import unicodedata
from datetime import date

from memdream.errors import RefusedInput
from memdream.model import lazyre as re
from memdream.store.format import LINE_BREAKS
from memdream.model.secrets import refuse_secret as no_secret  # noqa: F401 - the engine's name for it

MAX_SUBJECT_CHARS = 100
_BREAK = re.compile("[" + re.escape(LINE_BREAKS) + "]+")


def check_text(text: str, max_chars: int) -> str:
    """The memory text, stripped, its line breaks joined into one line; RefusedInput (with what
    to do) if it is empty, too long or holds another control character."""
    if not isinstance(text, str):
        raise RefusedInput("the memory text must be a string", "pass the text as a plain string")
    text = text.strip()
    if any(ch in LINE_BREAKS for ch in text):
        # A memory is one line: a text said over several lines (an agent's note, a chat message
        # with a list) is kept, its lines joined with a space, rather than refused and lost.
        text = " ".join(part.strip() for part in _BREAK.split(text) if part.strip())
    if not text:
        raise RefusedInput("the memory text is empty", "say what to remember, e.g. memdream remember \"I prefer dark themes\"")
    if len(text) > max_chars:
        raise RefusedInput(
            f"the memory text is {len(text)} characters long (at most {max_chars})",
            "store one fact per memory, or keep longer notes with 'memdream log'",
        )
    bad = [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs") and ch != "\t"]
    if bad:
        raise RefusedInput(
            f"the memory text contains the control character {bad[0]!r}",
            "remove it: a memory is plain text",
        )
    return text


def check_subject(subject: str) -> None:
    if len(subject) > MAX_SUBJECT_CHARS or any(unicodedata.category(c) == "Cc" for c in subject.strip()):
        raise RefusedInput("the subject must be one short line", f"use at most {MAX_SUBJECT_CHARS} characters")


def parse_day(text: str | None, what: str = "the day") -> date | None:
    """A YYYY-MM-DD date (None for none); RefusedInput saying the form otherwise."""
    if text is None or text == "":
        return None
    try:
        return date.fromisoformat(str(text).strip())
    except ValueError as exc:
        raise RefusedInput(f"cannot read {what} {text!r}", "give it as YYYY-MM-DD, e.g. 2026-06-01") from exc
