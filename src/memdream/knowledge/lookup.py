"""Lookup in three levels, cheapest first (DESIGN section 6; the OpenClaw L1/L2/L3):

1. index: INDEX.md's rows (title, file name, description) locate knowledge files;
2. file: the query names a file (its slug or path): read it;
3. search: full-text search over memories, knowledge files, daily logs and reflections
   (archived ones too with archive=True).

The answer says which level answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memdream.knowledge.base import Knowledge, NoteInfo
from memdream.knowledge.notes import paragraphs, parse_note
from memdream.model.tokens import query_tokens, tokens
from memdream.store.files import decode, read_file


@dataclass
class LookupResult:
    level: str  # "index", "file" or "search"
    files: list[str] = field(default_factory=list)
    text: str = ""  # the current paragraphs of the best file (levels index and file)
    hits: list[dict] = field(default_factory=list)  # level search: {kind, path, text, score}

    def to_json(self) -> dict:
        return {"level": self.level, "files": self.files, "text": self.text, "hits": self.hits}


def _read_current(k: Knowledge, info: NoteInfo) -> str:
    path = k.vault.root / info.path
    data, _ = read_file(path)
    note = parse_note(decode(data, path))
    live = [p.text for p in paragraphs(note.body) if not p.superseded]
    return "\n\n".join(live)


def lookup(k: Knowledge, query: str, search, archive: bool = False) -> LookupResult:  # type: ignore[no-untyped-def]
    notes = k.notes()
    q = query.strip()
    # Level 2 first when the query names a file exactly (it is then also what INDEX.md would say).
    named = [n for n in notes if q in (n.slug, n.path, f"[[{n.slug}]]")]
    if named:
        return LookupResult("file", [named[0].path], _read_current(k, named[0]))
    # Level 1: INDEX.md rows whose words cover the query's words best.
    want = set(query_tokens(q))
    scored = []
    for n in notes:
        have = set(tokens(f"{n.slug.replace('-', ' ')} {n.title} {n.description}"))
        overlap = len(want & have)
        if want and overlap / len(want) >= 0.5:
            scored.append((overlap, n))
    if scored:
        scored.sort(key=lambda x: (-x[0], x[1].path))
        best = scored[0][1]
        return LookupResult("index", [n.path for _, n in scored], _read_current(k, best))
    # Level 3: search.
    return LookupResult("search", hits=search(q, archive))
