"""The raw layer's index: transcript chunks with the same Chinese-aware full text as entries."""

from __future__ import annotations

import os
from pathlib import Path

from memdream.index.db import Index
from memdream.index.fts import index_text, match_expression
from memdream.model.tokens import query_tokens
from memdream.recall.snapshot import Snippet
from memdream.store.transcripts import chunks
from memdream.store.vault import Scope
from memdream.store.writer import decode, read_file

SNIPPET_CHARS = 300  # how much of a chunk a search result shows


def transcript_files(index: Index, scope: Scope) -> list[str]:
    """Relative paths of the scope's transcripts (memory/sessions/**/*.md)."""
    root = index.vault.memory_dir(scope) / "sessions"
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(
            index.rel(Path(dirpath) / f)
            for f in sorted(filenames)
            if f.endswith(".md") and not f.startswith(".") and index.vault.is_inside(Path(dirpath) / f)
        )
    return out


def sync_raw(index: Index, scope: Scope) -> int:
    db = index.db
    known = {r[0]: (r[1], r[2], r[3]) for r in db.execute("SELECT path, mtime_ns, size, ino FROM raw_files WHERE scope = ?", (scope.key,))}
    changed = 0
    present = transcript_files(index, scope)
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
                for c in pieces:
                    cur = tx.execute(
                        "INSERT INTO raw_chunks(path, scope, seq, role, at, text) VALUES (?,?,?,?,?,?)",
                        (rel, scope.key, c.seq, c.role, c.at, c.text),
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


def search_raw(index: Index, scope: Scope, query: str, k: int, max_terms: int = 12) -> list[Snippet]:
    expr = match_expression(query_tokens(query)[:max_terms])
    if expr is None or k <= 0:
        return []
    rows = index.db.execute(
        "SELECT c.path, c.role, c.at, c.text, -bm25(raw_fts) FROM raw_fts JOIN raw_chunks c ON c.rowid = raw_fts.rowid"
        " WHERE raw_fts MATCH ? AND c.scope = ? ORDER BY bm25(raw_fts) LIMIT ?",
        (expr, scope.key, k),
    ).fetchall()
    out = []
    for path, role, at, text, s in rows:
        session = Path(path).stem
        out.append(Snippet(path, session, role, _excerpt(text, query), s, at))
    return out


def _excerpt(text: str, query: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    low = flat.lower()
    pos = min((p for p in (low.find(t) for t in query_tokens(query)) if p >= 0), default=0)
    start = max(0, pos - SNIPPET_CHARS // 3)
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(flat) else "")
