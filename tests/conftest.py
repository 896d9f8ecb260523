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
