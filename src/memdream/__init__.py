"""memdream: local-first long-term memory for AI agents.

    from memdream import open_memory
    mem = open_memory("~/.memdream", user="me", agent="main")
    mem.remember("我在余杭区")

Importing this package has no side effects: the facade and its dependencies load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml, --version and MCP read it

from memdream.errors import (
    ChangedOnDisk,
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
    from memdream.recall.search import Hit
    from memdream.recall.snapshot import ContextBlock, Snippet

__all__ = [
    "__version__",
    "ChangedOnDisk",
    "ConfigError",
    "ContextBlock",
    "Entry",
    "Hit",
    "InvalidName",
    "Memory",
    "MemdreamError",
    "NotFound",
    "RefusedInput",
    "SecretRefused",
    "Snippet",
    "VaultError",
    "WriteOutcome",
    "open_memory",
]

_LAZY = {
    "Memory": "memdream.memory",
    "WriteOutcome": "memdream.memory",
    "open_memory": "memdream.memory",
    "Hit": "memdream.recall.search",
    "ContextBlock": "memdream.recall.snapshot",
    "Snippet": "memdream.recall.snapshot",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'memdream' has no attribute {name!r}")
