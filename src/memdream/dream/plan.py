"""What a dream phase proposes: typed operations, applied only by dream/apply.py.

Phases plan; they never write. Every operation names the entries it touches as the phase
saw them, so the applier can refuse an operation whose entry changed in the meantime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memdream.model.entry import RECALL, Entry

PHASES = ("light", "deep", "distill", "replay", "profile")  # in the order a dream runs them
LLM_PHASES = frozenset({"deep", "distill", "replay", "profile"})  # off until a model is configured


@dataclass(frozen=True)
class Move:
    """Move an entry's line to another layer, text unchanged (archive, promote, demote); the
    marks (end of validity, merged into) are set on the way."""

    entry: Entry
    path: str  # where the line is, relative to the vault
    to: str  # the layer it goes to
    kind: str  # archive | promote | demote | supersede | retire
    reason: str
    valid_to: datetime | None = None
    end: str = ""
    superseded_by: str = ""
    rule: str = ""  # the lifecycle table's state that decided it (the diary groups by it)


@dataclass(frozen=True)
class Merge:
    """A new line that replaces its sources (deep merge, distillation merge or update): the
    sources stay, marked ended with `by` pointing to the new line."""

    sources: tuple[Entry, ...]
    text: str
    type: str
    subject: str
    reason: str
    layer: str = RECALL
    end: str = "merged"  # how the sources end: merged, or superseded (an update on conflict)


@dataclass(frozen=True)
class Remember:
    """A memory through the normal write path (dedup, supersede by subject, secret refusal)."""

    text: str
    reason: str
    type: str | None = None
    subject: str | None = None
    pin: bool = False
    source: str = "dream"


@dataclass(frozen=True)
class Drop:
    """Remove a line whose identical copy (same id, same text) sits in another file: what a
    move interrupted between its copy and its removal leaves behind. The id stays."""

    entry: Entry
    path: str
    reason: str
    kind: str = "heal"
    rule: str = ""


Op = Move | Merge | Remember | Drop

UNCHANGED = "Skipped: nothing new since the last run."


@dataclass(frozen=True)
class Rejected:
    """A proposal the engine refused, and why (the diary names each one)."""

    what: str
    why: str


@dataclass
class Plan:
    phase: str
    ops: list[Op] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was found, in words
    status: str = ""  # set when the phase did not run (no model, nothing new, ...)
    tokens: tuple[int, int] = (0, 0)  # prompt, completion tokens spent
    model: str = ""
    seconds: float = 0.0
    inputs: str = ""  # hash of what the phase read: an unchanged input is skipped next time
    seen: int = 0  # entries the phase looked at
    replayed: list[str] = field(default_factory=list)  # transcripts read (replay, flush)
    declined: list[str] = field(default_factory=list)  # groups the model left alone (deep): not shown again
