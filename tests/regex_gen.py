"""Strings a pattern matches, for the tests of the gates before a pattern (a word every match
holds, model/script.holds_any): hypothesis draws them from the pattern with its lookarounds
taken out (it cannot generate lookbehinds; without its assertions a pattern matches more
strings, so a test that every match holds a word is stricter), and with parts of it replaced
(a value by one letter: its matches hold fewer words, stricter again)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

_LOOKAROUND = re.compile(r"\(\?<?[!=][^()]*\)")  # an unnested lookahead or lookbehind


def generable(pattern: Any, replace: dict[str, str] | None = None) -> re.Pattern[str]:
    """`pattern` (compiled, lazy or standard) with `replace` applied to its source, then its lookarounds taken out."""
    source = pattern.pattern
    for old, new in (replace or {}).items():
        source = source.replace(old, new)
    return re.compile(_LOOKAROUND.sub("", source), pattern.flags)


def matches(pattern: Any, replace: dict[str, str] | None = None) -> st.SearchStrategy[str]:
    """Whole matches of `generable(pattern, replace)`."""
    return st.from_regex(generable(pattern, replace), fullmatch=True)
