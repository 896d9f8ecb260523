"""The cage's checks on what a model proposes (pure; fuzzed in the suite).

A model answers with JSON operations on short integer ids it was shown. Each operation is
checked for its schema, for ids (only those shown, only the ones it may touch, each at most
once), and its new text for grounding: every content word and number must occur in the
sources, and no number of the sources may be dropped. A text that looks like a credential
never passes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memdream.model import lazyre as re
from memdream.model.secrets import find_secret
from memdream.model.similarity import new_content, normalize
from memdream.model.tokens import cjk_words, tokens

# Words a faithful merge may add to join facts ("likes tea and also coffee"; 喜欢茶，也喜欢咖啡).
CONNECTIVE_WORDS = """also both too plus well while including usually often sometimes
    并且 而且 同时 以及 还有 另外 此外 并 还 也 和 及 与 或者 或 但 但是 不过 通常 经常 有时"""
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


@lru_cache(maxsize=1)
def _connectives() -> frozenset[str]:
    return frozenset(tokens(CONNECTIVE_WORDS)) | frozenset(CONNECTIVE_WORDS.split())


class Invalid(Exception):
    """Why an operation is rejected (the diary quotes it)."""


def numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_LATIN_WORD = r"[^\W\d_\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+"
# A word with its apostrophes ("Alice's", "don't"): tokens read the contraction whole.
_LATIN = re.compile(rf"{_LATIN_WORD}(?:['’]{_LATIN_WORD})*")


def ungrounded(text: str, sources: Iterable[str]) -> list[str]:
    """The content words and numbers of `text` that none of `sources` contains.

    Latin words are compared stemmed (stopwords and a few connectives aside); Chinese is
    compared by the segmenter's words of two or more characters, each of which must occur
    in the sources' text (a character bigram that straddles two words is not a word)."""
    joined = "\n".join(sources)
    latin = " ".join(_LATIN.findall(unicodedata.normalize("NFKC", text)))
    words = {w for w in new_content(latin, joined) if not w.isdigit()} - _connectives()
    src = normalize(joined)
    for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
        for w in cjk_words(run):
            if len(w) >= 2 and w not in src and w not in _connectives():
                words.add(w)
    missing_numbers = numbers(text) - numbers(joined)
    return sorted(words | missing_numbers)


def check_text(text: Any, sources: Sequence[str], max_chars: int, keep_numbers_of: Sequence[str] = (), free_words: int = 0) -> str:
    """The text if a model may write it from `sources`; raises Invalid with the reason.
    `free_words`: how many words not in the sources are tolerated (never a number)."""
    if not isinstance(text, str) or not text.strip():
        raise Invalid("the new text is missing or empty")
    text = " ".join(text.split())
    if len(text) > max_chars:
        raise Invalid(f"the new text is {len(text)} characters long (at most {max_chars})")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise Invalid("the new text contains control characters")
    kind = find_secret(text)
    if kind:
        raise Invalid(f"the new text looks like {kind}; credentials never enter memory")
    extra = ungrounded(text, sources)
    if extra and (len(extra) > free_words or any(w[0].isdigit() for w in extra)):
        shown = ", ".join(repr(w) for w in extra[:5])
        raise Invalid(f"the new text says {shown}, which no source says (invented)")
    dropped = set().union(*(numbers(s) for s in keep_numbers_of)) - numbers(text) if keep_numbers_of else set()
    if dropped:
        raise Invalid(f"the new text drops {', '.join(sorted(dropped)[:5])} (a fact was lost)")
    return text


def operations(reply: Any, key: str = "operations") -> list[Any]:
    """The list of operations in a reply: {"operations": [...]} or a bare list."""
    if isinstance(reply, dict):
        ops = reply.get(key)
        if ops is None and len(reply) == 1:
            ops = next(iter(reply.values()))
    else:
        ops = reply
    if not isinstance(ops, list):
        raise Invalid(f"the reply has no list of {key}")
    return ops


def common_subject(subjects: Iterable[str]) -> str:
    """The subject a merge keeps: the one non-empty subject of its sources. Sources about two
    different subjects are not one fact (a later value for either must still supersede it)."""
    found = sorted({s for s in subjects if s})
    if len(found) > 1:
        raise Invalid(f"the memories have different subjects ({', '.join(found)}); they are not one fact")
    return found[0] if found else ""


@dataclass
class Ids:
    """The short ids a model was shown, which of them it may touch, and which it already used."""

    shown: dict[int, Any]
    fixed: frozenset[int] = frozenset()  # shown for context, never to be changed (pinned, rules)

    def __post_init__(self) -> None:
        self.used: set[int] = set()

    def take(self, value: Any, at_least: int = 1) -> list[int]:
        raw = value if isinstance(value, list) else [value]
        ids: list[int] = []
        for v in raw:
            if isinstance(v, bool) or not isinstance(v, (int, str)) or not str(v).strip().lstrip("#").isdigit():
                raise Invalid(f"{v!r} is not one of the ids shown")
            i = int(str(v).strip().lstrip("#"))
            if i not in self.shown:
                raise Invalid(f"id {i} was never shown")
            if i in self.fixed:
                raise Invalid(f"id {i} is pinned or a rule, which a dream never changes")
            if i in self.used or i in ids:
                raise Invalid(f"id {i} is used twice")
            ids.append(i)
        if len(ids) < at_least:
            raise Invalid(f"the operation needs at least {at_least} ids")
        return ids

    def commit(self, ids: list[int]) -> None:
        self.used.update(ids)
