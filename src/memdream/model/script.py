"""Which script a text is in, without a regular expression.

A character class spanning the CJK blocks (27,000 code points) takes Python's regex compiler
2-3 ms to build, in every new process, and a `memdream remember` of an English line built
several of them only to learn that the line holds no Chinese (issue 21). These answer the same
questions with comparisons, and an ASCII text is answered at once.
"""

from __future__ import annotations

def is_cjk(ch: str) -> bool:
    """Is this one character Chinese (with extension A and the compatibility ideographs),
    Japanese kana or a Korean syllable? The ranges of the pattern model/wording.CJK stood for."""
    o = ord(ch)
    return 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x3040 <= o <= 0x30FF or 0xAC00 <= o <= 0xD7AF


def starts_cjk(text: str) -> bool:
    """Does the text start with a CJK character? (What `CJK.match(text)` answered.)"""
    return bool(text) and is_cjk(text[0])


def has_han(text: str) -> bool:
    """Does the text hold a Chinese character of the unified block (U+4E00-U+9FFF)?"""
    return not text.isascii() and any("\u4e00" <= ch <= "\u9fff" for ch in text)


def has_han_or_ext_a(text: str) -> bool:
    """Does the text hold a Chinese character of U+3400-U+9FFF (the unified block and extension A)?"""
    return not text.isascii() and any("\u3400" <= ch <= "\u9fff" for ch in text)


# Python's case-insensitive matching takes these for ASCII letters too (dotless and dotted I for
# i, the long s for s; the Kelvin sign lower-cases to k): a quick test that "password" is in a text
# must see "paſſword" as (?i)password does (tests/test_secrets_gate.py checks every code point).
_FOLD = str.maketrans({"\u0131": "i", "\u0130": "i", "\u017f": "s", "\u212a": "k"})


def fold_case(text: str) -> str:
    """`text` lower-cased, with the characters (?i) takes for i, s and k made those letters: a
    word a case-insensitive pattern needs is in a text only if it is in this."""
    return text.translate(_FOLD).lower()


def holds_any(folded: str, words: tuple[str, ...]) -> bool:
    """Does `folded` (a `fold_case` text) hold one of `words`? The gate before a pattern that
    every match of which holds one of them: without one, the pattern cannot match."""
    return any(w in folded for w in words)


def has_latin(text: str) -> bool:
    """Does the text hold a letter (?i) reads as a Latin one (the long s and the Kelvin sign too)?"""
    return any("a" <= ch <= "z" for ch in fold_case(text))
