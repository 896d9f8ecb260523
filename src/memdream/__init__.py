"""memdream: local-first long-term memory for AI agents.

    from memdream import open_memory
    mem = open_memory("~/.memdream", user="me", agent="main")
    mem.remember("我在余杭区")

Importing this package has no side effects: the facade and its dependencies load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdream.errors import (
    ConfigError,
    InvalidName,
    MemdreamError,
    NotFound,
    RefusedInput,
    SecretRefused,
    VaultError,
)
from memdream.model.entry import Entry

if TYPE_CHECKING:
    from memdream.memory import Memory, WriteOutcome, open_memory

__all__ = [
    "ConfigError",
    "Entry",
    "InvalidName",
    "Memory",
    "MemdreamError",
    "NotFound",
    "RefusedInput",
    "SecretRefused",
    "VaultError",
    "WriteOutcome",
    "open_memory",
]

_LAZY = {"Memory", "WriteOutcome", "open_memory"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from memdream import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'memdream' has no attribute {name!r}")
