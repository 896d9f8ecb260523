"""Recall collapses a slot: among the hits of one subject, the current value comes first.

A subject (a personal slot: home city, employer, ...) has one current value, possibly said
in several lines (restatements that kept their subject). Superseded lines are not valid, so
recall never returns them (an `as_of` query still sees them: it is not collapsed). Among the
valid hits of one subject, the newest line takes the place of the best-ranked one and the
others follow it, so the current value is never ranked below an older wording of the slot.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memdream.recall.search import Hit

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


def collapse(hits: list[Hit]) -> list[Hit]:
    """The hits with each subject's newest valid line first at the group's best place."""
    groups: dict[str, list[Hit]] = {}
    for h in hits:
        if h.entry.subject and h.entry.valid_to is None:
            groups.setdefault(h.entry.subject, []).append(h)
    if all(len(g) < 2 for g in groups.values()):
        return hits
    out: list[Hit] = []
    placed: set[str] = set()
    for h in hits:
        subj = h.entry.subject
        if subj in groups and len(groups[subj]) > 1 and h.entry.valid_to is None:
            if subj in placed:
                continue
            placed.add(subj)
            g = groups[subj]
            newest = max(g, key=lambda x: (x.entry.valid_from or x.entry.created_at or _EARLIEST))
            out.append(newest)
            out.extend(x for x in g if x is not newest)
        else:
            out.append(h)
    return out
