"""The PostgreSQL store: a scope's files as rows, and the per-operation transaction.

`TeamStore.session(scope)` is how every operation on a scope runs on the team server:

1. BEGIN; take the scope's advisory lock (`pg_advisory_xact_lock`): the single writer, now
   across every process on every machine;
2. bring this process's local copy of the scope up to date: one query for the scope's
   version; when another process changed it, the files whose version moved are fetched;
3. run the operation with the same `Memory` as on a folder vault (its local copy: dedup and
   supersede candidates are read inside the lock);
4. write back every file the operation changed: a memory file's lines verbatim with their
   parsed columns, any other file as bytes; bump the versions; COMMIT. Only then does the
   operation return: a write is acknowledged after commit.

If the operation fails, or the process dies, the transaction rolls back and the local copy
is thrown away: the database holds exactly the acknowledged state. `session(scope,
write=False)` (recall, context, history, ...) takes no lock: it reads a consistent snapshot,
and a recall's hit counts (appended to the scope's hits journal) are appended in the
database without the lock.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdream.config import Config
from memdream.errors import ConfigError, MemdreamError, VaultError
from memdream.model import lazyre as re
from memdream.store.files import read_file
from memdream.store.vault import Scope, Vault
from memdream.team.schema import migrate

if TYPE_CHECKING:
    from memdream.clock import Clock
    from memdream.embed.embedder import Embedder
    from memdream.llm.client import LLM
    from memdream.memory import Memory

ENV_STORE = "MEMDREAM_STORE"
ENV_CACHE = "MEMDREAM_TEAM_CACHE"
ENV_POSTINGS_MIN = "MEMDREAM_TEAM_POSTINGS_MIN"  # lines from which a scope's postings are copied into the process; "off": never
# Memory files (their content is stored as lines): the resident file, recall and archive parts.
_MEMORY_FILE = re.compile(r"^scopes/[^/]+/[^/]+/(?:MEMORY\.md|memory/recall/[^/.][^/]*\.md|memory/\.archive/entries/[^/.][^/]*\.md)$")
MAX_COPIES = 256  # scopes a process keeps a copy of at once (least recently used ones are dropped)
_OLD_MTIME_S = 120  # the local copy's files are dated this far back: the writer takes them as at rest at once
# Keyword recall on a scope of at least this many lines uses an in-process copy of its postings
# (team/postings.py): below, the database answers in a few milliseconds (16-27 ms at 100k).
POSTINGS_MIN_ENTRIES = 50_000
POSTINGS_MAX_LINES = 4_000_000  # lines held in such copies at once, all scopes (least recently used dropped)
POSTINGS_RETRY_S = 60.0  # a copy whose build failed is tried again after this long


class NeedsLock(Exception):
    """A call taken for a read changed more than its hits journal: it is run again under the
    scope's lock (its first run was rolled back)."""


def is_store_url(value: str) -> bool:
    return value.startswith(("postgresql://", "postgres://"))


def check_url(url: str) -> str:
    if not is_store_url(url):
        raise ConfigError(
            f"the store {url!r} is not a PostgreSQL URL",
            "give --store postgresql://USER@HOST/DB (or MEMDREAM_STORE, or [store] url in memdream.toml)",
        )
    return url


def scope_lock_key(scope: Scope) -> str:
    return f"memdream:scope:{scope.key}"


def state_paths(scope: Scope) -> tuple[str, str]:
    """The scope's files that live in the vault's state folder: its recall counts waiting to
    be folded into the files, and its dream state."""
    stem = f"{scope.agent}__{scope.user}"
    return (f".memdream/hits/{stem}.jsonl", f".memdream/dream-{stem}.json")


def scope_prefix(scope: Scope) -> str:
    return f"scopes/{scope.agent}/{scope.user}/"


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def is_memory_file(rel: str) -> bool:
    return bool(_MEMORY_FILE.match(rel))


def local_files(root: Path, scope: Scope) -> dict[str, os.stat_result]:
    """Every regular file of `scope` in the vault at `root` (relative path -> lstat), temp
    files of a writer left out."""
    out: dict[str, os.stat_result] = {}
    base = root / scope_prefix(scope)
    if base.is_dir():
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
            for name in filenames:
                if is_temp(name):
                    continue
                p = Path(dirpath) / name
                st = p.lstat()
                if not p.is_symlink() and os.path.isfile(p):
                    out[p.relative_to(root).as_posix()] = st
    for rel in state_paths(scope):
        p = root / rel
        try:
            st = p.lstat()
        except FileNotFoundError:
            continue
        if os.path.isfile(p) and not p.is_symlink():
            out[rel] = st
    return out


def _remove_dead_copies(parent: Path) -> None:
    """Remove the copies that processes killed on this machine left behind (their folder names
    carry their pid; a live process's copy is never touched)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("memdream-team-")]
    except OSError:
        return
    for name in names:
        pid = name.split("-")[2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (or not ours to signal): keep it
        except ProcessLookupError:
            shutil.rmtree(parent / name, ignore_errors=True)
        except PermissionError:
            continue


def _sig(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


@dataclass
class _Copy:
    """This process's copy of one scope: the scope version it reflects, and per file the
    database version and the local file's signature as materialized."""

    root: Path
    version: int = -1
    files: dict[str, tuple[int, tuple[int, int, int]]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    memory: "Memory | None" = None


def encode_file(rel: str, data: bytes) -> tuple[str, bool, bytes | None]:
    """How a file is stored: (kind, final_newline, bytes for kind 'b'); a kind 'm' file's
    content is its lines (see TeamStore._store_file)."""
    if not is_memory_file(rel):
        return "b", True, data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "b", True, data  # kept byte for byte (issue 17 item 12): no lines to parse
    if "\x00" in text:
        return "b", True, data  # PostgreSQL text cannot hold NUL
    return "m", text.endswith("\n") or text == "", None


def file_lines(data: bytes) -> list[str]:
    """The lines of a kind 'm' file, split as parse_document splits them ("\n" only)."""
    text = data.decode("utf-8")
    if text == "":
        return []
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def decode_rows(kind: str, final_newline: bool, data: bytes | None, lines: list[str]) -> bytes:
    if kind == "b":
        return bytes(data or b"")
    if not lines:
        return b""
    body = "\n".join(lines)
    return (body + "\n" if final_newline else body).encode("utf-8")


class TeamStore:
    """One process's handle on the team database: a connection pool, and a local copy of the
    scopes this process has served (a cache in a private temporary folder)."""

    def __init__(
        self,
        url: str,
        config: Config,
        *,
        clock: "Clock | None" = None,
        embedder: "Embedder | None" = None,
        llm: "LLM | None" = None,
        cache_dir: str | os.PathLike[str] | None = None,
        pool_size: int = 8,
        migrate_schema: bool = True,
        postings_min_entries: int | None = None,
    ) -> None:
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise MemdreamError(
                "the team server needs the PostgreSQL driver psycopg 3 (the 'postgres' extra)",
                "in the memdream clone: .venv/bin/pip install -e '.[postgres]'",
            ) from exc
        self.url = check_url(url)
        min_entries = _postings_min(os.environ.get(ENV_POSTINGS_MIN)) if postings_min_entries is None else postings_min_entries
        self.config = config
        self.clock = clock
        self.embedder = embedder
        self.llm = llm
        self.holder = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        parent = cache_dir or os.environ.get(ENV_CACHE) or None
        _remove_dead_copies(Path(parent or tempfile.gettempdir()))
        self.cache = Path(tempfile.mkdtemp(prefix=f"memdream-team-{os.getpid()}-", dir=parent))
        self._copies: dict[str, _Copy] = {}
        self._vector_stores: dict[str, Any] = {}
        # Scopes of at least this many lines get an in-process copy of their postings for
        # keyword recall (team/postings.py), built in the background; None: the default.
        self.postings_min_entries = min_entries
        self._postings: dict[str, Any] = {}  # scope key -> ScopePostings, or a _Building while one is built
        self._postings_lock = threading.Lock()
        self._closed = threading.Event()
        self._copies_lock = threading.Lock()
        try:
            self.pool = ConnectionPool(self.url, min_size=1, max_size=pool_size, open=True, timeout=30, kwargs={"autocommit": False})
            self.pool.wait(timeout=30)
        except Exception as exc:  # psycopg's OperationalError, pool timeouts
            shutil.rmtree(self.cache, ignore_errors=True)
            raise VaultError(f"cannot connect to the store {redact(self.url)}: {exc}", "check that PostgreSQL is running and the URL, user and database are right") from exc
        if migrate_schema:
            with self.pool.connection() as conn:
                migrate(conn)

    def close(self) -> None:
        self._closed.set()
        with self._copies_lock:
            for copy in self._copies.values():
                if copy.memory is not None:
                    copy.memory.close()
            self._copies.clear()
        self.pool.close()
        shutil.rmtree(self.cache, ignore_errors=True)

    def __enter__(self) -> "TeamStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the per-operation transaction
    def _copy(self, scope: Scope) -> _Copy:
        with self._copies_lock:
            copy = self._copies.pop(scope.key, None)
            if copy is not None:
                self._copies[scope.key] = copy  # the most recently used last
            else:
                self._evict()
                # A vault of its own per scope: its index's term statistics are the scope's
                # alone, so a ranking never depends on which other scopes a process serves
                # (and one tenant's words never shift another's scores).
                root = self.cache / f"{scope.agent}__{scope.user}"
                Vault(root).init()
                copy = self._copies[scope.key] = _Copy(root)
            return copy

    def _evict(self) -> None:
        """Keep at most MAX_COPIES scopes' copies: the least recently used one not in use goes
        (its folder and index; the database holds everything it held)."""
        for key in list(self._copies):
            if len(self._copies) < MAX_COPIES:
                return
            copy = self._copies[key]
            if not copy.lock.acquire(blocking=False):
                continue
            try:
                if copy.memory is not None:
                    copy.memory.close()
                del self._copies[key]
                shutil.rmtree(copy.root, ignore_errors=True)
            finally:
                copy.lock.release()

    def _memory(self, scope: Scope, copy: _Copy) -> "Memory":
        if copy.memory is None:
            from memdream.memory import Memory

            cfg = dataclasses.replace(self.config, vault=copy.root, user=scope.user, agent=scope.agent)
            copy.memory = Memory(cfg, self.clock, self.embedder, self.llm)
        return copy.memory

    def memory_of(self, scope: Scope) -> "Memory":
        """The scope's Memory on the local copy, as it stands (no refresh: use `session`)."""
        return self._memory(scope, self._copy(scope))

    @contextmanager
    def session(self, scope: Scope, write: bool = True) -> Iterator["Memory"]:
        """The scope's Memory for one operation, inside its transaction (see the module)."""
        copy = self._copy(scope)
        with copy.lock, self.pool.connection() as conn:
            tail = b""
            if not write:
                conn.isolation_level = 3  # REPEATABLE READ: one snapshot for the refresh
            try:
                with conn.transaction():
                    conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                    if write:
                        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (scope_lock_key(scope),))
                    version = self._refresh(conn, scope, copy)
                    mem = self._memory(scope, copy)
                    yield mem
                    tail = self._write_back(conn, scope, copy, version, write)
                if tail:
                    # A read's hit counts, appended after its snapshot, at READ COMMITTED: in the
                    # snapshot, the append would fail whenever another process appended (or wrote)
                    # since the snapshot began (a serialization failure).
                    conn.isolation_level = None
                    with conn.transaction():
                        conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                        self._append(conn, scope, state_paths(scope)[0], tail)
            except BaseException:
                self._forget(scope, copy)  # the local copy may hold what the database does not
                raise
            finally:
                conn.isolation_level = None

    def _forget(self, scope: Scope, copy: _Copy) -> None:
        copy.version = -1
        copy.files.clear()

    def _refresh(self, conn: Any, scope: Scope, copy: _Copy) -> int:
        """Make the local copy equal the database's scope; returns the scope's version."""
        row = conn.execute("SELECT version FROM memdream_scopes WHERE scope = %s", (scope.key,)).fetchone()
        version = row[0] if row else 0
        if version == copy.version and copy.version >= 0:
            return version
        wanted = dict(conn.execute("SELECT path, version FROM memdream_files WHERE scope = %s", (scope.key,)).fetchall())
        present = local_files(copy.root, scope)
        for rel in present:
            if rel not in wanted:
                (copy.root / rel).unlink()
                copy.files.pop(rel, None)
        stale = [rel for rel, v in wanted.items() if rel not in present or copy.files.get(rel, (None, None))[0] != v or copy.files[rel][1] != _sig(present[rel])]
        if stale:
            for rel, data, v in self._fetch(conn, scope, stale):
                copy.files[rel] = (v, self._put_local(copy.root, rel, data))
        copy.version = version
        return version

    def _fetch(self, conn: Any, scope: Scope, paths: list[str]) -> Iterator[tuple[str, bytes, int]]:
        heads = conn.execute(
            "SELECT path, version, kind, final_newline, data FROM memdream_files WHERE scope = %s AND path = ANY(%s)",
            (scope.key, paths),
        ).fetchall()
        line_paths = [h[0] for h in heads if h[2] == "m"]
        lines: dict[str, list[str]] = {p: [] for p in line_paths}
        if line_paths:
            for path, line in conn.execute(
                "SELECT path, line FROM memdream_lines WHERE scope = %s AND path = ANY(%s) ORDER BY path, pos",
                (scope.key, line_paths),
            ):
                lines[path].append(line)
        appended: dict[str, bytes] = {}
        byte_paths = [h[0] for h in heads if h[2] == "b"]
        if byte_paths:  # what was appended to them since they were last stored, in order
            appended = dict(
                conn.execute(
                    "SELECT path, string_agg(data, ''::bytea ORDER BY seq) FROM memdream_appends WHERE scope = %s AND path = ANY(%s) GROUP BY path",
                    (scope.key, byte_paths),
                ).fetchall()
            )
        for path, version, kind, final_newline, data in heads:
            if path in appended:
                data = bytes(data or b"") + bytes(appended[path])
            yield path, decode_rows(kind, final_newline, data, lines.get(path, [])), version

    def _put_local(self, root: Path, rel: str, data: bytes) -> tuple[int, int, int]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        old = time.time() - _OLD_MTIME_S
        os.utime(tmp, (old, old))
        os.replace(tmp, path)
        return _sig(path.lstat())

    def _write_back(self, conn: Any, scope: Scope, copy: _Copy, version: int, locked: bool) -> bytes:
        """Store what the operation changed. Unlocked (a read): nothing is stored here; returns
        the hits journal's new tail, for the caller to append after the read's snapshot."""
        present = local_files(copy.root, scope)
        changed = [rel for rel, st in present.items() if rel not in copy.files or copy.files[rel][1] != _sig(st)]
        gone = [rel for rel in copy.files if rel not in present]
        if not changed and not gone:
            return b""
        if not locked:
            return self._unlocked_tail(scope, copy, changed, gone)
        # Appends (recall counts) take the scope's second lock, then the scope's row, then the
        # journal's row; a write takes them in the same order (no deadlock), after its own lock.
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (scope_lock_key(scope),))
        # The version moves on from the database's, not from the refresh's: an append may have
        # bumped it meanwhile, and two states under one version would let a copy refreshed in
        # between look current (and its next write drop this one's).
        new_version = conn.execute(
            "INSERT INTO memdream_scopes (scope, version) VALUES (%s, 1) "
            "ON CONFLICT (scope) DO UPDATE SET version = memdream_scopes.version + 1 RETURNING version",
            (scope.key,),
        ).fetchone()[0]
        hits = state_paths(scope)[0]
        for rel in gone:
            kept = self._with_appended(conn, scope, copy, rel, b"") if rel == hits else b""
            if kept:  # the journal was folded and removed here, but other recalls appended since
                self._store_file(conn, scope, rel, kept, new_version)
            else:
                self._delete_file(conn, scope, rel)
            copy.files.pop(rel, None)
        for rel in changed:
            data, _ = read_file(copy.root / rel)
            if rel == hits:
                data = self._with_appended(conn, scope, copy, rel, data)
            self._store_file(conn, scope, rel, data, new_version)
            copy.files[rel] = (new_version, _sig(present[rel]))
            if rel == hits:
                copy.files.pop(rel)  # what was appended meanwhile is fetched next time
        if version == 0:  # a scope's first write: it gets a dream job
            conn.execute("INSERT INTO memdream_dream_jobs (scope) VALUES (%s) ON CONFLICT DO NOTHING", (scope.key,))
        # Appended to meanwhile: the next operation looks at each file's version again.
        copy.version = new_version if new_version == version + 1 else -1
        return b""

    def _delete_file(self, conn: Any, scope: Scope, rel: str) -> None:
        from memdream.team.fulltext import apply_counts, counts, negated

        conn.execute("DELETE FROM memdream_postings WHERE scope = %s AND path = %s", (scope.key, rel))
        gone = conn.execute("DELETE FROM memdream_lines WHERE scope = %s AND path = %s RETURNING tok", (scope.key, rel)).fetchall()
        df, n, total = counts(t for (t,) in gone)
        apply_counts(conn, scope, negated(df), -n, -total)
        conn.execute("DELETE FROM memdream_appends WHERE scope = %s AND path = %s", (scope.key, rel))
        conn.execute("DELETE FROM memdream_files WHERE scope = %s AND path = %s", (scope.key, rel))

    def _with_appended(self, conn: Any, scope: Scope, copy: _Copy, rel: str, data: bytes) -> bytes:
        """The hits journal as this operation left it, plus what recalls of other processes
        appended since it was fetched (appends take the scope's second lock, and only an
        operation holding the first rewrites the journal, so the stored one extends the fetched)."""
        stored = next((data for _, data, _ in self._fetch(conn, scope, [rel])), b"")
        seen = copy.files[rel][1][2] if rel in copy.files else 0
        return data + stored[seen:] if len(stored) > seen else data

    def _store_file(self, conn: Any, scope: Scope, rel: str, data: bytes, version: int) -> None:
        """Store one file: its head row, and for a memory file the lines that differ from the
        stored ones, position by position (an append or a changed line touches one row), with
        the full-text columns and the scope's term statistics kept in step."""
        from memdream.team.fulltext import delete_lines, insert_lines

        kind, final_newline, blob = encode_file(rel, data)
        conn.execute("DELETE FROM memdream_appends WHERE scope = %s AND path = %s", (scope.key, rel))  # `data` holds them (see _with_appended)
        conn.execute(
            "INSERT INTO memdream_files (scope, path, version, kind, final_newline, data) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (scope, path) DO UPDATE SET version = EXCLUDED.version, kind = EXCLUDED.kind, final_newline = EXCLUDED.final_newline, data = EXCLUDED.data",
            (scope.key, rel, version, kind, final_newline, blob),
        )
        old = dict(conn.execute("SELECT pos, line FROM memdream_lines WHERE scope = %s AND path = %s", (scope.key, rel)).fetchall())
        new = file_lines(data) if kind == "m" else []
        delete_lines(conn, scope, rel, [pos for pos, line in old.items() if pos >= len(new) or new[pos] != line])
        insert_lines(conn, scope, rel, [(pos, line) for pos, line in enumerate(new) if old.get(pos) != line])

    def _unlocked_tail(self, scope: Scope, copy: _Copy, changed: list[str], gone: list[str]) -> bytes:
        """A read-only operation changed files: only appending to its hits journal is allowed
        without the lock (many recalls at once); returns the tail to append. The local copy of
        the journal is fetched again at the next operation (others may append too)."""
        hits, _ = state_paths(scope)
        old = copy.files.get(hits)
        data, _ = read_file(copy.root / hits) if hits in changed else (b"", None)
        known = old[1][2] if old is not None else 0  # the size it had when materialized
        if gone or any(rel != hits for rel in changed) or len(data) < known:
            raise NeedsLock(f"{', '.join(sorted(set(changed) | set(gone)))} of scope {scope.key} changed")
        copy.files.pop(hits, None)
        copy.version = -1
        return data[known:]

    # -- recall on the database's own index (keyword; no local copy needed)
    def recall(self, scope: Scope, query: str, k: int = 10, as_of: Any = None, rank_by: str = "score") -> list[Any]:
        """The scope's `k` best memories for `query`, scored by the same code as on a folder
        vault (recall/search.py) over the database's full-text index (team/fulltext.py): any
        process answers at once, whatever scopes it has a copy of. The hits are counted in
        the scope's hits journal, as a folder vault's recall counts them."""
        import json

        from memdream.engine.recall import parse_as_of
        from memdream.errors import RefusedInput
        from memdream.recall.search import recall as recall_hits
        from memdream.recall.slots import collapse as collapse_slots
        from memdream.model.entry import ARCHIVE, RECALL, RESIDENT
        from memdream.model.scoring import DEFAULT_COSINE_WEIGHT
        from memdream.team.fulltext import PgIndex
        from memdream.team.vectors import cosine_weight

        if not isinstance(query, str):
            raise RefusedInput("the query must be a string", "pass the question as plain text")
        if rank_by not in ("score", "relevance"):
            raise RefusedInput(f"unknown ranking {rank_by!r}", "use 'score' (relevance lifted by recency and importance) or 'relevance'")
        mem = self.memory_of(scope)
        when = parse_as_of(mem.core, as_of)
        now = mem.clock.now()
        vectors = self._vectors(mem)
        with self.pool.connection() as conn:
            mem.core.last_warning = ""
            if vectors is not None and query.strip():
                try:
                    with conn.transaction():
                        conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                        vectors.embed_pending(conn, scope)
                except Exception as exc:  # noqa: BLE001 - any embedder failure degrades to keyword recall
                    mem.core.last_warning = f"embedder unavailable, keyword relevance only: {exc}"
                    vectors = None
            conn.isolation_level = 3  # REPEATABLE READ: statistics and rows from one snapshot
            try:
                with conn.transaction():
                    conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                    index = PgIndex(conn, scope, postings=self._scope_postings(conn, scope) if when is None else None)
                    layers = (RESIDENT, RECALL) if when is None else (RESIDENT, RECALL, ARCHIVE)
                    dense = None
                    if vectors is not None and query.strip():
                        try:
                            dense = vectors.dense(conn, index, scope, query, layers)
                        except Exception as exc:  # noqa: BLE001 - as above
                            mem.core.last_warning = f"embedder unavailable, keyword relevance only: {exc}"
                    hits = recall_hits(
                        index, scope, query, max(0, int(k)), now, as_of=when, rank_by=rank_by, dense=dense, fusion=self.config.fusion,
                        cosine_weight=cosine_weight(vectors.embedder, query) if dense is not None and vectors is not None else DEFAULT_COSINE_WEIGHT,
                    )  # fmt: skip
                    hits = [h for h in hits if not h.entry.pending]
                    if when is None:
                        hits = collapse_slots(hits)
            finally:
                conn.isolation_level = None
            if hits and when is None:  # the counts, after the snapshot (see session)
                lines = "".join(json.dumps({"id": h.entry.id, "at": now.isoformat()}) + "\n" for h in hits if h.entry.id)
                with conn.transaction():
                    conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                    self._append(conn, scope, state_paths(scope)[0], lines.encode("utf-8"))
        return hits

    # -- in-process postings of large scopes (team/postings.py)
    def _scope_postings(self, conn: Any, scope: Scope) -> Any:
        """The scope's postings copy brought to the connection's snapshot, as (copy, version);
        None when the scope is small, or its copy is being built (started here if it is not),
        or is ahead of this snapshot: the database's own path answers then."""
        from memdream.index.db import _has_numpy
        from memdream.team.postings import ScopePostings

        row = conn.execute(
            "SELECT s.entries, v.version FROM memdream_scope_stats s JOIN memdream_scopes v ON v.scope = s.scope WHERE s.scope = %s", (scope.key,)
        ).fetchone()
        if not row or row[0] < self.postings_min_entries or not _has_numpy():
            return None
        with self._postings_lock:
            held = self._postings.pop(scope.key, None)
            if held is not None:
                self._postings[scope.key] = held  # the most recently used last
        if held is None or (isinstance(held, _Failed) and time.monotonic() >= held.retry_at):
            self._build_postings(scope)
            return None
        if not isinstance(held, ScopePostings):
            return None
        with held.lock:
            if not held.follow(conn, scope, row[1]):
                return None
            version = held.version
            if held.worn and not held.rebuilding and time.monotonic() >= held.retry_at:
                held.rebuilding = True
                self._build_postings(scope, replacing=True)
        return held, version

    def _build_postings(self, scope: Scope, replacing: bool = False) -> None:
        """Build the scope's postings copy in a thread of its own (a copy it replaces serves
        meanwhile)."""
        with self._postings_lock:
            if self._closed.is_set() or isinstance(self._postings.get(scope.key), _Building):
                return
            building = _Building()
            if not replacing:
                self._postings[scope.key] = building
        threading.Thread(target=self._postings_build, args=(scope, building, replacing), name=f"memdream-postings-{scope.key}", daemon=True).start()

    def _postings_build(self, scope: Scope, building: "_Building", replacing: bool = False) -> None:
        from memdream.team.postings import ScopePostings

        try:
            with self.pool.connection() as conn:
                conn.isolation_level = 3  # REPEATABLE READ: the copy is one snapshot of the scope
                try:
                    with conn.transaction():
                        conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                        built: Any = ScopePostings.load(conn, scope)
                finally:
                    conn.isolation_level = None
        except Exception:  # noqa: BLE001 - a cache: recall keeps the database's path, and tries again later
            built = _Failed(time.monotonic() + POSTINGS_RETRY_S)
        with self._postings_lock:
            old = self._postings.get(scope.key)
            if isinstance(built, _Failed) and replacing and isinstance(old, ScopePostings):
                old.rebuilding = False  # the worn copy keeps serving (it is still exact); tried again later
                old.retry_at = time.monotonic() + POSTINGS_RETRY_S
            elif not self._closed.is_set():
                self._postings.pop(scope.key, None)
                self._postings[scope.key] = built
                held = [k for k, v in self._postings.items() if hasattr(v, "live")]
                while len(held) > 1 and sum(self._postings[k].live + self._postings[k].dead for k in held) > POSTINGS_MAX_LINES:
                    del self._postings[held.pop(0)]
        building.done.set()

    def postings_ready(self, scope: Scope, timeout: float = 60.0) -> bool:
        """Build the scope's postings copy now if it has none and wait for it (a server warming
        up, a benchmark, a test); True when one is held. Recall never waits: it reads the
        database meanwhile."""
        from memdream.team.postings import ScopePostings

        with self._postings_lock:
            held = self._postings.get(scope.key)
        if not isinstance(held, (ScopePostings, _Building)):
            self._build_postings(scope)
            with self._postings_lock:
                held = self._postings.get(scope.key)
        if isinstance(held, _Building):
            held.done.wait(timeout)
        with self._postings_lock:
            return isinstance(self._postings.get(scope.key), ScopePostings)

    def postings_status(self) -> dict[str, dict[str, int]]:
        """Per scope whose postings this process holds a copy of: its lines, the lines dropped
        since it was built (changed or removed), the scope version it reflects, and how many
        keyword searches it answered."""
        with self._postings_lock:
            held = [(k, v) for k, v in self._postings.items() if hasattr(v, "live")]
        return {k: {"lines": v.live, "dropped": v.dead, "version": v.version, "served": v.served} for k, v in held}

    def embed_pending(self, scope: Scope, limit: int | None = None, progress: Any = None) -> int:
        """Embed the scope's current texts that have no vector in the database for the
        configured embedder (0 without one); returns how many were embedded."""
        vectors = self._vectors(self.memory_of(scope))
        if vectors is None:
            return 0
        done = 0
        while limit is None or done < limit:
            step = 1024 if limit is None else min(1024, limit - done)
            with self.pool.connection() as conn, conn.transaction():
                conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
                n = vectors.embed_pending(conn, scope, step)
            done += n
            if progress is not None and n:
                progress(done, done)
            if n < step:
                break
        return done

    def _vectors(self, mem: "Memory") -> Any:
        """The database's embeddings for the configured embedder (None: keyword only)."""
        if not mem.core.embedder_configured:
            return None
        from memdream.team.vectors import PgVectors

        model = mem.core.embedder.model_id
        found = self._vector_stores.get(model)
        if found is None:
            found = self._vector_stores[model] = PgVectors(mem.core.embedder)
        return found

    def _append(self, conn: Any, scope: Scope, rel: str, tail: bytes) -> None:
        """Append to a scope's state file (its hits journal) without the scope's lock, at READ
        COMMITTED: appends from many processes are serialized by the scope's second lock, and
        take the scope's row before the file's, as a write does."""
        if not tail:
            return
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (scope_lock_key(scope),))
        conn.execute(
            "INSERT INTO memdream_scopes (scope, version) VALUES (%s, 1) ON CONFLICT (scope) DO UPDATE SET version = memdream_scopes.version + 1",
            (scope.key,),
        )
        # The tail is a row of its own (memdream_appends), not concatenated to the stored bytes:
        # `data || tail` rewrote the whole journal on every recall (3-6 ms at 300 KB, growing
        # until a dream folds it). The file's version still moves, so copies fetch it again.
        conn.execute(
            "INSERT INTO memdream_files (scope, path, version, kind, data) VALUES (%s, %s, 0, 'b', ''::bytea) "
            "ON CONFLICT (scope, path) DO UPDATE SET version = memdream_files.version + 1",
            (scope.key, rel),
        )
        conn.execute("INSERT INTO memdream_appends (scope, path, data) VALUES (%s, %s, %s)", (scope.key, rel, tail))

    def health(self) -> tuple[bool, str]:
        """(the database answers, what it said): for a load balancer's health check."""
        try:
            with self.pool.connection(timeout=5) as conn:
                version = conn.execute("SELECT max(version) FROM memdream_schema").fetchone()[0]
                conn.rollback()
            return True, f"schema {version}"
        except Exception as exc:  # any failure to reach the database is 'unhealthy'
            return False, str(exc).splitlines()[0] if str(exc) else type(exc).__name__

    def check_scope(self, scope: Scope, fix: bool = False) -> list[str]:
        """What the database holds for the scope that its lines do not bear out: lines whose
        derived columns differ from what the line gives (an older tokenizer, or an edit made
        around memdream), term statistics that differ from a count over the stored tokens.
        With `fix`, both are derived again from the lines (the lines themselves, the truth,
        are never changed). Returns one message per problem found."""
        from memdream.team.fulltext import apply_counts, counts, rederive, stale_lines

        problems: list[str] = []
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
            if fix:
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (scope_lock_key(scope),))
            stale, toks = stale_lines(conn, scope)
            for path, pos, _ in stale:
                problems.append(
                    f"{path}:{pos + 1}: the stored columns do not match the line"
                    + ("; derived again" if fix else " ('memdream doctor --fix --store ...' derives them again)")
                )
            if fix and stale:
                rederive(conn, scope, stale)
                toks = [t for (t,) in conn.execute("SELECT tok FROM memdream_lines WHERE scope = %s", (scope.key,))]
            want, n, total = counts(toks)
            have = dict(conn.execute("SELECT term, df FROM memdream_terms WHERE scope = %s", (scope.key,)).fetchall())
            stats = conn.execute("SELECT entries, tokens FROM memdream_scope_stats WHERE scope = %s", (scope.key,)).fetchone() or (0, 0)
            off = sorted(t for t in set(want) | set(have) if want.get(t, 0) != have.get(t, 0))
            if off or tuple(stats) != (n, total):
                problems.append(
                    f"{scope.key}: the full-text statistics disagree with the stored lines ({len(off)} term(s), entries {stats[0]} vs {n})"
                    + ("; recounted" if fix else "; 'memdream doctor --fix --store ...' recounts them")
                )
                if fix:
                    conn.execute("DELETE FROM memdream_terms WHERE scope = %s", (scope.key,))
                    conn.execute("DELETE FROM memdream_scope_stats WHERE scope = %s", (scope.key,))
                    apply_counts(conn, scope, want, n, total)
        return problems

    def schema_version(self) -> int:
        with self.pool.connection() as conn:
            version = conn.execute("SELECT max(version) FROM memdream_schema").fetchone()[0]
            conn.rollback()
        return int(version or 0)

    # -- scopes and whole files, for push / export / doctor
    def scopes(self) -> list[Scope]:
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT scope FROM memdream_scopes ORDER BY scope").fetchall()
        return [Scope.from_key(r[0]) for r in rows]

    def scope_files(self, scope: Scope) -> dict[str, bytes]:
        """Every file of the scope as the folder store would hold it (relative to the vault)."""
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
            paths = [r[0] for r in conn.execute("SELECT path FROM memdream_files WHERE scope = %s ORDER BY path", (scope.key,))]
            return {rel: data for rel, data, _ in self._fetch(conn, scope, paths)}

    def put_scope_files(self, scope: Scope, files: dict[str, bytes]) -> tuple[int, int]:
        """Make the scope's files exactly `files` (push): under the scope's lock, files that
        differ are written, files not in `files` are deleted. Returns (written, deleted)."""
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (scope_lock_key(scope),))
            row = conn.execute("SELECT version FROM memdream_scopes WHERE scope = %s", (scope.key,)).fetchone()
            version = (row[0] if row else 0) + 1
            have_paths = [r[0] for r in conn.execute("SELECT path FROM memdream_files WHERE scope = %s", (scope.key,))]
            have = {rel: data for rel, data, _ in self._fetch(conn, scope, have_paths)}
            written = deleted = 0
            for rel in sorted(have):
                if rel not in files:
                    self._delete_file(conn, scope, rel)
                    deleted += 1
            for rel, data in sorted(files.items()):
                if have.get(rel) != data:
                    self._store_file(conn, scope, rel, data, version)
                    written += 1
            conn.execute(
                "INSERT INTO memdream_scopes (scope, version) VALUES (%s, %s) ON CONFLICT (scope) DO UPDATE SET version = EXCLUDED.version",
                (scope.key, version if (written or deleted or row is None) else version - 1),
            )
            conn.execute("INSERT INTO memdream_dream_jobs (scope) VALUES (%s) ON CONFLICT DO NOTHING", (scope.key,))
        return written, deleted


def _postings_min(value: str | None) -> int:
    """MEMDREAM_TEAM_POSTINGS_MIN: a number of lines, or "off" (no scope is copied)."""
    if value is None or not value.strip():
        return POSTINGS_MIN_ENTRIES
    if value.strip().lower() in ("off", "never", "no", "false"):
        return 2**62
    try:
        return max(0, int(value.replace("_", "")))
    except ValueError as exc:
        raise ConfigError(
            f"{ENV_POSTINGS_MIN}={value!r} is neither a number of lines nor 'off'",
            f"set {ENV_POSTINGS_MIN} to a number (e.g. 50000, the default) or to 'off'",
        ) from exc


@dataclass
class _Building:
    """A scope's postings copy being built."""

    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Failed:
    """A scope's postings copy whose build failed: tried again after `retry_at`."""

    retry_at: float


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
