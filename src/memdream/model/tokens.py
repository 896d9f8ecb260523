"""Chinese-aware word tokens, shared by the full-text index and dedup (DESIGN sections 7, 12).

FTS5's unicode61 tokenizer keeps a run of Chinese characters as one token, so 余杭 would
never find 我在余杭区. We tokenize in Python and give FTS5 a space-separated string:

- Chinese runs: rjieba words (search mode, so 余杭区 also yields 余杭) plus every
  character bigram, so 盘前 finds 盘前简报 whatever the segmenter decided;
- everything else: lower-cased words and numbers, English words Snowball-stemmed
  (PyStemmer), so "meetings" finds "meeting", and an irregular verb form brought to its verb
  first (model/irregular_en.py: "bought" is "buy", "went" is "go", "ran" is "run"), so "where
  did I buy the lamp" finds "bought a lamp". English stopwords are left out.

The index also holds every Chinese character as a token of its own (except a short list of
function characters that occur in nearly every sentence), so one-character queries work.

A recall query's Chinese is segmented by the memories' own words instead (`query_terms`): every
piece of it that the index holds as a token, and its characters where it holds none. That needs
no segmenter, so a Chinese recall in a new process does not pay for loading one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection
from functools import lru_cache

from memdream.model import lazyre as re

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_RUN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")
# _RUN on ASCII text (no CJK character can be in it): the same runs, from a pattern that costs
# nothing to compile (the CJK ranges above take ~3 ms each in a new process)
_ASCII_RUN = re.compile(r"[^\W_]+")

# Function characters too common to be worth a posting list of their own.
CJK_STOP_CHARS = frozenset("的了是在我你他她它们和与也就都而及着或一个这那有吗呢吧啊把被让给从对向到为以之其")

# Chinese words that only ask or point (the counterpart of English what/where/how/my/you, left
# out below): a question's 什么 or 哪些 would otherwise match every reply that asks something back.
CJK_STOPWORDS = frozenset(
    """什么 哪些 哪个 哪里 哪儿 怎么 怎样 怎么样 为什么 多少 是不是 有没有 我们 你们 他们 她们 自己 这个 那个 这些 那些
    一下 一些 还是 或者 就是 但是 所以 因为 如果 然后 可以 已经 曾经 还有""".split()
)

# Query-side English stopwords: they would match nearly every memory.
EN_STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have he her his how i i'm if in into is it
    its me my of on or our she so that the their them then there these they this to was we were what when where
    which who whom why will with would you your yours""".split()
)


@lru_cache(maxsize=1)
def _jieba():  # imported lazily: importing memdream must stay cheap
    import rjieba

    return rjieba


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _irregular() -> dict[str, str]:
    from memdream.model.irregular_en import FORMS

    return dict(line.split(" ", 1) for line in FORMS.splitlines())


@lru_cache(maxsize=1 << 16)  # words repeat: one lookup instead of a table and a stemmer each time
def stem(word: str) -> str:
    """The index term of a lower-case English word: its verb's stem for an irregular verb form
    (went -> go, bought -> buy), else its Snowball stem (meetings -> meet)."""
    return _stemmer().stemWord(_irregular().get(word, word))


_ASCII_WORD = re.compile(r"[a-z]+")

# English contractions and the possessive: "don't" / "can't" / "won't" are "... not", and 's, 'm,
# 'd, 'll, 're, 've leave their word alone ("Caroline's" is caroline), instead of the fragments
# an apostrophe split them into (don + t, win + t, carolin + s), which matched every line with
# any contraction and counted in its length.
_WONT_CANT = re.compile(r"\b(wo|ca|sha)n['’]t\b")
_NT = re.compile(r"n['’]t\b")
_CLITIC = re.compile(r"(?<=[a-z])['’](?:s|m|d|ll|re|ve)\b")
_WONT_CANT_WORD = {"wo": "will", "ca": "can", "sha": "shall"}


def _uncontracted(text: str) -> str:
    """Lower-case `text` with its English contractions undone (see _CLITIC)."""
    if "'" not in text and "’" not in text:
        return text
    text = _WONT_CANT.sub(lambda m: _WONT_CANT_WORD[m.group(1)] + " not", text)
    return _CLITIC.sub("", _NT.sub(" not", text))


def _cjk_tokens(run: str, unigrams: bool = False) -> list[str]:
    if len(run) == 1:
        return [run]
    out = [w for w in _jieba().cut_for_search(run) if (len(w) > 1 and w not in CJK_STOPWORDS) or (len(w) == 1 and w not in CJK_STOP_CHARS and _IS_CJK.match(w))]
    # Bigrams across a function character (新的, 了新, 我在) are noise, not words: left out (a real
    # word holding one, 目的 or 的确, is kept by the segmenter above).
    out.extend(g for g in (run[i : i + 2] for i in range(len(run) - 1)) if g not in CJK_STOPWORDS and g[0] not in CJK_STOP_CHARS and g[1] not in CJK_STOP_CHARS)
    if unigrams:
        out.extend(ch for ch in run if ch not in CJK_STOP_CHARS and _IS_CJK.match(ch))
    return out


def cjk_words(run: str) -> list[str]:
    """The segmenter's words of a run of Chinese text (precise mode: no overlapping pieces)."""
    return list(_jieba().cut(run, False)) if len(run) > 1 else [run]


def tokens(text: str, unigrams: bool = False) -> list[str]:
    """Index tokens of `text`, in order, with repeats (BM25 counts term frequency).

    With `unigrams` (what the index stores), every Chinese character that is not a function
    character is a token too, so a one-character query finds it inside longer words (茶 finds
    我喜欢喝龙井茶, 住 finds 我住在杭州). Queries keep their own words: a two-character query
    word does not turn into its characters (a recall query is cut by `query_terms` instead)."""
    out: list[str] = []
    text = _uncontracted(text.lower())
    ascii_only = text.isascii()
    for m in (_ASCII_RUN if ascii_only else _RUN).finditer(text):
        run = m.group(0)
        if not ascii_only and _IS_CJK.match(run):
            out.extend(_cjk_tokens(run, unigrams))
        elif run in EN_STOPWORDS:
            continue
        elif _ASCII_WORD.fullmatch(run):
            out.append(stem(run))
        else:
            out.append(run)
    return out


# _RUN's runs that are not Chinese: the same runs as _RUN gives outside its Chinese ones (a
# Chinese run ends exactly where one of these starts), and no character of a Chinese run is a
# digit, so a number is always one of these
_NON_CJK_RUN = re.compile(rf"[^\W_{_CJK}]+", re.UNICODE)


def number_tokens(text: str) -> frozenset[str]:
    """The tokens of digits only that `tokens(text)` yields (a number is cut as a run of its
    own, never by the Chinese segmenter), without cutting the rest of the text."""
    if not any(ch.isdigit() for ch in text):
        return frozenset()
    return frozenset(r for r in _NON_CJK_RUN.findall(_uncontracted(text.lower())) if r.isdigit() and r not in EN_STOPWORDS)


# Every character of the Basic Multilingual Plane whose NFKC form holds a digit (a character
# `str.isdigit` counts: 0-9, and also ² ½ ⑩ ㋀ ١ or a full-width ２), as the ranges of a regex
# class, in Unicode NFKC_NUMERIC_UNIDATA; a character beyond the BMP is taken as one without
# looking (a class of them made the regex test each character range by range, ten times slower).
# A text holding none of them has no number after NFKC: no digit is composed or decomposed
# canonically, so NFKC makes a digit only from a character whose own NFKC holds one.
# tests/test_light_bulk.py recomputes the class from the running Python's unicodedata; under
# another Unicode version it is not used.
NFKC_NUMERIC_UNIDATA = "14.0.0"
NFKC_NUMERIC_BMP = (
    r"\u0030-\u0039\u00b2-\u00b3\u00b9\u00bc-\u00be\u0660-\u0669\u06f0-\u06f9\u07c0-\u07c9"
    r"\u0966-\u096f\u09e6-\u09ef\u0a66-\u0a6f\u0ae6-\u0aef\u0b66-\u0b6f\u0be6-\u0bef\u0c66-\u0c6f"
    r"\u0ce6-\u0cef\u0d66-\u0d6f\u0de6-\u0def\u0e50-\u0e59\u0ed0-\u0ed9\u0f20-\u0f29\u1040-\u1049"
    r"\u1090-\u1099\u1369-\u1371\u17e0-\u17e9\u1810-\u1819\u1946-\u194f\u19d0-\u19da\u1a80-\u1a89"
    r"\u1a90-\u1a99\u1b50-\u1b59\u1bb0-\u1bb9\u1c40-\u1c49\u1c50-\u1c59\u2070\u2074-\u2079"
    r"\u2080-\u2089\u2150-\u215f\u2189\u2460-\u249b\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788"
    r"\u278a-\u2792\u3251-\u325f\u32b1-\u32cb\u3358-\u3370\u3378-\u3379\u339f-\u33a6\u33a8\u33af"
    r"\u33e0-\u33fe\ua620-\ua629\ua8d0-\ua8d9\ua900-\ua909\ua9d0-\ua9d9\ua9f0-\ua9f9\uaa50-\uaa59"
    r"\uabf0-\uabf9\uff10-\uff19"
)
_NFKC_NUMERIC = re.compile(rf"[{NFKC_NUMERIC_BMP}]|[\U00010000-\U0010ffff]")
_NFKC_NUMERIC_HOLDS = unicodedata.unidata_version == NFKC_NUMERIC_UNIDATA


def nfkc_number_tokens(text: str) -> frozenset[str]:
    """`number_tokens` of the NFKC form of `text` (how `new_content` reads numbers), without
    normalizing a text that holds no character NFKC makes a digit of (most texts)."""
    if _NFKC_NUMERIC_HOLDS and not _NFKC_NUMERIC.search(text):
        return frozenset()
    return number_tokens(unicodedata.normalize("NFKC", text))


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query, in order of first appearance."""
    return list(dict.fromkeys(tokens(text)))


# The longest piece of a query's Chinese run looked up as a word of the memories (the
# segmenter's words are rarely longer: 中华人民共和国 is 7).
MAX_QUERY_PIECE = 8
LOOKUP_BATCH = 900  # pieces looked up at a time (SQLite before 3.32 binds at most 999 parameters)


def query_terms(text: str, known: Callable[[list[str]], Collection[str]]) -> list[str]:
    """Distinct terms of a recall query, in order of first appearance, its Chinese segmented by
    the memories' own words: `known(pieces)` says which of the pieces some memory holds as a
    token (the index's terms).

    A Chinese run gives every character bigram (as `tokens` does), every longer piece of it
    (up to MAX_QUERY_PIECE characters) that a memory holds as a word, a bigram across a
    function character only where a memory holds it as a word (目的, 的确), and each of its
    characters that no piece a memory holds covers (喝茶, where no memory says 喝茶, still finds
    龙井茶 by its 茶; a word that only asks, such as 什么, covers its characters though it is no
    term). A query word no memory holds can match nothing, so looking the pieces up
    loses nothing the segmenter would have found, and a segmenter's choice for a short query
    out of context no longer hides a word the memories use. Everything else is as `tokens`.
    The segmenter is not loaded."""
    text = _uncontracted(text.lower())
    if text.isascii():  # no Chinese to segment (and no CJK pattern to compile in a new process)
        return list(dict.fromkeys(tokens(text)))
    runs = [m.group(0) for m in _RUN.finditer(text)]
    pieces: list[str] = []
    for run in runs:
        if len(run) > 1 and _IS_CJK.match(run):
            n = len(run)
            pieces.extend(run[i:j] for i in range(n) for j in range(i + 2, min(n, i + MAX_QUERY_PIECE) + 1))
    distinct = list(dict.fromkeys(pieces))
    have: set[str] = set()
    for i in range(0, len(distinct), LOOKUP_BATCH):  # a long query: within any SQLite's limit on bound parameters
        have.update(known(distinct[i : i + LOOKUP_BATCH]))
    out: list[str] = []
    for run in runs:
        if not _IS_CJK.match(run):
            out.extend(tokens(run))
            continue
        n = len(run)
        if n == 1:
            out.append(run)
            continue
        covered = [False] * n
        words: list[str] = []
        for i in range(n):
            for j in range(i + 2, min(n, i + MAX_QUERY_PIECE) + 1):
                piece = run[i:j]
                if piece in CJK_STOPWORDS:  # a word too, if one that only asks or points
                    covered[i:j] = [True] * (j - i)
                elif piece in have:
                    covered[i:j] = [True] * (j - i)
                    if j - i > 2:
                        words.append(piece)
        bigrams = []
        for i in range(n - 1):
            g = run[i : i + 2]
            if g in CJK_STOPWORDS:
                continue
            if (g[0] not in CJK_STOP_CHARS and g[1] not in CJK_STOP_CHARS) or g in have:
                bigrams.append(g)
        singles = [ch for i, ch in enumerate(run) if not covered[i] and ch not in CJK_STOP_CHARS and _IS_CJK.match(ch)]
        out.extend(words + singles + bigrams)
    return list(dict.fromkeys(out))
