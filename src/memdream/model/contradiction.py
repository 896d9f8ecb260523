"""Contradiction signals: what makes two look-alike texts say different things.

Bigrams and content words cannot see that "I am allergic to peanuts" and "I am not allergic
to peanuts" differ (the shorter text adds no word), nor "Alice owes me 500 and Bob 300" and
its 300/500 twin, nor "open Monday to Friday" and "Friday to Monday". `contradiction` names
the first signal that two texts differ in meaning; a text with such a signal is never folded
into the other, whatever the similarity (model/similarity.py; tests/data/fact_pairs.py is
the corpus).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import unicodedata

from memdream.model import lazyre as re
from memdream.model.tokens import EN_STOPWORDS
from memdream.model.script import starts_cjk
from memdream.model.wording import normalize, stem

_NEG_EN_WORDS = re.compile(
    r"\b(?:not|no|never|nor|neither|none|nothing|nobody|nowhere|without|cannot|no longer)\b|n['’]t\b", re.I
)
_NEG_ZH_CHARS = "不没别別未无勿非"
# Words holding a negation character that negate nothing (不过 = but, 无论 = whatever, 别人 = others).
_NEG_ZH_FALSE = (
    "不错", "不但", "不仅", "不久", "不断", "不少", "不管", "不同", "不如", "不得不", "差不多", "不一定",
    "无论", "无聊", "无线", "无人机", "无数", "无限", "别人", "别的", "特别", "分别", "区别", "级别", "类别", "告别",
    "非常", "是非", "未来", "并非", "无非", "莫非", "没准",
    "不好意思",
)
# Formulas with a negation word that deny nothing: thanks answered (不用谢, "no problem"), said
# as a clause of their own ("没问题，朋友！" but not 身体没问题), eagerness and emphasis.
_COURTESY = re.compile(
    r"(^|[,.!?;:，。！？；：、~～…]\s*)(?:不用谢|不客气|别客气|没关系|没问题|没事|no problem|no worries|not at all|don['’]t mention it)(?=\s*(?:[,.!?;:，。！？；：、~～…]|$))",
    re.I,
)
_NEG_EN_FALSE = re.compile(r"\b(?:can['’]t wait|not only|no doubt|no wonder)\b", re.I)
_NEG_ZH_ANY = re.compile(f"[{_NEG_ZH_CHARS}]")
_NEG_ZH_MULTI = ("不再", "从不", "从没", "从未", "尚未", "并不", "无需", "无须", "禁止", "停止", "取消")


# The cues set aside to compare what two texts are about ("用方案A" / "不用方案A"), a rule's
# "stop" and "avoid" among them.
_NEG_ZH = ("不", "没", "別", "别", "无需", "无须", "禁止", "勿", "非", "未", "停止", "不再", "取消")
_NEG_EN = re.compile(r"\b(?:not|no|never|don't|doesn't|didn't|won't|isn't|aren't|wasn't|shouldn't|cannot|can't|stop(?:ped)?|no longer|avoid)\b", re.I)


def without_negation(text: str) -> str:
    """The text with its negation cues removed (to compare what two texts are about)."""
    t = _NEG_EN.sub(" ", text)
    for c in sorted(_NEG_ZH, key=len, reverse=True):
        t = t.replace(c, "")
    return t


_NEG_ZH_CUE = re.compile(f"[{_NEG_ZH_CHARS}]|" + "|".join(_NEG_ZH_MULTI))  # any Chinese cue at all


def negation_count(text: str) -> int:
    """How many negation cues the text holds (zh 不/没/别/未/无..., en not/never/no/n't...)."""
    if _NEG_ZH_CUE.search(text) is None and _NEG_EN_WORDS.search(text) is None:
        return 0  # most lines: no cue, nothing to set aside
    t = re.sub(r"不过(?!敏)", " ", _COURTESY.sub(r"\1 ", text.strip()))
    for w in _NEG_ZH_FALSE:
        t = t.replace(w, " ")
    n = 0
    for w in _NEG_ZH_MULTI:
        n += t.count(w)
        t = t.replace(w, " ")
    n += sum(t.count(c) for c in _NEG_ZH_CHARS)
    n += len(_NEG_EN_WORDS.findall(_NEG_EN_FALSE.sub(" ", t)))
    return n


_EN_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "twice": 2, "once": 1}
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000, "亿": 100000000}
# Words in which a numeral character is no number (一起 = together, 十分 = very, 周一 = Monday: a time).
_ZH_NUM_FALSE = (
    "一起", "一直", "一下", "一定", "一样", "一些", "一般", "一切", "一边", "一旦", "一再", "一致", "一律", "一贯", "一共",
    "一向", "一点儿", "统一", "万一", "唯一", "十分", "一会", "一部分", "之一", "万分", "千万", "三明治", "一手", "一心",
)
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_NUM = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(k\b)?", re.I)
_ZH_NUM = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")


def _zh_number(s: str) -> int | None:
    total, section, digit = 0, 0, None
    for ch in s:
        if ch in _ZH_DIGITS:
            if digit is not None:  # a run of digits (二〇二六): read as written
                return int("".join(str(_ZH_DIGITS[c]) for c in s if c in _ZH_DIGITS)) if all(c in _ZH_DIGITS for c in s) else None
            digit = _ZH_DIGITS[ch]
        else:
            unit = _ZH_UNITS[ch]
            if unit >= 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
    return total + section + (digit or 0)


def numbers(text: str) -> list[str]:
    """The numbers of the text in order, normalized (5200 = ５２００ = 五千二百, 20k = 20000, two = 2)."""
    t = unicodedata.normalize("NFKC", text)
    out: list[tuple[int, str]] = []
    for m in _NUM.finditer(t):
        raw = m.group(1).replace(",", "")
        v = float(raw) * (1000 if m.group(2) else 1)
        out.append((m.start(), f"{v:g}"))
    for m in re.finditer(r"[A-Za-z]+", t):
        w = m.group(0).lower()
        if w in _EN_NUMBER_WORDS:
            out.append((m.start(), str(_EN_NUMBER_WORDS[w])))
    for m in _zh_numerals(_ZH_WEEKDAY.sub(lambda m: "　" * len(m.group(0)), t)):
        v = _zh_number(m.group(0))
        if v is not None:
            out.append((m.start(), str(v)))
    return [v for _, v in sorted(out)]


_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTHS = "january february march april june july august september october november december".split()
_EN_TIME = re.compile(
    r"\b(?:(mon|tues|wednes|thurs|fri|satur|sun)days?|(january|february|march|april|june|july|august|september|october|november|december)"
    r"|(May)|(today|tonight|tomorrow|yesterday|morning|afternoon|evening|noon|midnight|weekends?|weekdays?|am|pm|a\.m\.|p\.m\.)"
    r"|(minutes?|hours?|days?|weeks?|months?|years?))\b|(?<=\d)(am|pm)\b",
    re.I,
)
_ZH_TIME = re.compile(r"今天|明天|昨天|后天|前天|今晚|明晚|上午|下午|早上|早晨|中午|晚上|凌晨|傍晚|周末|工作日")
_ZH_DAY = {"一": "monday", "二": "tuesday", "三": "wednesday", "四": "thursday", "五": "friday", "六": "saturday", "日": "sunday", "天": "sunday"}
_ZH_TIME_EN = {"今天": "today", "明天": "tomorrow", "昨天": "yesterday", "今晚": "tonight", "上午": "am", "下午": "pm", "早上": "morning", "早晨": "morning", "晚上": "evening", "中午": "noon", "周末": "weekend", "工作日": "weekday"}


def times(text: str) -> tuple[list[str], list[str]]:
    """(points, units) in order: weekdays, months, days and parts of the day; time units."""
    points: list[tuple[int, str]] = []
    units: list[str] = []
    for m in _EN_TIME.finditer(text):
        if m.group(1):
            points.append((m.start(), m.group(1).lower()[:3] + "day"))
        elif m.group(2) or m.group(3):
            points.append((m.start(), (m.group(2) or m.group(3)).lower()))
        elif m.group(4) or m.group(6):
            w = (m.group(4) or m.group(6)).lower().replace(".", "").rstrip("s")
            points.append((m.start(), {"tonight": "evening"}.get(w, w)))
        else:
            units.append(m.group(5).lower().rstrip("s"))
    for m in _ZH_WEEKDAY.finditer(text):
        points.append((m.start(), _ZH_DAY[m.group(1)][:3] + "day"))
    for m in _ZH_TIME.finditer(text):
        points.append((m.start(), _ZH_TIME_EN.get(m.group(0), m.group(0))))
    return [v for _, v in sorted(points)], units


_ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th)\b", re.I)
_EN_NUMBER = re.compile(r"\b(?:" + "|".join(sorted(_EN_NUMBER_WORDS, key=len, reverse=True)) + r")\b", re.I)


@lru_cache(maxsize=256)  # the new text is compared with several candidates
def without_signals(text: str) -> str:
    """The text with what the contradiction signals read set aside: numbers (digits, number
    words, 五千), times (weekdays, months, parts of the day, units, 周二, 下午), opposite words
    (before / after, 之前 / 之后) and negation cues. Two texts alike in what is left say one
    thing with another number, time or polarity; two texts that each keep a word of their own
    ("周末去爬了莫干山，走了 5 公里" / "周末去爬了千岛湖，走了 7 公里") are two facts, not one changed."""
    t = unicodedata.normalize("NFKC", text)
    for rx in (_ORDINAL, _NUM, _EN_NUMBER, _ZH_WEEKDAY, _EN_TIME, _ZH_TIME):
        t = rx.sub(" ", t)
    t = _EN_OPPOSITE.sub(" ", t)
    for w in _ZH_OPPOSITES:
        t = t.replace(w, " ")
    return _NEG_ZH_ANY.sub(" ", without_negation(_mask_zh_numbers(t)))


def _opposite_words() -> tuple[object, tuple[str, ...]]:
    en = sorted({w for pair in OPPOSITES for w in pair if w.isascii()}, key=len, reverse=True)
    zh = sorted({w for pair in OPPOSITES for w in pair if not w.isascii()}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(en) + r")\b", re.I), tuple(zh)


def _zh_numerals(t: str):  # type: ignore[no-untyped-def]
    """The matches of Chinese numerals in `t` (positions as in `t`), leaving out the words in
    which a numeral is no number (一起, 十分)."""
    for w in _ZH_NUM_FALSE:
        t = t.replace(w, "　" * len(w))
    return _ZH_NUM.finditer(t)


def _mask_zh_numbers(t: str) -> str:
    """`t` with its Chinese numerals blanked (`_zh_numerals`)."""
    out = list(t)
    for m in _zh_numerals(t):
        out[m.start() : m.end()] = " " * (m.end() - m.start())
    return "".join(out)


_NAME = re.compile(r"(?<![\w'])([A-Z][A-Za-z]*)")
_TITLE = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr)\.")
_OPENING = re.compile(r"^\W*[A-Za-z]+|(?<=[.!?:;,])\s*[A-Za-z]+")
_PERSON_EN = {
    "i": "i", "me": "i", "my": "i", "mine": "i", "myself": "i", "we": "we", "us": "we", "our": "we",
    "you": "you", "your": "you", "he": "he", "him": "he", "his": "he", "she": "she", "her": "she",
}
_PERSON_ZH = re.compile(r"我们|他们|她们|咱们|我|你|您|他|她")
_COPULAS = frozenset({"is", "are", "was", "were", "be", "am", "'s", "是", "为", "叫"})
# Pairs of opposite words: a text saying one where the other says the other differs in meaning.
OPPOSITES: tuple[tuple[str, str], ...] = (
    ("before", "after"), ("above", "below"), ("more", "less"), ("early", "late"), ("earlier", "later"),
    ("open", "closed"), ("like", "dislike"), ("love", "hate"), ("like", "hate"), ("older", "younger"),
    ("bigger", "smaller"), ("larger", "smaller"), ("up", "down"), ("increase", "decrease"), ("win", "lose"),
    ("won", "lost"), ("buy", "sell"), ("bought", "sold"), ("first", "last"), ("start", "end"), ("high", "low"),
    ("always", "never"), ("yes", "no"), ("true", "false"), ("allowed", "forbidden"), ("cheap", "expensive"),
    ("hot", "cold"), ("left", "right"), ("east", "west"), ("north", "south"), ("white", "black"),
    ("之前", "之后"), ("以前", "以后"), ("前", "后"), ("多", "少"), ("早", "晚"), ("喜欢", "讨厌"), ("买", "卖"),
    ("赢", "输"), ("大", "小"), ("高", "矮"), ("高", "低"), ("开", "关"), ("上", "下"), ("左", "右"), ("冷", "热"),
    ("贵", "便宜"), ("胖", "瘦"), ("快", "慢"), ("涨", "跌"), ("增加", "减少"), ("同意", "反对"),
)
_EN_OPPOSITE, _ZH_OPPOSITES = _opposite_words()
_OPP = {}
for _a, _b in OPPOSITES:
    _OPP.setdefault(_a, set()).add(_b)
    _OPP.setdefault(_b, set()).add(_a)


def _inner_names(text: str) -> set[str]:
    """Capitalized words not opening the text or a clause: names for sure (Alice, Beijing)."""
    text = _TITLE.sub(r"\1 ", text)  # "Dr. Patel": Patel opens no sentence
    openings = {m.end() for m in _OPENING.finditer(text)}
    return {
        m.group(1).lower()
        for m in _NAME.finditer(text)
        if m.end() not in openings and m.group(1) != "I" and not _EN_TIME.fullmatch(m.group(1))
    }


def names(text: str) -> list[str]:
    """Capitalized words in order (names, places, products), lower-cased; stopwords left out."""
    return [
        w.lower()
        for w in _NAME.findall(text)
        if w.lower() not in EN_STOPWORDS and w != "I" and not _EN_TIME.fullmatch(w) and w.lower() not in _PERSON_EN
    ]


_SEQ_SKIP = frozenset({"a", "an", "the", "的", "了", "着", "吗", "呢", "吧", "啊", "呀", "嘛"})


def _sequence(text: str) -> list[str]:
    """The text's tokens in order, once each, to compare who comes before whom: English words
    stemmed (I/me/my as one person token), Chinese by character (robust to how a segmenter
    cuts two texts), small words kept (to, from, than, 给, 向, 比 carry the direction)."""
    out: list[str] = []
    t = unicodedata.normalize("NFKC", text)
    for m in re.finditer(r"[\u3400-\u9fff]|[A-Za-z]+(?:['’][a-z]+)?|\d+(?:[.,]\d+)*", t):
        w = m.group(0)
        if starts_cjk(w):
            if w not in _SEQ_SKIP and not (out and out[-1] == w):  # 妈妈 is one person
                out.append(w)
            continue
        low = w.lower().replace("’", "'")
        base = low.split("'")[0]
        if base in _PERSON_EN:
            out.append(_PERSON_EN[base])
        elif low in _COPULAS or base in _COPULAS:
            out.append(base)
        elif base not in _SEQ_SKIP:
            out.append(stem(base))
    return out


_POSSESSIVE_ZH = re.compile(r"(我们|他们|她们|我|你|他|她|[小老阿][\u4e00-\u9fff])的([\u4e00-\u9fff])")


def _owners(text: str) -> dict[str, set[str]]:
    """What belongs to whom: possessed word -> owners (my car, Tom's car, 小刘的领导)."""
    out: dict[str, set[str]] = {}
    for m in re.finditer(r"\b(my|our|your|his|her|[A-Za-z]+['’]s)(?=\s+([A-Za-z]+))", text, re.I):
        owner = m.group(1).lower().replace("’", "'").removesuffix("'s")
        out.setdefault(stem(m.group(2).lower()), set()).add(_PERSON_EN.get(owner, stem(owner)))
    for m in _POSSESSIVE_ZH.finditer(text):
        out.setdefault(m.group(2), set()).add(m.group(1))
    return out


def _owner_changed(a: str, b: str) -> bool:
    oa, ob = _owners(a), _owners(b)
    return any(_two_sided(sorted(oa[k]), sorted(ob[k])) for k in oa.keys() & ob.keys())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _two_sided(xs: list[str], ys: list[str]) -> bool:
    """Does each side hold an item the other lacks? Counted with repeats: "topic 0, number 0"
    against "topic 200, number 0" holds a 0 the other lacks, and the other a 200."""
    a, b = Counter(xs), Counter(ys)
    return bool(a - b) and bool(b - a)


def _reordered(xs: list[str], ys: list[str]) -> bool:
    """Do the items both lists hold come in another order?"""
    common = set(xs) & set(ys)
    return [x for x in dict.fromkeys(xs) if x in common] != [y for y in dict.fromkeys(ys) if y in common]


def _swapped(xs: list[str], ys: list[str]) -> bool:
    """Did two parts trade places around a word both texts hold (A owes B / B owes A)? A part
    moved to the front or back (a time, a place said first) moves one way only; a swap moves
    words across the pivot both ways. Copulas (is, 是) are no pivot: "A is B" says "B is A"."""
    once = {w for w in xs if xs.count(w) == 1} & {w for w in ys if ys.count(w) == 1}
    common = set(xs) & set(ys) & once
    if len(common) < 3:
        return False
    pos_x = {w: i for i, w in enumerate(xs)}
    pos_y = {w: i for i, w in enumerate(ys)}
    for p in common:
        if p in _COPULAS:
            continue
        fwd = back = False
        for w in common:
            if w == p:
                continue
            before_x, before_y = pos_x[w] < pos_x[p], pos_y[w] < pos_y[p]
            if before_x and not before_y:
                fwd = True
            elif before_y and not before_x:
                back = True
            if fwd and back:
                return True
    return False


def _opposed(xs: list[str], ys: list[str], a: str, b: str) -> bool:
    only_a, only_b = set(xs) - set(ys), set(ys) - set(xs)
    for w in only_a:
        if _OPP.get(w, set()) & only_b:
            return True
    # Chinese opposites are single characters or words inside longer segmenter words.
    for x, y in OPPOSITES:
        if starts_cjk(x) and ((x in a and x not in b and y in b and y not in a) or (y in a and y not in b and x in b and x not in a)):
            return True
    return False


def contradiction(a: str, b: str) -> str:
    """Why texts `a` and `b` (alike or not) say different things, or "" when nothing says so.

    Signals: a negation in one and not the other; numbers that differ or come in another
    order; times (weekdays, months, parts of the day, units) that differ or are reordered;
    names that differ on both sides or come in another order; opposite words (before/after,
    之前/之后); and two parts that traded places around a shared word (who owes whom). A text
    that only leaves something out (a number, a name, a time) is not contradicted.
    """
    if negation_count(a) % 2 != negation_count(b) % 2:
        return "negation"
    na, nb = numbers(a), numbers(b)
    if _two_sided(na, nb):
        return "numbers differ"
    if _reordered(na, nb):
        return "numbers in another order"
    (ta, ua), (tb, ub) = times(a), times(b)
    if _two_sided(ta, tb) or _two_sided(ua, ub):
        return "times differ"
    if _reordered([t for t in ta if t.endswith("day") or t in _MONTHS or t == "may"], [t for t in tb if t.endswith("day") or t in _MONTHS or t == "may"]):
        return "times in another order"
    ma = [w for w in names(a) if w in _inner_names(a) or w in _inner_names(b)]  # not a capital opening a sentence
    mb = [w for w in names(b) if w in _inner_names(a) or w in _inner_names(b)]
    sa, sb = _sequence(a), _sequence(b)
    if _two_sided(ma, mb) and normalize("".join(ma)) != normalize("".join(mb)):
        return "names differ"
    people = {stem(w) for w in _inner_names(a) & _inner_names(b)} | set(_PERSON_EN.values()) | {"我", "你", "您", "他", "她"}
    pa, pb = [w for w in sa if w in people], [w for w in sb if w in people]
    if len(set(pa) & set(pb)) >= 2 and _reordered(pa, pb):
        return "roles swapped"
    if _owner_changed(a, b):
        return "owners differ"
    if _opposed(_words(a), _words(b), a, b):
        return "opposite words"
    if _swapped(sa, sb):
        return "parts swapped"
    return ""
