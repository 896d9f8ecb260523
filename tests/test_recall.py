"""Recall (DESIGN section 6): scoring with traces, as-of, batching of hit counts, context, raw layer."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.model.entry import Entry
from memdream.model.scoring import IMPORTANCE_CAP, asks_about_past, LIFT, LIFT_NOW, QUESTION_SHARE, dense_relevance, dense_weight, importance, keyword_relevance, recency, score, score_parts
from memdream.recall.active import ActiveRecall
from memdream.recall.hits import FLUSH_AFTER
from memdream.recall.snapshot import Snippet, count_tokens

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from corpus import facts  # noqa: E402
from stores import engine, hand_write, on_team_store, stored_files, stored_text  # noqa: E402


def test_scoring_parts(clock) -> None:
    now = clock.now()
    fresh = Entry(text="x", type="fact", created_at=now)
    old = Entry(text="x", type="fact", created_at=now - timedelta(days=30))
    assert recency(fresh, now)[0] == 1.0
    assert abs(recency(old, now)[0] - 0.5) < 1e-9  # 30-day half-life
    capped = Entry(text="x", type="rule", salience=0.6, hits=100)
    assert importance(capped)[0] == IMPORTANCE_CAP
    t = score(fresh, now, bm25_norm=0.5)
    assert t.relevance == 0.5 and t.fusion == "bm25" and t.cosine is None
    # Relevance gates: recency and importance lift it by at most LIFT, they never add to it.
    assert t.lift == pytest.approx(1 + LIFT * (1.0 + 0.4) / (1 + IMPORTANCE_CAP))
    assert t.score == pytest.approx(t.relevance * t.lift)
    assert score(fresh, now, bm25_norm=0.0).score == 0.0
    top = score_parts("rule", 0.6, 100, now.timestamp(), now.timestamp(), 0.1).lift
    low = score_parts("fact", 0.0, 0, (now - timedelta(days=3650)).timestamp(), now.timestamp(), 0.1).lift
    assert top == pytest.approx(1 + LIFT) and 1.0 < low < 1 + LIFT * 0.2
    h = score_parts("fact", 0.0, 0, None, now.timestamp(), 0.5, 0.8, fusion="blend")
    assert abs(h.relevance - (0.7 * 0.8 + 0.3 * 0.5)) < 1e-9 and h.fusion == "blend-0.7-0.3"
    w = score_parts("fact", 0.0, 0, None, now.timestamp(), 0.5, 0.8, fusion="weighted", weight=0.25, dense=0.9)
    assert w.relevance == pytest.approx(0.75 * 0.5 + 0.25 * 0.9) and w.fusion.startswith("weighted")
    # Keyword relevance is absolute: a share of the most BM25 can give the query, never stretched.
    assert keyword_relevance(1.0, attainable=10.0) == pytest.approx(1.0 / 22.0)
    assert keyword_relevance(0.0, attainable=10.0) == 0.0 and keyword_relevance(50.0, attainable=10.0) <= 1.0
    # Dense relevance: how far a cosine stands above the scope's cosines, in [0, 1].
    assert dense_relevance(0.2, mean=0.2, std=0.05, n=1000) == pytest.approx(0.0, abs=0.02)
    assert dense_relevance(0.6, mean=0.2, std=0.05, n=1000) == 1.0
    assert 0.4 < dense_relevance(0.3, mean=0.2, std=0.05, n=1000) < 0.6
    # A scope of one says nothing about unrelated cosines: a prior takes their place.
    assert 0.0 < dense_relevance(0.3, mean=0.3, std=0.0, n=1) < 1.0
    # The embedder's weight follows the query's script.
    assert dense_weight("where do I live", 0.1, 0.4) == pytest.approx(0.1)
    assert dense_weight("我住哪", 0.1, 0.4) == pytest.approx(0.4)
    assert 0.1 < dense_weight("我喜欢 jazz music", 0.1, 0.4) < 0.4


def _seed_example(mem, clock, days: int) -> list:
    """The first source document's example, as the recall issue measured it: 200 fresh trivia
    facts, the warning aged to `days` by hand (its vf edited), and the wiki line."""
    import random
    import re

    start = clock.now()
    rng = random.Random(11)
    places = ["莫干山", "西湖", "千岛湖", "黄山", "普陀山", "天目山", "灵隐寺", "九溪"]
    things = ["机械键盘", "显示器", "耳机", "鼠标", "台灯", "保温杯", "背包", "跑鞋"]
    warning = mem.remember("千万记得给那个老接口加超时兜底，它偶尔会抽风")
    for i in range(200):
        clock.set(start + timedelta(hours=i))
        if i % 2:
            mem.remember(f"上周换了新的{rng.choice(things)}，花了 {rng.randint(100, 3000)} 块", type="fact")
        else:
            mem.remember(f"周末去爬了{rng.choice(places)}，走了 {rng.randint(5, 30)} 公里", type="fact")
    mem.remember("新的支付接口文档放在团队 wiki 上", type="fact")
    # Age the warning by hand, as a person would: edit its vf and ca in the file.
    path = mem.vault.resident_file(mem.scope)
    aged = (clock.now() - timedelta(days=days)).isoformat()
    text = stored_text(mem, path)
    line = next(ln for ln in text.splitlines() if f"id={warning.id}" in ln)
    new = re.sub(r"vf=[^;>]+", f"vf={aged}", re.sub(r"ca=[^;>]+", f"ca={aged}", line))
    hand_write(mem, path, text.replace(line, new))
    return mem.recall("我们要接入一个新的支付接口，要注意什么？", k=5)


# 200 writes: the team store (one transaction each) takes the longer age only, to spare the suite's time.
@pytest.mark.parametrize("store_kind,days", [("folder", 60), ("folder", 120), ("postgres", 120)], indirect=["store_kind"])
def test_old_important_warning_beats_similar_new_trivia(any_mem, clock, days) -> None:
    """The seed's intent (an important old warning still surfaces) with relevance gating: the
    warning, aged 60 and 120 days, ranks above every one of the 200 fresh trivia lines."""
    mem = any_mem
    hits = _seed_example(mem, clock, days)
    texts = [h.text for h in hits]
    assert "千万记得给那个老接口加超时兜底，它偶尔会抽风" in texts, texts
    warning = next(i for i, h in enumerate(hits) if h.text.startswith("千万"))
    trivia = [i for i, h in enumerate(hits) if h.text.startswith(("上周", "周末"))]
    assert all(warning < i for i in trivia), texts
    w = hits[warning]
    assert w.trace.age_days == pytest.approx(days, abs=0.1) and w.trace.importance > 1.0


def test_old_important_instruction_beats_similar_trivia(mem, clock) -> None:
    """The same with paraphrased trivia about interfaces, as earlier sessions tested it."""
    start = clock.now()
    mem.remember("千万记得给那个老接口加超时兜底")
    for i, text in enumerate(facts(200, seed=3)):
        clock.set(start + timedelta(days=1 + i * 59 / 200))
        mem.remember(text, type="fact")
    clock.set(start + timedelta(days=60))
    for trivia in ("接口文档放在 wiki 上了", "昨天看了一个讲接口命名的视频", "同事说新接口的名字太长"):
        mem.remember(trivia, type="fact")
    hits = mem.recall("我要对接一个新的第三方接口，有什么要注意的？", k=5)
    texts = [h.text for h in hits]
    assert "千万记得给那个老接口加超时兜底" in texts, texts
    warning = next(h for h in hits if h.text.startswith("千万"))
    assert warning.trace.age_days == pytest.approx(60, abs=0.01)
    assert warning.trace.importance > 1.0  # instruction prior 0.8 + salience of 千万
    assert warning.trace.recency < 0.26


def test_relevance_gates_importance_and_recency(any_mem, clock) -> None:
    """A rule that shares one common word with the query never passes facts that match it well,
    however important and new it is (issue 14: a rule at relevance 0.014 outranked facts at 0.72)."""
    mem = any_mem
    start = clock.now()
    for i, text in enumerate(("Alice's flight to Lisbon lands at 9 on Friday", "Bob books the Lisbon hotel for Alice", "Alice will present the Lisbon results")):
        clock.set(start - timedelta(days=200 + i))
        mem.remember(text, type="fact")
    clock.set(start)
    rule = mem.remember("Never share Alice's phone number with anyone, it is critical", type="rule")
    hits = mem.recall("when does Alice land in Lisbon?", k=4)
    order = [h.entry.id for h in hits]
    assert hits[0].text.startswith("Alice's flight"), [h.text for h in hits]
    if rule.id in order:
        r = hits[order.index(rule.id)]
        assert all(h.trace.relevance > r.trace.relevance for h in hits[: order.index(rule.id)])
        assert r.trace.lift > hits[0].trace.lift  # it is lifted most, and still ranks below
    # Where relevance is about equal, importance and recency do reorder.
    mem.remember("Alice lands in Lisbon on Friday, must pick her up", type="fact")
    assert mem.recall("when does Alice land in Lisbon?", k=1)[0].text.startswith("Alice lands")


@pytest.mark.parametrize(
    "query,past",
    [
        ("Where did I fly for the conference?", True),
        ("上次开会我飞去了哪里？", True),
        ("Where do I fly for conferences these days?", False),
        ("我现在开会飞哪里？", False),
        # a month or a year before today, named (the clock is at the end of August 2026)
        ("Conference trip in May 2026: which city?", True),
        ("2026年5月开会飞哪里？", True),
    ],
)
def test_a_question_about_the_past_is_not_lifted_by_recency(any_mem, clock, query: str, past: bool) -> None:
    """What happened stays true: for a question about the past, that a memory is newer says nothing
    about whether it is the answer, so recency does not lift; a question about now keeps it."""
    mem = any_mem
    start = clock.now()
    old = mem.remember("Conference trip: flew to Lisbon. 开会飞去了里斯本", type="fact")
    clock.set(start + timedelta(days=90))
    new = mem.remember("Conference trip: flew to Porto and stayed by the river. 开会飞去了波尔图，住在河边", type="fact")
    clock.set(start + timedelta(days=91))
    hits = {h.entry.id: h for h in mem.recall(query, k=5)}
    o, n = hits[old.id], hits[new.id]
    assert o.trace.past is past and n.trace.past is past
    if not past:
        assert o.trace.now and n.trace.now  # they say "these days", 现在
    assert o.trace.relevance > n.trace.relevance and n.trace.recency > 0.9 > 0.2 > o.trace.recency
    if past:  # ranked by relevance and importance alone: the better match first
        assert o.trace.lift == pytest.approx(n.trace.lift) and o.score > n.score
    else:  # recency lifts the newer one
        assert n.trace.lift > o.trace.lift


@pytest.mark.parametrize(
    "query,past",
    [
        ("When did Melanie paint a sunrise?", True),
        ("I once recommended a food program to you, what was its name?", True),
        ("你曾经给我推荐过几个手工活的项目，有哪些？", True),
        ("What did Melanie paint recently?", False),  # a word for now keeps recency
        ("If you were ordering my favourite meal, what would you get?", False),
        ("我对什么过敏？", False),  # 过敏 is no experience
        ("朋友过生日，我送什么礼物比较有心意？", False),
        ("我身体最近哪里不舒服？", False),
    ],
)
def test_what_asks_about_the_past(query: str, past: bool) -> None:
    assert asks_about_past(query) is past


def test_a_question_about_now_is_lifted_more_than_one_that_does_not_say(any_mem, clock) -> None:
    """"... these days?" asks for what holds now: the lift is at most doubling (LIFT_NOW), where a
    question that says neither now nor the past gets at most half again (LIFT)."""
    mem = any_mem
    start = clock.now()
    old = mem.remember("Hiking with Lee at Mount Tam", type="fact")
    clock.set(start + timedelta(days=90))
    new = mem.remember("Hiking with Lee and his dog at Muir Woods, then tacos", type="fact")
    plain = {h.entry.id: h for h in mem.recall("Where do I go hiking with Lee?", k=5)}
    now = {h.entry.id: h for h in mem.recall("Where do I go hiking with Lee these days?", k=5)}
    assert not plain[new.id].trace.now and now[new.id].trace.now
    assert plain[new.id].trace.lift == pytest.approx(1 + LIFT * (plain[new.id].trace.recency + 0.4) / (1 + IMPORTANCE_CAP))
    assert now[new.id].trace.lift == pytest.approx(1 + LIFT_NOW * (now[new.id].trace.recency + 0.4) / (1 + IMPORTANCE_CAP))
    gain = lambda hits: hits[new.id].trace.lift / hits[old.id].trace.lift  # noqa: E731
    assert gain(now) > gain(plain) > 1.0


def test_the_turns_said_next_after_a_match_are_lent_half_its_relevance(any_mem, clock) -> None:
    """A reply leans on the turn it answers: the two memories created next after a matching one
    (within 30 minutes) are relevant at least half as much, if they match the query at all; never
    the memory said before, a reply 31 minutes later, or one that shares nothing with the query."""
    mem = any_mem
    t0 = clock.now()

    def say(text: str, at: datetime):  # type: ignore[no-untyped-def]
        clock.set(at)
        return mem.remember(text, type="fact")

    hello = say("Melanie: Hi Caroline, good to see you!", t0 - timedelta(seconds=5))
    asked = say("Caroline: What did you paint last weekend?", t0)
    reply = say("Melanie: A sunset over the lake, with purple skies.", t0 + timedelta(seconds=5))
    follow = say("Caroline: Melanie, that sounds lovely!", t0 + timedelta(seconds=10))  # the exchange's second turn
    third = say("Melanie: Thanks, it took me hours.", t0 + timedelta(seconds=15))  # not the asked turn's exchange
    say("Caroline: Did you paint anything new this week?", t0 + timedelta(days=1))
    say("Sure, come over and see.", t0 + timedelta(days=1, seconds=5))
    say("Caroline: I love to paint too.", t0 + timedelta(days=2))
    late = say("Melanie: That is lovely to hear.", t0 + timedelta(days=2, minutes=31))
    newer = say("Melanie: The kids love pottery class.", t0 + timedelta(days=3))
    clock.set(t0 + timedelta(days=3, hours=1))
    hits = {h.entry.id: (i, h) for i, h in enumerate(mem.recall("What did Melanie paint last weekend?", k=10))}
    assert reply.id in hits and asked.id in hits, [h.text for _, h in hits.values()]
    (ri, r), (ai, a) = hits[reply.id], hits[asked.id]
    # The asked turn ends asking: it counts QUESTION_SHARE (a half) of its match, and its reply
    # leans on the whole match: the question and its answer weigh the same.
    assert a.trace.asked is not None and a.trace.relevance == pytest.approx(a.trace.asked * QUESTION_SHARE)
    assert r.trace.near == asked.id and r.trace.context == pytest.approx(a.trace.match / 2)
    assert r.trace.relevance == r.trace.context > r.trace.bm25 > 0  # the floor raised what matched a little
    assert max(ai, ri) < hits[newer.id][0]  # both above the newer line that only names her
    assert hits[follow.id][1].trace.near == asked.id  # the next two turns: the reply and the one after it
    assert third.id not in hits or hits[third.id][1].trace.near != asked.id
    for plain in (hello, late):  # said before a match, or after too long a pause: only their own match
        assert hits[plain.id][1].trace.context is None
    assert "Sure, come over and see." not in [h.text for _, h in hits.values()]  # shares no word with the query
    by_relevance = [h.entry.id for h in mem.recall("What did Melanie paint last weekend?", k=10, rank_by="relevance")]
    assert max(by_relevance.index(asked.id), by_relevance.index(reply.id)) < by_relevance.index(newer.id)
    # --explain and --json say where the floor came from.
    assert r.to_json()["trace"]["near"] == asked.id
    # Recall ranks by numbers and traces only its winners (search._Scored): the order is the
    # order of the scores the traces show, floors and questions' shares included.
    ranked = mem.recall("What did Melanie paint last weekend?", k=10)
    assert [h.score for h in ranked] == [h.trace.score for h in ranked] == sorted((h.trace.score for h in ranked), reverse=True)


def test_a_day_the_query_names_finds_what_was_said_that_day(any_mem, clock) -> None:
    """A named day (5月2日, May 3) is a query term every memory said that day holds: the one said
    on it comes first among memories that say the same words, and a bare date finds that day."""
    mem = any_mem
    start = clock.now().replace(month=5, day=1, hour=20, minute=0, second=0)
    said = {}
    for day, zh, en in ((1, "今天去了公园跑步，跑了五公里", "Went to the market and bought apples"),
                        (2, "今天去了博物馆，看了丝绸展", "Went to the market and bought pears"),
                        (3, "今天去了公园散步，看到很多花", "Went to the market and bought a kettle")):
        clock.set(start.replace(day=day))
        said[day] = (mem.remember(zh, type="fact"), mem.remember(en, type="fact"))
    clock.set(start.replace(day=9))
    year = start.year
    top = mem.recall("我5月2日去了哪里？", k=3)
    assert top[0].entry.id == said[2][0].id and top[0].trace.day == f"{year}-05-02", [h.text for h in top]
    top = mem.recall("What did I buy at the market on May 3?", k=3)
    assert top[0].entry.id == said[3][1].id and top[0].trace.day == f"{year}-05-03", [h.text for h in top]
    # The date alone: what was said that day, and nothing from the other days.
    assert {h.entry.id for h in mem.recall(f"{year}-05-01", k=5)} == {e.id for e in said[1]}
    # Without the day, the words alone decide: every market line matches about equally.
    assert {h.entry.id for h in mem.recall("What did I buy at the market?", k=3)} == {said[d][1].id for d in (1, 2, 3)}
    # A day nothing was said on changes nothing: its words stay ordinary query terms.
    quiet_day = mem.recall("公园 5月7日", k=3)
    assert {said[1][0].id, said[3][0].id} <= {h.entry.id for h in quiet_day} and all(h.trace.day is None for h in quiet_day)
    # Days named from the query's own: yesterday, 前天.
    clock.set(start.replace(day=4, hour=9))
    assert mem.recall("我昨天去了哪里？", k=1)[0].entry.id == said[3][0].id
    assert mem.recall("What did I get at the market the day before yesterday?", k=1)[0].entry.id == said[2][1].id


def test_a_memory_that_writes_out_the_named_day_holds_it_too(any_mem, clock) -> None:
    """A day the query names leaves the query's words for the memories said on it; a memory
    that writes that day out ("arrives on July 3", 7月3日) holds the day as well, or it would be
    left without the very words that matched. A date without a year is the one nearest the day
    the memory was said; another day, or the same date in another year, holds nothing."""
    mem = any_mem
    base = clock.now()
    clock.set(base.replace(year=2023, month=6, day=20, hour=9))
    old = mem.remember("The parcel with the tea set arrives on July 3", type="fact")  # July 3, 2023
    clock.set(base.replace(year=2025, month=6, day=28, hour=9))
    parcel = mem.remember("The parcel with the espresso beans arrives on July 3rd", type="fact")
    dentist = mem.remember("The dentist appointment is on July 9", type="fact")
    kuaidi = mem.remember("买的咖啡豆七月三日到", type="fact")
    clock.set(base.replace(year=2025, month=7, day=3, hour=12))
    chatter = [mem.remember(t, type="fact") for t in ("Lunch was fine today", "The weather is warm", "今天天气不错", "Finished the report")]
    clock.set(base.replace(year=2025, month=7, day=20, hour=9))
    top = mem.recall("What arrives on 3 July?", k=10)
    ids = [h.entry.id for h in top]
    assert ids[0] == parcel.id and top[0].trace.day == "2025-07-03" and top[0].trace.day_written, [h.text for h in top]
    assert dentist.id not in ids[:2] and ids.index(old.id) > ids.index(parcel.id)
    assert next(h for h in top if h.entry.id == old.id).trace.day is None  # July 3, 2023: another day
    said = [h for h in top if h.entry.id in {c.id for c in chatter}]
    assert said and all(h.trace.day == "2025-07-03" and not h.trace.day_written for h in said)
    zh = mem.recall("7月3日到的咖啡", k=3)
    assert zh[0].entry.id == kuaidi.id and zh[0].trace.day == "2025-07-03" and zh[0].trace.day_written, [h.text for h in zh]
    # Written another way than the query writes it: an English question finds 7月3日, a Chinese
    # one "July 3" (the day's usual spellings are looked for, model/dates.py day_spellings).
    assert kuaidi.id in [h.entry.id for h in top if h.trace.day_written]
    assert parcel.id in [h.entry.id for h in mem.recall("7月3日到什么？", k=10) if h.trace.day_written]
    # --json (and --explain) say which: written out, or said on the day.
    assert top[0].to_json()["trace"]["day_written"] is True and said[0].to_json()["trace"]["day_written"] is False


def test_one_and_two_character_chinese_queries(any_mem) -> None:
    mem = any_mem
    mem.remember("我喜欢喝龙井茶")
    mem.remember("我住在杭州滨江区")
    mem.remember("周五下午有组会")
    assert mem.recall("茶", k=1)[0].text == "我喜欢喝龙井茶"
    assert mem.recall("龙井", k=1)[0].text == "我喜欢喝龙井茶"
    # A query word no memory holds (喝茶) falls back to its characters (model/tokens.py, query_terms).
    assert mem.recall("喝茶", k=1)[0].text == "我喜欢喝龙井茶"
    assert mem.recall("住", k=1)[0].text == "我住在杭州滨江区"
    assert mem.recall("组会", k=1)[0].text == "周五下午有组会"
    assert [h.text for h in mem.recall("的", k=3)] == []  # a function character finds nothing
    # Question words are left out like English what/where: a reply that asks something back
    # does not match a question through its 什么.
    mem.remember("你平时喜欢做什么运动？")
    assert [h.text for h in mem.recall("什么", k=3)] == []
    assert mem.recall("我喜欢喝什么茶？", k=1)[0].text == "我喜欢喝龙井茶"


@pytest.mark.parametrize(
    ("text", "term", "was", "version"),
    [
        ("我喜欢喝龙井茶", "茶", "", 5),  # before its characters were tokens (index migration 6)
        ("Bought a floor lamp at IKEA", "buy", "bought", 7),  # before irregular verbs were their verb (8)
    ],
)
def test_index_of_an_older_version_is_rebuilt_with_its_new_tokens(vault, clock, text, term, was, version) -> None:
    from memdream.config import load_config
    from memdream.memory import Memory

    m = Memory(load_config(vault, "me", "main", env={}), clock)
    m.vault.init()
    m.remember(text)
    db = m.index.db
    rowid, tok = db.execute("SELECT rowid, tok FROM entries_fts").fetchone()
    assert term in tok.split()
    old = " ".join(was if t == term else t for t in tok.split()).split()  # as that version of the index stored it
    db.execute("UPDATE entries_fts SET tok = ? WHERE rowid = ?", (" ".join(old), rowid))
    db.execute(f"PRAGMA user_version = {version}")
    m.close()
    again = Memory(load_config(vault, "me", "main", env={}), clock)
    assert again.recall(term, k=1)[0].text == text
    again.close()


def test_an_irregular_verb_form_finds_its_verb(any_mem) -> None:
    mem = any_mem
    mem.remember("Bought a floor lamp at IKEA last weekend")
    mem.remember("We went to Kyoto in April")
    mem.remember("Ran a half marathon in 2:05")
    mem.remember("Need to buy more coffee filters")
    # Snowball alone leaves bought/buy, went/go and ran/run apart.
    assert mem.recall("where did I buy the floor lamp", k=1)[0].text == "Bought a floor lamp at IKEA last weekend"
    assert mem.recall("when did we go to Kyoto", k=1)[0].text == "We went to Kyoto in April"
    assert mem.recall("how long did the half marathon run take", k=1)[0].text == "Ran a half marathon in 2:05"
    assert {h.text for h in mem.recall("buy", k=5)} == {"Bought a floor lamp at IKEA last weekend", "Need to buy more coffee filters"}
    # Chinese in the same memory is untouched.
    mem.remember("我们上周去了莫干山 and went hiking")
    assert mem.recall("莫干山", k=1)[0].text == "我们上周去了莫干山 and went hiking"


def test_the_irregular_forms_table_holds_only_forms_that_are_nothing_else() -> None:
    from memdream.model.irregular_en import FORMS
    from memdream.model.tokens import stem, tokens

    table = dict(line.split(" ") for line in FORMS.splitlines())
    assert len(table) > 500
    assert table["went"] == "go" and table["bought"] == "buy" and table["taught"] == "teach"
    # words that are also a noun, an adjective or a verb of their own keep their meaning
    for word in ("saw", "left", "felt", "thought", "found", "rose", "lay"):
        assert word not in table, word
    assert all(w.isascii() and w.isalpha() and w.islower() and v.isascii() and v.isalpha() for w, v in table.items())
    assert stem("went") == stem("go") and stem("meetings") == stem("meeting")
    assert tokens("She taught me chess") == tokens("she teaches me chess")


def test_mixed_language_queries(any_mem) -> None:
    mem = any_mem
    mem.remember("我对花生过敏")
    mem.remember("I am allergic to shellfish")
    mem.remember("周五下午有组会")
    texts = {h.text for h in mem.recall("allergic 过敏", k=5)}
    assert {"我对花生过敏", "I am allergic to shellfish"} <= texts
    assert "周五下午有组会" not in texts


def test_as_of_follows_the_trail(any_mem, clock) -> None:
    mem = any_mem
    mem.remember("我在余杭区")
    clock.set(datetime(2026, 6, 20, 18, 30, tzinfo=clock.now().tzinfo))
    mem.remember("我在西湖区")
    clock.set(datetime(2026, 6, 27, 10, 0, tzinfo=clock.now().tzinfo))
    mem.remember("我在余杭区")
    assert [h.text for h in mem.recall("所在地", k=3)] == ["我在余杭区"]
    assert [h.text for h in mem.recall("所在地", k=3, as_of="2026-06-01")] == ["我在余杭区"]
    assert [h.text for h in mem.recall("所在地", k=3, as_of="2026-06-21")] == ["我在西湖区"]
    assert mem.recall("所在地", k=3, as_of="2026-05-01") == []
    first = mem.recall("所在地", k=1, as_of="2026-06-01")[0]
    assert first.entry.valid_to is not None  # the answer then is superseded today


def test_hit_counts_are_batched(any_mem) -> None:
    mem = any_mem
    assert mem.hit_flush_after == FLUSH_AFTER >= 1000
    engine(mem).hit_flush_after = 50  # the same mechanism, with a smaller batch to keep the test short
    e = mem.remember("周五下午有组会")
    path = mem.vault.recall_file_for(mem.scope, mem.clock.now())
    before = stored_text(mem, path)
    for _ in range(49):
        assert mem.recall("组会", k=1)
    assert stored_text(mem, path) == before  # no file write per query
    journal = {r: data for r, data in stored_files(mem).items() if r.startswith(".memdream/hits/")}
    assert len(journal) == 1 and len(next(iter(journal.values())).splitlines()) == 49  # the counts wait in the journal, one line per hit
    mem.recall("组会", k=1)
    if on_team_store(mem):
        # On the team store a recall writes no file (it takes no lock): its counts wait in the
        # journal until a write session folds them (a dream does it first).
        assert mem.get(e.id).hits == 0
        mem.flush_hits()
    got = mem.get(e.id)
    assert got.hits == 50 and got.last_recalled == mem.clock.now()
    assert not any(r.startswith(".memdream/hits/") for r in stored_files(mem))  # folded and emptied
    assert not any(r.rsplit("/", 1)[-1].startswith(".hits") for r in stored_files(mem))  # no hidden state in the vault


def test_a_batch_of_counts_over_many_files_is_folded_at_once(mem, clock) -> None:
    """One flush folds counts for memories in several files (three months' recall files),
    indexing them as one change after the files are written: every count lands
    in its line, and the index agrees with the files (doctor finds nothing)."""
    from memdream.doctor import check_vault

    mem.hit_flush_after = 10**6
    ids = []
    for month, text in ((3, "I am allergic to shellfish"), (4, "周五下午有组会"), (5, "the staging database runs on port 5433")):
        clock.set(datetime(2026, month, 10, 9, 0, tzinfo=clock.now().tzinfo))
        ids.append(mem.remember(text).id)
    files = {r.path for eid in ids for r in mem.index.by_id(mem.scope, eid)}
    assert len(files) == 3
    for q, n in (("shellfish", 3), ("组会", 2), ("staging port", 1)):
        for _ in range(n):
            assert mem.recall(q, k=1)
    assert mem.flush_hits() == 6
    # The index follows the files in the flush itself (read before anything syncs it again).
    assert [r.hits for eid in ids for r in mem.index.by_id(mem.scope, eid)] == [3, 2, 1]
    assert [mem.get(eid).hits for eid in ids] == [3, 2, 1]
    assert not check_vault(mem.vault, mem.index, [mem.scope])
    assert mem.recall("shellfish", k=1)[0].entry.hits == 3


def test_resident_snapshot_is_frozen_for_the_session(any_mem, store_kind, clock) -> None:
    """A folder vault's Memory is a session: its resident snapshot is frozen at the first
    context. On the team server a request is its own session (a stateless tier: the next one
    may reach another process), so each context takes the resident memory as it stands."""
    mem = any_mem
    mem.remember("以后都用中文回我")
    pinned = mem.remember("我是后端工程师，主要写 Go")
    mem.pin(pinned.id)
    first = mem.context()
    assert [e.text for e in first.snapshot.entries] == ["我是后端工程师，主要写 Go", "以后都用中文回我"]  # pinned first
    mem.remember("不要在周末给我发消息")
    again = mem.context(query="周末")
    if store_kind == "postgres":
        assert "不要在周末给我发消息" in again.render().split("## Memory: recalled")[0]
        return
    assert again.snapshot is first.snapshot
    assert "不要在周末给我发消息" not in again.render().split("## Memory: recalled")[0]
    # A new session (or an explicit refresh) sees it, ordered pinned, then importance (rule 1.0 > instruction 0.8).
    refreshed = [e.text for e in mem.snapshot(budget=first.snapshot.budget, refresh=True).entries]
    assert refreshed == ["我是后端工程师，主要写 Go", "不要在周末给我发消息", "以后都用中文回我"]


def test_a_pinned_recall_fact_is_resident(any_mem, clock) -> None:
    """`pin` promises "always in the resident snapshot": a pinned recall-layer fact is in
    the snapshot and the context's resident block, not only the resident layer's entries."""
    mem = any_mem
    mem.remember("以后都用中文回我")
    fact = mem.remember("我对花生过敏")
    other = mem.remember("The staging database lives on host db-2")
    assert fact.layer == "recall" and other.layer == "recall"
    assert [e.text for e in mem.snapshot(refresh=True).entries] == ["以后都用中文回我"]
    mem.pin(fact.id)
    mem.pin(other.id)
    snap = mem.snapshot(refresh=True)
    assert [e.text for e in snap.entries][:2] == ["我对花生过敏", "The staging database lives on host db-2"]  # pinned first
    assert {e.layer for e in snap.entries if e.pinned} == {"recall"}  # still in its own layer: pin moves nothing
    block = mem.context(query="花生", budget=500)
    resident_part, recalled_part = block.render().split("## Memory: recalled")
    assert "我对花生过敏" in resident_part and "我对花生过敏" not in recalled_part  # shown once
    assert [e["text"] for e in block.to_json()["resident"]["entries"]][:2] == ["我对花生过敏", "The staging database lives on host db-2"]
    mem.unpin(other.id)
    assert "The staging database lives on host db-2" not in [e.text for e in mem.snapshot(refresh=True).entries]


def test_snapshot_respects_budget_and_order(mem) -> None:
    for i in range(30):
        mem.remember(f"我喜欢第{i}种颜色的主题，编号 {i * 37}")
    snap = mem.snapshot(budget=100, refresh=True)
    assert snap.tokens <= 100 and snap.left_out > 0
    assert sum(count_tokens(f"- {e.text}") + 1 for e in snap.entries) == snap.tokens


def test_context_block_sections(any_mem) -> None:
    mem = any_mem
    mem.remember("以后都用中文回我")
    mem.remember("周五下午有组会，在 3 号会议室")
    block = mem.context(query="组会在哪", budget=500)
    out = block.render()
    assert "## Memory: resident" in out and "以后都用中文回我" in out
    assert "## Memory: recalled for '组会在哪'" in out and "周五下午有组会" in out
    assert block.tokens <= 500
    data = block.to_json()
    assert data["recalled"][0]["trace"]["relevance"] > 0


def test_raw_layer_import_and_search(any_mem, tmp_path) -> None:
    mem = any_mem
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps(m, ensure_ascii=False)
            for m in [
                {"role": "user", "content": "帮我整理一下明天的盘前简报要点", "timestamp": "2026-05-01T08:00:00+08:00"},
                {"role": "assistant", "content": "好的：1. 美股收盘 2. 汇率 3. 板块轮动"},
                {"role": "user", "content": "Also remind me that the Q3 budget review moved to Thursday"},
            ]
        )
        + "\nnot json\n",
        encoding="utf-8",
    )
    report = mem.import_transcripts("jsonl", jsonl)
    assert len(report.imported) == 1 and report.skipped == [(f"{jsonl}:4", "not JSON (Expecting value)")]
    stored = mem.vault.root / report.imported[0]
    assert stored.parent.name == "2026-05-01" and "帮我整理一下明天的盘前简报要点" in stored_text(mem, stored)
    assert mem.search_raw("盘前")[0].text.startswith("帮我整理一下明天的盘前简报")
    assert mem.search_raw("budget review")[0].role == "user"
    again = mem.import_transcripts("jsonl", jsonl)
    assert again.imported == [] and len(again.unchanged) == 1
    # Transcripts are never injected as memories.
    assert mem.recall("盘前") == []


def test_chatgpt_and_markdown_importers(mem, tmp_path) -> None:
    conv = [
        {
            "id": "abc-123",
            "title": "Trip",
            "create_time": 1767225600,
            "current_node": "n3",
            "mapping": {
                "n1": {"id": "n1", "parent": None, "message": {"author": {"role": "system"}, "content": {"parts": [""]}}},
                "n2": {"id": "n2", "parent": "n1", "message": {"author": {"role": "user"}, "content": {"parts": ["Plan a trip to Kyoto in April"]}, "create_time": 1767225600}},
                "n3": {"id": "n3", "parent": "n2", "message": {"author": {"role": "assistant"}, "content": {"parts": ["Cherry blossoms peak early April."]}}},
                "n4": {"id": "n4", "parent": "n2", "message": {"author": {"role": "assistant"}, "content": {"parts": ["(an abandoned branch)"]}}},
            },
        },
        {"title": "broken"},
    ]
    (tmp_path / "conversations.json").write_text(json.dumps(conv), encoding="utf-8")
    rep = mem.import_transcripts("chatgpt", tmp_path / "conversations.json")
    assert len(rep.imported) == 1 and len(rep.skipped) == 1
    text = (mem.vault.root / rep.imported[0]).read_text(encoding="utf-8")
    assert "Kyoto" in text and "abandoned" not in text
    md = tmp_path / "log.md"
    md.write_text("**User:** 我想学围棋\n\n**Assistant:** 可以先从九路棋盘开始。\n", encoding="utf-8")
    rep = mem.import_transcripts("markdown", md)
    assert len(rep.imported) == 1
    snip = mem.search_raw("九路")[0]
    assert snip.role == "assistant"


class _Searcher:
    def __init__(self) -> None:
        self.mode = "ok"
        self.calls = 0

    def __call__(self, query: str, k: int) -> list[Snippet]:
        self.calls += 1
        if self.mode == "fail":
            raise RuntimeError("index unavailable")
        if self.mode == "hang":
            time.sleep(0.5)
        return [Snippet("p", "s", "user", f"snippet {i}", 1.0) for i in range(5)]


def test_active_recall_breaker_and_timeout(clock) -> None:
    s = _Searcher()
    ar = ActiveRecall(s, clock, timeout=0.05)
    assert len(ar("hello")) == 3  # at most 3 snippets
    assert ar("hello", one_to_one=False) == [] and s.calls == 1  # group chats: not even searched
    s.mode = "fail"
    for _ in range(3):
        assert ar("hello") == []
    assert ar.is_open
    s.mode = "ok"
    calls = s.calls
    assert ar("hello") == [] and s.calls == calls  # cooldown: skipped without searching
    clock.advance(seconds=59)
    assert ar("hello") == []
    clock.advance(seconds=2)
    assert len(ar("hello")) == 3 and not ar.is_open
    s.mode = "hang"
    started = time.monotonic()
    assert ar("hello") == []
    assert time.monotonic() - started < 0.4  # abandoned at the timeout, not waited for
    assert "timed out" in ar.last_status


def test_cli_recall_explain_and_as_of(tmp_path) -> None:
    v = str(tmp_path / "v")
    r = CliRunner()
    for text in ("我在余杭区", "千万别在周五发版"):
        assert r.invoke(cli, ["remember", text, "--vault", v]).exit_code == 0
    out = r.invoke(cli, ["recall", "余杭", "--explain", "--vault", v]).output
    assert "我在余杭区" in out and "recency" in out and "importance" in out and "relevance" in out
    data = json.loads(r.invoke(cli, ["recall", "余杭", "--json", "--vault", v]).output)
    assert set(data["hits"][0]["trace"]) >= {"recency", "importance", "relevance"}
    assert "score" in data["hits"][0]
    today = datetime.now().date().isoformat()
    assert json.loads(r.invoke(cli, ["recall", "所在地", "--as-of", today, "--json", "--vault", v]).output)["hits"][0]["text"] == "我在余杭区"
    bad = r.invoke(cli, ["recall", "x", "--as-of", "yesterday-ish", "--vault", v])
    assert bad.exit_code == 1 and "YYYY-MM-DD" in bad.output
    ctx = r.invoke(cli, ["context", "--query", "发版", "--vault", v]).output
    assert "## Memory: resident" in ctx and "千万别在周五发版" in ctx


@pytest.mark.parametrize(
    "turns, query",
    [
        (["你好，刘琳。听起来非常有趣。你计划去哪里旅行？", "我计划去墨西哥，主要想看看那里的建筑和美食。",
          "那听起来是一个非常丰富的旅行计划。你计划住酒店还是民宿？", "我还没想好，可能住民宿。"], "我计划去哪里旅行？"),
        (["Caroline: Sounds fun! Where are you planning to travel?", "Melanie: I plan to travel to Mexico, mostly for the food.",
          "Caroline: What a plan! Are you planning to travel by train or by plane?", "Melanie: Not sure yet, maybe both."],
         "Where am I planning to travel?"),
    ],
)
def test_a_memory_that_ends_asking_ranks_below_the_answer_it_got(any_mem, clock, turns: list[str], query: str) -> None:
    """A question about a topic echoes the words of a question about it and holds no answer:
    it counts half of its match (QUESTION_SHARE), while the reply said next leans on its whole
    match (a half: the question and its answer weigh the same). So the answer is found first,
    above the question it answers and above a later question that echoes the query better."""
    mem = any_mem
    t0 = clock.now()
    ids = []
    for i, text in enumerate(turns):  # two exchanges, two days apart
        clock.set(t0 + timedelta(days=2 * (i // 2), seconds=5 * (i % 2)))
        ids.append(mem.remember(text, type="fact").id)
    clock.set(t0 + timedelta(days=3))
    hits = mem.recall(query, k=4)
    assert hits[0].entry.id == ids[1], [h.text for h in hits]
    by_id = {h.entry.id: h.trace for h in hits}
    for q in (ids[0], ids[2]):
        assert by_id[q].asked is not None and by_id[q].relevance == pytest.approx(QUESTION_SHARE * by_id[q].asked)
    answer = by_id[ids[1]]  # at least half the question's whole match, lent or its own
    assert answer.relevance >= by_id[ids[0]].asked / 2 - 1e-9
    assert answer.context is None or (answer.near == ids[0] and answer.context == pytest.approx(by_id[ids[0]].asked / 2))
    assert max(by_id[ids[0]].asked, by_id[ids[2]].asked) > by_id[ids[1]].bm25  # both questions matched better on their own
    assert hits[0].to_json()["trace"]["asked"] is None and "asked" in hits[1].to_json()["trace"]
    assert [h.score for h in hits] == [h.trace.score for h in hits] == sorted((h.trace.score for h in hits), reverse=True)
