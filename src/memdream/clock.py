"""Clocks: the system clock in the configured time zone, and a frozen one for tests and demos."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware."""
        ...


class SystemClock:
    def __init__(self, tz: tzinfo | None = None) -> None:
        self.tz = tz

    def now(self) -> datetime:
        d = datetime.now(self.tz) if self.tz is not None else datetime.now().astimezone()
        return d.replace(microsecond=0)


class FrozenClock:
    """A clock that only moves when told to (`set`, `advance`)."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FrozenClock needs a timezone-aware datetime")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when

    def advance(self, **delta: float) -> datetime:
        self._now = self._now + timedelta(**delta)
        return self._now
