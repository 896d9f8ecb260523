"""When is a new memory "the same thing said again"? (DESIGN section 5)

Character-bigram similarity above 0.65 is the spec's rule. On its own it would swallow a
changed value that shares most characters ("my favourite colour is blue" / "... green"),
and the new value would be lost. So a text is a duplicate only if it is that similar AND
brings no content word (a number, a Latin word, a Chinese word) the old text lacks.

The words compared come from model/wording.py, the signals that two texts differ from
model/contradiction.py; both are imported here too, where the rest of the code finds them.
"""

from __future__ import annotations

import unicodedata

from memdream.model.contradiction import contradiction, numbers
from memdream.model import lazyre as re
from memdream.model.tokens import CJK_STOP_CHARS, EN_STOPWORDS, tokens
from memdream.model.wording import CJK, SYNONYMS_EN, SYNONYMS_ZH, normalize, plain, plain_words, stem

DEDUP_THRESHOLD = 0.65  # bigram Jaccard similarity above which two texts may be the same memory


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
    return {w for w in content_words(new) if w not in old_words and not (CJK.match(w) and normalize(w) in old_norm)}


COVERAGE = 0.5  # a text adding nothing, holding this share of the other's content words, says it again


def is_duplicate(new: str, old: str, threshold: float = DEDUP_THRESHOLD) -> bool:
    """Does `new` say again what `old` says (so no new line is needed)?

    Never when a contradiction signal separates them (`contradiction`). Otherwise, once both
    are put in plain words (`plain`: filler dropped, common synonyms made one): `new` brings no
    content word `old` lacks, and either the bigram similarity is above `threshold` or `new`
    holds at least `COVERAGE` of `old`'s content words (a reordering, a shorter version).
    """
    if contradiction(new, old):
        return False
    a, b = plain(new), plain(old)
    if normalize(a) == normalize(b):
        return bool(normalize(a))  # the same characters: case, spacing, punctuation, width
    mine, theirs = plain_words(a), plain_words(b)
    if not mine or _missing(mine, theirs, b):
        return False
    if similarity(a, b) > threshold:
        return True
    return len(theirs) - len(_missing(theirs, mine, a)) >= COVERAGE * len(theirs)


def _missing(words: set[str], other: set[str], other_text: str) -> set[str]:
    """Words not said by the other text (a Chinese word also counts as said inside a longer one)."""
    flat = normalize(other_text)
    return {w for w in words if w not in other and not (CJK.match(w) and w in flat)}


def anchor_terms(text: str) -> list[str]:
    """Index terms every duplicate of `text` must hold: its Latin words and numbers, and the
    character bigrams of its Chinese words (longer segmenter words may be cut differently)."""
    out = []
    for t in dict.fromkeys(content_words(text)):
        if not CJK.match(t) or len(t) == 2:
            out.append(t)
    return out


def dedup_anchors(text: str) -> list[str]:
    """Index terms every entry `is_duplicate` could fold `text` into must hold: the plain
    words of the text (filler and synonyms left out, since the other text may word them
    differently), English stemmed, Chinese words as their character pairs."""
    synonyms = {stem(w) for w in (*SYNONYMS_EN, *SYNONYMS_EN.values())}
    zh_syn = set(SYNONYMS_ZH) | set(SYNONYMS_ZH.values())
    out: list[str] = []
    for w in sorted(plain_words(plain(text))):
        if CJK.match(w):
            if any(x in w or w in x for x in zh_syn):
                continue
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        elif w not in synonyms:
            out.append(w)
    return list(dict.fromkeys(out))


_SWAP_TOKEN = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+")
SWAP_MAX_WORDS, SWAP_MAX_CHARS = 2, 4  # a replaced part this short (en words, zh characters) is a value


def value_swap(a: str, b: str) -> bool:
    """Are the two texts the same frame with one short part replaced ("My editor is Vim" /
    "... Emacs", 我在学吉他 / 我在学钢琴)? That is a slot given another value, however close
    an embedder finds them; a synonym swap looks the same, so only the word lists (`plain`)
    fold those."""
    return swapped_parts(a, b) is not None


def swapped_parts(a: str, b: str) -> tuple[list[str], list[str]] | None:
    """The short parts replaced between two texts of one frame (see `value_swap`), or None."""
    x = _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(a)).lower())
    y = _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(b)).lower())
    p = 0
    while p < min(len(x), len(y)) and x[p] == y[p]:
        p += 1
    s = 0
    while s < min(len(x), len(y)) - p and x[-1 - s] == y[-1 - s]:
        s += 1
    mx, my = x[p : len(x) - s], y[p : len(y) - s]
    if not mx or not my or p + s < max(1, len(mx), len(my)):
        return None
    if "".join(mx) == "".join(my) or (numbers(" ".join(mx)) and numbers(" ".join(mx)) == numbers(" ".join(my))):
        return None  # the same word spaced otherwise (VS Code), the same number written otherwise (三 / 3)

    def short(part: list[str]) -> bool:
        cjk = sum(1 for t in part if CJK.match(t))
        return (cjk <= SWAP_MAX_CHARS) and (len(part) - cjk <= SWAP_MAX_WORDS)

    return (mx, my) if short(mx) and short(my) else None


MEANING_OVERLAP = 0.5  # an embedder's fold needs this share of the shorter text's plain words in the other
# With an embedder: two texts whose cosine reaches this, and that `may_fold_by_meaning`, say one
# fact (measured on tests/data/fact_pairs.py with the default local embedder `use`:
# bench/fact_pairs.py, docs/benchmarks.md). The write path and the light phase use it.
RESTATEMENT_COSINE = 0.80


def word_count(text: str) -> int:
    """How much a text says: its plain words (to keep the one that says more)."""
    return len(plain_words(plain(text)))


def may_fold_by_meaning(a: str, b: str) -> bool:
    """May an embedder's high cosine fold `a` and `b` into one line? Only when nothing says
    they differ: no contradiction signal either way, not a value swap, and at least
    MEANING_OVERLAP of the shorter one's plain words in the other (a restatement keeps most
    of its words; two facts on one topic do not)."""
    if contradiction(a, b) or contradiction(b, a) or value_swap(a, b):
        return False
    pa, pb = plain(a), plain(b)
    wa, wb = plain_words(pa), plain_words(pb)
    if not wa or not wb:
        return False
    small, big, big_text = (wa, wb, pb) if len(wa) <= len(wb) else (wb, wa, pa)
    return len(small) - len(_missing(small, big, big_text)) >= MEANING_OVERLAP * len(small)
