"""The cycle collector paused while a light dream plans and applies a large scope.

A first light dream over 100,000 entries makes a few million small objects that stay alive
until it ends (candidates, token lists, bigram sets, parsed lines), and Python's cyclic
garbage collector, run every 700 allocations, traverses the ever larger heap again and again:
about a quarter of the dream's time (docs/benchmarks.md, "Light-phase time"). Nothing the
dream makes is freed by the collector (reference counting frees it), so pausing it changes no
result; what cycles the process makes meanwhile are collected once it runs again.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the collector was on when the outermost pause began


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block (nested and concurrent blocks: off
    until the last one ends; left off if it was off before the first)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
