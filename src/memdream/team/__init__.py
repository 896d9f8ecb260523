"""The team server: memdream over PostgreSQL (issue 20, docs/team-server.md).

Many memdream processes on many machines share one database. The stored lines are the
files: each memory line is kept verbatim, keyed by (scope, file, position), beside the
parsed columns queries need; every other file of a scope is kept as bytes. A process holds
no state another process needs: it keeps a local copy of the scopes it serves (a cache,
refreshed from the database at the start of every operation) and runs the same engine on
it, so the line format, the write path, recall scoring and dreaming are the same code on
both stores. Every change to a scope is one transaction holding the scope's advisory lock,
acknowledged after commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memdream.config import Config
    from memdream.team.proxy import StoreMemory
    from memdream.team.store import TeamStore


def open_store(url: str, config: "Config", **kwargs: Any) -> "TeamStore":
    """A process's handle on the team database at `url` (migrated to this memdream's schema)."""
    from memdream.team.store import TeamStore

    return TeamStore(url, config, **kwargs)


def scope_handle(store: "TeamStore", user: str, agent: str) -> "StoreMemory":
    """The facade of one scope of the store: Memory's methods, one transaction per call."""
    from memdream.store.vault import Scope
    from memdream.team.proxy import StoreMemory

    return StoreMemory(store, Scope(user=user, agent=agent))


def redact(url: str) -> str:
    """A store URL without its password, for messages."""
    from memdream.team.store import redact as _redact

    return _redact(url)


def token_scope(store: "TeamStore", token: str) -> Any:
    """The Scope a live token serves, or None (team/tokens.py)."""
    from memdream.team.tokens import scope_of

    return scope_of(store, token)


def create_token(store: "TeamStore", scope: Any, label: str = "") -> str:
    from memdream.team.tokens import create

    return create(store, scope, label)


def list_tokens(store: "TeamStore", scope: Any = None, revoked: bool = False) -> list:
    from memdream.team.tokens import listing

    return listing(store, scope, revoked)


def revoke_token(store: "TeamStore", token_or_fingerprint: str) -> Any:
    from memdream.team.tokens import revoke

    return revoke(store, token_or_fingerprint)


def push_vault(store: "TeamStore", vault: Any, only: Any = None, progress: Any = None) -> Any:
    """Load a folder vault into the store (team/transfer.py)."""
    from memdream.team.transfer import push

    return push(store, vault, only, progress or (lambda s: None))


def scheduler(store: "TeamStore", say: Any = None) -> Any:
    """The team server's dream loop, not started (team/dreams.py)."""
    from memdream.team.dreams import StoreScheduler

    return StoreScheduler(store, say=say or (lambda s: None))


def export_vault(store: "TeamStore", to: Any, only: Any = None) -> Any:
    """Write the store's scopes (or one) to the folder `to` as a vault, byte for byte (team/transfer.py)."""
    from memdream.team.transfer import export

    return export(store, to, only)


def scope_files_of(root: Any, scope: Any) -> dict[str, bytes]:
    """The files of one scope of a folder vault, as the store keeps them (path -> bytes)."""
    from pathlib import Path

    from memdream.team.transfer import vault_scope_files

    return vault_scope_files(Path(root), scope)


def throwaway_cluster() -> tuple[Any, str]:
    """(a PostgreSQL cluster started in a temporary folder on a Unix socket, or None; why not):
    for the demo and the benchmarks (team/cluster.py). Stop it with `.stop()`."""
    from memdream.team.cluster import Cluster, available

    why = available()
    if not why:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError:
            why = "psycopg 3 is not installed (pip install -e '.[postgres]')"
    if why:
        return None, why
    import subprocess

    try:
        return Cluster().start(), ""
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = (getattr(exc, "stderr", b"") or b"").decode("utf-8", "replace").strip().splitlines()
        return None, f"PostgreSQL did not start: {detail[-1] if detail else exc}"
