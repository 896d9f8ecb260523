"""The facade methods the shells (web console, chat, MCP) call instead of reaching under it:
a change made against a line's version, the as-of parser, daily logs and diaries, the dream
ledger, and a chat transcript stored and read back. Real files, real SQLite, a frozen clock."""

from __future__ import annotations

from datetime import date

import pytest

from memdream.errors import ChangedOnDisk, NotFound, RefusedInput
from memdream.memory import Memory, Message


def test_a_change_at_a_stale_version_writes_nothing(mem: Memory) -> None:
    home = mem.remember("我住在杭州西湖区", subject="所在地")
    seat = mem.remember("I prefer window seats on trains", type="preference")
    shown = dict((e.id, v) for e, v in mem.versioned())
    assert set(shown) == {home.id, seat.id}
    assert mem.versions([home.id, seat.id, "nosuch"]) == shown  # an id without a current line is left out
    # A person edits the Chinese line by hand after the page was shown.
    path = next(p for p in mem.vault.recall_dir(mem.scope).rglob("*.md"))
    before = path.read_text(encoding="utf-8")
    path.write_text(before.replace("西湖区", "余杭区"), encoding="utf-8")
    with pytest.raises(ChangedOnDisk):
        with mem.at_version(home.id, shown[home.id]):
            mem.pin(home.id)
    assert "我住在杭州余杭区" in path.read_text(encoding="utf-8") and not mem.get(home.id).pinned
    # The version read now lets the change through, and the change moves the version on.
    fresh = mem.versions([home.id])[home.id]
    assert fresh != shown[home.id]
    with mem.at_version(home.id, fresh) as entry:
        assert entry.text == "我住在杭州余杭区"
        mem.pin(home.id)
    assert mem.get(home.id).pinned and mem.versions([home.id])[home.id] != fresh
    # The English line was not touched: its version still holds.
    with mem.at_version(seat.id, shown[seat.id]):
        mem.forget(seat.id)
    with pytest.raises(NotFound):  # forgotten: no current line to change any more
        with mem.at_version(seat.id, shown[seat.id]):
            pass
    assert [e.text for e, _ in mem.versioned("archive")] == ["I prefer window seats on trains"]
    with pytest.raises(RefusedInput):
        mem.versioned("nowhere")


def test_as_of_reads_a_date_as_recall_does(mem: Memory) -> None:
    end = mem.as_of("2026-06-05")
    assert end is not None and (end.date(), end.hour, end.minute) == (date(2026, 6, 5), 23, 59)
    assert end.utcoffset() == mem.clock.now().utcoffset()
    assert mem.as_of(None) is None
    with pytest.raises(RefusedInput):
        mem.as_of("上周三")


def test_daily_logs_diaries_and_the_dream_ledger(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    assert mem.daily_logs() == [] and mem.daily_log() == "" and mem.diaries() == [] and mem.dream_records() == []
    mem.log("完成了数据库迁移", "PostgreSQL 14 -> 16")
    clock.advance(days=1)
    mem.log("Deployed the new search")
    days = [day for day, _ in mem.daily_logs()]
    assert days == ["2026-06-02", "2026-06-01"]  # newest first
    assert "Deployed the new search" in mem.daily_log() and "数据库迁移" in mem.daily_log(date(2026, 6, 1))
    assert [day for day, _ in mem.daily_logs(1)] == ["2026-06-02"]
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=20)
    mem.remember("我在西湖区", subject="所在地")
    clock.advance(days=40)
    mem.dream(["light"])
    diaries = mem.diaries()
    assert diaries and diaries[0][0] == f"{clock.now():%Y-%m-%d}" and "light" in diaries[0][1]
    last = mem.last_dream()
    assert last is not None and last in mem.dream_records() and last["changes"]
    added = [(rel, eid) for rel, ch in last["changes"].items() for eid in ch.get("added", [])]
    lines = mem.lines_in(added + [("MEMORY.md", "nosuch")])
    assert lines[("MEMORY.md", "nosuch")] is None
    assert all(lines[key] and key[1] in lines[key] for key in added)  # type: ignore[operator]
    mem.undo()
    assert mem.last_dream() is None and any("undo" in r for r in mem.dream_records())


def test_a_chat_transcript_is_kept_in_the_raw_layer_and_found_again(mem: Memory) -> None:
    started = mem.clock.now()
    said = [Message("user", "我们下周去苏州看园林", started), Message("assistant", "好的，拙政园值得一去。", started)]
    rel = mem.keep_chat("chat-20260601-090000", started, said)
    assert rel.endswith("memory/sessions/2026-06-01/chat-20260601-090000.md")
    assert mem.keep_chat("chat-20260601-090000", started, said + [Message("user", "and the Humble Administrator's Garden", started)]) == rel
    text = (mem.vault.root / rel).read_text(encoding="utf-8")
    assert "拙政园" in text and "Humble Administrator" in text  # rewritten as the chat goes on
    assert mem.keep_chat("chat-20260601-090000", started, said, part=2).endswith("chat-20260601-090000-2.md")
    assert any(s.path == rel for s in mem.search_raw("园林"))
    assert mem.relpath(mem.vault.root / rel) == rel
    report = mem.flush_chat(rel, started.date())  # no model configured: said so, the transcript stays
    assert report.status == "skipped" and (mem.vault.root / rel).exists()


def test_the_resident_file_and_the_doctor_of_one_scope(mem: Memory, open_scope) -> None:  # type: ignore[no-untyped-def]
    assert mem.resident_text() == ""
    mem.remember("以后都用中文回我")
    assert "以后都用中文回我" in mem.resident_text()
    assert mem.scope_problems() == []
    other = open_scope("alice")
    other.remember("Alice prefers tea", type="preference")
    broken = other.vault.resident_file(other.scope)
    broken.write_text(broken.read_text(encoding="utf-8") + "- 她也喝咖啡 <!--m:id=k3f9q2;vf=yesterday-->\n", encoding="utf-8")
    assert other.scope_problems(), "a broken date is a problem of alice's scope"
    assert mem.scope_problems() == [], "another scope's problems are not this scope's"
    before = mem.generation()
    mem.remember("I prefer window seats on trains")
    assert mem.generation() != before
