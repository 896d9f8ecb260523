"""The scheduler: which jobs are due (a pure function of the clock), catch-up after downtime,
the daily flush before distillation, and the background thread that never blocks a turn."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path

import pytest

from memdream.config import DreamConfig, load_config
from memdream.dream.schedule import Scheduler, jobs_due, nightly_phases, run_due
from memdream.llm.client import OpenAICompatLLM
from memdream.llm.fake import FakeLLMServer
from memdream.memory import Memory
from conftest import CST

CFG = DreamConfig()


def at(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 6, day, hh, mm, tzinfo=CST)


def test_a_first_run_does_everything_once() -> None:
    assert jobs_due(at(10, 10), {}, CFG) == ["flush:2026-06-09", "light", "nightly"]


def test_light_runs_hourly_and_nightly_once_a_night() -> None:
    state = {"sched:light": at(10, 10).isoformat(), "sched:nightly": at(10, 3, 5).isoformat(), "sched:flush": at(9, 23, 55).isoformat()}
    assert jobs_due(at(10, 10, 30), state, CFG) == []
    assert jobs_due(at(10, 11, 0), state, CFG) == ["light"]
    assert jobs_due(at(10, 23, 56), state, CFG) == ["flush:2026-06-10", "light"]
    state["sched:flush"] = at(10, 23, 55).isoformat()
    state["sched:light"] = at(11, 2, 30).isoformat()
    assert jobs_due(at(11, 3, 0), state, CFG) == ["nightly"]


def test_downtime_is_caught_up_flushes_first_and_in_order() -> None:
    state = {"sched:light": at(3, 22).isoformat(), "sched:nightly": at(3, 3).isoformat(), "sched:flush": at(2, 23, 55).isoformat()}
    jobs = jobs_due(at(6, 12), state, CFG)
    assert jobs == ["flush:2026-06-03", "flush:2026-06-04", "flush:2026-06-05", "light", "nightly"]  # one nightly, not three


def test_the_switch_and_the_replay_interval() -> None:
    now = at(10, 3)
    assert nightly_phases(now, {}, CFG) == ["deep", "distill", "profile", "replay"]
    off = DreamConfig(deep_dream_enabled=False)
    assert nightly_phases(now, {"sched:replay": at(8, 3).isoformat()}, off) == ["deep", "profile"]


def test_deep_dream_enabled_is_read_from_memdream_toml(tmp_path: Path) -> None:
    (tmp_path / "memdream.toml").write_text("deep_dream_enabled = false\n[dream]\nnightly_at = \"4:30\"\n", encoding="utf-8")
    cfg = load_config(tmp_path, env={}).dream
    assert cfg.deep_dream_enabled is False and cfg.nightly_at == "04:30"
    (tmp_path / "memdream.toml").write_text("[dream]\nnightly_at = \"25:00\"\n", encoding="utf-8")
    with pytest.raises(Exception, match="time of day"):
        load_config(tmp_path, env={})


def test_the_daily_flush_finishes_before_distillation(tmp_path: Path, clock) -> None:
    with FakeLLMServer() as srv:

        def answer(req: dict) -> str:
            system = req["messages"][0]["content"]
            if system.startswith("Summarize this conversation"):
                return json.dumps({"events": ["决定下周一开始学游泳"]}, ensure_ascii=False)
            if system.startswith("You maintain MEMORY.md"):
                daily = json.loads(req["messages"][1]["content"])["daily_memory"]
                assert "决定下周一开始学游泳" in daily  # the flush already landed
                return json.dumps({"operations": [{"op": "add", "text": "决定下周一开始学游泳", "type": "instruction"}]}, ensure_ascii=False)
            return json.dumps({"operations": []})

        srv.default = answer
        llm = OpenAICompatLLM(srv.base_url, "fake", retries=1)
        mem = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock, llm=llm)
        mem.vault.init()
        conv = tmp_path / "c.jsonl"
        conv.write_text(json.dumps({"role": "user", "content": "我决定下周一开始学游泳", "timestamp": "2026-06-01T20:00:00+08:00"}, ensure_ascii=False) + "\n", encoding="utf-8")
        mem.import_transcripts("jsonl", conv)
        clock.set(at(2, 3, 30))  # the night after: yesterday's flush was missed
        ran = run_due(mem)
        assert ran == ["flush:2026-06-01", "light", "nightly"]
        kinds = [r["messages"][0]["content"].split()[0] for r in srv.requests]
        assert kinds.index("Summarize") < kinds.index("You")  # flush first
        # Distilled by a dream, an instruction waits for the user's confirmation (issue 17).
        assert "决定下周一开始学游泳" in {c.b for c in mem.conflicts() if c.kind == "pending"}
        assert run_due(mem) == []  # nothing due until the next hour
        clock.advance(hours=1)
        assert run_due(mem) == ["light"]
        mem.close()


def test_the_background_thread_never_blocks_a_turn(vault: Path, clock) -> None:
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    mem.remember("我在余杭区", subject="所在地")
    mem.remember("我在西湖区", subject="所在地")
    said: list[str] = []
    sched = Scheduler(lambda: Memory(load_config(vault, "me", "main", env={}), clock), tick=0.05, say=said.append)
    thread = sched.start()
    assert isinstance(thread, threading.Thread) and thread.daemon
    for i in range(20):  # turns go on while the scheduler works
        mem.remember(f"turn {i}: the build number is {1000 + i}")
        assert mem.recall(f"build number {1000 + i}", k=1)
    sched.stop()
    assert not thread.is_alive() and not sched.errors
    assert any(s.startswith("light:") for s in said)
    assert mem.history("所在地")[0].layer == "archive"
    mem.close()


def test_a_chat_scheduler_defers_the_model_jobs_already_due() -> None:
    start = at(10, 10)
    assert jobs_due(start, {}, CFG, not_before=start) == ["light"]  # a fresh state: no dream on the first turn
    assert jobs_due(at(10, 23, 56), {"sched:light": at(10, 23, 0).isoformat()}, CFG, not_before=start) == ["flush:2026-06-10"]
    state = {"sched:light": at(11, 2, 59).isoformat(), "sched:flush": at(10, 23, 55).isoformat()}
    assert jobs_due(at(11, 3, 1), state, CFG, not_before=start) == ["nightly"]  # its slot came during the chat
    assert jobs_due(start, {}, CFG) == ["flush:2026-06-09", "light", "nightly"]  # deferred, not dropped


def test_a_chat_scheduler_sends_nothing_to_the_model_on_a_fresh_state(tmp_path: Path, clock) -> None:
    with FakeLLMServer() as srv:
        srv.default = lambda req: json.dumps({"operations": [], "events": []})
        vault = tmp_path / "v"

        def open_mem() -> Memory:
            m = Memory(load_config(vault, "me", "main", env={}), clock, llm=OpenAICompatLLM(srv.base_url, "fake", retries=1))
            m.vault.init()
            return m

        said: list[str] = []
        Scheduler(open_mem, say=said.append, defer=True).run(once=True)
        assert srv.requests == [] and [s.split(":")[0] for s in said] == ["light"]
        Scheduler(open_mem, say=said.append).run(once=True)  # a daemon later catches up
        assert any(s.startswith("nightly") for s in said)
