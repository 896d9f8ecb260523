"""`Index.said_after`: for many rows at once, what the scope said next (recall's conversation
context), each row's own entries in order, within the gap, of the layers asked."""

from __future__ import annotations

from datetime import timedelta

from memdream.memory import Memory
from memdream.model.entry import RECALL, RESIDENT

GAP = 30 * 60.0


def test_what_was_said_next_for_many_rows_in_one_statement(open_scope, clock) -> None:  # type: ignore[no-untyped-def]
    mem: Memory = open_scope()
    other: Memory = open_scope(user="someone-else")
    start = clock.now()
    said = {}
    turns = [(0, "我们周六去杭州吧"), (1, "好呀，去西湖"), (2, "再去灵隐寺"), (3, "I'll book the train"),
             (50, "Back home now"), (51, "家里的猫还好吗"), (200, "last words")]  # fmt: skip
    for minute, text in turns:
        clock.set(start + timedelta(minutes=minute))
        said[minute] = mem.index.by_id(mem.scope, mem.remember(text, type="fact").id)[0]
        if minute == 1:
            other.remember("another scope, the same minute", type="fact")
    asked = [said[m] for m in (0, 2, 3, 51, 200)]
    got = mem.index.said_after(mem.scope, asked, (RECALL,), GAP, 2)
    assert {rowid: [r.entry().text for r in rows] for rowid, rows in got.items()} == {
        said[0].rowid: ["好呀，去西湖", "再去灵隐寺"],  # the next two, in order (not the other scope's)
        said[2].rowid: ["I'll book the train"],  # 48 minutes on is past the 30-minute gap
    }  # 3, 51 and 200: nothing within the gap
    # n=1 for one row: the first thing said next.
    one = mem.index.said_after(mem.scope, [said[50]], (RECALL,), GAP, 1)
    assert [r.entry().text for r in one[said[50].rowid]] == ["家里的猫还好吗"]
    # Rows of another scope are not looked up in this one; other layers are not asked.
    assert mem.index.said_after(other.scope, asked, (RECALL,), GAP, 2) == {}
    assert mem.index.said_after(mem.scope, asked, (RESIDENT,), GAP, 2) == {}
    mem.close()
    other.close()
