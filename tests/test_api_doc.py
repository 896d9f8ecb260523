"""docs/api.md is generated from the code (scripts/gen_api_docs.py) and stays in step with it;
every public method and property of Memory says what it does."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_api_docs", ROOT / "scripts" / "gen_api_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_api_md_is_generated_from_the_code() -> None:
    """Regenerate with: .venv/bin/python scripts/gen_api_docs.py"""
    assert (ROOT / "docs" / "api.md").read_text(encoding="utf-8") == generator().render()


def test_every_public_member_has_a_docstring() -> None:
    gen = generator()
    from memdream.memory import Memory

    missing = [name for name, value in gen.public_members(Memory) if not inspect.getdoc(value)]
    assert not missing, missing
    for cls in gen.TYPES + gen.ERRORS:
        assert inspect.getdoc(cls), cls
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in ("remember", "recall", "context", "forget", "pin", "history", "log", "now", "dream", "undo", "export"):
        assert f"### Memory.{name}\n" in text
