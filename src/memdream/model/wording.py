"""Texts put in comparable words: what the dedup rule (model/similarity.py) and the
contradiction signals (model/contradiction.py) both compare.

`normalize` folds case, width, spacing and punctuation; `plain` drops filler and makes common
synonyms one word (for comparing, never stored); `plain_words` are a text's content words,
English stemmed and Chinese by the segmenter.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from memdream.model import lazyre as re
from memdream.model.script import starts_cjk
from memdream.model.tokens import CJK_STOP_CHARS, EN_STOPWORDS

_DROP = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """Case-folded, width-folded, without spaces or punctuation."""
    return _DROP.sub("", unicodedata.normalize("NFKC", text).casefold())


def stem(word: str) -> str:
    """The Snowball stem of an English word, for comparing two wordings. Not the index's term
    (model/tokens.py `stem` also brings an irregular verb form to its verb): "What did you get?"
    would then hold nothing "... Got any fave styles?" lacks, and be folded into it."""
    from memdream.model.tokens import _stemmer

    return _stemmer().stemWord(word)


_WORDS = re.compile(r"[\u3400-\u9fff]+|[A-Za-z]+(?:['’][A-Za-z]+)?|\d+(?:\.\d+)?")
_WORDS_ASCII = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:\.\d+)?")  # the same words of an ASCII text, without the CJK range to compile


def plain_words(text: str, index_terms: bool = False) -> set[str]:
    """Content words for comparing two wordings: English stemmed, Chinese by the segmenter
    (no character pairs across word edges: 每天早上我喝 and 我每天早上喝 hold the same words).
    With `index_terms`, English words are the terms the index holds (went is go): what the
    write path looks duplicate candidates up by (`similarity.dedup_anchors`)."""
    from memdream.model.tokens import cjk_words
    from memdream.model.tokens import stem as index_stem

    to_term = index_stem if index_terms else stem

    out: set[str] = set()
    text = unicodedata.normalize("NFKC", text)
    for m in (_WORDS_ASCII if text.isascii() else _WORDS).finditer(text):
        w = m.group(0)
        if starts_cjk(w):
            out.update(x for x in cjk_words(w) if x not in CJK_STOP_CHARS)
            continue
        w = _base(w.lower())
        if w not in EN_STOPWORDS and w not in _REFLEXIVE:
            out.add(to_term(w) if w.isalpha() else w)
    return out


# A contraction is its first word (I'm, they're, Jon's, haven't: the n't is the contradiction
# rules' business), and a reflexive pronoun says no more than the person it points back to.
_REFLEXIVE = frozenset("myself yourself himself herself itself ourselves yourselves themselves themself oneself".split())
_NOT = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": "be"}


def _base(word: str) -> str:
    word = word.replace("’", "'")
    if "'" not in word:
        return word
    if word in _NOT:
        return _NOT[word]
    head = word.split("'")[0]
    return head[:-1] if word.endswith("n't") and head.endswith("n") else head


# Words and phrases that add nothing to a fact (when it is said, how sure the speaker sounds).
_FILLER_EN = re.compile(
    r"\b(?:actually|really|basically|just|still|currently|now|right now|these days|at the moment|by the way|as i said|"
    r"just so you know|you know|for what it's worth|i think|well|oh|so|usually|normally|mostly|already|truly|honestly|"
    r"anyway|indeed|also|too|very|quite|pretty|every day)\b[,.]?"
    # Reported speech: "Jon mentioned that dance is his passion" says what Jon said.
    r"|\b(?:mentioned|mentions|said|says|noted|notes|shared|shares|explained|explains|stated|states|told (?:me|us)|tells (?:me|us))"
    r" that\b",
    re.I,
)
_FILLER_ZH = (
    "跟你说一下", "哦对了", "对了", "提到过", "提到", "提过", "其实", "真的", "基本上", "现在", "目前", "最近", "一般", "通常", "一直", "还是", "已经",
    "大概", "嗯", "哦", "啊", "呢", "吧", "挺", "很", "非常", "都", "平时", "的",
)
# Common synonyms, each made one word (English by word, Chinese by substring; longest first).
SYNONYMS_EN = {
    "purchased": "bought", "purchase": "buy", "kids": "children", "kid": "child", "mom": "mother", "mum": "mother",
    "dad": "father", "began": "started", "begin": "start", "glad": "happy", "reside": "live", "relocated": "moved",
    "relocate": "move", "enjoy": "like", "love": "like", "large": "big", "picture": "photo", "pic": "photo",
    "boss": "manager", "assistance": "help", "assist": "help", "afraid": "scared", "frequently": "often",
    "studying": "learning", "completed": "finished", "quit": "stopped", "husband": "partner", "wife": "partner",
    "spouse": "partner", "employed": "work", "sick": "tired", "adopted": "got", "own": "have",
}
SYNONYMS_ZH = {
    "母亲": "妈妈", "父亲": "爸爸", "妻子": "老婆", "太太": "老婆", "丈夫": "老公", "先生": "老公", "小孩": "孩子",
    "上司": "领导", "老板": "领导", "工作": "上班", "学习": "学", "购买": "买", "收养": "领养", "害怕": "怕", "常常": "经常",
    "旅行": "旅游", "自行车": "车", "公交车": "公交", "乘": "坐", "笔记本": "电脑", "爱": "喜欢",
}
_SYN_EN = re.compile(r"\b(" + "|".join(sorted(map(re.escape, SYNONYMS_EN), key=len, reverse=True)) + r")\b", re.I)


# Informal spellings of two words, said out ("I'm gonna" is "I'm going to").
INFORMAL_EN = {
    "gonna": "going to", "wanna": "want to", "gotta": "got to", "kinda": "kind of", "sorta": "sort of",
    "lemme": "let me", "gimme": "give me", "outta": "out of", "lotta": "lot of",
}
_INFORMAL = re.compile(r"\b(" + "|".join(INFORMAL_EN) + r")\b", re.I)


@lru_cache(maxsize=1024)  # the write path compares one new text with several candidates, rule by rule
def plain(text: str) -> str:
    """The text with filler dropped and common synonyms made one (for comparing, never stored)."""
    t = unicodedata.normalize("NFKC", text)
    t = re.sub(r"(?<=\d)(?=[A-Za-z])", " ", t)  # 3pm = 3 pm
    t = _INFORMAL.sub(lambda m: INFORMAL_EN[m.group(1).lower()], t)
    t = _FILLER_EN.sub(" ", t)
    t = _SYN_EN.sub(lambda m: SYNONYMS_EN[m.group(1).lower()], t)
    for w in sorted(SYNONYMS_ZH, key=len, reverse=True):
        t = t.replace(w, SYNONYMS_ZH[w])
    for w in _FILLER_ZH:
        t = t.replace(w, "")
    return re.sub(r"\s+", " ", t).strip()
