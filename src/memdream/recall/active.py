"""Active recall (DESIGN section 6): before a reply in a one-to-one chat, surface at most 3
transcript snippets, local search only, zero LLM, within 1.5 s, behind a circuit breaker.
Any failure falls back silently to no snippets: it must never hold up a reply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from memdream.clock import Clock
from memdream.recall.snapshot import Snippet

MAX_SNIPPETS = 3  # at most this many snippets per turn
TIMEOUT_S = 1.5  # a search slower than this is abandoned
FAILURES_TO_OPEN = 3  # consecutive failures that open the breaker ...
COOLDOWN_S = 60.0  # ... for this long, during which active recall is skipped

Searcher = Callable[[str, int], list[Snippet]]


class ActiveRecall:
    def __init__(
        self,
        searcher: Searcher,
        clock: Clock,
        timeout: float = TIMEOUT_S,
        max_snippets: int = MAX_SNIPPETS,
        failures_to_open: int = FAILURES_TO_OPEN,
        cooldown: float = COOLDOWN_S,
    ) -> None:
        self.searcher = searcher
        self.clock = clock
        self.timeout = timeout
        self.max_snippets = max_snippets
        self.failures_to_open = failures_to_open
        self.cooldown = timedelta(seconds=cooldown)
        self.failures = 0
        self.open_until: datetime | None = None
        self.last_status = "idle"

    @property
    def is_open(self) -> bool:
        return self.open_until is not None and self.clock.now() < self.open_until

    def __call__(self, query: str, one_to_one: bool = True) -> list[Snippet]:
        if not one_to_one:
            self.last_status = "skipped: not a one-to-one conversation"
            return []
        if not query.strip():
            self.last_status = "skipped: empty query"
            return []
        if self.is_open:
            self.last_status = "skipped: circuit open after repeated failures"
            return []
        result: list[list[Snippet]] = []
        error: list[BaseException] = []

        def run() -> None:
            try:
                result.append(self.searcher(query, self.max_snippets))
            except BaseException as exc:  # noqa: BLE001 - any failure means "no snippets"
                error.append(exc)

        worker = threading.Thread(target=run, name="memdream-active-recall", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive() or error or not result:
            self._failed("timed out" if worker.is_alive() else f"failed: {error[0]!r}" if error else "failed")
            return []
        self.failures = 0
        self.open_until = None
        self.last_status = "ok"
        return list(result[0])[: self.max_snippets]

    def _failed(self, why: str) -> None:
        self.failures += 1
        self.last_status = why
        if self.failures >= self.failures_to_open:
            self.open_until = self.clock.now() + self.cooldown
            self.failures = 0
            self.last_status = f"{why}; circuit open for {self.cooldown.total_seconds():.0f} s"
