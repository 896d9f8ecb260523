"""How the index keeps up with the files (DESIGN section 7): the writing side of the index.

The index keeps, per file, the state it was built from (size, mtime, inode, content hash);
`sync_scope` re-reads only files whose state changed and, within a file, re-indexes only lines
whose text changed. `apply_update` indexes the single writer's own change from the document
it just wrote. Rowids only grow, a term table keeps document frequencies for BM25, and a
`deleted` log lets in-process caches (index/postings.py) catch up. `Index` (index/db.py)
inherits these methods; its queries are there.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdream.errors import VaultError
from memdream.index.bulk import PARALLEL_MIN_BYTES, index_new_files
from memdream.index.watch import LOCAL_FILE_SYSTEMS, ScopeWatch, Watcher, file_system_of
from memdream.index.rows import (
    NEG_TOKEN,
    bounded_line,
    bump_meta,
    flush_counts,
    insert_prepared,
    item,
    line_hash,
    next_rowid,
    prepared_row,
    text_hash,
)
from memdream.model.entry import Entry
from memdream.store.format import Document, parse_document
from memdream.store.vault import Scope, Vault
from memdream.store.files import FileState, NotRegularFile, clean, decode, read_file
from memdream.store.writer import Update

__all__ = ["NEG_TOKEN", "FileSync", "bounded_line", "line_hash", "text_hash"]

DELETED_LOG_MAX = 20_000  # rowids remembered as deleted for caches to catch up; older caches reload
BULK_MIN_FILES = 8  # this many new files in one sync are indexed in bulk (index/bulk.py)


# A watched scope compares only the files the kernel named, unless more than this many changed
# (a dream, an import): then all of them, as before, which reads many new files in bulk.
WATCHED_CHANGES_MAX = 32


class FileSync:
    """The methods that make the index's rows follow the files (mixed into `Index`)."""

    bulk_workers: int | None = None  # processes that parse and tokenize a bulk of new files (None: index/bulk.py default_workers)
    bulk_parallel_min_bytes = PARALLEL_MIN_BYTES  # ... when there are at least this many bytes to read
    watch_files = True  # a long-lived process skips the comparison while the kernel saw no change (index/watch.py)
    _watcher: Watcher | None | bool = None  # None: not set up yet; False: none here
    _syncs: dict[str, int]  # how often each scope was synced (Index.__init__)
    _sync_lock: threading.RLock  # (Index.__init__)

    if TYPE_CHECKING:  # provided by Index (index/db.py)
        vault: Vault
        _postings: Any

        def _forget_postings(self) -> None: ...

        @property
        def db(self) -> sqlite3.Connection: ...

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def close(self) -> None: ...

    def rel(self, path: Path | str) -> str:
        return self.vault.relpath(path)

    def sync_scope(self, scope: Scope, read: Callable[[Path], tuple[bytes, FileState]] = read_file) -> int:
        """Bring the scope's rows up to date with its files; return how many files changed.

        Called before every read and write, so it is cheap: one stat per known file and one
        directory listing (without stat) per folder to notice new files. `read` reads a file
        that changed: a check that must not see a file half saved in place passes the
        writer's `read_at_rest` (new files found many at once are read in bulk, as they are).
        A long-lived process skips all of it while the kernel saw no change (index/watch.py).
        """
        w = self._scope_watch(scope)
        if w is None:
            return self._compare_files(scope, read)
        # One thread at a time: a thread told "quiet" while another compares the files after an
        # event would read the index before that change is in it.
        with self._sync_lock:
            epoch = self.db.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
            paths = self._watcher.pending(w, epoch, WATCHED_CHANGES_MAX)  # type: ignore[union-attr]
            try:
                return self._compare_files(scope, read) if paths is None else self._compare_paths(scope, read, paths)
            except BaseException:
                w.changed = None  # compared only in part: all of them next time
                raise

    def _compare_paths(self, scope: Scope, read: Callable[[Path], tuple[bytes, FileState]], paths: list[str]) -> int:
        """`_compare_files` for the files the kernel named (index/watch.py), the same way: a file
        that is gone, or is no longer a regular file, leaves the index; one whose state
        changed is read and indexed again."""
        changed = 0
        for path in paths:
            rel = self.rel(path)
            layer = self.vault.layer_of(scope, Path(path))
            known = self.db.execute("SELECT mtime_ns, size, ino, layer FROM files WHERE path = ?", (rel,)).fetchone()
            try:
                st = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                if known is not None and tuple(known) == (st.st_mtime_ns, st.st_size, st.st_ino, layer):
                    continue
                got = self._reread(Path(path), scope, layer, read)
                if got is not None and got[0]:
                    changed += got[1]
                    continue
            if known is not None:  # gone, or no longer a file memdream reads (doctor reports it)
                with self.transaction() as db:
                    self._drop_file(db, rel)
                changed += 1
        return changed

    def _reread(self, path: Path, scope: Scope, layer: str, read: Callable[[Path], tuple[bytes, FileState]]) -> tuple[bool, bool] | None:
        """Read a file whose state changed and index it again: (it still exists, its rows
        changed); None if it is no longer a regular file (it changed into one since the lstat)."""
        try:
            data, state = read(path)
        except NotRegularFile:
            return None
        return state.exists, state.exists and self.index_file(path, scope, layer, state, parse_document(decode(data, path)))

    def _no_links(self, scope: Scope) -> bool:
        """No symlink on the way to the scope's folders (the full comparison reads nothing then)."""
        return all(self.vault.no_links_below_root(d) for d in (self.vault.recall_dir(scope), self.vault.archive_dir(scope)))

    def _scope_watch(self, scope: Scope) -> ScopeWatch | None:
        """The kernel's watch on the scope's folders, from this process's second sync of it on
        (a one-shot command never sets one up); None where there is none (index/watch.py)."""
        if not self.watch_files:
            return None
        n = self._syncs.get(scope.key, 0) + 1
        self._syncs[scope.key] = n
        if n < 2:
            return None
        watcher = self._watcher
        if watcher is False:
            return None
        if watcher is None or not watcher.alive():
            self._watcher = watcher = self._new_watcher()
            if watcher is None:
                self._watcher = False
                return None
        w = watcher.get(scope.key)
        if w is not None:
            return w
        folders = [(str(self.vault.scope_dir(scope)), "MEMORY.md"), (str(self.vault.recall_dir(scope)), None), (str(self.vault.archive_dir(scope)), None)]
        return watcher.watch(scope.key, str(self.vault.root), folders)

    def _new_watcher(self) -> Watcher | None:
        if file_system_of(str(self.vault.root)) not in LOCAL_FILE_SYSTEMS:
            return None  # a change there may come from another machine, without an event here
        try:
            return Watcher()
        except (ImportError, OSError):
            return None  # no inotify here (not Linux, or the limit of instances reached)

    def watching(self, scope: Scope) -> bool:
        """True if this process learns of changes to the scope's files from the kernel (its next
        syncs compare the files only after one), not from a stat of each file."""
        return bool(self._watcher) and self._watcher.watching(scope.key)  # type: ignore[union-attr]

    def _forget_watches(self) -> None:
        """Every scope is compared in full at its next sync (this index was cleared or replaced)."""
        if self._watcher:
            self._watcher.forget()

    def _compare_files(self, scope: Scope, read: Callable[[Path], tuple[bytes, FileState]]) -> int:
        root = str(self.vault.root) + os.sep
        known = {
            r[0]: (r[1], r[2], r[3], r[4])
            for r in self.db.execute("SELECT path, mtime_ns, size, ino, layer FROM files WHERE scope = ?", (scope.key,))
        }
        changed = 0
        # Folders are checked once per call (no symlink out of the vault); files by lstat below.
        safe = self._no_links(scope)
        listed = self.vault.list_entry_files(scope) if safe else []
        present: set[str] = set()
        fresh: list[tuple[str, str]] = []  # files the index does not know: indexed in bulk when many
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
            if k is None:
                fresh.append((rel, layer))
                continue
            got = self._reread(Path(root + rel), scope, layer, read)
            if got is None:
                present.discard(rel)  # it changed into one since the lstat
                continue
            changed += got[1]
        if len(fresh) >= BULK_MIN_FILES:
            done, skipped = index_new_files(self, scope, fresh, self.bulk_workers, self.bulk_parallel_min_bytes)
            changed += done
            present -= skipped
        else:
            for rel, layer in fresh:
                got = self._reread(Path(root + rel), scope, layer, read)
                if got is None:
                    present.discard(rel)
                    continue
                changed += got[1]
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
                added.append(item(ln.raw, entry, layer))
            self._insert_many(db, rel, scope.key, layer, added)
            self.set_file(db, rel, scope, layer, upd.state)

    def apply_updates(self, items: list[tuple[Path, Scope, str, Update]]) -> None:
        """Index writer changes made one after another (a dream's moves: each line copied into
        its new file, then removed from its old one) as one change, as `apply_update` would one
        by one, except that a line that left a file and came into another saying the same (the
        same id, text and subject: the same tokens) keeps its row: the row's file, layer and
        line are updated in place (`_move_rows`), where a row deleted and another inserted
        would also rewrite its full-text entry, the counts of its terms and every index of the
        table. `items`: (path, scope, layer, update) in the order the writer made them."""
        adds: list[tuple[str, str, str, tuple[str, str, Entry]] | None] = []  # (rel, scope key, layer, item) to index
        added_at: dict[tuple[str, str], list[int]] = {}  # (rel, line hash) -> places in adds
        stale: list[int] = []  # rows whose lines left their file
        leaving: set[int] = set()  # the same, to look up
        with self.transaction() as db:
            for path, scope, layer, upd in items:
                rel = self.rel(path)
                row = db.execute("SELECT hash, layer FROM files WHERE path = ?", (rel,)).fetchone()
                indexed = row[0] if row is not None and row[1] == layer else None
                if upd.raw_bytes or indexed is None and upd.before.exists or indexed is not None and indexed != upd.before.sha:
                    self._flush_moves(db, adds, stale)  # what came before, then the file as a whole (apply_update)
                    adds, added_at, stale, leaving = [], {}, [], set()
                    doc = parse_document(clean(upd.document.render())) if upd.raw_bytes else upd.document
                    self._index_doc(db, rel, scope, layer, upd.state, doc)
                    continue
                if upd.removed:
                    rows_of: dict[str, list[int]] = {}
                    for rid, lh in db.execute("SELECT rowid, line_hash FROM entries WHERE path = ?", (rel,)):
                        if rid not in leaving:
                            rows_of.setdefault(lh, []).append(rid)
                    for raw in upd.removed:
                        lh = line_hash(raw)
                        came = added_at.get((rel, lh))
                        if came:
                            adds[came.pop()] = None  # came in earlier in these changes and left again: never indexed
                            continue
                        rids = rows_of.get(lh)
                        if rids:
                            stale.append(rids[-1])
                            leaving.add(rids.pop())
                for ln in upd.added:
                    entry = ln.entry
                    assert entry is not None
                    it = item(ln.raw, entry, layer)
                    added_at.setdefault((rel, it[0]), []).append(len(adds))
                    adds.append((rel, scope.key, layer, it))
                self.set_file(db, rel, scope, layer, upd.state)
            self._flush_moves(db, adds, stale)

    def _flush_moves(self, db: sqlite3.Connection, came: list[tuple[str, str, str, tuple[str, str, Entry]] | None], stale: list[int]) -> None:
        """Index the lines that came in (`came`, None for one that left again) and drop the rows
        whose lines left (`stale`): a row that left and a line that came in with the same
        scope, id, text and subject are one line moved, its row updated in place."""
        moved: list[tuple] = []  # (rowid, rel, layer, item, the row's columns as they were)
        adds = [a for a in came if a is not None]
        rest = adds
        if adds and stale:
            same: dict[tuple[str, str], list[tuple]] = {}  # (scope, line hash) -> rows that left
            alike: dict[tuple[str, str, str, str], list[tuple]] = {}  # (scope, id, text, subject) -> rows that left
            for i in range(0, len(stale), 500):
                chunk = stale[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT rowid, scope, line_hash, id, text, subject, type, sup, vf, vt, ca, la, hits, pinned, salience FROM entries WHERE rowid IN ({marks})"
                for r in db.execute(sql, chunk):
                    if r[3]:
                        same.setdefault((r[1], r[2]), []).append(r)
                        alike.setdefault((r[1], r[3], r[4], r[5]), []).append(r)
            taken: set[int] = set()
            rest = []
            for rel, scope_key, layer, it in adds:
                e = it[2]
                found = None
                for rows in (same.get((scope_key, it[0])), alike.get((scope_key, e.id, e.text, e.subject)) if e.id else None):
                    while rows and rows[-1][0] in taken:
                        rows.pop()
                    if rows:
                        found = rows.pop()
                        break
                if found is None:
                    rest.append((rel, scope_key, layer, it))
                else:
                    taken.add(found[0])
                    moved.append((found[0], rel, layer, it, found))
            if moved:
                stale = [r for r in stale if r not in taken]
        groups: dict[tuple[str, str, str], list[tuple[str, str, Entry]]] = {}
        for rel, scope_key, layer, it in rest:  # by file, in the order they came (rowids as one by one)
            groups.setdefault((rel, scope_key, layer), []).append(it)
        for (rel, scope_key, layer), its in groups.items():
            self._insert_many(db, rel, scope_key, layer, its)  # before the deletes: a copy reuses its tokens
        if stale:
            self._delete_rows(db, stale)
        if moved:
            self._move_rows(db, moved)

    @staticmethod
    def _move_rows(db: sqlite3.Connection, moved: list[tuple]) -> None:
        """Point rows at their lines' new file, layer and line (text and subject unchanged, so
        their tokens, full-text entries and term counts stay), and log them for the caches.
        `moved`: (rowid, rel, layer, (line hash, line, entry), the row's columns as they were).
        Only the columns that may change are set (each set column rewrites the indexes on it)."""
        where: list[tuple] = []  # the same line, in another file
        marked: list[tuple] = []  # the line changed, its end marks only (a supersede)
        other: list[tuple] = []
        for rowid, rel, layer, (lh, line, e), was in moved:
            if lh == was[2]:
                where.append((rel, layer, rowid))
                continue
            p = prepared_row(lh, line, e, "")
            if (p[3], p[5], p[7], p[9], p[10], p[11], p[12], p[13]) == tuple(was[6:9]) + tuple(was[10:]):
                marked.append((rel, layer, p[0], p[1], p[8], rowid))
            else:
                other.append((rel, layer, p[0], p[1], p[3], p[5], p[7], p[8], p[9], p[10], p[11], p[12], p[13], rowid))
        db.executemany("UPDATE entries SET path = ?, layer = ? WHERE rowid = ?", where)
        db.executemany("UPDATE entries SET path = ?, layer = ?, line_hash = ?, line = ?, vt = ? WHERE rowid = ?", marked)
        db.executemany(
            "UPDATE entries SET path = ?, layer = ?, line_hash = ?, line = ?, type = ?, sup = ?, vf = ?, vt = ?, ca = ?, la = ?,"
            " hits = ?, pinned = ?, salience = ? WHERE rowid = ?",
            other,
        )
        bump_meta(db, 0, 0)
        FileSync._log_changed(db, [m[0] for m in moved])

    @staticmethod
    def set_file(db: sqlite3.Connection, rel: str, scope: Scope, layer: str, state: FileState) -> None:
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
                fresh.append(item(ln.raw, entry, layer))
        stale = [rid for rids in old.values() for rid in rids]
        if stale:
            self._delete_rows(db, stale)
        self._insert_many(db, rel, scope.key, layer, fresh)
        self.set_file(db, rel, scope, layer, state)
        return bool(stale or fresh)

    @staticmethod
    def _insert_many(db: sqlite3.Connection, rel: str, scope: str, layer: str, items: list[tuple[str, str, Entry]]) -> None:
        """Insert entries (line hash, raw line, entry) with a few batched statements."""
        if not items:
            return
        known = FileSync._known_tokens(db, items) if len(items) > 20 else {}
        prepared = [prepared_row(lh, raw, e, known.get((text_hash(e.text), e.subject))) for lh, raw, e in items]
        first = next_rowid(db)
        df, total = insert_prepared(db, rel, scope, layer, prepared, first)
        flush_counts(db, df, len(items), total, first + len(items) - 1)

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
            bump_meta(db, -nrows, -ntok)
        FileSync._log_changed(db, rowids)
        db.executemany("DELETE FROM entries WHERE rowid = ?", ((r,) for r in rowids))
        db.executemany("DELETE FROM entries_fts WHERE rowid = ?", ((r,) for r in rowids))

    @staticmethod
    def _log_changed(db: sqlite3.Connection, rowids: list[int]) -> None:
        """Log rows removed, or changed in place (`_move_rows`), with the generation (bumped
        by the caller): caches of the index drop them and read those still there again."""
        gen = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]
        db.executemany("INSERT OR REPLACE INTO deleted(rowid, gen) VALUES (?, ?)", ((r, gen) for r in rowids))
        if db.execute("SELECT count(*) FROM deleted").fetchone()[0] > DELETED_LOG_MAX:
            floor = db.execute("SELECT gen FROM deleted ORDER BY gen LIMIT 1 OFFSET ?", (DELETED_LOG_MAX // 2,)).fetchone()[0]
            db.execute("DELETE FROM deleted WHERE gen <= ?", (floor,))
            db.execute(
                "INSERT INTO meta(key, value) VALUES ('epoch', ?) ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)",
                (floor,),
            )

    def drop_rows_of(self, db: sqlite3.Connection, rel: str) -> int:
        """Delete every row of the file at `rel`; returns how many there were."""
        rowids = [r[0] for r in db.execute("SELECT rowid FROM entries WHERE path = ?", (rel,))]
        if rowids:
            self._delete_rows(db, rowids)
        return len(rowids)

    def _drop_file(self, db: sqlite3.Connection, rel: str) -> None:
        self.drop_rows_of(db, rel)
        db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _replace_broken(self) -> None:
        """An index.db that SQLite cannot open or read (not a database, a malformed image) is
        derived data: move it aside (index.db.broken, replacing an older one) and start afresh."""
        self.close()
        self._forget_postings()
        self._forget_watches()
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
        self._forget_watches()
        with self.transaction() as db:
            db.execute("DELETE FROM entries")
            # The full-text table is dropped and made again from its own definition: deleting its
            # rows one by one took 0.6 s of a 100k rebuild, dropping it 0.08 s.
            (fts_sql,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'entries_fts'").fetchone()
            db.execute("DROP TABLE entries_fts")
            db.execute(fts_sql)
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
