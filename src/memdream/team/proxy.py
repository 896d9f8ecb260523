"""A Memory-shaped handle on one scope of the team store: every facade call is one session.

The shells (the MCP server, the web console, the CLI) talk to `Memory`. On the team server
they get a `StoreMemory` instead: the same methods, each run as one transaction of the
store (team/store.py): write calls under the scope's advisory lock, read calls on a
snapshot. Attributes that are not calls (scope, config, last_warning) are the scope's
Memory's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from memdream.store.vault import Scope

if TYPE_CHECKING:
    from memdream.team.store import TeamStore

# Facade calls that only read (a recall's hit counts are appended without the lock). Any
# other call takes the scope's lock.
READS = frozenset(
    {
        "get", "list", "history", "stats", "recall", "as_of", "snapshot", "context", "search_raw",
        "conflicts", "lookup", "generation", "versioned", "versions", "at_version", "lines_in",
        "scope_problems", "notes", "daily_logs", "daily_log", "resident_text", "diaries",
        "dream_records", "last_dream", "dreams_due", "relpath", "knowledge_status", "aggregate",
    }
)
LOCAL = frozenset({"close", "relpath"})  # calls that touch no file: run on the local Memory as they are


class StoreMemory:
    """`Memory`'s methods on one scope of a TeamStore."""

    def __init__(self, store: "TeamStore", scope: Scope) -> None:
        self._store = store
        self.scope = scope
        self._open: ContextVar[Any] = ContextVar(f"memdream_session_{id(self)}", default=None)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """Every call made inside runs in one session of the scope, under its lock: they
        commit together, or not at all."""
        if self._open.get() is not None:
            yield self
            return
        with self._store.session(self.scope, write=True) as mem:
            reset = self._open.set(mem)
            try:
                yield self
            finally:
                self._open.reset(reset)

    @contextmanager
    def at_version(self, entry_id: str, version: str | None) -> Iterator[Any]:
        """Memory.at_version on the store: the version is checked, and the changes made inside
        are made, in one transaction under the scope's lock (optimistic concurrency across
        processes: a stale version is refused, as on a folder vault)."""
        with self.transaction():
            with self._open.get().at_version(entry_id, version) as entry:
                yield entry

    def __enter__(self) -> "StoreMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @property
    def team_store(self) -> "TeamStore":
        return self._store

    @property
    def store_url(self) -> str:
        """The store's URL without its password."""
        from memdream.team.store import redact

        return redact(self._store.url)

    def scopes(self) -> list[Scope]:
        """Every scope the store holds."""
        return self._store.scopes()

    def export(self, to: Any, scope: Scope | None = None) -> Any:
        """The store's scopes (or one) as a folder vault, byte for byte (team/transfer.py)."""
        from memdream.team.transfer import export

        return export(self._store, to, scope)

    def doctor(self, fix: bool = False) -> Any:
        """The folder doctor over every scope of the store, each scope in turn brought into this
        process's copy (with `fix`, in a locked session, its repairs stored)."""
        removed: list[str] = []
        restored: list[str] = []
        unrestored: list[str] = []
        problems: list[Any] = []
        from memdream.doctor import Problem
        from memdream.team.schema import LATEST

        version = self._store.schema_version()
        if version != LATEST:
            problems.append(Problem(self.store_url, 0, f"the database's schema is version {version}, this memdream's is {LATEST}"))
        for s in self._store.scopes():
            with self._store.session(s, write=fix) as mem:
                r, ok, bad, found = mem.doctor(fix)
            removed += r
            restored += ok
            unrestored += bad
            problems += found
            problems += [Problem(self.store_url, 0, m) for m in self._store.check_scope(s, fix) if not (fix and m.endswith(("recounted", "derived again")))]
        return removed, restored, unrestored, problems

    def recall(self, query: str, k: int = 10, as_of: Any = None, rank_by: str = "score") -> list[Any]:
        """Recall runs on the database's own index and vectors (no local copy needed)."""
        if self._open.get() is not None:
            return self._call("recall")(query, k=k, as_of=as_of, rank_by=rank_by)
        return self._store.recall(self.scope, query, k, as_of, rank_by)

    def __setattr__(self, name: str, value: Any) -> None:
        """The proxy's own fields stay here; any other attribute (hit_flush_after, ...) is the
        scope's Memory's, as it would be on a folder vault."""
        if name in ("_store", "scope", "_open"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._store.memory_of(self.scope), name, value)

    def context(self, query: str | None = None, budget: int = 2000, k: int = 8, one_to_one: bool = True) -> Any:
        """Memory.context on the store. The resident snapshot is taken afresh each call: on the
        team server a request is its own session (another process may have changed the
        resident memory since this process last served the scope)."""
        def run(mem: Any) -> Any:
            from memdream.engine.recall import resident_budget

            mem.snapshot(resident_budget(budget), refresh=True)
            return mem.context(query, budget=budget, k=k, one_to_one=one_to_one)

        inside = self._open.get()
        if inside is not None:
            return run(inside)
        try:
            with self._store.session(self.scope, write=False) as mem:
                return run(mem)
        except self._needs_lock():
            with self._store.session(self.scope, write=True) as mem:
                return run(mem)

    @staticmethod
    def _needs_lock() -> type[Exception]:
        from memdream.team.store import NeedsLock

        return NeedsLock

    def embed_pending(self, limit: int | None = None, progress: Any = None) -> int:
        """Embed what lacks a vector, into the database (shared by every process)."""
        return self._store.embed_pending(self.scope, limit, progress)

    def __getattr__(self, name: str) -> Any:
        real = self._store.memory_of(self.scope)
        attr = getattr(type(real), name, None)
        if name.startswith("_") or not callable(attr):
            return getattr(real, name)
        if name == "close":
            return lambda: None  # the store owns the scope's Memory
        if name in LOCAL:
            return getattr(real, name)
        return self._call(name)

    def _call(self, name: str):  # type: ignore[no-untyped-def]
        from memdream.team.store import NeedsLock

        def call(*args: Any, **kwargs: Any) -> Any:
            inside = self._open.get()
            if inside is not None:  # within transaction(): the same session
                return getattr(inside, name)(*args, **kwargs)
            write = name not in READS
            try:
                with self._store.session(self.scope, write=write) as mem:
                    return getattr(mem, name)(*args, **kwargs)
            except NeedsLock:
                with self._store.session(self.scope, write=True) as mem:
                    return getattr(mem, name)(*args, **kwargs)

        call.__name__ = name
        return call
