"""The raw layer's index: transcript chunks with the same Chinese-aware full text as entries."""

from __future__ import annotations

import os
from pathlib import Path

from memdream.model import lazyre as re
from memdream.model.secrets import shown_text
from memdream.index.db import Index
from memdream.index.fts import index_text, match_expression
from memdream.model.tokens import query_terms
from memdream.model.snippet import Snippet
from memdream.store.transcripts import chunks
from memdream.store.vault import ARCHIVE_DIR, REFLECTIONS_DIR, SESSIONS_DIR, Scope
from memdream.store.files import decode, read_file

SNIPPET_CHARS = 300  # how much of a chunk a search result shows


KNOWLEDGE_DIRS = ("lessons", "decisions", "people", "projects", "preferences")
_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


def doc_kind(rel_in_memory: str) -> tuple[str, bool] | None:
    """(kind, archived) of a file under memory/, or None if it is not a searchable document."""
    parts = rel_in_memory.split("/")
    archived = parts[0] == ARCHIVE_DIR
    if archived:
        parts = parts[1:]
        if parts and parts[0] == "entries":
            return None  # archived entries are indexed as entries
    if not parts or any(p.startswith(".") for p in parts) or not parts[-1].endswith(".md"):
        return None
    if parts[0] == SESSIONS_DIR:
        return "session", archived
    if len(parts) == 1 and _LOG_NAME.match(parts[0]):
        return "log", archived
    if parts[0] in KNOWLEDGE_DIRS and len(parts) == 2:
        return "note", archived
    if parts[0] == REFLECTIONS_DIR and len(parts) == 2:
        return "reflection", archived
    return None


def transcript_files(index: Index, scope: Scope) -> list[tuple[str, str, bool]]:
    """(relative path, kind, archived) of the scope's searchable documents: transcripts,
    daily logs, knowledge files and reflections, archived ones included."""
    root = index.vault.memory_dir(scope)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") or d == ".archive")
        for f in sorted(filenames):
            p = Path(dirpath) / f
            kind = doc_kind(str(p.relative_to(root)).replace(os.sep, "/"))
            if kind and index.vault.is_inside(p):
                out.append((index.rel(p), kind[0], kind[1]))
    return out


def sync_raw(index: Index, scope: Scope) -> int:
    db = index.db
    known = {r[0]: (r[1], r[2], r[3]) for r in db.execute("SELECT path, mtime_ns, size, ino FROM raw_files WHERE scope = ?", (scope.key,))}
    changed = 0
    docs = transcript_files(index, scope)
    present = [rel for rel, _, _ in docs]
    kinds = {rel: (kind, archived) for rel, kind, archived in docs}
    root = index.vault.root
    for rel in present:
        path = root / rel
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if known.get(rel) == (st.st_mtime_ns, st.st_size, st.st_ino):
            continue
        data, state = read_file(path)
        if not state.exists:
            continue
        pieces = chunks(decode(data, path))
        with index.transaction() as tx:
            row = tx.execute("SELECT hash FROM raw_files WHERE path = ?", (rel,)).fetchone()
            if row is None or row[0] != state.sha:
                _drop(tx, rel)
                kind, archived = kinds[rel]
                for c in pieces:
                    cur = tx.execute(
                        "INSERT INTO raw_chunks(path, scope, seq, role, at, text, kind, archived) VALUES (?,?,?,?,?,?,?,?)",
                        (rel, scope.key, c.seq, c.role, c.at, c.text, kind, int(archived)),
                    )
                    tx.execute("INSERT INTO raw_fts(rowid, tok) VALUES (?, ?)", (cur.lastrowid, index_text(c.text)))
                changed += 1
            tx.execute(
                "INSERT OR REPLACE INTO raw_files(path, scope, mtime_ns, size, ino, hash) VALUES (?,?,?,?,?,?)",
                (rel, scope.key, state.mtime_ns, state.size, state.ino, state.sha),
            )
    gone = [p for p in known if p not in set(present)]
    if gone:
        with index.transaction() as tx:
            for rel in gone:
                _drop(tx, rel)
                tx.execute("DELETE FROM raw_files WHERE path = ?", (rel,))
        changed += len(gone)
    return changed


def _drop(tx, rel: str) -> None:  # type: ignore[no-untyped-def]
    tx.execute("DELETE FROM raw_fts WHERE rowid IN (SELECT rowid FROM raw_chunks WHERE path = ?)", (rel,))
    tx.execute("DELETE FROM raw_chunks WHERE path = ?", (rel,))


def search_raw(
    index: Index,
    scope: Scope,
    query: str,
    k: int,
    max_terms: int = 12,
    kinds: tuple[str, ...] = ("session",),
    archived: bool = False,
) -> list[Snippet]:
    """Search the documents of `kinds` (session, log, note, reflection); archived copies too if asked."""
    terms = query_terms(query, lambda pieces: _raw_terms(index, pieces))
    expr = match_expression(terms[:max_terms])
    if expr is None or k <= 0:
        return []
    marks = ",".join("?" * len(kinds))
    rows = index.db.execute(
        "SELECT c.path, c.role, c.at, c.text, -bm25(raw_fts) FROM raw_fts JOIN raw_chunks c ON c.rowid = raw_fts.rowid"
        f" WHERE raw_fts MATCH ? AND c.scope = ? AND c.kind IN ({marks})" + ("" if archived else " AND c.archived = 0")
        + " ORDER BY bm25(raw_fts) LIMIT ?",
        (expr, scope.key, *kinds, k),
    ).fetchall()
    out = []
    for path, role, at, text, s in rows:
        session = Path(path).stem
        out.append(Snippet(path, session, role, _excerpt(shown_text(text), terms), s, at))  # a hand-dropped file may hold a key
    return out


def _raw_terms(index: Index, pieces: list[str]) -> set[str]:
    """Which of `pieces` the raw layer's full text holds as a token (its FTS5 vocabulary, read
    through a per-connection fts5vocab table): a query's Chinese is segmented by the documents'
    own words, as recall's is by the entries' (model/tokens.py, query_terms)."""
    index.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.raw_vocab USING fts5vocab(main, raw_fts, 'row')")
    marks = ",".join("?" * len(pieces))
    return {t for (t,) in index.db.execute(f"SELECT term FROM temp.raw_vocab WHERE term IN ({marks})", pieces)}


def _excerpt(text: str, terms: list[str]) -> str:
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    low = flat.lower()
    pos = min((p for p in (low.find(t) for t in terms) if p >= 0), default=0)
    start = max(0, pos - SNIPPET_CHARS // 3)
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(flat) else "")
