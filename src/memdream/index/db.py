"""The derived index: SQLite under .memdream/ (DESIGN section 7).

Everything here can be rebuilt from the files. The index keeps, per file, the state it
was built from (size, mtime, inode, content hash); `sync` re-reads only files whose state
changed and, within a file, re-indexes only lines whose text changed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memdream.errors import VaultError
from memdream.index.fts import index_text, match_expression
from memdream.model.crud import negated
from memdream.model.scoring import bm25, query_weights
from memdream.model.tokens import query_tokens
from memdream.index.migrations import migrate
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT, Entry
from memdream.store.format import Document, parse_document, parse_line
from memdream.model.secrets import shown_entry
from memdream.store.vault import Scope, Vault
from memdream.store.files import LINE_INDEX_MAX, FileState, NotRegularFile, clean, decode, read_file
from memdream.store.writer import Update

BUSY_TIMEOUT_MS = 60_000
MAX_QUERY_TERMS = 8  # a query searches its 8 rarest terms (see Index.rare_terms)
POSTINGS_MIN_ENTRIES = 2_000  # below this, FTS5 alone answers within a few milliseconds
# An extra index token on entries that carry a negation cue: a contradiction check for a
# positive text then intersects with the (short) list of negative entries only.
NEG_TOKEN = "memdreamnegation"
DELETED_LOG_MAX = 20_000  # rowids remembered as deleted for caches to catch up; older caches reload


def bounded_line(raw: str) -> str:
    """The part of a file's line the index keeps (all of it, unless it is over-long)."""
    return raw if len(raw) <= LINE_INDEX_MAX else raw[:LINE_INDEX_MAX]


def _item(raw: str, entry: Entry, layer: str) -> tuple[str, str, Entry]:
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


@dataclass(frozen=True)
class Row:
    """An indexed entry and where it sits."""

    rowid: int
    path: str
    scope: str
    layer: str
    line: str
    # What scoring needs, straight from the index's columns (no parsing of the line):
    type: str = "fact"
    vf: float | None = None
    vt: float | None = None
    ca: float | None = None
    la: float | None = None
    hits: int = 0
    salience: float = 0.0
    tok: str = ""  # the indexed tokens, when the query fetched them (for BM25 scoring)

    def entry(self) -> Entry:
        # Every read of an entry from the index comes here (recall, context, list, history,
        # MCP, chat, web): a line holding a credential (typed by hand) is shown redacted.
        return shown_entry(parse_line(self.line, self.layer))


def _bump_meta(db: sqlite3.Connection, entries: int, tokens: int) -> None:
    """Running totals for BM25, and a generation number that changes with every row change."""
    db.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
        (("entries", entries), ("tokens", tokens), ("generation", 1)),
    )


def _has_numpy() -> bool:
    """The in-process postings score with numpy; without it (a plain install) FTS5 serves every search."""
    import importlib.util

    return importlib.util.find_spec("numpy") is not None


def text_hash(text: str) -> str:
    """The key under which a text's vectors are stored (with the model's fingerprint)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


class Index:
    def __init__(self, vault: Vault, postings_min_entries: int = POSTINGS_MIN_ENTRIES) -> None:
        self.vault = vault
        self.postings_min_entries = postings_min_entries
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._postings = None  # in-process postings (index/postings.py), built on demand
        self._searches = 0

    # -- connection
    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.vault.state_dir.mkdir(parents=True, exist_ok=True)
            try:
                db = sqlite3.connect(
                    self.vault.index_path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
                )
                db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                db.execute("PRAGMA cache_size = -65536")  # 64 MiB: bulk indexing is 1.5x faster than with the default 2 MiB
                migrate(db)
            except sqlite3.DatabaseError as exc:
                raise VaultError(
                    f"the index at {self.vault.index_path} cannot be opened: {exc}",
                    "it is derived data: run 'memdream index rebuild' to recreate it from the files",
                ) from exc
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self.db
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if db.in_transaction:
                    try:
                        db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise VaultError(
                    f"the index at {self.vault.index_path} could not be updated: {exc}",
                    "free disk space or check permissions; the index is derived from the files and catches up on the next call",
                ) from exc

    # -- keeping up with the files
    def rel(self, path: Path | str) -> str:
        return self.vault.relpath(path)

    def sync_scope(self, scope: Scope) -> int:
        """Bring the scope's rows up to date with its files; return how many files changed.

        Called before every read and write, so it is cheap: one stat per known file and one
        directory listing (without stat) per folder to notice new files.
        """
        root = str(self.vault.root) + os.sep
        known = {
            r[0]: (r[1], r[2], r[3], r[4])
            for r in self.db.execute("SELECT path, mtime_ns, size, ino, layer FROM files WHERE scope = ?", (scope.key,))
        }
        changed = 0
        # Folders are checked once per call (no symlink out of the vault); files by lstat below.
        safe = all(
            self.vault.no_links_below_root(d)
            for d in (self.vault.recall_dir(scope), self.vault.archive_dir(scope))
        )
        listed = self.vault.list_entry_files(scope) if safe else []
        present: set[str] = set()
        for rel, layer in listed:
            try:
                st = os.lstat(root + rel)
            except (FileNotFoundError, NotADirectoryError):
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
                continue  # never read a link, FIFO, device, folder or hard-linked file (doctor reports it)
            present.add(rel)
            k = known.get(rel)
            if k is not None and k[:3] == (st.st_mtime_ns, st.st_size, st.st_ino) and k[3] == layer:
                continue
            path = Path(root + rel)
            try:
                data, state = read_file(path)
            except NotRegularFile:
                present.discard(rel)  # it changed into one since the lstat
                continue
            if not state.exists:
                continue
            if self.index_file(path, scope, layer, state, parse_document(decode(data, path))):
                changed += 1
        gone = [p for p in known if p not in present]
        if gone:
            with self.transaction() as db:
                for rel in gone:
                    self._drop_file(db, rel)
            changed += len(gone)
        return changed

    def apply_update(self, path: Path, scope: Scope, layer: str, upd: Update) -> None:
        """Index the writer's own change: only the lines it removed and added, if the index held
        exactly the file the writer started from; otherwise a full comparison of the file."""
        rel = self.rel(path)
        with self.transaction() as db:
            row = db.execute("SELECT hash, layer FROM files WHERE path = ?", (rel,)).fetchone()
            indexed = row[0] if row is not None and row[1] == layer else None
            if upd.raw_bytes:  # bytes that are not UTF-8, kept as typed: index the file as display text (U+FFFD)
                self._index_doc(db, rel, scope, layer, upd.state, parse_document(clean(upd.document.render())))
                return
            if indexed is None and upd.before.exists or indexed is not None and indexed != upd.before.sha:
                self._index_doc(db, rel, scope, layer, upd.state, upd.document)
                return
            stale: list[int] = []
            if len(upd.removed) > 50:  # many lines left (a dream's moves): one query for the file's rows
                rows_of: dict[str, list[int]] = {}
                for rid, lh in db.execute("SELECT rowid, line_hash FROM entries WHERE path = ?", (rel,)):
                    rows_of.setdefault(lh, []).append(rid)
                for raw in upd.removed:
                    rids = rows_of.get(line_hash(raw))
                    if rids:
                        stale.append(rids.pop())
            else:
                for raw in upd.removed:
                    hit = db.execute(
                        "SELECT rowid FROM entries WHERE path = ? AND line_hash = ? LIMIT 1", (rel, line_hash(raw))
                    ).fetchone()
                    if hit is not None:
                        stale.append(hit[0])
            if stale:
                self._delete_rows(db, stale)
            added = []
            for ln in upd.added:
                entry = ln.entry
                assert entry is not None
                added.append(_item(ln.raw, entry, layer))
            self._insert_many(db, rel, scope.key, layer, added)
            self._set_file(db, rel, scope, layer, upd.state)

    @staticmethod
    def _set_file(db: sqlite3.Connection, rel: str, scope: Scope, layer: str, state: FileState) -> None:
        db.execute(
            "INSERT OR REPLACE INTO files(path, scope, layer, mtime_ns, size, ino, hash) VALUES (?,?,?,?,?,?,?)",
            (rel, scope.key, layer, state.mtime_ns, state.size, state.ino, state.sha),
        )

    def index_file(self, path: Path, scope: Scope, layer: str, state: FileState, doc: Document) -> bool:
        """Make the rows of `path` match `doc` (the file as it is in `state`). Returns True if rows changed."""
        with self.transaction() as db:
            return self._index_doc(db, self.rel(path), scope, layer, state, doc)

    def _index_doc(self, db: sqlite3.Connection, rel: str, scope: Scope, layer: str, state: FileState, doc: Document) -> bool:
        row = db.execute("SELECT hash, layer FROM files WHERE path = ?", (rel,)).fetchone()
        if row is not None and row[0] == state.sha and row[1] == layer:
            db.execute(
                "UPDATE files SET mtime_ns = ?, size = ?, ino = ? WHERE path = ?",
                (state.mtime_ns, state.size, state.ino, rel),
            )
            return False
        old: dict[str, list[int]] = {}
        for rowid, lh, old_layer in db.execute("SELECT rowid, line_hash, layer FROM entries WHERE path = ?", (rel,)):
            old.setdefault(lh if old_layer == layer else "", []).append(rowid)
        fresh: list[tuple[str, str, Entry]] = []
        for ln in doc.lines:
            if not ln.is_entry:
                continue
            lh = line_hash(ln.raw)
            if old.get(lh):
                old[lh].pop()
            else:
                entry = ln.entry
                assert entry is not None
                fresh.append(_item(ln.raw, entry, layer))
        stale = [rid for rids in old.values() for rid in rids]
        if stale:
            self._delete_rows(db, stale)
        self._insert_many(db, rel, scope.key, layer, fresh)
        self._set_file(db, rel, scope, layer, state)
        return bool(stale or fresh)

    @staticmethod
    def _insert_many(db: sqlite3.Connection, rel: str, scope: str, layer: str, items: list[tuple[str, str, Entry]]) -> None:
        """Insert entries (line hash, raw line, entry) with a few batched statements."""
        if not items:
            return
        # Rowids only grow (never reused, even across rebuilds): caches rely on it.
        first = max(
            db.execute("SELECT max(rowid) FROM entries").fetchone()[0] or 0,
            (db.execute("SELECT value FROM meta WHERE key = 'rowid_hw'").fetchone() or (0,))[0],
        ) + 1
        rows, fts = [], []
        df: Counter[str] = Counter()
        total = 0
        known = Index._known_tokens(db, items) if len(items) > 20 else {}
        for n, (lh, raw, e) in enumerate(items):
            tok = known.get((text_hash(e.text), e.subject))
            if tok is None:
                tok = index_text(e.text + " " + e.subject)
                if negated(e.text):
                    tok += " " + NEG_TOKEN
            words = tok.split()
            df.update(set(words))
            total += len(words)
            rows.append((
                first + n, rel, scope, layer, lh, raw, e.id, e.effective_type, e.subject, e.supersedes, e.text,
                _ts(e.valid_from), _ts(e.valid_to), _ts(e.created_at), _ts(e.last_recalled),
                e.hits, int(e.pinned), e.salience, len(words), text_hash(e.text),
            ))  # fmt: skip
            fts.append((first + n, tok))
        db.executemany(
            "INSERT INTO entries(rowid, path, scope, layer, line_hash, line, id, type, subject, sup, text, vf, vt, ca, la, hits, pinned, salience, ntok, thash)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        db.executemany("INSERT INTO entries_fts(rowid, tok) VALUES (?, ?)", fts)
        db.executemany(
            "INSERT INTO terms(term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
            df.items(),
        )
        _bump_meta(db, len(items), total)
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('rowid_hw', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (first + len(items) - 1,),
        )

    @staticmethod
    def _known_tokens(db: sqlite3.Connection, items: list[tuple[str, str, Entry]]) -> dict[tuple[str, str], str]:
        """Tokens of rows already indexed with the same text and subject (a line moved to
        another file is inserted before its old row goes): tokenizing again is the slow part."""
        hashes = list({text_hash(e.text) for _, _, e in items})
        out: dict[tuple[str, str], str] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT e.thash, e.subject, f.tok FROM entries e JOIN entries_fts f ON f.rowid = e.rowid WHERE e.thash IN ({marks})"
            for th, subj, tok in db.execute(sql, chunk):
                out.setdefault((th, subj), tok)
        return out

    @staticmethod
    def _delete_rows(db: sqlite3.Connection, rowids: list[int]) -> None:
        gone: Counter[str] = Counter()  # term -> rows leaving that hold it (one batched df update)
        nrows = ntok = 0
        for i in range(0, len(rowids), 500):
            chunk = rowids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for (tok,) in db.execute(f"SELECT tok FROM entries_fts WHERE rowid IN ({marks})", chunk):
                words = tok.split()
                gone.update(set(words))
                nrows += 1
                ntok += len(words)
        if gone:
            db.executemany("UPDATE terms SET df = df - ? WHERE term = ?", ((n, t) for t, n in gone.items()))
            db.executemany("DELETE FROM terms WHERE term = ? AND df <= 0", ((t,) for t in gone))
        if nrows:
            _bump_meta(db, -nrows, -ntok)
        gen = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        db.executemany("INSERT OR REPLACE INTO deleted(rowid, gen) VALUES (?, ?)", ((r, gen) for r in rowids))
        if db.execute("SELECT count(*) FROM deleted").fetchone()[0] > DELETED_LOG_MAX:
            floor = db.execute("SELECT gen FROM deleted ORDER BY gen LIMIT 1 OFFSET ?", (DELETED_LOG_MAX // 2,)).fetchone()[0]
            db.execute("DELETE FROM deleted WHERE gen <= ?", (floor,))
            db.execute(
                "INSERT INTO meta(key, value) VALUES ('epoch', ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)",
                (floor,),
            )
        db.executemany("DELETE FROM entries WHERE rowid = ?", ((r,) for r in rowids))
        db.executemany("DELETE FROM entries_fts WHERE rowid = ?", ((r,) for r in rowids))

    def _drop_file(self, db: sqlite3.Connection, rel: str) -> None:
        self._delete_rows(db, [r[0] for r in db.execute("SELECT rowid FROM entries WHERE path = ?", (rel,))])
        db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _replace_broken(self) -> None:
        """An index.db that SQLite cannot open or read (not a database, a malformed image) is
        derived data: move it aside (index.db.broken, replacing an older one) and start afresh."""
        self.close()
        self._postings = None
        path = self.vault.index_path
        try:
            os.replace(path, path.with_name(path.name + ".broken"))
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise VaultError(f"cannot move the broken index {path} aside: {exc.strerror or exc}", f"delete {path} by hand (it is derived data), then run 'memdream index rebuild'") from exc
        for suffix in ("-wal", "-shm", "-journal"):
            try:
                os.unlink(str(path) + suffix)
            except FileNotFoundError:
                pass
            except OSError:
                pass

    def rebuild(self, scopes: Iterable[Scope]) -> int:
        """Drop every row and index all files again; returns the number of entries indexed.
        An index that cannot be opened or read is replaced by a new one."""
        try:
            check = self.db.execute("PRAGMA quick_check(1)").fetchone()
            if not check or check[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check[0] if check else 'no answer'}")
            self._clear()
        except (VaultError, sqlite3.DatabaseError):
            self._replace_broken()
            self._clear()
        for scope in scopes:
            self.sync_scope(scope)
        return self.db.execute("SELECT count(*) FROM entries").fetchone()[0]

    def _clear(self) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM entries")
            db.execute("DELETE FROM entries_fts")
            db.execute("DELETE FROM terms")
            db.execute("DELETE FROM meta WHERE key NOT IN ('generation', 'rowid_hw')")
            db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            # Caches older than this generation cannot catch up from the log: they reload.
            db.execute(
                "INSERT INTO meta(key, value) SELECT 'epoch', value FROM meta WHERE key = 'generation'"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            )
            db.execute("DELETE FROM deleted")
            db.execute("DELETE FROM files")
            db.execute("DELETE FROM raw_fts")
            db.execute("DELETE FROM raw_chunks")
            db.execute("DELETE FROM raw_files")

    # -- queries
    _COLS = "e.rowid, e.path, e.scope, e.layer, e.line, e.type, e.vf, e.vt, e.ca, e.la, e.hits, e.salience"
    _ROW = f"SELECT {_COLS} FROM entries e"

    def _rows(self, sql: str, args: tuple) -> list[Row]:
        return [Row(*r) for r in self.db.execute(sql, args)]

    def document_frequency(self, terms: list[str]) -> dict[str, int]:
        """How many entries (in any scope) hold each term; absent terms are left out."""
        if not terms:
            return {}
        marks = ",".join("?" * len(terms))
        return dict(self.db.execute(f"SELECT term, df FROM terms WHERE term IN ({marks})", terms))

    def generation(self) -> int:
        """Changes whenever any entry row is added or removed (in any process)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return row[0] if row else 0

    def corpus_stats(self) -> tuple[int, float]:
        """(number of indexed entries, average tokens per entry), for BM25."""
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        n = meta.get("entries", 0)
        return n, (meta.get("tokens", 0) / n if n else 0.0)

    def rare_terms(self, text: str, limit: int) -> list[str]:
        """The query's terms that occur in the index, rarest first, at most `limit` of them.

        Searching only the rarest terms keeps the cost of a query bounded by short posting
        lists, whatever the size of the scope; BM25 is dominated by rare terms anyway.
        """
        terms = query_tokens(text)
        df = self.document_frequency(terms)
        present = sorted((t for t in terms if df.get(t)), key=lambda t: df[t])
        return present[:limit]

    def keyword_candidates(
        self,
        scope: Scope,
        query: str,
        limit: int,
        layers: tuple[str, ...] = (RESIDENT, RECALL),
        current_only: bool = True,
        postings: bool = True,
    ) -> list[tuple[Row, float]]:
        """The best `limit` rows for `query` with their BM25 (memdream's formula, all query terms).

        A one-shot process asks FTS5 for the matches of the query's rarest terms and scores
        them; a process that searches again on a large index (>= POSTINGS_MIN_ENTRIES)
        loads the in-process postings once and scores every match exactly, in about a
        millisecond. Both score with the same formula.
        """
        self._searches += 1
        terms = query_tokens(query)
        df = self.document_frequency(terms)
        present = [t for t in terms if df.get(t)]
        if not present or limit <= 0:
            return []
        n_docs, avgdl = self.corpus_stats()
        weights = query_weights(terms)
        if postings and current_only and self._searches > 1 and n_docs >= self.postings_min_entries and _has_numpy():
            if self._postings is None:
                from memdream.index.postings import Postings

                self._postings = Postings(self)
            self._postings.refresh()
            top = self._postings.top(scope.key, present, df, n_docs, avgdl, layers, limit, weights)
            by_id = {r.rowid: r for r in self.rows([rid for rid, _ in top])}
            return [(by_id[rid], s) for rid, s in top if rid in by_id]
        rarest = sorted(present, key=lambda t: df[t])[:MAX_QUERY_TERMS]
        found = self.match(scope, rarest, limit, layers, current_only)
        return [(row, bm25(present, row.tok.split(), df, n_docs, avgdl, weights)) for row, _ in found]

    def search(
        self,
        scope: Scope,
        text: str,
        limit: int,
        layers: tuple[str, ...] = (RESIDENT, RECALL),
        current_only: bool = True,
        max_terms: int = MAX_QUERY_TERMS,
    ) -> list[tuple[Row, float]]:
        """Full-text candidates with their BM25 score (higher is better): any of the rarest terms."""
        return self.match(scope, self.rare_terms(text, max_terms), limit, layers, current_only)

    def match(
        self,
        scope: Scope,
        terms: list[str],
        limit: int,
        layers: tuple[str, ...] = (RESIDENT, RECALL),
        current_only: bool = True,
        op: str = "OR",
    ) -> list[tuple[Row, float]]:
        """Entries holding any (OR) or all (AND) of `terms`, best BM25 first."""
        expr = match_expression(terms, op)
        if expr is None:
            return []
        marks = ",".join("?" * len(layers))
        sql = (
            f"SELECT {self._COLS}, entries_fts.tok, -bm25(entries_fts) AS s FROM entries_fts"
            " JOIN entries e ON e.rowid = entries_fts.rowid"
            f" WHERE entries_fts MATCH ? AND e.scope = ? AND e.layer IN ({marks})"
            + (" AND e.vt IS NULL" if current_only else "")
            + " ORDER BY bm25(entries_fts) LIMIT ?"
        )
        return [(Row(*r[:13]), r[13]) for r in self.db.execute(sql, (expr, scope.key, *layers, limit))]

    def files(self, scope: Scope, layer: str, prefix: str = "") -> list[tuple[str, int]]:
        """(relative path, number of entries) of the scope's indexed files in `layer` whose path starts with `prefix`."""
        return list(
            self.db.execute(
                "SELECT f.path, (SELECT count(*) FROM entries e WHERE e.path = f.path) FROM files f"
                " WHERE f.scope = ? AND f.layer = ? AND substr(f.path, 1, ?) = ?",
                (scope.key, layer, len(prefix), prefix),
            )
        )

    def by_subject(self, scope: Scope, subject: str, current_only: bool = True) -> list[Row]:
        sql = self._ROW + " WHERE e.scope = ? AND e.subject = ?" + (" AND e.vt IS NULL AND e.layer != ?" if current_only else "")
        args = (scope.key, subject, ARCHIVE) if current_only else (scope.key, subject)
        return self._rows(sql + " ORDER BY e.vf, e.ca, e.rowid", args)

    def rows(self, rowids: list[int]) -> list[Row]:
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        return self._rows(self._ROW + f" WHERE e.rowid IN ({marks})", tuple(rowids))

    def by_id(self, scope: Scope, entry_id: str) -> list[Row]:
        return self._rows(self._ROW + " WHERE e.scope = ? AND e.id = ?", (scope.key, entry_id))

    def by_supersedes(self, scope: Scope, entry_id: str) -> list[Row]:
        return self._rows(self._ROW + " WHERE e.scope = ? AND e.sup = ?", (scope.key, entry_id))

    def id_taken(self, entry_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM entries WHERE id = ? LIMIT 1", (entry_id,)).fetchone() is not None

    def entries(self, scope: Scope, layers: tuple[str, ...], current_only: bool) -> list[Row]:
        marks = ",".join("?" * len(layers))
        sql = self._ROW + f" WHERE e.scope = ? AND e.layer IN ({marks})" + (" AND e.vt IS NULL" if current_only else "")
        return self._rows(sql + " ORDER BY e.ca, e.rowid", (scope.key, *layers))

    def pinned(self, scope: Scope, layers: tuple[str, ...]) -> list[Row]:
        """Currently valid pinned entries of these layers (a pinned recall fact is resident too)."""
        marks = ",".join("?" * len(layers))
        sql = self._ROW + f" WHERE e.scope = ? AND e.pinned = 1 AND e.vt IS NULL AND e.layer IN ({marks})"
        return self._rows(sql + " ORDER BY e.ca, e.rowid", (scope.key, *layers))

    def count(self, scope: Scope) -> Counter[tuple[str, str]]:
        """(layer, type) -> number of currently valid entries."""
        return Counter(
            {
                (layer, type_): n
                for layer, type_, n in self.db.execute(
                    "SELECT layer, type, count(*) FROM entries WHERE scope = ? AND vt IS NULL GROUP BY layer, type",
                    (scope.key,),
                )
            }
        )

    def tokens_of(self, rowids: list[int]) -> dict[int, str]:
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        return dict(self.db.execute(f"SELECT rowid, tok FROM entries_fts WHERE rowid IN ({marks})", rowids))

    def snapshot(self) -> list[tuple[str, str, str]]:
        """Every (path, layer, line) in the index, sorted: two indexes that agree have equal snapshots."""
        return sorted(self.db.execute("SELECT path, layer, line FROM entries"))

    def terms_snapshot(self) -> list[tuple[str, int]]:
        return sorted(self.db.execute("SELECT term, df FROM terms")) + sorted(
            self.db.execute("SELECT key, value FROM meta WHERE key IN ('entries', 'tokens')")
        )

    def fts_snapshot(self) -> list[tuple[str, str]]:
        return sorted(
            self.db.execute("SELECT e.line, f.tok FROM entries e JOIN entries_fts f ON f.rowid = e.rowid")
        )

