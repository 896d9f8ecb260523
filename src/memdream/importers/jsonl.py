"""JSONL messages: one JSON object per line with "role" and "content" (OpenAI chat style).

Optional per line: a time ("timestamp", "time", "created_at" or "ts") and a conversation
key ("session", "session_id", "conversation_id", "thread"): lines with different keys
become different transcripts. "content" may also be a list of {"type": "text", "text": ...}.
"""

from __future__ import annotations

import json
from pathlib import Path

from memdream.importers.common import parse_when, read_text
from memdream.store.transcripts import Message, Transcript

_TIME_KEYS = ("timestamp", "time", "created_at", "ts")
_SESSION_KEYS = ("session", "session_id", "conversation_id", "thread")


def _content(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text", "") for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
        texts += [p for p in value if isinstance(p, str)]
        return "\n".join(t for t in texts if t) or None
    return None


def read_jsonl(path: Path):  # type: ignore[no-untyped-def]
    from memdream.importers.common import Skipped

    sessions: dict[str, list[Message]] = {}
    for n, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            yield Skipped(f"{path}:{n}", f"not JSON ({exc.msg})")
            continue
        if not isinstance(rec, dict):
            yield Skipped(f"{path}:{n}", "not a JSON object")
            continue
        role, content = rec.get("role"), _content(rec.get("content"))
        if not isinstance(role, str) or content is None:
            yield Skipped(f"{path}:{n}", "needs a string 'role' and a text 'content'")
            continue
        key = next((str(rec[k]) for k in _SESSION_KEYS if rec.get(k) not in (None, "")), "")
        at = next((parse_when(rec[k]) for k in _TIME_KEYS if k in rec), None)
        sessions.setdefault(key, []).append(Message(role, content, at))
    for key, messages in sessions.items():
        started = next((m.at for m in messages if m.at), None)
        yield Transcript("jsonl", messages, title=key or path.stem, started_at=started, source_id=key)
