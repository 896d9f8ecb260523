"""Write docs/api.md, the Python API reference, from the code's own signatures and docstrings
(a test checks the file is up to date and that every public method has a docstring).

    .venv/bin/python scripts/gen_api_docs.py
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from pathlib import Path

import memdream
from memdream import errors
from memdream.dream.run import DreamReport, PhaseReport
from memdream.memory import Memory, WriteOutcome, open_memory
from memdream.model.entry import Entry
from memdream.recall.search import Hit
from memdream.recall.snapshot import ContextBlock, Snapshot, Snippet

OUT = Path(__file__).resolve().parent.parent / "docs" / "api.md"
TYPES = [Entry, WriteOutcome, Hit, Snapshot, ContextBlock, Snippet, DreamReport, PhaseReport]
ERRORS = [errors.MemdreamError, errors.RefusedInput, errors.SecretRefused, errors.InvalidName, errors.NotFound, errors.VaultError, errors.ConfigError, errors.ChangedOnDisk]


def _doc(obj: object) -> str:
    return inspect.getdoc(obj) or ""


def _signature(fn) -> str:  # type: ignore[no-untyped-def]
    sig = inspect.signature(fn)
    params = [p for name, p in sig.parameters.items() if name != "self"]
    return str(sig.replace(parameters=params))


def public_members(cls: type) -> list[tuple[str, object]]:
    """Public methods and properties in the order the class defines them."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property) or inspect.isfunction(value):
            out.append((name, value))
    return out


def _fields(cls: type) -> str:
    if not dataclasses.is_dataclass(cls):
        return ""
    rows = ["| field | type |", "| --- | --- |"]
    rows += [f"| `{f.name}` | `{f.type}` |" for f in dataclasses.fields(cls) if not f.name.startswith("_")]
    return "\n".join(rows) + "\n"


def render() -> str:
    parts = [
        "# Python API reference\n",
        "Generated from the code's signatures and docstrings by `scripts/gen_api_docs.py`; a test keeps it in step with the code.",
        f"This is memdream {memdream.__version__}. Everything below is importable from `memdream` (`from memdream import open_memory, Entry, ...`)",
        "except where a module is named. Refusals raise a `MemdreamError` subclass whose `hint` says what to do next.\n",
        "```python",
        "from memdream import open_memory",
        "",
        'mem = open_memory("~/.memdream", user="me", agent="main")',
        'mem.remember("我在西湖区")',
        'hits = mem.recall("西湖", k=5)',
        "```\n",
        f"## open_memory\n\n```python\nopen_memory{_signature(open_memory)}\n```\n\n{_doc(open_memory)}\n",
        f"## Memory\n\n{_doc(Memory)}\n",
    ]
    for name, value in public_members(Memory):
        if isinstance(value, property):
            parts.append(f"### Memory.{name} (property)\n\n{_doc(value)}\n")
        else:
            parts.append(f"### Memory.{name}\n\n```python\n{name}{_signature(value)}\n```\n\n{_doc(value)}\n")
    parts.append("## Types\n")
    for cls in TYPES:
        where = cls.__module__
        parts.append(f"### {cls.__name__} (`{where}`)\n\n{_doc(cls)}\n\n{_fields(cls)}")
    parts.append("## Errors\n\n| error | exit code in the CLI | meaning |\n| --- | --- | --- |")
    for cls in ERRORS:
        first = _doc(cls).split("\n\n")[0].replace("\n", " ")
        parts.append(f"| `{cls.__name__}` | {cls.exit_code} | {first} |")
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
