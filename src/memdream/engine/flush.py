"""The part of a chat that was trimmed, kept verbatim in the raw layer before the daily
flush (dream/flush.py) summarizes it: nothing is lost without a model, or when it fails."""

from __future__ import annotations

from memdream.core import Core
from memdream.model.secrets import redact
from memdream.store.transcripts import Message, Transcript
from memdream.store.transcripts import render as render_transcript


def store_trimmed(core: Core, messages: list[dict]) -> str | None:
    """Write `messages` (role/content dicts; credentials redacted, empty ones left out) as one
    transcript; returns its path in the vault, or None when no message had text."""
    now = core.clock.now()
    msgs = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not m["content"].strip():
            continue
        msgs.append(Message(str(m.get("role") or "user"), redact(m["content"])[0]))
    if not msgs:
        return None
    t = Transcript("chat", msgs, title="trimmed context", started_at=now, source_id=f"{now:%Y%m%d-%H%M%S}")
    target = core.vault.sessions_dir(core.scope) / f"{now:%Y-%m-%d}" / f"{t.session_id}-{t.digest()[:6]}.md"
    text = render_transcript(t)
    core.writer.write_text(target, lambda old: text if old is None else None)
    return core.vault.relpath(target)

