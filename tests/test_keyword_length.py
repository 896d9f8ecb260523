"""Keyword relevance does not let short lines that share fewer of the query's terms outrank a
long line that holds more of them (BM25+'s lower bound, model/scoring.BM25_DELTA). With plain
BM25 (BM25_DELTA = 0) both cases rank the short lines first: checked when this test was written.
The Chinese case is the synthetic set's own (bench/recall_latency.py at 100k)."""

from __future__ import annotations

import pytest

from memdream.config import load_config
from memdream.memory import Memory

CASES = {
    "en": (
        [f"Alice's birthday is on March {d}" for d in range(1, 25)]
        + [f"Cooked dinner with {p} on a {w}" for p in ("Bob", "Carol", "Dave", "Erin") for w in ("Monday", "Friday", "Sunday")],
        "Planned a dinner with Alice on March 14 at the new noodle place near the station, after her long shift at the hospital",
        "Alice dinner March",
    ),
    "zh": (
        [f"韩梅梅的生日是{m}月{d}日" for m in (3, 9, 11) for d in (1, 2, 9, 11, 12, 20, 21, 28)]
        + [f"{p}说周{w}一起{'去' if w == '五' else ''}爬山" for p in ("小王", "李雷", "张伟", "王芳") for w in "一三五"]
        + [f"{p}周{w}在家吃饭" for p in ("小王", "李雷", "张伟", "王芳") for w in "二四六"],
        "和韩梅梅约好9月11日一起去浦东新区吃手冲咖啡",
        "9月11号我要跟韩梅梅去哪里吃东西",
    ),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_line_holding_more_query_terms_beats_short_lines_holding_fewer(vault, clock, lang: str) -> None:
    short, long_line, query = CASES[lang]
    m = Memory(load_config(vault, "me", "main", env={}), clock)
    m.vault.init()
    for text in short:
        m.remember(text, type="fact")
    target = m.remember(long_line, type="fact")
    hits = m.recall(query, k=5, rank_by="relevance")
    assert hits[0].entry.id == target.id, [h.text for h in hits]
    # It still is not stretched: the long line's keyword relevance stays below a full match.
    assert 0 < hits[0].trace.bm25 < 1
    m.close()
