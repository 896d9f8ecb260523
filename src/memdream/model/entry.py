"""The memory entry: one line of Markdown, its types and layers (DESIGN sections 3 and 4).

Pure data, no I/O. An `Entry` is what one ``- text <!--m:...-->`` line means; where it
lives (its layer) is decided by the file it sits in, so ``layer`` is not part of the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

# Types and the layer each one lives in (DESIGN section 4). The caller never picks a file.
RULE, IDENTITY, INSTRUCTION, PREFERENCE, FACT, CONTEXT = (
    "rule",
    "identity",
    "instruction",
    "preference",
    "fact",
    "context",
)
TYPES: tuple[str, ...] = (RULE, IDENTITY, INSTRUCTION, PREFERENCE, FACT, CONTEXT)

RESIDENT, RECALL, ARCHIVE = "resident", "recall", "archive"
LAYERS: tuple[str, ...] = (RESIDENT, RECALL, ARCHIVE)

TYPE_LAYER: dict[str, str] = {
    RULE: RESIDENT,
    IDENTITY: RESIDENT,
    INSTRUCTION: RESIDENT,
    PREFERENCE: RESIDENT,
    FACT: RECALL,
    CONTEXT: RECALL,
}

# Importance prior per type (DESIGN section 4; the first source document's table).
TYPE_PRIOR: dict[str, float] = {
    RULE: 1.0,
    IDENTITY: 1.0,
    INSTRUCTION: 0.8,
    PREFERENCE: 0.6,
    FACT: 0.4,
    CONTEXT: 0.4,
}

# Where an entry came from (the `src` field).
SOURCES: tuple[str, ...] = ("user", "agent", "dream", "replay", "import", "manual")

# Why an entry stopped being valid (the `end` field; absent while valid).
END_SUPERSEDED, END_FORGOTTEN, END_MERGED, END_EXPIRED = "superseded", "forgotten", "merged", "expired"


def layer_for_type(type_: str) -> str:
    """The layer an entry of this type is written to; unknown or empty types are facts."""
    return TYPE_LAYER.get(type_, RECALL)


@dataclass(frozen=True)
class Entry:
    """One memory. Field names are the Python names; the line uses the short keys."""

    text: str
    id: str = ""
    type: str = ""
    subject: str = ""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    confidence: float | None = None
    hits: int = 0
    supersedes: str = ""
    source: str = ""
    pinned: bool = False
    created_at: datetime | None = None
    last_recalled: datetime | None = None
    salience: float = 0.0
    end: str = ""
    # The id of a valid entry this one contradicts (opposite polarity on the same topic), until resolved.
    conflicts_with: str = ""
    # The id of the entry that replaced this one when it ended by a merge (dreaming keeps one of
    # several near-duplicates, or merges a cluster into one new line: the sources point to it).
    superseded_by: str = ""
    # Why the entry waits for the user's confirmation before it may be resident ("" when it
    # does not): "unconfirmed" (an instruction or rule not from the user) or "injection"
    # (it tells the agent to send data somewhere or to ignore its instructions).
    pending: str = ""
    # Unknown key=value pairs found on the line, kept in order and written back unchanged.
    extra: tuple[tuple[str, str], ...] = ()
    # The list marker the line used ("-", "*" or "+"); kept so a hand-written line stays as typed.
    bullet: str = "-"
    # Where the entry sits; set by the reader from the file, never written into the line.
    layer: str = field(default="", compare=False)

    @property
    def effective_type(self) -> str:
        """The type used for scoring: an untyped line counts as a fact."""
        return self.type if self.type in TYPE_PRIOR else FACT

    def is_valid_at(self, when: datetime) -> bool:
        """Valid at `when`: started (or no start recorded) and not yet ended."""
        if self.valid_to is not None and when >= self.valid_to:
            return False
        if self.valid_from is not None and when < self.valid_from:
            return False
        return True

    @property
    def is_current(self) -> bool:
        """No end of validity recorded (the usual meaning of "currently valid")."""
        return self.valid_to is None

    def evolve(self, **changes: Any) -> "Entry":
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The public JSON shape (DESIGN section 10): names here are a contract."""

        def iso(d: datetime | None) -> str | None:
            return d.isoformat() if d is not None else None

        return {
            "id": self.id,
            "text": self.text,
            "type": self.effective_type,
            "layer": self.layer,
            "subject": self.subject,
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "supersedes": self.supersedes or None,
            "pinned": self.pinned,
            "hits": self.hits,
            "source": self.source,
            "confidence": self.confidence,
            "created_at": iso(self.created_at),
            "last_recalled": iso(self.last_recalled),
            "salience": self.salience,
            "end": self.end or None,
            "conflicts_with": self.conflicts_with or None,
            "superseded_by": self.superseded_by or None,
            "pending": self.pending or None,
        }
