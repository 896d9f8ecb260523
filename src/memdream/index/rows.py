"""The rows of the entries table, made from a file's lines (index/sync.py, index/bulk.py).

`prepared_row` is a pure function of a line (hashes, columns, tokens), so worker processes can
make rows (index/bulk.py) that the file-by-file path would make identically.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from datetime import datetime

from memdream.index.fts import index_text
from memdream.model.crud import negated
from memdream.model.entry import Entry
from memdream.store.format import parse_line
from memdream.store.writer import LINE_INDEX_MAX

# An extra index token on entries that carry a negation cue: a contradiction check for a
# positive text then intersects with the (short) list of negative entries only.
NEG_TOKEN = "memdreamnegation"



def bounded_line(raw: str) -> str:
    """The part of a file's line the index keeps (all of it, unless it is over-long)."""
    return raw if len(raw) <= LINE_INDEX_MAX else raw[:LINE_INDEX_MAX]


def item(raw: str, entry: Entry, layer: str) -> tuple[str, str, Entry]:
    """(line hash, indexed line, entry) of one line of a file; an over-long line is indexed by its prefix."""
    line = raw.rstrip("\r")
    if len(line) > LINE_INDEX_MAX:
        line = bounded_line(line)
        entry = parse_line(line, layer)
    return line_hash(raw), line, entry


def _ts(d: datetime | None) -> float | None:
    return d.timestamp() if d is not None else None


def line_hash(raw: str) -> str:
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def bump_meta(db: sqlite3.Connection, entries: int, tokens: int) -> None:
    """Running totals for BM25, and a generation number that changes with every row change."""
    db.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
        (("entries", entries), ("tokens", tokens), ("generation", 1)),
    )


def text_hash(text: str) -> str:
    """The key under which a text's vectors are stored (with the model's fingerprint)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def entry_tokens(e: Entry) -> str:
    """The tokens the full-text index holds for an entry (its text and subject, and the negation token)."""
    tok = index_text(e.text + " " + e.subject)
    return tok + " " + NEG_TOKEN if negated(e.text) else tok


def prepared_row(lh: str, raw: str, e: Entry, tok: str | None = None) -> tuple:
    """The columns of one entry's row (without rowid, path, scope, layer), its token count and
    text hash, then its tokens: what insert_prepared writes. A pure function of the line, so a
    worker process can make it (index/bulk.py)."""
    if tok is None:
        tok = entry_tokens(e)
    return (
        lh, raw, e.id, e.effective_type, e.subject, e.supersedes, e.text,
        _ts(e.valid_from), _ts(e.valid_to), _ts(e.created_at), _ts(e.last_recalled),
        e.hits, int(e.pinned), e.salience, len(tok.split()), text_hash(e.text), tok,
    )  # fmt: skip


def next_rowid(db: sqlite3.Connection) -> int:
    """The rowid the next inserted entry gets: rowids only grow (never reused, even across
    rebuilds), caches rely on it."""
    return max(
        db.execute("SELECT max(rowid) FROM entries").fetchone()[0] or 0,
        (db.execute("SELECT value FROM meta WHERE key = 'rowid_hw'").fetchone() or (0,))[0],
    ) + 1


def insert_prepared(db: sqlite3.Connection, rel: str, scope: str, layer: str, prepared: list[tuple], first: int) -> tuple[Counter[str], int]:
    """Insert prepared rows at rowids first, first + 1, ...; return (term -> rows holding it,
    tokens in all): the caller adds them to the terms and meta tables with flush_counts."""
    df: Counter[str] = Counter()
    total = 0
    for p in prepared:
        words = p[16].split()
        df.update(set(words))
        total += len(words)
    db.executemany(
        "INSERT INTO entries(rowid, path, scope, layer, line_hash, line, id, type, subject, sup, text, vf, vt, ca, la, hits, pinned, salience, ntok, thash)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(first + n, rel, scope, layer, *p[:16]) for n, p in enumerate(prepared)],
    )
    db.executemany("INSERT INTO entries_fts(rowid, tok) VALUES (?, ?)", [(first + n, p[16]) for n, p in enumerate(prepared)])
    return df, total


def flush_counts(db: sqlite3.Connection, df: Counter[str], rows: int, tokens: int, last_rowid: int) -> None:
    """Add inserted rows to the document frequencies and the BM25 totals, and record the high-water rowid."""
    db.executemany(
        "INSERT INTO terms(term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
        df.items(),
    )
    bump_meta(db, rows, tokens)
    db.execute(
        "INSERT INTO meta(key, value) VALUES ('rowid_hw', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (last_rowid,),
    )
