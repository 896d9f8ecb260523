"""Read-then-write verification for knowledge files (DESIGN section 8; the OpenClaw CRUD).

Before a paragraph is added to a knowledge file, it is compared with what the file says:

- NOOP: an existing paragraph already says it (the same thing said again);
- CONFLICT: an existing paragraph on the same topic says the opposite (negation flipped);
- UPDATE: an existing paragraph on the same topic says something older (new details);
- ADD: nothing related is there.

Mechanical and deterministic: character-bigram similarity and negation cues, zh and en.
The zone between "related" and "unrelated" is ambiguous; a configured model may settle it
(`Decision.ambiguous`), the mechanical answer stands otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdream.model import lazyre as re
from memdream.model.contradiction import negation_count, without_negation
from memdream.model.similarity import DEDUP_THRESHOLD, content_words, is_duplicate, similarity

Kind = Literal["ADD", "UPDATE", "NOOP", "CONFLICT"]

RELATED = 0.3  # bigram similarity from which two paragraphs are about the same thing
AMBIGUOUS = (0.2, 0.4)  # a similarity in this band is worth a model's opinion, when there is one



_STOP_EN = re.compile(r"\b(?:stop(?:ped)?|avoid)\b", re.I)  # a rule's negation: "avoid X" against "use X"


def negated(text: str) -> bool:
    """Does the text carry a negation cue (an odd number of cues reads as negative)? The
    contradiction signals' count (model/contradiction.py: 非常, 不错 and a "no problem"
    answering thanks negate nothing), and "stop" or "avoid"."""
    return (negation_count(text) + len(_STOP_EN.findall(text))) % 2 == 1


@dataclass(frozen=True)
class Decision:
    kind: Kind
    target: int  # index of the paragraph it relates to, or -1
    similarity: float
    ambiguous: bool
    why: str


def decide(paragraphs: list[str], new: str) -> Decision:
    """Compare `new` with the file's current paragraphs (superseded ones left out by the caller)."""
    best, best_sim = -1, 0.0
    for i, p in enumerate(paragraphs):
        # Compare with negations removed, so "用方案A" and "不用方案A" look alike (and then conflict).
        s = max(similarity(new, p), similarity(without_negation(new), without_negation(p)))
        if s > best_sim:
            best, best_sim = i, s
    if best < 0 or best_sim < RELATED:
        amb = AMBIGUOUS[0] <= best_sim < AMBIGUOUS[1]
        return Decision("ADD", best if amb else -1, best_sim, amb, f"nothing related (similarity {best_sim:.2f})")
    old = paragraphs[best]
    amb = AMBIGUOUS[0] <= best_sim < AMBIGUOUS[1]
    if negated(new) != negated(old):
        return Decision("CONFLICT", best, best_sim, amb, "same topic, opposite polarity (a negation differs)")
    if best_sim > DEDUP_THRESHOLD and is_duplicate(new, old):
        return Decision("NOOP", best, best_sim, False, f"already said (similarity {best_sim:.2f})")
    if not (content_words(new) - content_words(old)) and best_sim > DEDUP_THRESHOLD:
        return Decision("NOOP", best, best_sim, False, "no new words")
    return Decision("UPDATE", best, best_sim, amb, f"same topic with new details (similarity {best_sim:.2f})")
