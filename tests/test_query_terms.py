"""A recall query's Chinese is segmented by the words the memories hold (model/tokens.py,
query_terms), not by the segmenter: the pieces some memory holds, and the characters no such
piece covers."""

from __future__ import annotations

from memdream.model.tokens import query_terms, tokens


def known_of(*texts: str):  # type: ignore[no-untyped-def]
    """The `known` callback over the index tokens of `texts`, counting its calls."""
    vocab = {t for text in texts for t in tokens(text, unigrams=True)}
    calls: list[list[str]] = []

    def known(pieces: list[str]) -> set[str]:
        calls.append(pieces)
        return {p for p in pieces if p in vocab}

    return known, calls


def test_a_word_the_memories_hold_is_a_term_and_covers_its_characters() -> None:
    known, calls = known_of("我喜欢喝龙井茶")
    terms = query_terms("龙井茶", known)
    assert "龙井茶" in terms and {"龙井", "井茶"} <= set(terms)
    assert not {"龙", "井", "茶"} & set(terms)  # covered by the words: no single characters
    assert len(calls) == 1  # one lookup a query


def test_a_word_no_memory_holds_falls_back_to_its_characters() -> None:
    known, _ = known_of("我喜欢喝龙井茶")
    terms = query_terms("喝茶", known)
    assert {"喝", "茶"} <= set(terms)  # no memory says 喝茶: its characters still find 龙井茶
    known, _ = known_of("我每天喝茶")
    assert "喝茶" in query_terms("喝茶", known) and "茶" not in query_terms("喝茶", known)


def test_function_characters_and_question_words_stay_out() -> None:
    known, _ = known_of("这次旅行的目的是放松", "你平时喜欢做什么运动？")
    terms = query_terms("我的目的是什么", known)
    assert "目的" in terms  # a memory holds it as a word, function character and all
    assert not {"的", "我", "什么", "什", "么", "我的"} & set(terms)
    known, _ = known_of("今天很热")
    assert "目的" not in query_terms("我的目的", known) and "目" in query_terms("我的目的", known)


def test_everything_else_is_tokenized_as_the_index_does() -> None:
    known, calls = known_of("weekly meetings")
    assert query_terms("The Meetings", known) == ["meet"]
    assert calls == []  # no Chinese, nothing to look up
    known, _ = known_of("我在杭州")
    assert query_terms("iPhone 15 杭", known) == ["iphon", "15", "杭"]  # stemmed, as the index stores it


def test_a_long_query_is_looked_up_in_batches() -> None:
    run = "".join(chr(0x4E00 + i) for i in range(400))  # 400 distinct characters: 2,772 pieces
    word = run[100:103]
    calls: list[list[str]] = []

    def known(pieces: list[str]) -> set[str]:
        calls.append(pieces)
        return {p for p in pieces if p == word}

    terms = query_terms(run, known)
    assert len(calls) == 4 and max(len(c) for c in calls) <= 900
    assert word in terms  # a word the memory holds, found in whichever batch it fell
