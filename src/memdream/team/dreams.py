"""Dreaming on the team server without two dreamers: per-scope jobs under a lease.

Every scope that has been written has a row in memdream_dream_jobs. A process's scheduler
takes one due job at a time with `SELECT ... FOR UPDATE SKIP LOCKED` (two processes never
take the same row) and sets a lease on it; the job then runs the same `run_due` as the
folder vault's scheduler (light often, model phases nightly, the daily flush) inside one
session of the scope, so a dream's ledger, diary and undo are files of the scope like any
other. A killed process's lease expires and another process takes the job over; its half
run was one transaction that never committed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdream.store.vault import Scope

if TYPE_CHECKING:
    from memdream.team.store import TeamStore

LEASE_S = 300.0  # a job not finished within this is taken over (its holder is presumed dead)
EVERY_S = 60.0  # after a run, a scope's job is due again this much later
TICK_S = 5.0  # when no job is due, the loop looks again this much later
# Shorter timings for a soak that kills servers (bench/soak_server.py): the lease, the
# interval and the tick in seconds, read when a process's scheduler is made.
ENV_LEASE, ENV_EVERY, ENV_TICK = "MEMDREAM_DREAM_LEASE_S", "MEMDREAM_DREAM_EVERY_S", "MEMDREAM_DREAM_TICK_S"


def env_seconds(name: str, default: float) -> float:
    """A duration in seconds from the environment variable `name` (default when unset)."""
    from memdream.errors import ConfigError

    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.05 <= value <= 86400:
        raise ConfigError(f"{name} must be a number of seconds between 0.05 and 86400, not {raw!r}", f"unset {name} to use the default ({default:g} s)")
    return value


@dataclass(frozen=True)
class Lease:
    scope: Scope
    holder: str


def claim(store: "TeamStore", lease_s: float = LEASE_S) -> Lease | None:
    """Take the lease of one due job no live process holds; None when none is due."""
    with store.pool.connection() as conn, conn.transaction():
        row = conn.execute(
            "SELECT scope FROM memdream_dream_jobs WHERE due_at <= now() AND (lease_until IS NULL OR lease_until < now()) "
            "ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED"
        ).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE memdream_dream_jobs SET holder = %s, lease_until = now() + make_interval(secs => %s) WHERE scope = %s",
            (store.holder, lease_s, row[0]),
        )
    return Lease(Scope.from_key(row[0]), store.holder)


def finish(store: "TeamStore", lease: Lease, status: str, every_s: float = EVERY_S) -> bool:
    """Release a lease and schedule the next run; False if the lease was lost meanwhile."""
    with store.pool.connection() as conn, conn.transaction():
        cur = conn.execute(
            "UPDATE memdream_dream_jobs SET holder = NULL, lease_until = NULL, runs = runs + 1, last_status = %s, "
            "due_at = now() + make_interval(secs => %s) WHERE scope = %s AND holder = %s",
            (status[:500], every_s, lease.scope.key, lease.holder),
        )
        return cur.rowcount == 1


def run_one(store: "TeamStore", say: Callable[[str], None] = lambda s: None, lease_s: float = LEASE_S, every_s: float = EVERY_S) -> Lease | None:
    """Claim a due job, run what is due for its scope, release it. Returns the lease run."""
    from memdream.dream.schedule import run_due

    lease = claim(store, lease_s)
    if lease is None:
        return None
    status = "ok"
    try:
        with store.session(lease.scope) as mem:
            ran = run_due(mem, say=lambda m: say(f"{lease.scope.key}: {m}"))
            status = ", ".join(ran) or "nothing due"
    except Exception as exc:  # a failed job is retried at its next slot; the loop goes on
        status = f"failed: {exc}"
        say(f"{lease.scope.key}: dream {status}")
    finish(store, lease, status, every_s)
    return lease


class StoreScheduler:
    """The loop of a team server process: run due jobs until none is due, then wait `tick`."""

    def __init__(self, store: "TeamStore", tick: float | None = None, say: Callable[[str], None] = lambda s: None) -> None:
        self.store = store
        self.tick = env_seconds(ENV_TICK, TICK_S) if tick is None else tick
        self.lease_s = env_seconds(ENV_LEASE, LEASE_S)
        self.every_s = env_seconds(ENV_EVERY, EVERY_S)
        self.say = say
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                while not self.stop_event.is_set() and run_one(self.store, self.say, self.lease_s, self.every_s) is not None:
                    pass
            except Exception as exc:  # the database went away: try again next tick
                self.say(f"dream scheduler: {exc}")
            self.stop_event.wait(self.tick)

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="memdream-team-dreams", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout)
