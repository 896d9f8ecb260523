"""When is a new memory "the same thing said again"? (DESIGN section 5)

Character-bigram similarity above 0.65 is the spec's rule. On its own it would swallow a
changed value that shares most characters ("my favourite colour is blue" / "... green"),
and the new value would be lost. So a text is a duplicate only if it is that similar AND
brings no content word (a number, a Latin word, a Chinese word) the old text lacks.
"""

from __future__ import annotations

import re
import unicodedata

from memdream.model.tokens import CJK_STOP_CHARS, EN_STOPWORDS, tokens

DEDUP_THRESHOLD = 0.65  # bigram Jaccard similarity above which two texts may be the same memory

_DROP = re.compile(r"[\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


def normalize(text: str) -> str:
    """Case-folded, width-folded, without spaces or punctuation."""
    return _DROP.sub("", unicodedata.normalize("NFKC", text).casefold())


def bigrams(text: str) -> set[str]:
    s = normalize(text)
    if len(s) < 2:
        return {s} if s else set()
    return {s[i : i + 2] for i in range(len(s) - 1)}


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' character-bigram sets, in [0, 1]."""
    x, y = bigrams(a), bigrams(b)
    if not x or not y:
        return 0.0
    return len(x & y) / len(x | y)


def content_words(text: str) -> set[str]:
    return {
        t
        for t in tokens(unicodedata.normalize("NFKC", text))
        if t not in EN_STOPWORDS and t not in CJK_STOP_CHARS
    }


def new_content(new: str, old: str) -> set[str]:
    """Content words of `new` that `old` lacks (a Chinese word also counts if it is inside old's text)."""
    old_words = content_words(old)
    old_norm = normalize(old)
    return {w for w in content_words(new) if w not in old_words and not (_CJK.match(w) and normalize(w) in old_norm)}


def is_duplicate(new: str, old: str, threshold: float = DEDUP_THRESHOLD) -> bool:
    return similarity(new, old) > threshold and not new_content(new, old)


def anchor_terms(text: str) -> list[str]:
    """Index terms every duplicate of `text` must hold: its Latin words and numbers, and the
    character bigrams of its Chinese words (longer segmenter words may be cut differently)."""
    out = []
    for t in dict.fromkeys(content_words(text)):
        if not _CJK.match(t) or len(t) == 2:
            out.append(t)
    return out
