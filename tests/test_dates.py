"""The days a query names (model/dates.py): Chinese, English and ISO dates; a date without a
year is the last such day on or before the query's time."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from memdream.model.dates import day_spellings, named_days, names_day, names_past_span, query_dates

NOW = datetime(2023, 5, 10, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "text,days",
    [
        ("在5月6号我读了一本书，它的名字是？", [date(2023, 5, 6)]),
        ("我曾经在5月2日提到过我去了博物馆", [date(2023, 5, 2)]),
        ("五月六日那天下雨了吗", [date(2023, 5, 6)]),
        ("2023年4月27日我们聊了什么", [date(2023, 4, 27)]),
        ("二〇二二年十二月三十一日", [date(2022, 12, 31)]),
        ("１２月２５号的聚会", [date(2022, 12, 25)]),  # full-width digits; a day still to come this year is last year's
        ("What painting did Melanie show to Caroline on October 13, 2023?", [date(2023, 10, 13)]),
        ("What did Gina find for her store on 1 February, 2023?", [date(2023, 2, 1)]),
        ("on the 1st of February", [date(2023, 2, 1)]),
        ("Sept. 3 and May 7", [date(2022, 9, 3), date(2023, 5, 7)]),
        ("the 2023-05-06 release", [date(2023, 5, 6)]),
        ("May I ask what 5 may mean?", []),  # the verb, not the month
        ("2月30日", []),  # no such day
        ("March 2024, 上周五, last Friday", []),  # a month, weekdays: not read
        ("我昨天说了什么？前天呢？", [date(2023, 5, 9), date(2023, 5, 8)]),
        ("What did I say yesterday, and the day before yesterday?", [date(2023, 5, 9), date(2023, 5, 8)]),
        ("今天要做什么", [date(2023, 5, 10)]),
        ("大前天的会", [date(2023, 5, 7)]),  # not read as 前天 inside it
    ],
)
def test_query_dates(text: str, days: list[date]) -> None:
    assert query_dates(text, NOW) == days


def test_named_days_give_the_words_that_name_them() -> None:
    text = "在5月6号我读了一本书"
    [(d, (a, b))] = named_days(text, NOW)
    assert d == date(2023, 5, 6) and text[a:b] == "5月6号"
    text = "What did I buy on May 3, 2023 at the market?"
    [(d, (a, b))] = named_days(text, NOW)
    assert text[a:b] == "May 3, 2023"


@pytest.mark.parametrize(
    "text,past",
    [
        ("What inspired Joanna's new script in July 2022?", True),
        ("the cake she made recently in April 2023", True),
        ("as of November, 2022", True),
        ("What did we do in 2021?", True),
        ("during early 2022", True),
        ("2022年7月我去了哪里？", True),
        ("2021年发生了什么", True),
        ("what happens in May 2023", False),  # this month: not over
        ("in 2023", False),  # this year
        ("2023年5月的计划", False),
        ("I walked 2000 steps", False),  # a number, not a year
        ("you may 2022 ...", False),  # the verb
        ("去年", False),  # no number: the tense words' job (scoring.query_tense)
    ],
)
def test_names_past_span(text: str, past: bool) -> None:
    assert names_past_span(text, NOW) is past


def test_every_spelling_of_a_day_is_read_back_as_that_day() -> None:
    """Recall looks a named day up by its usual spellings (July 3, 7月3日, 七月三日, 2025-07-03):
    each must be read back as that very day, every day of a leap year, and as no other."""
    day = date(2024, 1, 1)
    while day.year == 2024:
        for text in day_spellings(day):
            assert names_day(f"the parcel arrives {text}", day, day), (day, text)
            assert not names_day(f"the parcel arrives {text}", day + timedelta(days=1), day), (day, text)
        day += timedelta(days=1)
    assert day_spellings(date(2025, 12, 26)) == ("December 26", "12月26日", "十二月二十六日", "2025-12-26")
