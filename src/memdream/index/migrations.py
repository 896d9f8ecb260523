"""Schema of the derived index. Append-only: never edit a migration, add the next one.

The index is a cache of the files: `memdream index rebuild` deletes it and builds it again,
so a migration may also simply drop and recreate tables.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def _run(db: sqlite3.Connection, script: str) -> None:
    """Run statements one by one (executescript would commit the migration's transaction)."""
    for statement in script.split(";\n"):
        if statement.strip():
            db.execute(statement)


def m001_initial(db: sqlite3.Connection) -> None:
    _run(
        db,
        """
        CREATE TABLE files(
            path TEXT PRIMARY KEY,      -- relative to the vault root
            scope TEXT NOT NULL,        -- "agent/user"
            layer TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            ino INTEGER NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE TABLE entries(
            rowid INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            scope TEXT NOT NULL,
            layer TEXT NOT NULL,
            line_hash TEXT NOT NULL,    -- of the raw line: unchanged lines are never re-indexed
            line TEXT NOT NULL,         -- the raw line, parsed again to rebuild the Entry
            id TEXT NOT NULL,
            type TEXT NOT NULL,
            subject TEXT NOT NULL,
            sup TEXT NOT NULL,          -- id this entry supersedes, or ''
            text TEXT NOT NULL,
            vf REAL, vt REAL, ca REAL, la REAL,   -- epoch seconds
            hits INTEGER NOT NULL,
            pinned INTEGER NOT NULL,
            salience REAL NOT NULL,
            ntok INTEGER NOT NULL,      -- number of index tokens (BM25 document length)
            thash TEXT NOT NULL         -- hash of the text: the key of its vectors
        );
        CREATE INDEX entries_path ON entries(path, line_hash);
        CREATE INDEX entries_scope ON entries(scope, layer);
        CREATE INDEX entries_id ON entries(id);
        CREATE INDEX entries_subject ON entries(scope, subject);
        CREATE INDEX entries_sup ON entries(scope, sup);
        CREATE VIRTUAL TABLE entries_fts USING fts5(tok, tokenize = 'unicode61 remove_diacritics 0');
        -- entries per term (all scopes), and running totals (entries, tokens) for BM25
        CREATE TABLE terms(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        """
    )


def m002_raw_layer(db: sqlite3.Connection) -> None:
    """Transcripts (the raw layer): one row per message or paragraph, searchable like entries."""
    _run(
        db,
        """
        CREATE TABLE raw_files(
            path TEXT PRIMARY KEY, scope TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL, hash TEXT NOT NULL
        );
        CREATE TABLE raw_chunks(
            rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, scope TEXT NOT NULL,
            seq INTEGER NOT NULL, role TEXT NOT NULL, at TEXT NOT NULL, text TEXT NOT NULL
        );
        CREATE INDEX raw_chunks_path ON raw_chunks(path);
        CREATE VIRTUAL TABLE raw_fts USING fts5(tok, tokenize = 'unicode61 remove_diacritics 0');
        """,
    )


def m003_vectors(db: sqlite3.Connection) -> None:
    """Embeddings keyed by (model fingerprint, text hash): nothing is embedded twice, and a
    new model only embeds what it lacks. Vectors are float32 blobs, L2-normalised."""
    _run(
        db,
        """
        CREATE TABLE vectors(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY(model, hash)) WITHOUT ROWID;
        CREATE INDEX entries_thash ON entries(thash);
        """,
    )


def m004_deleted_log(db: sqlite3.Connection) -> None:
    """Rowids removed, with the generation that removed them: in-process caches of the index
    (index/postings.py) catch up from it instead of reloading everything."""
    _run(db, "CREATE TABLE deleted(rowid INTEGER PRIMARY KEY, gen INTEGER NOT NULL);\nCREATE INDEX deleted_gen ON deleted(gen)")


def m005_doc_kinds(db: sqlite3.Connection) -> None:
    """The raw index also holds daily logs, knowledge files and reflections (for lookup), and
    archived copies of them (searchable on request)."""
    _run(
        db,
        """
        ALTER TABLE raw_chunks ADD COLUMN kind TEXT NOT NULL DEFAULT 'session';
        ALTER TABLE raw_chunks ADD COLUMN archived INTEGER NOT NULL DEFAULT 0
        """,
    )


def m006_cjk_unigrams(db: sqlite3.Connection) -> None:
    """The index's tokens gained every Chinese character (model/tokens.py): the rows are
    dropped and each scope's files are indexed again on its next sync (vectors are kept: they
    are keyed by text). Rowids keep growing past the old ones, as caches expect. A new index
    has nothing to drop."""
    if not db.execute("SELECT EXISTS(SELECT 1 FROM entries) OR EXISTS(SELECT 1 FROM raw_chunks)").fetchone()[0]:
        return
    _run(
        db,
        """
        INSERT INTO meta(key, value) SELECT 'rowid_hw', m FROM (SELECT max(rowid) AS m FROM entries) WHERE m IS NOT NULL
            ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value);
        DELETE FROM entries;
        DELETE FROM entries_fts;
        DELETE FROM terms;
        DELETE FROM files;
        DELETE FROM deleted;
        DELETE FROM meta WHERE key IN ('entries', 'tokens');
        INSERT INTO meta(key, value) VALUES ('generation', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1;
        INSERT INTO meta(key, value) SELECT 'epoch', value FROM meta WHERE key = 'generation'
            ON CONFLICT(key) DO UPDATE SET value = excluded.value;
        DELETE FROM raw_fts;
        DELETE FROM raw_chunks;
        DELETE FROM raw_files
        """,
    )


def m007_said_around(db: sqlite3.Connection) -> None:
    """Entries by creation time within a scope: recall reads what was said right after a match,
    and on a day the query names."""
    _run(db, "CREATE INDEX IF NOT EXISTS entries_ca ON entries(scope, ca, id)")


def m008_irregular_verbs(db: sqlite3.Connection) -> None:
    """English irregular verb forms became their verb's term (model/tokens.py: bought is buy),
    and contractions are undone (don't is "do not", Caroline's is caroline): the rows are
    dropped and indexed again on the next sync, as in m006."""
    m006_cjk_unigrams(db)


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_initial, m002_raw_layer, m003_vectors, m004_deleted_log, m005_doc_kinds, m006_cjk_unigrams, m007_said_around,
    m008_irregular_verbs,
]  # fmt: skip


def migrate(db: sqlite3.Connection) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current >= number:  # another process migrated meanwhile
                db.execute("COMMIT")
                continue
            step(db)
            db.execute(f"PRAGMA user_version = {number}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
