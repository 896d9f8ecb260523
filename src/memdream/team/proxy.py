"""A Memory-shaped handle on one scope of the team store: every facade call is one session.

The shells (the MCP server, the web console, the CLI) talk to `Memory`. On the team server
they get a `StoreMemory` instead: the same methods, each run as one transaction of the
store (team/store.py): write calls under the scope's advisory lock, read calls on a
snapshot. Attributes that are not calls (scope, config, last_warning) are the scope's
Memory's own.
"""

from __future__ import annotations

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
        for s in self._store.scopes():
            with self._store.session(s, write=fix) as mem:
                r, ok, bad, found = mem.doctor(fix)
            removed += r
            restored += ok
            unrestored += bad
            problems += found
        return removed, restored, unrestored, problems

    def recall(self, query: str, k: int = 10, as_of: Any = None, rank_by: str = "score") -> list[Any]:
        """Keyword recall runs on the database's own index (no local copy needed); with an
        embedder, on the local copy, where the vectors are."""
        real = self._store.memory_of(self.scope)
        if real.core.embedder_configured:
            return self._call("recall")(query, k=k, as_of=as_of, rank_by=rank_by)
        real.core.last_warning = ""
        return self._store.recall(self.scope, query, k, as_of, rank_by)

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
            write = name not in READS
            try:
                with self._store.session(self.scope, write=write) as mem:
                    return getattr(mem, name)(*args, **kwargs)
            except NeedsLock:
                with self._store.session(self.scope, write=True) as mem:
                    return getattr(mem, name)(*args, **kwargs)

        call.__name__ = name
        return call
