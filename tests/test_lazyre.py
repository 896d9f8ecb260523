"""memdream.model.lazyre: `re` with compile() deferred to first use, answering as `re` does."""

from __future__ import annotations

import pickle
import re as std

from memdream.model import lazyre as re
from memdream.model.lazyre import LazyPattern


def test_a_lazy_pattern_answers_what_the_compiled_one_answers() -> None:
    lazy = re.compile(r"(?P<word>[a-z]+)(\d*)", re.I)
    plain = std.compile(r"(?P<word>[a-z]+)(\d*)", std.I)
    assert isinstance(lazy, LazyPattern) and lazy._compiled is None  # nothing compiled yet
    assert lazy.pattern == plain.pattern
    text = "Abc12 def ghi3"
    assert lazy.search(text).group(0) == plain.search(text).group(0)
    assert lazy.match(text).groups() == plain.match(text).groups()
    assert lazy.fullmatch("abc") is not None and lazy.fullmatch("abc!") is None
    assert lazy.findall(text) == plain.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in plain.finditer(text)]
    assert lazy.sub("x", text) == plain.sub("x", text) and lazy.subn("x", text) == plain.subn("x", text)
    assert lazy.split(text) == plain.split(text)
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (plain.flags, plain.groups, plain.groupindex)
    assert lazy == plain and hash(lazy) == hash(plain) and repr(lazy) == repr(plain)


def test_the_module_functions_take_lazy_patterns_and_strings() -> None:
    lazy = re.compile(r"\s+")
    assert re.sub(lazy, " ", "a  b\tc") == "a b c" == re.sub(r"\s+", " ", "a  b\tc")
    assert re.split(lazy, "a b") == ["a", "b"] and re.findall(lazy, "a b c") == [" ", " "]
    assert re.search(lazy, "a b").span() == (1, 2) and re.match(lazy, " a") and re.fullmatch(lazy, "  ")
    assert [m.start() for m in re.finditer(lazy, "a b c")] == [1, 3] and re.subn(lazy, "", "a b") == ("ab", 1)
    assert re.compile(lazy) is lazy and re.escape("a.b") == std.escape("a.b") and re.IGNORECASE is std.IGNORECASE


def test_a_lazy_pattern_pickles_as_its_text() -> None:
    lazy = re.compile(r"[a-z]+", re.I)
    back = pickle.loads(pickle.dumps(lazy))
    assert back.pattern == lazy.pattern and back.match("ABC").group(0) == "ABC"
