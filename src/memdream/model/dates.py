"""The days a query names ("在5月6号我读了一本书", "What did Gina find on 1 February, 2023?"),
so recall can match what was said on them (recall/search.py).

Calendar dates: Chinese 2023年5月6日 / 5月6号 / 五月六日, English "May 6", "May 6, 2023",
"6 May 2023", "1st of February", and ISO 2023-05-06; a date without a year is the last such
day on or before the query's time. And the days named from the query's own: 今天 / 今日 /
昨天 / 昨日 / 前天 / 大前天, today / yesterday / the day before yesterday. Weekdays (上周五,
last Friday), bare years and months are no days: they name a span or need a calendar
convention. A month of a year or a year ("in July 2022", "2022年7月", "in 2021") is a span the
query may ask about: `names_past_span` says whether one ended before the query's time. Pure
functions.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from memdream.model import lazyre as re

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        ("january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug", "september sep sept", "october oct", "november nov", "december dec")
    )
    for m in names.split()
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_EN = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR_EN = r"(?:,?\s+(?P<year>\d{4}))?"
_EN = [
    re.compile(rf"\b{_MONTH}\s+{_DAY_EN}\b{_YEAR_EN}", re.IGNORECASE),  # May 6, 2023
    re.compile(rf"\b{_DAY_EN}\s+(?:of\s+)?{_MONTH}\b{_YEAR_EN}", re.IGNORECASE),  # 6 May 2023, 1st of February
]
_ISO = re.compile(r"\b(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})\b")
_ZH_NUM = r"[0-9０-９]{1,2}|[一二三四五六七八九十两〇零]{1,3}"
_ZH = re.compile(rf"(?:(?P<year>\d{{4}}|[〇零一二三四五六七八九]{{4}})\s*年\s*)?(?P<mon>{_ZH_NUM})\s*月\s*(?P<day>{_ZH_NUM})\s*[日号號]")
_ZH_DIGIT_CHARS = "〇一二三四五六七八九"
_ZH_DIGITS = {c: i for i, c in enumerate(_ZH_DIGIT_CHARS)} | {"零": 0, "两": 2}
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
# Days named from the query's own day: how many days back.
_RELATIVE = re.compile(r"大前天|前天|昨天|昨日|今天|今日|\bthe day before yesterday\b|\byesterday\b|\btoday\b", re.IGNORECASE)
_BACK = {"大前天": 3, "前天": 2, "昨天": 1, "昨日": 1, "今天": 0, "今日": 0, "the day before yesterday": 2, "yesterday": 1, "today": 0}


def _month(name: str) -> int:
    """The number of an English month name matched by _MONTH ("Sept." is 9)."""
    return _MONTHS[name.lower().rstrip(".")]


def _zh_number(text: str) -> int | None:
    """A Chinese or Arabic number from 0 to 31 (五, 十二, 二十六, 三十一, 06, ０６)."""
    text = text.translate(_FULL_WIDTH)
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _ZH_DIGITS.get(tens, -1) if tens else 1
        o = _ZH_DIGITS.get(ones, -1) if ones else 0
        return None if t < 0 or o < 0 else 10 * t + o
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


def _zh_year(text: str | None) -> int | None:
    if not text:
        return None
    if text.isdigit():
        return int(text)
    digits = [_ZH_DIGITS.get(c) for c in text]
    return None if None in digits else int("".join(str(d) for d in digits))


def _day(year: int | None, month: int | None, day: int | None, today: date) -> date | None:
    if not month or not day:
        return None
    if year is not None:
        try:
            return date(year, month, day)
        except ValueError:
            return None
    for y in (today.year, today.year - 1, today.year - 4):  # the last such day on or before today (29 February too)
        try:
            d = date(y, month, day)
        except ValueError:
            continue
        if d <= today:
            return d
    return None


def query_dates(text: str, now: datetime) -> list[date]:
    """The calendar days `text` names, in order, each once; a day without a year is the last
    one on or before `now`'s date."""
    return list(dict.fromkeys(d for d, _ in named_days(text, now)))


def _calendar(text: str) -> list[tuple[tuple[int, int], int | None, int | None, int | None]]:
    """Each calendar date the text writes out: (span, year or None, month, day), unchecked."""
    found: list[tuple[tuple[int, int], int | None, int | None, int | None]] = []
    for rx in _EN:
        for m in rx.finditer(text):
            if m["mon"] == "may" and not m["year"]:
                continue  # "5 may be", "may 3 of us": the verb, not the month
            found.append((m.span(), int(m["year"]) if m["year"] else None, _month(m["mon"]), int(m["day"])))
    for m in _ISO.finditer(text):
        found.append((m.span(), int(m["year"]), int(m["mon"]), int(m["day"])))
    for m in _ZH.finditer(text):
        found.append((m.span(), _zh_year(m["year"]), _zh_number(m["mon"]), _zh_number(m["day"])))
    return found


def names_day(text: str, day: date, said: date) -> bool:
    """Does `text`, said on `said`, write out the calendar date `day`? A date without a year is
    the one nearest the day it was said ("the parcel arrives on July 3", said on 28 June 2025:
    3 July 2025; said in March 2023: 3 July 2023)."""
    for _, year, month, d in _calendar(text):
        if month != day.month or d != day.day:
            continue
        if year is None:
            near = [c for y in (said.year - 1, said.year, said.year + 1) if (c := _day(y, month, d, date.max))]
            if near and min(near, key=lambda c: abs((c - said).days)).year == day.year:
                return True
        elif year == day.year:
            return True
    return False


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")


def _zh_numeral(n: int) -> str:
    """1-31 in Chinese numerals: 三, 十二, 二十六 (as `_zh_number` reads them)."""
    tens, ones = divmod(n, 10)
    return (("" if tens == 1 else _ZH_DIGIT_CHARS[tens]) + "十" if tens else "") + (_ZH_DIGIT_CHARS[ones] if ones else "")


def day_spellings(day: date) -> tuple[str, ...]:
    """The usual ways to write `day` out: "July 3", 7月3日, 七月三日, 2025-07-03 (what `names_day` reads)."""
    return (
        f"{_MONTH_NAMES[day.month - 1]} {day.day}",
        f"{day.month}月{day.day}日",
        f"{_zh_numeral(day.month)}月{_zh_numeral(day.day)}日",
        day.isoformat(),
    )


def named_days(text: str, now: datetime) -> list[tuple[date, tuple[int, int]]]:
    """Each calendar day `text` names, with the span of the words that name it, in order."""
    today = now.date()
    found: list[tuple[tuple[int, int], date]] = []
    for span, year, month, day in _calendar(text):
        d = _day(year, month, day, today)
        if d:
            found.append((span, d))
    for m in _RELATIVE.finditer(text):
        found.append((m.span(), today - timedelta(days=_BACK[m[0].lower()])))
    out: list[tuple[date, tuple[int, int]]] = []
    for span, d in sorted(found):
        if not out or span[0] >= out[-1][1][1]:  # overlapping readings of the same words: the first
            out.append((d, span))
    return out


# A month of a given year, or a year, that a query names: "in July 2022", "July, 2022",
# "2022年7月", "in 2021", "2021年". A year alone needs a word that makes it a time ("in",
# "during", "since", "of" (as of), "by", "before", "after", "until", 年): "2000 steps" is no year.
_MONTH_YEAR_EN = re.compile(rf"\b{_MONTH},?\s+(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_IN_YEAR_EN = re.compile(r"\b(?:in|during|since|of|by|before|after|until|through|throughout)\s+(?:early\s+|late\s+|mid-?\s*)?(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_YEAR_ZH = re.compile(rf"(?P<year>(?:19|20)\d\d)\s*年\s*(?P<mon>{_ZH_NUM})\s*月")
_YEAR_ZH = re.compile(r"(?P<year>(?:19|20)\d\d)\s*年")


def names_past_span(text: str, now: datetime) -> bool:
    """Does `text` name a month of a year, or a year, that ended before `now`? (Such a query
    asks about that time, not about now: recall/search.py lets recency not lift it, as for a
    named day before today.)"""
    today = now.date()
    for m in _MONTH_YEAR_EN.finditer(text):
        mon = _month(m["mon"])
        if mon == 5 and not m.group(0)[:1].isupper():
            continue  # "you may 2023 ..." is hardly a month; "May 2023" is
        if (int(m["year"]), mon) < (today.year, today.month):
            return True
    for m in _MONTH_YEAR_ZH.finditer(text):
        mon = _zh_number(m["mon"])
        if mon and 1 <= mon <= 12 and (int(m["year"]), mon) < (today.year, today.month):
            return True
    return any(int(m["year"]) < today.year for rx in (_IN_YEAR_EN, _YEAR_ZH) for m in rx.finditer(text))


# Words that tie what a text says to when it was said: "ran 5 km today", 昨晚加班到十点, "went to
# 3 concerts this year", 周末去爬了莫干山 (the weekend just past; a habit said with 周末 is read
# so too, and two such lines of different days are kept without a conflict). Two such texts
# written on different days may both be true (two runs, two evenings, two years) however
# alike they look.
_SAID_WHEN = re.compile(
    r"\b(?:today|yesterday|tonight|tomorrow|just now|earlier today|"
    r"this (?:morning|afternoon|evening|week|weekend|month|year)|last (?:night|week|weekend|month|year)|"
    r"next (?:week|weekend|month|year)|(?:over|at|on) the weekend)\b"
    r"|今天|今日|昨天|昨日|昨晚|今晚|今早|明天|前天|刚才|刚刚|这周|本周|上周|下周|周末|这个月|本月|上个月|下个月|今年|去年|明年",
    re.IGNORECASE,
)


def said_when(text: str) -> bool:
    """Does the text tie what it says to the time it was said (today, yesterday, this week,
    今天, 昨晚, 去年, ...)?"""
    return bool(_SAID_WHEN.search(text))
