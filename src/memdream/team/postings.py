"""A process's copy of a large scope's keyword postings, for exact BM25 over every match in
milliseconds (issue 20: keyword recall at 1M lines).

The database's own path (team/fulltext.py, `PgIndex.keyword_candidates`) scores the matches of
a query's rarest terms in SQL. Its cost grows with those matches: at 1M lines a query's rarest
term holds tens of thousands of them, and a recall took about 0.3 s. No early-stopping order
helps on memory lines: they are short and of like length, so the best hundred of a query tie
with thousands of others on every bound (measured: reading postings best-first by their
share of BM25 had to read most of every list). What the SQLite index does in a long-lived
process (index/postings.py) does help: a compact copy of the postings in memory, every match
scored with numpy.

This is that copy for one scope of the team database. It is a cache, never a source of
truth, and no other process needs it:

- it is built in the background from one snapshot of the scope's lines (their tokens, layer
  and validity), while recalls keep using the database's own path;
- before each use, inside the recall's own snapshot, it follows the scope: the memory files
  whose version moved (every write stores its files with the scope's new version), and
  only the lines of those files that differ from what it holds are dropped and added again;
- a copy ahead of a recall's snapshot (another thread followed a newer one) is not used by
  that recall: the database's path answers it.

Used only for scopes of at least MEMDREAM_TEAM_POSTINGS_MIN lines (50,000 by default; smaller
ones are answered by the database in a few milliseconds), and only for recall of what is valid
now (an as-of recall reads the database).
"""

from __future__ import annotations

import threading
from array import array
from typing import TYPE_CHECKING, Any

from memdream.index.postings import Postings
from memdream.store.vault import Scope

if TYPE_CHECKING:
    import numpy as np

DEAD_SHARE = 0.5  # dropped lines, as a share of those held, that make the copy worth building again


class ScopePostings(Postings):
    """One scope's postings in memory (the SQLite index's `Postings`, filled from the database)."""

    def __init__(self, scope: Scope) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # no SQLite source: filled by load/follow
        self.scope_key = scope.key
        self.scopes[scope.key] = 0
        self.lock = threading.RLock()
        self.version = -1  # the scope version this copy reflects
        self.file_versions: dict[str, int] = {}  # memory file -> its version as held
        self.max_file_version = -1
        self.paths: list[str] = []  # file number -> path
        self.path_ids: dict[str, int] = {}
        self.pid = array("i")  # slot -> file number
        self.lpos = array("i")  # slot -> position in the file
        self.sig = array("q")  # slot -> hash of (valid now, tokens): a line changed in place is added again
        self.live = 0
        self.dead = 0
        self.rebuilding = False  # a fresh copy is being built to replace this worn one
        self.retry_at = 0.0  # (time.monotonic) not before: a rebuild that failed
        self.served = 0  # keyword searches answered from this copy
        self._rank: "np.ndarray | None" = None  # file number -> its place among the files by path

    # -- filling
    @classmethod
    def load(cls, conn: Any, scope: Scope) -> "ScopePostings":
        """The scope's postings as of the connection's snapshot (the caller holds one
        transaction at REPEATABLE READ with the scope's row-level security setting)."""
        self = cls(scope)
        self.version = _scope_version(conn, scope)
        files = conn.execute("SELECT path, version FROM memdream_files WHERE scope = %s AND kind = 'm'", (scope.key,)).fetchall()
        self.file_versions = dict(files)
        self.max_file_version = max((v for _, v in files), default=-1)
        cur = conn.cursor()
        cur.execute("SELECT path, pos, layer, vt IS NULL, tok FROM memdream_lines WHERE scope = %s AND tok IS NOT NULL", (scope.key,))
        while True:
            batch = cur.fetchmany(20_000)
            if not batch:
                break
            self._put(batch)
        return self

    def _put(self, rows: list[tuple[str, int, str, bool, str]]) -> None:
        """Add lines (file, position, layer, valid now, tokens). A line's row id here is its
        slot: the copy keeps no map from the database's row ids (a million-line scope's copy
        is mostly its postings)."""
        base = len(self.rowids)
        self._append_rows((base + k, self.scope_key, layer, current, tok) for k, (_path, _pos, layer, current, tok) in enumerate(rows))
        for path, pos, layer, current, tok in rows:
            self.sig.append(hash((bool(current), tok)))
            n = self.path_ids.get(path)
            if n is None:
                n = self.path_ids[path] = len(self.paths)
                self.paths.append(path)
            self.pid.append(n)
            self.lpos.append(pos)
        self.live += len(rows)

    def _held(self, path: str) -> dict[int, int]:
        """Position -> slot of the live lines of one file."""
        import numpy as np

        n = self.path_ids.get(path)
        if n is None:
            return {}
        slots = np.flatnonzero((np.frombuffer(self.pid, dtype=np.int32) == n) & (np.frombuffer(self.alive, dtype=np.uint8) == 1))
        return {self.lpos[int(s)]: int(s) for s in slots}

    def _drop(self, slot: int) -> None:
        self.alive[slot] = 0
        self.live -= 1
        self.dead += 1

    def follow(self, conn: Any, scope: Scope, version: int) -> bool:
        """Bring the copy to the connection's snapshot of the scope, whose version the caller
        read in it. False when the copy is ahead of that snapshot (the caller reads the
        database instead)."""
        if version == self.version:
            return True
        if version < self.version:
            return False
        # Every write stores the files it changed with the scope's new version, so the moved
        # ones are those above the highest this copy holds; a count tells a removed file.
        # One round trip: a recall's hit counts move the version too, so this runs on most recalls.
        n_files, paths, versions = conn.execute(
            "SELECT (SELECT count(*) FROM memdream_files WHERE scope = %s AND kind = 'm'), coalesce(array_agg(path), '{}'), "
            "coalesce(array_agg(version), '{}') FROM memdream_files WHERE scope = %s AND kind = 'm' AND version > %s",
            (scope.key, scope.key, self.max_file_version),
        ).fetchone()
        moved = dict(zip(paths, versions))
        if n_files != len(set(self.file_versions) | set(moved)):  # a file removed, or turned to bytes: list them all
            moved = dict(conn.execute("SELECT path, version FROM memdream_files WHERE scope = %s AND kind = 'm'", (scope.key,)).fetchall())
            for path in [p for p in self.file_versions if p not in moved]:
                for slot in self._held(path).values():
                    self._drop(slot)
                del self.file_versions[path]
            moved = {p: v for p, v in moved.items() if self.file_versions.get(p) != v}
        if moved:
            now: dict[str, dict[int, tuple[str, bool, str]]] = {p: {} for p in moved}
            for path, pos, layer, current, tok in conn.execute(
                "SELECT path, pos, layer, vt IS NULL, tok FROM memdream_lines WHERE scope = %s AND path = ANY(%s) AND tok IS NOT NULL",
                (scope.key, list(moved)),
            ):
                now[path][pos] = (layer, bool(current), tok)
            add = []
            for path, lines in now.items():
                held = self._held(path)
                for pos in [p for p in held if p not in lines]:
                    self._drop(held[pos])
                for pos, (layer, current, tok) in sorted(lines.items()):
                    slot = held.get(pos)
                    if slot is not None:
                        if self.sig[slot] == hash((current, tok)):
                            continue
                        self._drop(slot)
                    add.append((path, pos, layer, current, tok))
            self._put(add)
            self.file_versions.update(moved)
            self.max_file_version = max(self.max_file_version, *moved.values())
        self.version = version
        return True

    def _tie_keys(self, h: "np.ndarray") -> "np.ndarray":
        """File and position, as the database's own path breaks ties (a slot's place says only
        when the copy read the line)."""
        import numpy as np

        if self._rank is None or len(self._rank) != len(self.paths):  # a new file: the files ranked again, by their paths' bytes
            self._rank = np.empty(len(self.paths), dtype=np.int64)
            self._rank[np.argsort([p.encode("utf-8") for p in self.paths], kind="stable")] = np.arange(len(self.paths))
        rank = self._rank[np.frombuffer(self.pid, dtype=np.int32)[h]]
        return (rank << 32) | np.frombuffer(self.lpos, dtype=np.int32)[h].astype(np.int64)

    @property
    def worn(self) -> bool:
        """Enough lines dropped that building the copy again would pay."""
        return self.dead > max(10_000, DEAD_SHARE * self.live)

    def place(self, slot: int) -> tuple[str, int]:
        """(file, position) of a line this copy holds, by the row id `top` gave (its slot)."""
        return self.paths[self.pid[slot]], self.lpos[slot]


def _scope_version(conn: Any, scope: Scope) -> int:
    row = conn.execute("SELECT version FROM memdream_scopes WHERE scope = %s", (scope.key,)).fetchone()
    return row[0] if row else 0
