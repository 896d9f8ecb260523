"""Markdown chat logs: turns start with "User:", "**Assistant:**", "### user", "用户：", ...

A file without any recognisable turn is kept whole as one "note" message: nothing is lost.
"""

from __future__ import annotations

from pathlib import Path

from memdream.importers.common import read_text
from memdream.model import lazyre as re
from memdream.store.transcripts import Message, Transcript

_ROLES = {
    "user": "user", "human": "user", "me": "user", "you": "user", "用户": "user", "我": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "claude": "assistant",
    "chatgpt": "assistant", "gpt": "assistant", "助手": "assistant", "system": "system",
}  # fmt: skip
_TURN = re.compile(
    r"^(?:#{1,6}\s*|>\s*)?(?:\*\*|__)?(" + "|".join(map(re.escape, _ROLES)) + r")(?:\*\*|__)?\s*(?:[:：]|(?:\*\*|__)?\s*[:：])?(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)


def _turn(line: str) -> tuple[str, str] | None:
    m = _TURN.match(line.strip())
    if not m:
        return None
    rest = m.group(2)
    has_colon = bool(re.search(r"[:：]", line.split(m.group(1), 1)[1][:6]))
    heading = line.lstrip().startswith("#")
    if not (has_colon or (heading and not rest)):
        return None
    return _ROLES[m.group(1).lower()], rest


def read_markdown(path: Path):  # type: ignore[no-untyped-def]
    text = read_text(path)
    messages: list[Message] = []
    role, buf = None, []
    for line in text.split("\n"):
        t = _turn(line)
        if t is not None:
            if role is not None and "\n".join(buf).strip():
                messages.append(Message(role, "\n".join(buf).strip("\n")))
            role, buf = t[0], ([t[1]] if t[1] else [])
        else:
            buf.append(line)
    if role is not None and "\n".join(buf).strip():
        messages.append(Message(role, "\n".join(buf).strip("\n")))
    if not messages:
        if not text.strip():
            return
        messages = [Message("note", text.strip("\n"))]
    yield Transcript("markdown", messages, title=path.stem, source_id=f"{path.stem}-{Transcript('markdown', messages).digest()[:8]}")
