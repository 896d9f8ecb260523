"""Conflicts inside knowledge files: a paragraph added under a "> ⚠️ CONFLICT (DATE)" marker
because it contradicts an earlier one, how each is found, and how `memdream resolve`
settles it (the losing paragraph is marked superseded, never deleted).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memdream.knowledge.notes import CONFLICT_RE, Note, Paragraph, append_paragraph, mark_superseded, paragraphs, parse_note, render_note
from memdream.model.similarity import similarity

KEEP = ("a", "b", "both", "edit")  # a keeps the older text, b the newer, edit replaces both


@dataclass(frozen=True)
class Conflict:
    id: str
    path: str
    day: str
    a: str  # the older text
    b: str  # the newer text that contradicts it
    kind: str = "knowledge"  # or "entry": two memories (b carries cf=<a's id>)
    a_source: str = ""  # where a is (entries: its file and id)

    def to_json(self) -> dict:
        return {"id": self.id, "path": self.path, "date": self.day, "a": self.a, "b": self.b, "kind": self.kind, "a_source": self.a_source or self.path}


def note_conflicts(rel_path: str, note: Note) -> list[Conflict]:
    """The open conflicts of one knowledge file (`rel_path`: its path in the vault)."""
    found = []
    paras = paragraphs(note.body)
    lines = note.body.split("\n")
    for i, p in enumerate(paras):
        if not p.conflict:
            continue
        a = counterpart(paras[:i], p)
        day = CONFLICT_RE.match(lines[p.end]).group(1)  # type: ignore[union-attr]
        cid = "k" + hashlib.blake2b(f"{rel_path}\0{p.text}".encode(), digest_size=4).hexdigest()
        found.append(Conflict(cid, rel_path, day, a.text if a else "", p.text))
    return found


def resolved(old: str, b_text: str, keep: str, text: str | None, today: str) -> str | None:
    """The knowledge file `old` with the conflict of paragraph `b_text` settled as `keep`
    says, or None if that conflict is no longer open in it."""
    note = parse_note(old)
    paras = paragraphs(note.body)
    b = next((p for p in paras if p.conflict and p.text == b_text), None)
    if b is None:
        return None
    a = counterpart([p for p in paras if p.start < b.start], b)
    lines = note.body.split("\n")
    lines[b.end] = f"> [Resolved {today}: kept {keep}]"
    body = "\n".join(lines)
    # Mark from the bottom up so line numbers above stay valid.
    targets = {"a": [b], "b": [a], "both": [], "edit": [b, a]}[keep]
    for p in sorted((t for t in targets if t is not None), key=lambda t: -t.start):
        body = mark_superseded(body, p, today)
    if keep == "edit":
        body = append_paragraph(body, text or "")
    note.body = body
    note.meta["last_verified"] = today
    note.meta["status"] = "conflict" if open_conflicts(body) else "active"
    return render_note(note)


def counterpart(earlier: list[Paragraph], p: Paragraph) -> Paragraph | None:
    """The live paragraph before `p` that `p` contradicts: the most similar one."""
    live = [q for q in earlier if not q.superseded]
    return max(live, key=lambda q: similarity(q.text, p.text), default=None)


def open_conflicts(body: str) -> bool:
    return any(p.conflict for p in paragraphs(body))
