"""Shared fixtures: real vaults in tmp_path, real SQLite, a frozen clock at the edge."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.memory import Memory

CST = timezone(timedelta(hours=8))


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory):  # type: ignore[no-untyped-def]
    """Derived model files (the use embedder's uncompressed weights) go to a folder of this test
    session, never to the user's ~/.cache; processes the tests start inherit it."""
    import os

    os.environ["MEMDREAM_CACHE_DIR"] = str(tmp_path_factory.mktemp("model-cache"))


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(datetime(2026, 6, 1, 9, 0, tzinfo=CST))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return tmp_path / "vault"


@pytest.fixture
def mem(vault: Path, clock: FrozenClock):
    m = Memory(load_config(vault, "me", "main", env={}), clock)
    m.vault.init()
    yield m
    m.close()


@pytest.fixture
def open_scope(vault: Path, clock: FrozenClock):
    """Open more scopes (or more handles on one scope) of the same vault."""
    opened: list[Memory] = []

    def make(user: str = "me", agent: str = "main") -> Memory:
        m = Memory(load_config(vault, user, agent, env={}), clock)
        m.vault.init()
        opened.append(m)
        return m

    yield make
    for m in opened:
        m.close()


@pytest.fixture
def soak():  # type: ignore[no-untyped-def]
    """bench/soak.py, whose concurrency and crash trials the suite runs at a smaller size."""
    bench = str(Path(__file__).resolve().parent.parent / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)  # spawned workers inherit it
    import soak as module  # type: ignore[import-not-found]

    return module


# -- the team server's PostgreSQL (issue 20): one throwaway cluster per test session

@pytest.fixture(scope="session")
def pg_cluster():  # type: ignore[no-untyped-def]
    """A real PostgreSQL 15 started for this test session (src/memdream/team/cluster.py), stopped after.
    Skipped where PostgreSQL or psycopg is missing, unless MEMDREAM_PG_TESTS=required (.ci/run
    installs both and sets it: in CI these tests run, never skip)."""
    import os

    from memdream.team import throwaway_cluster

    cluster, why = throwaway_cluster()
    if cluster is None:
        if os.environ.get("MEMDREAM_PG_TESTS") == "required":
            pytest.fail(f"MEMDREAM_PG_TESTS=required but {why}")
        pytest.skip(why)
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster, request):  # type: ignore[no-untyped-def]
    """A fresh database (owned by an ordinary role, so row-level security applies) for one test,
    dropped after it. (Each is a copy of template1, about 12 MB: the suite's 80-odd kept to the
    end were about a gigabyte of writes, and removing them took 7 to 24 s of the last test.)"""
    import re
    import uuid

    import psycopg

    name = re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:6]
    yield pg_cluster.new_database(name)
    # The fixtures that use the database closed their pools first (they depend on this one);
    # FORCE ends whatever a test's own processes left connected.
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def team_store(pg_url, tmp_path: Path, clock: FrozenClock):  # type: ignore[no-untyped-def]
    """A TeamStore on a fresh database, with the suite's frozen clock."""
    from memdream.team import open_store

    store = open_store(pg_url, load_config(tmp_path / "cfg", env={}), clock=clock, cache_dir=tmp_path)
    yield store
    store.close()


# -- both stores (issue 20 point 8): the behaviour tests of the write path, recall, dreaming
# and MCP run on the folder vault and on the team store through one parametrized fixture

@pytest.fixture(params=["folder", "postgres"])
def store_kind(request) -> str:  # type: ignore[no-untyped-def]
    """Which store a test runs on: the folder vault, or the team store on a throwaway PostgreSQL."""
    return request.param


@pytest.fixture
def any_scope(store_kind: str, request, vault: Path, clock: FrozenClock):  # type: ignore[no-untyped-def]
    """Open scopes of one store of either kind, each Memory-shaped, with the suite's frozen
    clock: on the folder vault a `Memory` of the vault, on the team store a `StoreMemory`
    (memdream.team.scope_handle; every call is one transaction of the store)."""
    opened: list[Memory] = []
    store = request.getfixturevalue("team_store") if store_kind == "postgres" else None

    def make(user: str = "me", agent: str = "main"):  # type: ignore[no-untyped-def]
        if store is not None:
            from memdream.team import scope_handle

            return scope_handle(store, user, agent)
        m = Memory(load_config(vault, user, agent, env={}), clock)
        m.vault.init()
        opened.append(m)
        return m

    yield make
    for m in opened:
        m.close()


@pytest.fixture
def any_mem(any_scope):  # type: ignore[no-untyped-def]
    """Scope me/main on either store (see any_scope): `mem` for the tests that run on both."""
    return any_scope()
