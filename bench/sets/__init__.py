"""The recall suite's data sets, in one shape (bench/recall_suite.py runs them all).

Each set module under bench/sets/ has ``load(data_dir: Path | None = None, seed: int = 0) -> SuiteSet``:
deterministic for a seed, reading public data from ``../shared/bench`` (or ``data_dir``), never
from a copy in this repository.

- A ``Memory`` is one message written through ``Memory.write(text)`` on a frozen clock at ``at``;
  the memories of one ``conv`` form one scope (one user's own memory).
- A ``Question`` is asked in its conversation's scope at ``asked_at[conv]``. ``gold`` are the
  ids of the memories that answer it; ``old`` (the changing-facts set) are ids of outdated
  versions that must rank below the current one.
- ``metric``: "recall" (share of gold ids in the top k, averaged), "hit" (1 if any gold id is in
  the top k) or "current" (1 if a gold id is in the top k and ranks above every ``old`` id that
  is also returned).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench"


@dataclass(frozen=True)
class Memory:
    id: str
    conv: str
    text: str
    at: datetime  # timezone-aware
    role: str = "user"  # "user" or "assistant" (a reply shown to the user)


@dataclass(frozen=True)
class Question:
    conv: str
    text: str
    gold: tuple[str, ...]
    old: tuple[str, ...] = ()
    category: str = ""


@dataclass
class SuiteSet:
    name: str
    description: str
    lang: str  # "en", "zh" or "mixed"
    metric: str  # "recall" | "hit" | "current"
    k: int
    memories: list[Memory]
    questions: list[Question]
    asked_at: dict[str, datetime] = field(default_factory=dict)


def inspect_main(doc: str, load: Callable[..., SuiteSet], describe: Callable[[SuiteSet], str], argv: list[str] | None = None) -> int:
    """`python bench/sets/<name>.py [--data DIR] [--seed N]`: a set's counts and three examples."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="folder holding memorybank/ (default ../shared/bench)")
    ap.add_argument("--seed", type=int, default=0, help="the generator's seed (a set without randomness ignores it)")
    args = ap.parse_args(argv)
    print(describe(load(args.data, args.seed)))
    return 0
