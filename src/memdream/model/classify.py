"""Deterministic, bilingual heuristics of the write path (DESIGN section 5): type, subject, salience.

The caller (an agent's own LLM in a tool call) may give the type and subject; these
functions fill them in otherwise. They are pure and cheap, and err on the side of "fact".
"""

from __future__ import annotations


from memdream.model.entry import FACT, IDENTITY, INSTRUCTION, PREFERENCE, RULE
from memdream.model import lazyre as re

# Ordered: the first matching cue wins. Chinese cues are substrings; English ones are words.
_TYPE_CUES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        RULE,
        ("不要", "不许", "不准", "禁止", "务必", "绝不", "绝对不", "永远不", "千万不要", "别再"),
        (r"never", r"do not", r"don't", r"must not", r"mustn't", r"under no circumstances"),
    ),
    (
        INSTRUCTION,
        ("以后都", "以后请", "以后要", "今后", "每次都", "请总是", "总是用", "一律", "记得", "千万记得", "请用", "回答时"),
        (r"always", r"from now on", r"in the future", r"every time", r"make sure to", r"remember to", r"please use"),
    ),
    (
        IDENTITY,
        ("我是", "我叫", "我的名字", "本人是", "我的职业"),
        (r"i am a", r"i'm a", r"i am an", r"i'm an", r"my name is", r"call me", r"i work as"),
    ),
    (
        PREFERENCE,
        ("我喜欢", "我爱", "我偏好", "我更喜欢", "我讨厌", "我不喜欢", "喜欢用", "偏好", "习惯用", "爱吃", "不爱"),
        (r"i prefer", r"i like", r"i love", r"i hate", r"i dislike", r"i enjoy", r"my favou?rite", r"i'd rather"),
    ),
)
_EN_CUE_RE = {
    t: re.compile(r"\b(?:" + "|".join(en) + r")\b", re.IGNORECASE) for t, _, en in _TYPE_CUES
}


def classify_type(text: str) -> str:
    """rule / instruction / identity / preference by zh and en cues; default fact."""
    for type_, zh, _en in _TYPE_CUES:
        if any(cue in text for cue in zh) or _EN_CUE_RE[type_].search(text):
            return type_
    return FACT


# Words that make a memory important the first time it is said (DESIGN section 5).
SALIENCE_WORDS_ZH = ("过敏", "务必", "千万", "一定", "切记", "重要", "紧急", "绝对", "永远", "必须")
SALIENCE_WORDS_EN = ("allergic", "allergy", "must", "never", "always", "critical", "important", "urgent", "vital")
SALIENCE_PER_WORD = 0.3  # each distinct cue adds this much importance ...
SALIENCE_MAX = 0.6  # ... up to this bonus (importance itself is capped at 2.0 in scoring)
_SAL_EN = re.compile(r"\b(?:" + "|".join(SALIENCE_WORDS_EN) + r")\b", re.IGNORECASE)


def salience(text: str) -> float:
    """The salience bonus: how many distinct emphasis words the text carries, times a step."""
    hits = {w for w in SALIENCE_WORDS_ZH if w in text}
    hits |= {m.group(0).lower() for m in _SAL_EN.finditer(text)}
    return round(min(SALIENCE_MAX, SALIENCE_PER_WORD * len(hits)), 2)


# Subjects that can be read off a sentence without a model. Conservative on purpose: a
# wrong subject would supersede an unrelated memory, a missing one only adds a line.
_PLACE_SUFFIX = "区市县省镇村州岛"
_SUBJECT_PATTERNS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(rf"^(?:我(?:现在|目前|住)?(?:在|住在))[\u4e00-\u9fff]{{1,8}}[{_PLACE_SUFFIX}]\W*$"), "所在地"),
    (re.compile(r"^我(?:的)?(?:名字)?叫[\u4e00-\u9fffA-Za-z ]{1,20}\W*$"), "名字"),
    (re.compile(r"^我的([\u4e00-\u9fff]{1,8})是.+$"), None),
    (re.compile(r"^(?:i live in|i'm living in|i am living in|i'm based in|i am based in|i moved to)\b.+$", re.I), "location"),
    (re.compile(r"^my name is\b.+$", re.I), "name"),
    (re.compile(r"^my ((?:[a-z]+ ){0,2}[a-z]+) (?:is|are)\b.+$", re.I), None),
)


def extract_subject(text: str) -> str:
    """A subject key for "the same thing with a new value", or "" when unsure."""
    t = text.strip()
    for pattern, fixed in _SUBJECT_PATTERNS:
        m = pattern.match(t)
        if m:
            return fixed if fixed is not None else m.group(1).strip().lower()
    return ""
