"""model/script.py answers what the CJK character classes it replaced answered, and the ASCII
shortcuts taken to avoid compiling them (issue 21) change no result."""

from __future__ import annotations

import re

import pytest

from memdream.model.classify import extract_subject
from memdream.model.script import has_han, has_han_or_ext_a, has_latin, is_cjk, starts_cjk
from memdream.model.slots import SLOTS, slot_of
from memdream.model.wording import plain_words

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


def test_every_character_of_the_basic_plane_is_classed_as_the_patterns_class_it() -> None:
    han, ext = re.compile(r"[\u4e00-\u9fff]"), re.compile(r"[\u3400-\u9fff]")
    for o in range(0x10000):
        ch = chr(o)
        assert is_cjk(ch) == bool(_CJK.match(ch)), hex(o)
        assert has_han("a" + ch) == bool(han.search(ch)), hex(o)
        assert has_han_or_ext_a(ch + "b") == bool(ext.search(ch)), hex(o)
    for text in ("", "plain ASCII", "咖啡 coffee", "カフェ", "커피", "café", "x\u4dbfy"):
        assert starts_cjk(text) == bool(_CJK.match(text))


ENGLISH = [
    "I live in Hangzhou now", "We moved to Lisbon last year", "I work at Acme Corp", "My wife is called Anna",
    "I drive a Tesla", "My dentist is Dr. Wu", "I'm allergic to peanuts", "I usually go to bed at 11",
    "My commute is 40 minutes by train", "I'm learning Rust at the moment", "my laptop is a ThinkPad",
    "Caroline lives in Boston", "I like green tea", "My name is Sam", "my favourite editor is vim",
]


@pytest.mark.parametrize("text", ENGLISH)
def test_an_english_text_finds_the_same_slot_and_subject_without_the_chinese_patterns(text: str) -> None:
    for s in SLOTS:
        full = s.cue.search(text)
        en = s.cue_en.search(text) if s.cue_en is not None else None
        assert (full and full.span()) == (en and en.span()), (s.key, text)
    words = plain_words(text)
    assert words and all(w.isascii() for w in words)


def test_english_subjects_are_read_as_before() -> None:
    assert extract_subject("I live in Hangzhou now") == "location"
    assert extract_subject("My name is Sam") == "name"
    assert extract_subject("my favourite editor is vim") == "favourite editor"
    assert extract_subject("I like green tea") == ""


def test_chinese_texts_still_take_the_chinese_patterns() -> None:
    assert extract_subject("我住在余杭区") == "所在地"
    assert extract_subject("我叫小王") == "名字"
    s = slot_of("我在西湖区上班")
    assert s is not None and s.key == "employer"
    assert {"咖啡"} <= plain_words("我喜欢咖啡")


CHINESE = [
    "我住在余杭区", "搬到了杭州", "我在字节跳动上班", "我老婆叫小林", "我家的猫叫豆豆", "我吃素", "我对花生过敏",
    "我用 Vim 写代码", "每天早上七点起床", "坐地铁上班要四十分钟", "我开一辆比亚迪", "我的手机是小米14", "今天天气不错",
]


@pytest.mark.parametrize("text", CHINESE)
def test_a_text_without_latin_letters_finds_the_same_slot_with_the_chinese_cue_alone(text: str) -> None:
    latin = has_latin(text)
    for s in SLOTS:
        full = s.cue.search(text)
        if latin or s.cue_zh is None:
            continue
        zh = s.cue_zh.search(text)
        assert (full and full.span()) == (zh and zh.span()), (s.key, text)


@pytest.mark.parametrize("slot", [s for s in SLOTS if s.cue_en is not None], ids=lambda s: s.key)
def test_every_english_cue_match_holds_a_latin_letter(slot) -> None:  # type: ignore[no-untyped-def]
    from hypothesis import HealthCheck, given, settings

    from regex_gen import matches

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(matches(slot.cue_en))
    def holds(match: str) -> None:
        assert has_latin(match), match

    holds()


def test_the_chinese_cues_hold_no_latin_letter_so_ignoring_case_changes_nothing() -> None:
    for s in SLOTS:
        if s.cue_zh is not None:
            assert not re.search("[A-Za-z]", re.sub(r"\\u[0-9a-fA-F]{4}|\\[A-Za-z]", "", s.cue_zh.pattern)), s.key
