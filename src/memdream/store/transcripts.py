"""The raw layer: conversation transcripts kept verbatim as Markdown (DESIGN sections 2 and 6).

    memory/sessions/YYYY-MM-DD/<session id>.md

    # Session 2026-06-01 · chatgpt · Trip planning
    <!-- memdream:transcript source=chatgpt; id=chatgpt-3f2a...; messages=12 -->

    ### user · 2026-06-01 09:00

    (the message, exactly as it was)

Transcripts are never injected automatically; they are searched on demand and by active
recall. They are written once through the writer and never rewritten.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from memdream.model import lazyre as re
from memdream.store.vault import SESSIONS_DIR, validate_name  # noqa: F401  (SESSIONS_DIR re-exported: its home is store/vault.py)

_MSG_HEAD = re.compile(r"^### (\S+?)(?: · (.+))?$")


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    at: datetime | None = None


@dataclass
class Transcript:
    source: str  # e.g. "jsonl", "chatgpt", "markdown", "chat"
    messages: list[Message]
    title: str = ""
    started_at: datetime | None = None
    source_id: str = ""  # the id the source gave it, if any
    meta: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        h = hashlib.blake2b(digest_size=8)
        for m in self.messages:
            h.update(m.role.encode() + b"\0" + m.content.encode("utf-8", "surrogatepass") + b"\0")
        return h.hexdigest()

    @property
    def session_id(self) -> str:
        """A stable file name: the source's id when it has a usable one, else a content hash."""
        base = re.sub(r"[^A-Za-z0-9._-]+", "-", self.source_id).strip("-.")[:48] if self.source_id else ""
        sid = f"{self.source}-{base}" if base else f"{self.source}-{self.digest()}"
        return validate_name(sid[:64], "session id")


def _clean_role(role: str) -> str:
    r = re.sub(r"\s+", "_", role.strip()) or "unknown"
    return r[:32]


def render(t: Transcript) -> str:
    when = f"{t.started_at:%Y-%m-%d}" if t.started_at else "undated"
    title = " ".join(t.title.split())[:120]
    head = f"# Session {when} · {t.source}" + (f" · {title}" if title else "")
    meta = f"<!-- memdream:transcript source={t.source}; id={t.session_id}; messages={len(t.messages)} -->"
    parts = [head, meta, ""]
    for m in t.messages:
        stamp = f" · {m.at:%Y-%m-%d %H:%M}" if m.at else ""
        parts.append(f"### {_clean_role(m.role)}{stamp}")
        parts.append("")
        # A line that would read as a message heading is indented so the transcript parses back.
        body = "\n".join((" " + ln if _MSG_HEAD.match(ln) else ln) for ln in m.content.split("\n"))
        parts.append(body)
        parts.append("")
    return "\n".join(parts)


@dataclass(frozen=True)
class Chunk:
    """A searchable piece of a transcript: one message, or a paragraph of a free-form file."""

    seq: int
    role: str
    at: str
    text: str


MAX_CHUNK_CHARS = 1200  # longer messages are split at paragraph boundaries


def chunks(text: str) -> list[Chunk]:
    """Split a transcript file into chunks. Files written by hand (no ### role headings)
    are split into paragraphs."""
    out: list[Chunk] = []
    role, at, buf = "", "", []

    def flush() -> None:
        body = "\n".join(buf).strip()
        if not body:
            return
        for piece in _split(body):
            out.append(Chunk(len(out), role, at, piece))

    for line in text.split("\n"):
        m = _MSG_HEAD.match(line)
        if m:
            flush()
            role, at, buf = m.group(1), m.group(2) or "", []
        elif line.startswith("# Session ") or line.startswith("<!-- memdream:transcript"):
            continue
        else:
            buf.append(line)
    flush()
    return out


def _split(body: str) -> list[str]:
    if len(body) <= MAX_CHUNK_CHARS:
        return [body]
    pieces, cur = [], ""
    for para in re.split(r"\n\s*\n", body):
        if cur and len(cur) + len(para) + 2 > MAX_CHUNK_CHARS:
            pieces.append(cur)
            cur = ""
        while len(para) > MAX_CHUNK_CHARS:
            pieces.append(para[:MAX_CHUNK_CHARS])
            para = para[MAX_CHUNK_CHARS:]
        cur = f"{cur}\n\n{para}" if cur else para
    if cur:
        pieces.append(cur)
    return pieces
