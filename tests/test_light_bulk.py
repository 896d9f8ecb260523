"""The light phase planned from the index in bulk gives the plan the per-entry planner gives
(issue 21, point 3): the rows a rule may apply to chosen by one SQL query, and near-duplicates
grouped as before (model/lifecycle.py duplicates).

The vault is generated and real: recall files over several months written as the writer lays
them out (English and Chinese lines, near-duplicates, ended lines, recalled lines, old context,
lines with salience), a resident MEMORY.md with idle preferences, pinned lines and a rule, and
changes made through the public API (a subject superseded, recall counts left in the journal).
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.dream.light import high_water, plan_light
from memdream.dream.plan import Plan
from memdream.memory import Memory
from memdream.model.entry import Entry
from memdream.store.format import parse_document, render_line

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)
CITIES = ["杭州", "上海", "成都", "Lyon", "Berlin", "Osaka"]
THINGS = ["绿茶", "咖啡", "钢琴", "tennis", "sourdough", "jazz"]


def _text(i: int, rng: random.Random) -> str:
    c, t = rng.choice(CITIES), rng.choice(THINGS)
    if i % 2:
        return f"第{i}条：朋友{i % 97}住在{c}，喜欢{t}，每周{i % 7 + 1}次"
    return f"Note {i}: friend {i % 97} lives in {c}, likes {t}, {i % 7 + 1} times a week"


def _vault(root: Path, n: int = 1500) -> Memory:
    rng = random.Random(21)
    mem = Memory(load_config(root, "me", "main", env={}), FrozenClock(NOW))
    mem.vault.init()
    by_file: dict[Path, list[str]] = {}
    texts: list[str] = []
    for i in range(n):
        day = NOW - timedelta(days=rng.randrange(300), minutes=i)
        r = rng.random()
        if r < 0.06 and texts:  # a near-duplicate: the same line said again, or with a word less
            base = rng.choice(texts[-200:])
            text = base + "!" if r < 0.03 else base.replace("，每周", "每周").replace(", likes", " likes")
        elif r < 0.08:
            text = "Same common words about tea and coffee" if i % 2 else "同样的话：喝茶和咖啡"
        else:
            text = _text(i, rng)
        texts.append(text)
        ended = 0.08 <= r < 0.11
        e = Entry(
            text=text, id=f"g{i:05d}", type="context" if 0.11 <= r < 0.2 else "fact", created_at=day, valid_from=day,
            source="import", valid_to=NOW - timedelta(days=2) if ended else None, end="superseded" if ended else "",
            hits=3 + i % 4 if 0.2 <= r < 0.23 else (1 if 0.23 <= r < 0.26 else 0),
            last_recalled=day + timedelta(days=1) if 0.2 <= r < 0.26 else None,
            salience=0.5 if 0.26 <= r < 0.3 else 0.0, pinned=0.3 <= r < 0.32,
        )  # fmt: skip
        by_file.setdefault(mem.vault.recall_file_for(mem.scope, day, 1 + i % 2), []).append(render_line(e))
    for path, lines in by_file.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Recall\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    resident = [
        Entry(text="I prefer green tea in the morning", id="r0001", type="preference", created_at=NOW - timedelta(days=90)),
        Entry(text="我喜欢安静的咖啡馆", id="r0002", type="preference", created_at=NOW - timedelta(days=10)),
        Entry(text="我喜欢在周末爬山", id="r0003", type="preference", created_at=NOW - timedelta(days=120), pinned=True),
        Entry(text="Always answer in short sentences", id="r0004", type="rule", created_at=NOW - timedelta(days=200)),
        Entry(text="My name is Lin", id="r0005", type="identity", created_at=NOW - timedelta(days=250)),
    ]
    mem.vault.resident_file(mem.scope).write_text("# Memory\n\n" + "\n".join(render_line(e) for e in resident) + "\n", encoding="utf-8")
    mem.sync()
    return mem


def _same(a: Plan, b: Plan) -> None:
    assert a.seen == b.seen
    assert a.notes == b.notes
    assert a.ops == b.ops


def test_the_bulk_plan_is_the_per_entry_plan(tmp_path: Path) -> None:
    mem = _vault(tmp_path / "vault")
    try:
        # Changes through the public API: a subject superseded (the old line ends), lines
        # recalled (counts still in the journal: a dry run counts them in).
        mem.remember("I live in Hangzhou", subject="home city")
        mem.remember("我住在杭州西湖区", subject="住址")
        mem.clock.advance(days=1)  # type: ignore[attr-defined]
        mem.remember("I live in Shanghai now", subject="home city")
        for q in ("tennis Lyon", "绿茶 杭州", "sourdough"):
            mem.recall(q, k=5)
        assert mem.hit_journal.peek(), "recall counts wait in the journal"

        bulk = plan_light(mem.core, 30)
        each = plan_light(mem.core, 30, bulk=False)
        _same(bulk, each)
        kinds = {op.kind for op in bulk.ops}  # type: ignore[union-attr]
        assert {"archive", "supersede", "promote", "demote"} <= kinds, kinds
        texts = " ".join(op.entry.text for op in bulk.ops)  # type: ignore[union-attr]
        assert "第" in texts and "Note" in texts  # Chinese and English lines both planned
        ids = {op.entry.id for op in bulk.ops}  # type: ignore[union-attr]
        assert not ids & {"r0003", "r0004"}  # pinned and rules are never touched
        pinned = {f"g{i:05d}" for i in range(1500)} & ids
        assert all("pin=" not in mem.index.by_id(mem.scope, i)[0].line for i in pinned)

        # After a dream: the next plan compares only lines new since, in both planners.
        mem.dream(["light"], force=False)
        mark = high_water(mem.core)
        mem.clock.advance(days=3)  # type: ignore[attr-defined]
        mem.remember("Note 12: friend 12 lives in Osaka, likes jazz, 6 times a week!")
        mem.remember("我喜欢在周末爬山和游泳")
        _same(plan_light(mem.core, 30, mark), plan_light(mem.core, 30, mark, bulk=False))
        # A full budget: the promotions that do not fit are noted the same way.
        _same(plan_light(mem.core, 1), plan_light(mem.core, 1, bulk=False))
    finally:
        mem.close()


def test_a_big_first_dream_archives_into_parts_of_a_thousand_lines(tmp_path: Path) -> None:
    """Archives roll over like recall files: 2,400 old lines moved in one dream land in three
    bounded parts (not one file that every later move rewrites), each line exactly once, and
    a later forget appends to the last part."""
    mem = Memory(load_config(tmp_path / "vault", "me", "main", env={}), FrozenClock(NOW))
    mem.vault.init()
    old = NOW - timedelta(days=400)
    lines = [
        render_line(Entry(text=(f"旧笔记{i}：去过{CITIES[i % 6]}" if i % 2 else f"old note {i} about {THINGS[i % 6]}"), id=f"o{i:05d}", type="fact", created_at=old, valid_from=old))
        for i in range(2400)
    ]  # fmt: skip
    for part in range(3):
        path = mem.vault.recall_file_for(mem.scope, old, part + 1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Recall\n\n" + "\n".join(lines[part * 800 : part * 800 + 800]) + "\n", encoding="utf-8")
    keep = mem.remember("I still like tennis on Sundays")
    try:
        report = mem.dream(["light"], force=False)
        assert report.phases[0].status == "applied" and report.phases[0].changes == 2400
        archive = mem.vault.archive_dir(mem.scope)
        parts = sorted(archive.glob("*.md"))
        assert [p.name for p in parts] == ["2026-11.2.md", "2026-11.3.md", "2026-11.md"]
        counts = {p.name: sum(1 for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("- ")) for p in parts}
        assert counts == {"2026-11.md": 1000, "2026-11.2.md": 1000, "2026-11.3.md": 400}
        ids = [e.id for p in parts for e in parse_document(p.read_text(encoding="utf-8")).entries()]
        assert len(ids) == len(set(ids)) == 2400
        assert mem.recall("旧笔记17", k=1, as_of=old + timedelta(days=1))[0].entry.id == "o00017"
        mem.forget(keep.id)
        assert "I still like tennis" in (archive / "2026-11.3.md").read_text(encoding="utf-8")
    finally:
        mem.close()


def test_the_collector_pause_nests_and_restores_the_collector() -> None:
    import gc

    from memdream.dream.pause import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before, left off
    finally:
        gc.enable()


def _reference_duplicates(candidates, df):  # type: ignore[no-untyped-def]
    """model/lifecycle.py `duplicates` as it was before its prefilter (issue 21): every pair
    the anchors give has its bigram sets compared. The groups must not change."""
    from memdream.model.lifecycle import _ANCHOR, _rank, said_as
    from memdream.model.script import is_cjk
    from memdream.model.similarity import DEDUP_THRESHOLD, bigrams, contradiction, new_content, other_act, recombines

    ordered = sorted((c for c in candidates if not c.protected and c.id), key=_rank)
    kept: dict = {}
    by_rarest: dict = {}
    kept_at: list = []
    said_of: list = []
    alive: list = []
    grams: list = []
    out: dict = {}
    every = {t for c in ordered for t in c.tokens}
    anchor_set = {t for t in every if _ANCHOR.match(t) and not (len(t) == 1 and is_cjk(t))}
    rank = {t: i for i, t in enumerate(sorted(anchor_set, key=lambda t: (df(t), t)))}

    def grams_of(j):  # type: ignore[no-untyped-def]
        g = grams[j]
        if g is None:
            g = grams[j] = bigrams(kept_at[j].text)
        return g

    def similar(mine, j):  # type: ignore[no-untyped-def]
        other = grams_of(j)
        small, big = sorted((len(mine), len(other)))
        if not big or small / big <= DEDUP_THRESHOLD:
            return False
        shared = len(mine & other)
        return shared / (len(mine) + len(other) - shared) > DEDUP_THRESHOLD

    losers_of: dict = {}
    for c in ordered:
        anchors = anchor_set.intersection(c.tokens)
        if not anchors:
            continue
        mine = None
        rarest = min(anchors, key=rank.__getitem__)
        winner = None
        said = said_as(c.text)
        for j in kept.get(rarest, ()):
            if alive[j] and said == said_of[j]:
                winner = kept_at[j]
                break
            mine = mine if mine is not None else bigrams(c.text)
            if alive[j] and similar(mine, j) and not new_content(c.text, kept_at[j].text) and not contradiction(c.text, kept_at[j].text) and not other_act(c.text, kept_at[j].text) and not recombines(c.text, kept_at[j].text):
                winner = kept_at[j]
                break
        if winner is not None:
            out[c.id] = winner
            losers_of.setdefault(winner.id, []).append(c.id)
            continue
        me = len(kept_at)
        kept_at.append(c)
        said_of.append(said)
        alive.append(True)
        grams.append(mine)
        for t in anchors:
            for j in by_rarest.get(t, ()):
                if not alive[j]:
                    continue
                mine = mine if mine is not None else bigrams(c.text)
                grams[me] = mine
                if similar(mine, j) and not new_content(kept_at[j].text, c.text) and not contradiction(kept_at[j].text, c.text) and not other_act(kept_at[j].text, c.text) and not recombines(kept_at[j].text, c.text):
                    alive[j] = False
                    covered = kept_at[j].id
                    out[covered] = c
                    moved = losers_of.pop(covered, [])
                    for loser in moved:
                        out[loser] = c
                    losers_of.setdefault(c.id, []).extend(moved + [covered])
        for t in anchors:
            kept.setdefault(t, []).append(me)
        by_rarest.setdefault(rarest, []).append(me)
    return out


_WORDS_EN = "Lin takes the early green tram to the old harbour market every sunny Saturday morning with Mia".split()
_WORDS_ZH = list("林每个晴朗的周六早上都和米娅坐早班绿色电车去老港口市场")
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]")


def test_the_near_duplicate_groups_are_the_reference_groups() -> None:
    """Generated lines, Chinese and English, with near-duplicates of every kind the rule meets
    (the same words in another case or with a closing mark, a word more or less, a number or a
    value changed, a question, lines of only common words, exact repeats), layers and recall
    counts mixed so the rank order varies: the same groups with the prefilter, without it, and
    as the reference. The prefilters (bigrams looked up first; a number the other line lacks) skip
    only pairs the rule would not fold."""
    from collections import Counter
    from itertools import chain

    from memdream.model.lifecycle import Candidate, duplicates
    from memdream.model.tokens import tokens

    rng = random.Random(2103)
    texts: list[str] = []
    salads: list[list[str]] = []
    for i in range(3000):
        r = rng.random()
        if texts and r < 0.25:
            base = rng.choice(texts[-300:])
            k = rng.randrange(8)
            text = [
                base + "!",
                base.upper() if base.isascii() else base + "。",
                base.replace("，每周", "每周").replace(", likes", " likes"),
                base.replace("likes", "really likes").replace("喜欢", "很喜欢"),
                base.replace("1", "2"),
                base.rstrip("!。") + "?" if base.isascii() else base + "吗？",
                base,
                base + (" 7" if base.isascii() else "7次"),  # a number more (or, the other way, less)
            ][k]
        elif r < 0.3:
            text = rng.choice(["Same common words about tea and coffee", "同样的话：喝茶和咖啡", "Tea and coffee, same common words", "喝茶和咖啡，同样的话"])
        elif r < 0.45:  # no numbers: a word or two less puts the similarity on either side of the threshold
            if salads and rng.random() < 0.6 and len(words := rng.choice(salads[-40:])) > 8:
                drop = set(rng.sample(range(len(words)), rng.randint(1, 2)))
                words = [w for k, w in enumerate(words) if k not in drop]
            else:
                words = [w for w in rng.choice([_WORDS_EN, _WORDS_ZH]) if rng.random() > 0.15]
            salads.append(words)
            text = ("" if _CJK_WORD.match(words[0]) else " ").join(words)
        else:
            text = _text(i % 400 if r < 0.5 else i, rng)
        texts.append(text)
    # Lines sharing a rare name, their numbers written in full-width digits or changed: the
    # number prefilter reads numbers as the rule does (NFKC), so the first two still fold.
    texts += ["Zephyrine booked the room, for 12 people", "Zephyrine booked the room for １２ people", "Zephyrine booked the room for 13 people"]
    texts += ["泽菲琳订了会议室，给１２个人", "泽菲琳订了会议室给12个人", "泽菲琳订了会议室给21个人"]
    cands = [
        Candidate(f"d{i:05d}", t, "resident" if i % 23 == 0 else "recall", i % 5 if i % 7 == 0 else 0, float(i * 37 % 1000), tokens(t, unigrams=True), i % 97 == 0)
        for i, t in enumerate(texts)
    ]  # fmt: skip
    df = Counter(chain.from_iterable(set(c.tokens) for c in cands))
    got = {k: v.id for k, v in duplicates(cands, df.__getitem__).items()}
    unfiltered = {k: v.id for k, v in duplicates(cands, df.__getitem__, prefilter=False).items()}
    want = {k: v.id for k, v in _reference_duplicates(cands, df.__getitem__).items()}
    assert got == unfiltered == want
    assert len(want) > 300 and len(set(want.values())) > 100  # many groups, not one


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789０１②²٣ İiIaz'’ 的茶喝5月3日第条,.!?")), max_size=40))
def test_number_tokens_are_the_digit_tokens_of_the_index(text: str) -> None:
    """`number_tokens` (the near-duplicate prefilter's numbers) is exactly the digits-only part of
    what `tokens` cuts, without running the segmenter."""
    from memdream.model.tokens import number_tokens, tokens

    assert number_tokens(text) == {t for t in tokens(text) if t.isdigit()}


def _nfkc_numeric_bmp_now() -> str:
    """NFKC_NUMERIC_BMP recomputed from the running Python's unicodedata: every character of the
    Basic Multilingual Plane whose NFKC form holds one `str.isdigit` counts, as the ranges of a
    regex class."""
    import unicodedata

    ranges: list[list[int]] = []
    for c in range(0x10000):
        if any(ch.isdigit() for ch in unicodedata.normalize("NFKC", chr(c))):
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


def test_the_nfkc_numeric_class_is_every_character_nfkc_makes_a_digit_of() -> None:
    """The class in model/tokens.py is recomputed here by scanning all of Unicode, so it cannot
    drift from the running Python's unicodedata unnoticed; every character whose NFKC holds a
    digit is in the test (beyond the BMP, every character is); and no digit is composed or
    decomposed canonically (NFKC of a text makes a digit only from a character whose own NFKC
    holds one), so a text holding none of them has no number after NFKC."""
    import unicodedata

    from memdream.model.tokens import _NFKC_NUMERIC, NFKC_NUMERIC_BMP, NFKC_NUMERIC_UNIDATA

    if unicodedata.unidata_version != NFKC_NUMERIC_UNIDATA:  # the class is not used then (nfkc_number_tokens)
        pytest.skip(f"Unicode {unicodedata.unidata_version}, the class is for {NFKC_NUMERIC_UNIDATA}")
    now = _nfkc_numeric_bmp_now()
    assert NFKC_NUMERIC_BMP == now, f"paste this into NFKC_NUMERIC_BMP (model/tokens.py):\n{now}"
    for c in range(0x110000):
        ch = chr(c)
        if any(d.isdigit() for d in unicodedata.normalize("NFKC", ch)):
            assert _NFKC_NUMERIC.search(ch), hex(c)
        elif c < 0x10000:
            assert not _NFKC_NUMERIC.search(ch), hex(c)
        nfd = unicodedata.normalize("NFD", ch)
        if nfd != ch:
            assert not ch.isdigit() and not any(d.isdigit() for d in nfd), hex(c)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789０１②²٣½⑩㋀¹₃ⅷ𝟘 İiIaz'’́ 的茶喝5月3日第条,.!?")), max_size=40))
def test_nfkc_number_tokens_are_the_number_tokens_of_the_nfkc_form(text: str) -> None:
    """The near-duplicate prefilter's numbers (`nfkc_number_tokens`, which skips a text holding
    no character NFKC makes a digit of) are `number_tokens` of the text's NFKC form."""
    import unicodedata

    from memdream.model.tokens import nfkc_number_tokens, number_tokens

    assert nfkc_number_tokens(text) == number_tokens(unicodedata.normalize("NFKC", text))


def test_nfkc_number_tokens_reads_every_kind_of_digit() -> None:
    from memdream.model.tokens import nfkc_number_tokens

    assert nfkc_number_tokens("tea at 5, room ١٢") == {"5", "١٢"}  # NFKC keeps Arabic-Indic digits
    assert nfkc_number_tokens("½ cup, ⑩ people, ㋀ 第２条 x²") == {"1", "2", "10"}  # x² is the word x2
    assert nfkc_number_tokens("no number here, 没有数字") == frozenset()
