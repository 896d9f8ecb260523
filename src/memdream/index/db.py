"""The derived index: SQLite under .memdream/ (DESIGN section 7), its connection and its queries.

Everything here can be rebuilt from the files. How the rows follow the files (sync, the
writer's updates, rebuild) is in index/sync.py, whose methods `Index` inherits. Every SQL
statement of memdream is in index/: the rest of the code asks these named queries, which a
store other than SQLite implements under the same names.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from memdream.errors import VaultError
from memdream.index.fts import match_expression
from memdream.index.migrations import migrate
from memdream.index.sync import NEG_TOKEN, FileSync, bounded_line, line_hash, text_hash
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT, Entry
from memdream.model.scoring import bm25, query_weights
from memdream.model.secrets import shown_entry
from memdream.model.tokens import query_terms, query_tokens
from memdream.store.format import parse_line
from memdream.store.vault import Scope, Vault
from memdream.store.files import LINE_INDEX_MAX

__all__ = ["LINE_INDEX_MAX", "NEG_TOKEN", "Index", "LifecycleDue", "Row", "bounded_line", "line_hash", "text_hash"]

BUSY_TIMEOUT_MS = 60_000
MAX_QUERY_TERMS = 8  # a query searches its 8 rarest terms (see Index.rare_terms)
POSTINGS_MIN_ENTRIES = 2_000  # below this, FTS5 alone answers within a few milliseconds


SAID_AFTER_BATCH = 100  # rows looked up in one statement by `said_after` (SQLite allows 500 terms in a compound select)


@dataclass(frozen=True)
class LifecycleDue:
    """The lifecycle's thresholds (model/lifecycle.py) for Index.lifecycle_due."""

    now: float  # epoch seconds
    promote_hits: int
    important_types: tuple[str, ...]  # types whose prior importance is above the "unimportant" limit
    stale_days: float
    stale_context_days: float
    context_type: str
    demote_idle_days: float
    preference_type: str
    ids: frozenset[str] = frozenset()  # entries to include whatever their columns say


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


def _has_numpy() -> bool:
    """The in-process postings score with numpy; without it (a plain install) FTS5 serves every search."""
    import importlib.util

    return importlib.util.find_spec("numpy") is not None


class _Reader:
    """What the postings read from, for a load on a connection of its own."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db


class Index(FileSync):
    def __init__(
        self, vault: Vault, postings_min_entries: int = POSTINGS_MIN_ENTRIES, postings_background: bool = True, watch: bool = True
    ) -> None:
        self.vault = vault
        # From its second sync of a scope on, a process asks the kernel whether any of the scope's
        # files changed instead of a stat of each (index/watch.py); `watch=False`: a stat of each.
        self.watch_files = watch
        self._watcher = None
        self._syncs = {}
        self._sync_lock = threading.RLock()
        self.postings_min_entries = postings_min_entries
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._batch = False  # inside `batch`: transactions are savepoints of one
        self._postings = None  # in-process postings (index/postings.py), built on demand
        self._searches = 0
        # The postings are loaded in a thread of their own (`_load_postings`), on a connection of
        # its own, while searches keep the FTS5 path: at 100k entries the load took about a second
        # (ten at a million), and the long-lived process that needs them (an MCP server, a chat)
        # stalled its second search that long. `postings_background=False` loads them in the search.
        self.postings_background = postings_background
        self._postings_mutex = threading.Lock()
        self._postings_loader: threading.Thread | None = None
        self._postings_loaded = None  # a copy loaded in the background, taken over by the next search
        self._postings_era = 0  # a load started before the index was replaced is not taken over

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
        if self._watcher:
            self._watcher.close()
        self._watcher, self._syncs = None, {}

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One index transaction for many writer updates (a dream's moves): each `transaction`
        inside it is a savepoint, and all of them commit at the end. Committing once, not once
        a file, is most of the index's cost of a large dream. The files are the truth: if the
        batch fails, the index catches up with them at the next sync."""
        with self._lock:
            if self._batch:
                yield
                return
            with self.transaction():
                self._batch = True
                try:
                    yield
                finally:
                    self._batch = False

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self.db
            if self._batch:
                db.execute("SAVEPOINT part")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK TO part")
                    db.execute("RELEASE part")
                    raise
                db.execute("RELEASE part")
                return
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

    def query_terms(self, text: str) -> list[str]:
        """A recall query's terms, its Chinese segmented by the words the index holds
        (model/tokens.py, query_terms)."""
        return query_terms(text, lambda pieces: self.document_frequency(pieces).keys())

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
        ended: int = 0,
        terms: list[str] | None = None,
    ) -> list[tuple[Row, float]]:
        """The best `limit` rows for `query` with their BM25 (memdream's formula, all query terms),
        then (with `current_only` and `ended` > 0) the best `ended` rows no longer valid (vt set).

        A one-shot process asks FTS5 for the matches of the query's rarest terms and scores
        them; a process that searches again on a large index (>= POSTINGS_MIN_ENTRIES)
        loads the in-process postings once, in the background (FTS5 answers until they are
        loaded), then scores every match exactly, in about a millisecond. Both score with the
        same formula. `terms`: the query's terms when the
        caller has cut it already (`query_terms`: a lookup in the index).
        """
        self._searches += 1
        terms = self.query_terms(query) if terms is None else terms
        df = self.document_frequency(terms)
        present = [t for t in terms if df.get(t)]
        if not present or limit <= 0:
            return []
        n_docs, avgdl = self.corpus_stats()
        weights = query_weights(terms)
        held = self._warm_postings() if postings and current_only and self._searches > 1 and n_docs >= self.postings_min_entries and _has_numpy() else None
        if held is not None:
            top, gone = held.top(scope.key, present, df, n_docs, avgdl, layers, limit, weights, ended)
            by_id = {r.rowid: r for r in self.rows([rid for rid, _ in top + gone])}
            return [(by_id[rid], s) for rid, s in top + gone if rid in by_id]
        rarest = sorted(present, key=lambda t: df[t])[:MAX_QUERY_TERMS]
        found = [r for r, _ in self.match(scope, rarest, limit, layers, current_only)]
        if current_only and ended > 0:
            found += [r for r, _ in self.match(scope, rarest, ended, layers, current_only=False, ended_only=True)]
        return [(row, bm25(present, row.tok.split(), df, n_docs, avgdl, weights)) for row in found]

    # -- the in-process postings
    def _warm_postings(self):  # type: ignore[no-untyped-def]
        """The postings caught up with the index, or None while they load in the background
        (the caller searches with FTS5 meanwhile)."""
        self._take_loaded_postings()
        held = self._postings
        if held is None:
            if not self.postings_background:
                from memdream.index.postings import Postings

                held = self._postings = Postings(self)
                held.refresh()
                return held
            self._start_postings_load()
            return None
        if not held.refresh(reload=not self.postings_background):
            self._postings = None  # rebuilt: loaded again in the background
            self._start_postings_load()
            return None
        return held

    def _start_postings_load(self) -> None:
        with self._postings_mutex:
            if self._postings_loader is not None and self._postings_loader.is_alive():
                return
            self._postings_loader = threading.Thread(target=self._load_postings, args=(self._postings_era,), name="memdream-postings", daemon=True)
            self._postings_loader.start()

    def _forget_postings(self) -> None:
        """Drop the postings and any copy loading (the index file was replaced)."""
        with self._postings_mutex:
            self._postings = self._postings_loaded = None
            self._postings_era += 1

    def _load_postings(self, era: int) -> None:
        """Load the postings from one snapshot of the index, on a connection of this thread's
        own (they catch up with what changed since at their first use). A failure leaves them
        unloaded: searches keep the FTS5 path, and the next one tries again."""
        from memdream.index.postings import Postings

        try:
            db = sqlite3.connect(self.vault.index_path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error:
            return
        try:
            db.execute("BEGIN")  # one read snapshot: the generation read and the rows it holds
            loaded = Postings(_Reader(db))
            loaded.refresh()
            db.execute("COMMIT")
        except Exception:  # noqa: BLE001 - a cache: the searches keep FTS5, the next one tries again
            return
        finally:
            db.close()
        with self._postings_mutex:
            if era == self._postings_era:
                self._postings_loaded = loaded

    def postings_ready(self, timeout: float = 120.0) -> bool:
        """Load the postings now if none are held, and wait for them (a benchmark, a test, a
        server warming up); True when they are held. Searches never wait: they use FTS5 meanwhile."""
        if not _has_numpy():
            return False
        if self._postings is None and self._postings_loaded is None:
            self._start_postings_load()
        loader = self._postings_loader
        if loader is not None:
            loader.join(timeout)
        self._take_loaded_postings()
        return self._postings is not None

    def _take_loaded_postings(self) -> None:
        """Hold the copy a background load finished, reading through this index from now on."""
        with self._postings_mutex:
            if self._postings_loaded is not None:
                self._postings, self._postings_loaded = self._postings_loaded, None
                self._postings.index = self

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
        ended_only: bool = False,
        newest: bool = False,
    ) -> list[tuple[Row, float]]:
        """Entries holding any (OR) or all (AND) of `terms`, best BM25 first (`ended_only`: only
        those no longer valid; `newest`: the last indexed first, their score 0, not ranked: 0.2
        against 5 ms for two common words at 100k entries, where BM25 scores every match)."""
        expr = match_expression(terms, op)
        if expr is None:
            return []
        marks = ",".join("?" * len(layers))
        sql = (
            f"SELECT {self._COLS}, entries_fts.tok, {'0.0' if newest else '-bm25(entries_fts)'} AS s FROM entries_fts"
            " JOIN entries e ON e.rowid = entries_fts.rowid"
            f" WHERE entries_fts MATCH ? AND e.scope = ? AND e.layer IN ({marks})"
            + (" AND e.vt IS NULL" if current_only else " AND e.vt IS NOT NULL" if ended_only else "")
            + (" ORDER BY entries_fts.rowid DESC LIMIT ?" if newest else " ORDER BY bm25(entries_fts) LIMIT ?")
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

    def said_after(self, scope: Scope, rows: list[Row], layers: tuple[str, ...], gap: float, n: int = 1) -> dict[int, list[Row]]:
        """For each of `rows`, the `n` entries of the scope's `layers` created next after it
        (strictly later, by at most `gap` seconds; by creation time, then id): what was said
        next. Entries without a creation time have none."""
        marks = ",".join("?" * len(layers))
        one = (
            f"SELECT * FROM (SELECT s.rowid, e.id, {self._COLS} FROM entries e, entries s WHERE s.rowid = ? AND e.scope = s.scope"
            f" AND e.layer IN ({marks}) AND e.ca > s.ca AND e.ca <= s.ca + ? ORDER BY e.ca, e.id LIMIT ?)"
        )
        wanted = [row.rowid for row in rows if row.ca is not None and row.scope == scope.key]
        found: dict[int, list[tuple[str, Row]]] = {}
        for i in range(0, len(wanted), SAID_AFTER_BATCH):  # one statement for many rows: a recall asks for 20
            part = wanted[i : i + SAID_AFTER_BATCH]
            args = [a for rowid in part for a in (rowid, *layers, gap, n)]
            for src, eid, *cols in self.db.execute(" UNION ALL ".join([one] * len(part)), args):
                found.setdefault(src, []).append((eid, Row(*cols)))
        # Each row's own next entries in their order (by creation time, then id, as SQLite orders)
        return {src: [r for _, r in sorted(got, key=lambda t: (t[1].ca, t[0]))] for src, got in found.items()}

    def created_between(self, scope: Scope, layers: tuple[str, ...], start: float, end: float, limit: int) -> tuple[int, list[Row]]:
        """How many entries of the scope's `layers` were created in [start, end) (epoch seconds),
        and the first `limit` of them by creation time: what was said on a day."""
        marks = ",".join("?" * len(layers))
        where = f" WHERE e.scope = ? AND e.layer IN ({marks}) AND e.ca >= ? AND e.ca < ?"
        args = (scope.key, *layers, start, end)
        n = self.db.execute("SELECT count(*) FROM entries e" + where, args).fetchone()[0]
        return n, (self._rows(self._ROW + where + " ORDER BY e.ca, e.id LIMIT ?", (*args, limit)) if n else [])

    def by_id(self, scope: Scope, entry_id: str) -> list[Row]:
        return self._rows(self._ROW + " WHERE e.scope = ? AND e.id = ?", (scope.key, entry_id))

    def paths_of(self, scope: Scope, entry_ids: list[str]) -> dict[str, list[str]]:
        """{id: the files holding a line with that id} for those of `entry_ids` the scope has: a
        query per 500 ids, not one per id (`+scope` keeps SQLite on the id index, where the
        scope's own index would walk every row of the scope)."""
        out: dict[str, list[str]] = {}
        for at in range(0, len(entry_ids), 500):
            part = entry_ids[at : at + 500]
            marks = ",".join("?" * len(part))
            sql = f"SELECT id, path FROM entries WHERE +scope = ? AND id IN ({marks}) ORDER BY rowid"
            for eid, path in self.db.execute(sql, (scope.key, *part)):
                out.setdefault(eid, []).append(path)
        return out

    def superseding_at(self, scope: Scope, times: list[float], layers: tuple[str, ...]) -> list[Row]:
        """The rows of `layers` that superseded something (sup=) and whose validity starts at one
        of `times` (a supersede writes the ended lines' vt and its successor's vf with one
        `now`). Read through the sup index: the cost is the scope's supersedes, not its size."""
        if not times:
            return []
        marks = ",".join("?" * len(times))
        rows = self._rows(self._ROW + f" WHERE e.scope = ? AND e.sup > '' AND e.vf IN ({marks})", (scope.key, *times))
        return [r for r in rows if r.layer in layers]

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


    # -- what the dream phases, doctor and the facade ask (one query each, named for its meaning)
    # A tokened row: (rowid, id, layer, type, text, vf, ca, hits, pinned, tok), what the light
    # phase compares (model/lifecycle.py Candidate) straight from the columns, without parsing.
    _TOKENED_COLS = "SELECT e.rowid, e.id, e.layer, e.type, e.text, e.vf, e.ca, e.hits, e.pinned, f.tok"
    _TOKENED = _TOKENED_COLS + " FROM entries e JOIN entries_fts f ON f.rowid = e.rowid "

    def current_with_tokens(self, scope: Scope, layers: tuple[str, ...], after_rowid: int = 0) -> list[tuple]:
        """Tokened rows of the scope's currently valid entries in `layers`; with `after_rowid`,
        only rows added after it (lines new or changed since)."""
        marks = ",".join("?" * len(layers))
        where = f"WHERE e.scope = ? AND e.layer IN ({marks}) AND e.vt IS NULL"
        if not after_rowid:
            return self.db.execute(self._TOKENED + where, (scope.key, *layers)).fetchall()
        # Rows after a rowid: read by rowid, their tokens looked up row by row (CROSS JOIN, and
        # `+` keeps SQLite from walking the scope's index instead: 11 ms for one new row at 100k).
        after = f" FROM entries e CROSS JOIN entries_fts f ON f.rowid = e.rowid WHERE +e.scope = ? AND +e.layer IN ({marks}) AND e.vt IS NULL AND e.rowid > ?"
        return self.db.execute(self._TOKENED_COLS + after, (scope.key, *layers, after_rowid)).fetchall()

    def with_tokens(self, rowids: list[int]) -> list[tuple]:
        """Tokened rows of these rowids (in no particular order; a rowid gone is left out)."""
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        return self.db.execute(self._TOKENED + f"WHERE e.rowid IN ({marks})", rowids).fetchall()

    def current_rowids(self, scope: Scope, layers: tuple[str, ...], after_rowid: int = 0) -> list[int]:
        """Rowids of the scope's currently valid entries in `layers` added after `after_rowid`."""
        marks = ",".join("?" * len(layers))
        sql = f"SELECT e.rowid FROM entries e WHERE e.scope = ? AND e.layer IN ({marks}) AND e.vt IS NULL AND e.rowid > ?"
        return [r for (r,) in self.db.execute(sql, (scope.key, *layers, after_rowid))]

    def high_water(self) -> int:
        """The largest rowid of any entry (0 for an empty index): rows added later have larger ones."""
        row = self.db.execute("SELECT max(rowid) FROM entries").fetchone()
        return int(row[0] or 0)

    def entries_for_lifecycle(self, scope: Scope, layers: tuple[str, ...]) -> list[tuple]:
        """Every entry of the scope in `layers`, current or ended, with the columns the lifecycle
        reads: (id, path, layer, type, text, line, vf, vt, ca, la, hits, salience, pinned)."""
        marks = ",".join("?" * len(layers))
        return self.db.execute(
            self._LIFECYCLE + f"WHERE e.scope = ? AND e.layer IN ({marks}) ORDER BY e.rowid",
            (scope.key, *layers),
        ).fetchall()

    _LIFECYCLE = "SELECT e.id, e.path, e.layer, e.type, e.text, e.line, e.vf, e.vt, e.ca, e.la, e.hits, e.salience, e.pinned FROM entries e "

    def lifecycle_due(self, scope: Scope, due: LifecycleDue) -> list[tuple]:
        """The rows of entries_for_lifecycle (same columns, same order) that a lifecycle rule may
        apply to, chosen by the index in one query instead of row by row: ended; recall entries
        recalled at least `promote_hits` times; recall entries never recalled, without salience,
        of no important type and idle longer than the stale limit; resident preferences idle
        longer than the demote limit; and every entry whose id is in `due.ids`. Idle days are
        (now - the latest of created, valid from, last recalled and 0) / 86400, as the planner
        computes them."""
        idle = "((? - max(coalesce(e.ca, 0.0), coalesce(e.vf, 0.0), coalesce(e.la, 0.0), 0.0)) / 86400.0)"
        imp = ",".join("?" * len(due.important_types))
        sql = (
            self._LIFECYCLE + "WHERE e.scope = ? AND e.layer IN (?, ?) AND ("
            "e.vt IS NOT NULL"
            " OR (e.layer = ? AND e.hits >= ?)"
            f" OR (e.layer = ? AND e.hits = 0 AND e.salience = 0 AND e.type NOT IN ({imp})"
            f"     AND {idle} > (CASE WHEN e.type = ? THEN ? ELSE ? END))"
            f" OR (e.layer = ? AND e.type = ? AND {idle} > ?)"
            " OR e.id IN (SELECT value FROM json_each(?))"
            ") ORDER BY e.rowid"
        )
        args = (
            scope.key, RESIDENT, RECALL,
            RECALL, due.promote_hits,
            RECALL, *due.important_types, due.now, due.context_type, due.stale_context_days, due.stale_days,
            RESIDENT, due.preference_type, due.now, due.demote_idle_days,
            json.dumps(sorted(due.ids)),
        )  # fmt: skip
        return self.db.execute(sql, args).fetchall()

    def count_entries(self, scope: Scope, layers: tuple[str, ...], current_only: bool = False) -> int:
        """How many entries of the scope sit in `layers` (only the currently valid ones, or all)."""
        marks = ",".join("?" * len(layers))
        sql = f"SELECT count(*) FROM entries WHERE scope = ? AND layer IN ({marks})" + (" AND vt IS NULL" if current_only else "")
        return int(self.db.execute(sql, (scope.key, *layers)).fetchone()[0])

    def ids_in_several_files(self, scope: Scope) -> list[str]:
        """Ids of the scope that sit in more than one file (a move or an undo cut short)."""
        sql = "SELECT id FROM entries WHERE scope = ? AND id != '' GROUP BY id HAVING count(DISTINCT path) > 1"
        return [r for (r,) in self.db.execute(sql, (scope.key,))]

    def entry_ids(self, scope: Scope) -> set[str]:
        """Every id of the scope's entries, in any layer, current or ended."""
        return {r for (r,) in self.db.execute("SELECT id FROM entries WHERE scope = ? AND id != ''", (scope.key,))}

    def most_recalled(self, scope: Scope, limit: int) -> list[tuple[str, str]]:
        """(id, text) of the scope's current entries outside the archive recalled at least once, most hits first."""
        return self.db.execute(
            "SELECT id, text FROM entries WHERE scope = ? AND vt IS NULL AND layer != 'archive' AND hits > 0 ORDER BY hits DESC, rowid LIMIT ?",
            (scope.key, limit),
        ).fetchall()

    def mergeable(self, scope: Scope, layer: str, below_hits: int, except_types: tuple[str, ...]) -> list[tuple[str, str, str, int]]:
        """(layer, line, tokens, rowid) of the scope's current, unpinned entries of `layer` recalled
        fewer than `below_hits` times and of none of `except_types`, newest first."""
        marks = ",".join("?" * len(except_types))
        return self.db.execute(
            "SELECT e.layer, e.line, f.tok, e.rowid FROM entries e JOIN entries_fts f ON f.rowid = e.rowid "
            f"WHERE e.scope = ? AND e.layer = ? AND e.vt IS NULL AND e.pinned = 0 AND e.hits < ? AND e.type NOT IN ({marks}) "
            "ORDER BY COALESCE(e.ca, e.vf) DESC, e.rowid DESC",
            (scope.key, layer, below_hits, *except_types),
        ).fetchall()

    def indexed_lines(self, scope: Scope) -> list[tuple[str, str, str]]:
        """Every (path, layer, line) the index holds for the scope, sorted (doctor compares it with the files)."""
        return sorted(self.db.execute("SELECT path, layer, line FROM entries WHERE scope = ?", (scope.key,)))

    def has_current_text(self, scope: Scope, text: str) -> bool:
        """Does a currently valid entry of the scope say exactly `text`?"""
        sql = "SELECT 1 FROM entries WHERE scope = ? AND text = ? AND vt IS NULL LIMIT 1"
        return self.db.execute(sql, (scope.key, text)).fetchone() is not None

    def current_pending(self, scope: Scope) -> list[Row]:
        """The scope's current entries whose line carries a pending mark (`pend=`: waiting for
        the user's confirmation); the caller parses the line to be sure."""
        return self._rows(self._ROW + " WHERE e.scope = ? AND e.vt IS NULL AND e.line LIKE '%;pend=%'", (scope.key,))

    def current_conflicting(self, scope: Scope) -> list[Row]:
        """The scope's current entries whose line carries a conflict mark (`cf=`: contradicts
        another entry); the caller parses the line to be sure."""
        return self._rows(self._ROW + " WHERE e.scope = ? AND e.vt IS NULL AND e.line LIKE '%;cf=%'", (scope.key,))

    def unadopted_paths(self, scope: Scope) -> list[str]:
        """Relative paths of the scope's files holding a line without an id (written by hand)."""
        return [r for (r,) in self.db.execute("SELECT DISTINCT path FROM entries WHERE scope = ? AND id = ''", (scope.key,))]
