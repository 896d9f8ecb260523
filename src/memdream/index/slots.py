"""The write path's slot search: which current entry states the slot a new text states.

A memory written without an explicit subject takes the subject of the current entry that
states the same slot (model/slots.py), and when it gives that entry's value again it is a
restatement (the entry is refreshed, no line added). The candidates are the scope's current
entries that carry a subject (a short list: subjects are personal facts), read with one
indexed query; an embedder, when configured, orders them nearest first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memdream.index.db import Index, Row
from memdream.model.entry import ARCHIVE
from memdream.model.slots import Slot, same_value, slot_of, states_slot, subject_slot
from memdream.store.vault import Scope

MAX_SUBJECT_ROWS = 2000  # current entries with a subject read per write (a personal memory has far fewer)


@dataclass(frozen=True)
class SlotMatch:
    subject: str
    slot: Slot
    restates: Row | None  # a current entry of the subject giving the same value, if any


def find_slot(index: Index, scope: Scope, text: str, order: Callable[[list[Row]], list[Row]] | None = None) -> SlotMatch | None:
    """The subject whose slot `text` states, and the entry it restates (None when no slot fits)."""
    rows = index._rows(
        index._ROW + " WHERE e.scope = ? AND e.subject > '' AND e.vt IS NULL AND e.layer != ? ORDER BY e.vf DESC, e.rowid DESC LIMIT ?",
        (scope.key, ARCHIVE, MAX_SUBJECT_ROWS),
    )
    if not rows:
        return None
    if order is not None:
        rows = order(rows)
    new_slot = slot_of(text)
    for row in rows:
        e = row.entry()
        found = states_slot(text, new_slot, e.text, e.subject)
        if found is None:
            continue
        for other in [r for r in rows if r.entry().subject == e.subject]:
            o = other.entry()
            theirs = subject_slot(o.text, o.subject)
            if theirs is not None and same_value(text, o.text, found, theirs):
                return SlotMatch(e.subject, found, other)
        if not found.multi:
            return SlotMatch(e.subject, found, None)
    return None
