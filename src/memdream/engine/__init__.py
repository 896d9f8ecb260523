"""The engine on top of the core (core.py): the write path, edits, recall counts, conflicts,
reading, recall, imports, views and the vault-wide operations. Each module is functions of a
`Core`; `Memory` (memory.py) composes them into the facade the shells call.

A submodule is imported on first use (`engine.write` names it, PEP 562): a process that only
recalls never loads the write path, the knowledge vault or the importers.
"""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = ("checks", "conflicts", "edits", "flush", "hits", "imports", "reading", "recall", "vaultwide", "views", "write")


def __getattr__(name: str) -> ModuleType:
    if name in MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
