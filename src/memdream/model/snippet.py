"""A passage of a stored transcript (the raw layer), as search over transcripts returns it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snippet:
    """A passage from a stored transcript (the raw layer)."""

    path: str
    session: str
    role: str
    text: str
    score: float
    at: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "session": self.session, "role": self.role, "text": self.text, "score": round(self.score, 4), "at": self.at}
