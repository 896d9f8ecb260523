"""The scheduler: light often, the model phases nightly, the daily flush at 23:55, and a
catch-up after downtime (DESIGN section 9).

`jobs_due` is a pure function of the clock, the last runs and the config, so it is tested
with a frozen clock. `Scheduler` runs it in a loop: `memdream daemon` in the foreground, or
`start()` as a background thread inside a long-running shell (a chat, the web console),
with its own Memory, so a dream never blocks a chat turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol

from memdream.clock import Clock
from memdream.config import Config, DreamConfig
from memdream.dream import ledger
from memdream.store.vault import Scope, Vault


class Dreamer(Protocol):
    """What the loop needs of the memory it runs (the facade, `Memory`, is one)."""

    config: Config
    clock: Clock
    vault: Vault
    scope: Scope

    def flush(self, messages: list[dict] | None = None, day: str | None = None) -> Any: ...

    def dream(self, phases: list[str] | None = None, days: int = 3, dry_run: bool = False, force: bool = True, progress: Any = None) -> Any: ...

    def close(self) -> None: ...

TICK_S = 60.0  # how often the loop looks at the clock
CATCH_UP_DAYS = 7  # missed daily flushes caught up after downtime, at most this many days back


def _at(day: date, hhmm: str, tz) -> datetime:  # type: ignore[no-untyped-def]
    h, m = (int(x) for x in hhmm.split(":"))
    return datetime.combine(day, time(h, m), tzinfo=tz)


def _last_slot(now: datetime, hhmm: str) -> datetime:
    """The latest time of day `hhmm` at or before `now`."""
    today = _at(now.date(), hhmm, now.tzinfo)
    return today if today <= now else today - timedelta(days=1)


def _parse(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def jobs_due(now: datetime, state: dict[str, Any], cfg: DreamConfig, not_before: datetime | None = None) -> list[str]:
    """The jobs to run now, in order: "flush:YYYY-MM-DD" for each missed daily flush, then
    "light", then "nightly" (deep, distill, profile; replay when due) after the flushes.

    `not_before` (a chat's scheduler: its start): the jobs that ask the model wait for a slot
    after it, so a catch-up never competes with the chat for a one-slot model server. They are
    deferred, not dropped: the next scheduler without it catches them up."""
    jobs: list[str] = []
    last_flush = _parse(state.get("sched:flush"))
    slot, days = _last_slot(now, cfg.flush_at), []
    while (last_flush is None or slot > last_flush) and len(days) < CATCH_UP_DAYS:
        if not_before is not None and slot < not_before:
            break
        days.append(slot.date())
        if last_flush is None:
            break  # first run: only the latest day
        slot -= timedelta(days=1)
    jobs += [f"flush:{d.isoformat()}" for d in reversed(days)]
    last_light = _parse(state.get("sched:light"))
    if last_light is None or now - last_light >= timedelta(minutes=cfg.light_every_minutes):
        jobs.append("light")
    last_night = _parse(state.get("sched:nightly"))
    night = _last_slot(now, cfg.nightly_at)
    if (last_night is None or last_night < night) and (not_before is None or night >= not_before):
        jobs.append("nightly")
    return jobs


def nightly_phases(now: datetime, state: dict[str, Any], cfg: DreamConfig) -> list[str]:
    phases = ["deep"]
    if cfg.deep_dream_enabled:
        phases.append("distill")
    phases.append("profile")
    last_replay = _parse(state.get("sched:replay"))
    if last_replay is None or now - last_replay >= timedelta(days=cfg.replay_every_days):
        phases.append("replay")
    return phases


def run_due(mem: Dreamer, say: Callable[[str], None] = lambda s: None, not_before: datetime | None = None) -> list[str]:
    """Run every job due now, in order; returns what ran. State is saved after each job, so
    a crash repeats at most the job it interrupted."""
    now = mem.clock.now()
    cfg = mem.config.dream
    state = ledger.load_state(mem)
    ran = []
    for job in jobs_due(now, state, cfg, not_before):
        if job.startswith("flush:"):
            rep = mem.flush(day=job.split(":", 1)[1])
            say(f"flush {rep.day}: {rep.message}")
            state = ledger.load_state(mem)
            state["sched:flush"] = _at(date.fromisoformat(rep.day), cfg.flush_at, now.tzinfo).isoformat()
        elif job == "light":
            rep = mem.dream(["light"], force=False)
            say(f"light: {rep.phases[0].message}")
            state = ledger.load_state(mem)
            state["sched:light"] = now.isoformat()
        else:
            phases = nightly_phases(now, state, cfg)
            rep = mem.dream(phases, force=False)
            say("nightly: " + "; ".join(f"{p.phase} {p.status}" for p in rep.phases))
            state = ledger.load_state(mem)
            state["sched:nightly"] = now.isoformat()
            if "replay" in phases:
                state["sched:replay"] = now.isoformat()
        ledger.save_state(mem, state)
        ran.append(job)
    return ran


class Scheduler:
    """The loop. `open_mem` makes the Memory the loop uses (its own index connection).
    `defer=True` (a chat): the model jobs already due when the loop starts wait for their next
    slot (see `jobs_due`'s not_before); the light phase runs as usual."""

    def __init__(self, open_mem: Callable[[], Dreamer], tick: float = TICK_S, say: Callable[[str], None] = lambda s: None, defer: bool = False) -> None:
        self._open = open_mem
        self.defer = defer
        self.tick = tick
        self.say = say
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.errors: list[str] = []

    def run(self, once: bool = False) -> None:
        mem = self._open()
        since = mem.clock.now() if self.defer else None
        try:
            while not self.stop_event.is_set():
                try:
                    run_due(mem, self.say, since)
                except Exception as exc:  # noqa: BLE001 - a failed run is reported and retried next tick
                    msg = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
                    self.errors.append(msg)
                    self.say(f"dream failed: {msg}")
                if once:
                    return
                self.stop_event.wait(self.tick)
        finally:
            mem.close()

    def start(self) -> threading.Thread:
        """Run the loop in a background thread (daemonic: it never keeps a shell alive)."""
        self.thread = threading.Thread(target=self.run, name="memdream-scheduler", daemon=True)
        self.thread.start()
        return self.thread

    def stop(self, timeout: float = 30.0) -> None:
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout)
