"""`re`, with `compile()` deferred to the pattern's first use: nothing compiles at import.

A module imports it in place of the standard module (`from memdream.model import lazyre as re`) and
keeps its patterns written as they are: `_WORD = re.compile(r"...", re.I)` at module level then
costs a tuple, and the pattern is compiled (by the standard `re`, into the same object) the
first time one of its methods is called. A new process pays only for the patterns it uses:
compiling all of memdream's took about 40 ms of every `memdream recall` before (issue 21).

Everything else (`re.sub`, `re.escape`, `re.IGNORECASE`, `re.Match`, ...) is the standard
module's; the module-level functions also accept a lazy pattern.
"""

from __future__ import annotations

import re as _re
from typing import Any

__all__ = ["LazyPattern", "compile"]

# what a compiled pattern answers; once compiled, these are bound on the lazy pattern itself, so a
# call costs an ordinary attribute lookup
_METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "scanner")


class LazyPattern:
    """A pattern compiled on first use; answers what `re.Pattern` answers."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: _re.Pattern[Any] | None = None

    def compiled(self) -> _re.Pattern[Any]:
        """The standard compiled pattern (compiled now if it was not yet)."""
        p = self._compiled
        if p is None:
            p = self._compiled = _re.compile(self.pattern, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(p, name))
        return p

    def __getattr__(self, name: str) -> Any:  # only for what __init__ did not set: the methods, groups, flags ...
        if name.startswith("__") or name in ("_compiled", "_flags", "pattern"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPattern):
            other = other.compiled()
        return self.compiled() == other

    def __hash__(self) -> int:
        return hash(self.compiled())

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return repr(self.compiled())


def compile(pattern: Any, flags: int = 0) -> Any:  # noqa: A001 - the name `re` gives it
    """A pattern compiled on first use (typed as `re.Pattern`: it answers the same calls)."""
    if isinstance(pattern, (LazyPattern, _re.Pattern)):
        if flags:
            raise ValueError("cannot process flags argument with a compiled pattern")
        return pattern
    return LazyPattern(pattern, flags)


def _plain(pattern: Any) -> Any:
    return pattern.compiled() if isinstance(pattern, LazyPattern) else pattern


def search(pattern: Any, string: Any, flags: int = 0) -> Any:
    return _re.search(_plain(pattern), string, flags)


def match(pattern: Any, string: Any, flags: int = 0) -> Any:
    return _re.match(_plain(pattern), string, flags)


def fullmatch(pattern: Any, string: Any, flags: int = 0) -> Any:
    return _re.fullmatch(_plain(pattern), string, flags)


def sub(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    return _re.sub(_plain(pattern), repl, string, count, flags)


def subn(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
    return _re.subn(_plain(pattern), repl, string, count, flags)


def split(pattern: Any, string: Any, maxsplit: int = 0, flags: int = 0) -> Any:
    return _re.split(_plain(pattern), string, maxsplit, flags)


def findall(pattern: Any, string: Any, flags: int = 0) -> Any:
    return _re.findall(_plain(pattern), string, flags)


def finditer(pattern: Any, string: Any, flags: int = 0) -> Any:
    return _re.finditer(_plain(pattern), string, flags)


def __getattr__(name: str) -> Any:  # escape, IGNORECASE, Match, Pattern, error, ...
    return getattr(_re, name)
