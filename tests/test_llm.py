"""The OpenAI-compatible client against a real loopback server with scripted replies, and the
knowledge vault's model-assisted paths (ambiguous CRUD, the five-question reflection)."""

from __future__ import annotations

import json

import pytest

from memdream.config import load_config
from memdream.errors import MemdreamError
from memdream.knowledge.notes import paragraphs, parse_note
from memdream.llm.client import LLMError, OpenAICompatLLM, load_llm
from memdream.llm.fake import FakeLLMServer
from memdream.memory import Memory


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


def test_completion_json_mode_and_usage(server) -> None:
    server.reply('```json\n{"ok": true}\n```')
    llm = OpenAICompatLLM(server.base_url, "fake-model")
    c = llm.complete([{"role": "user", "content": "hello world, reply in JSON"}], json_mode=True)
    assert c.json() == {"ok": True} and c.prompt_tokens > 0 and c.completion_tokens > 0
    assert server.requests[0]["response_format"] == {"type": "json_object"} and server.requests[0]["model"] == "fake-model"


def test_server_without_json_mode_is_asked_again_without_it() -> None:
    with FakeLLMServer(reject_json_mode=True) as srv:
        srv.reply('{"ok": 1}')
        llm = OpenAICompatLLM(srv.base_url, "m")
        assert llm.complete([{"role": "user", "content": "x"}], json_mode=True).json() == {"ok": 1}
        assert "response_format" not in srv.requests[-1]
        srv.reply('{"ok": 2}')
        llm.complete([{"role": "user", "content": "x"}], json_mode=True)
        assert "response_format" not in srv.requests[-1]  # remembered


def test_retries_then_success_and_clear_failures(server) -> None:
    server.reply(status=500)
    server.reply(status=429)
    server.reply("fine")
    llm = OpenAICompatLLM(server.base_url, "m", retries=3)
    assert llm.complete([{"role": "user", "content": "x"}]).text == "fine"
    server.reply(body="not json at all")
    with pytest.raises(LLMError):
        llm.complete([{"role": "user", "content": "x"}])
    server.reply("slow", delay=1.0)
    server.reply("slow", delay=1.0)
    with pytest.raises(LLMError) as info:
        OpenAICompatLLM(server.base_url, "m", timeout=0.2, retries=2).complete([{"role": "user", "content": "x"}])
    assert "attempts" in info.value.message and info.value.hint
    with pytest.raises(LLMError):
        OpenAICompatLLM("http://127.0.0.1:9/v1", "m", retries=1).complete([{"role": "user", "content": "x"}])
    with pytest.raises(LLMError):
        from memdream.llm.client import Completion

        Completion("no json here", 0, 0, "m", 0.0).json()


def test_no_model_configured_means_none(tmp_path) -> None:
    cfg = load_config(tmp_path / "v", env={})
    assert load_llm(cfg) is None
    cfg = load_config(tmp_path / "v", env={"MEMDREAM_LLM_BASE_URL": "http://127.0.0.1:1/v1", "MEMDREAM_LLM_MODEL": "m", "MEMDREAM_LLM_API_KEY": "k"})
    llm = load_llm(cfg)
    assert llm is not None and llm.model == "m" and llm.api_key == "k"


def _mem(vault, clock, server) -> Memory:
    m = Memory(load_config(vault, "me", "main", env={}), clock, llm=OpenAICompatLLM(server.base_url, "fake", retries=1) if server else None)
    m.vault.init()
    return m


def test_ambiguous_note_is_settled_by_the_model(vault, clock, server) -> None:
    m = _mem(vault, clock, server)
    m.note("lessons", "migrations", "Always run database migrations inside a transaction.")
    server.reply(json.dumps({"decision": "NOOP", "reason": "same advice in other words"}))
    out = m.note("lessons", "migrations", "Run each migration in its own transaction block")
    assert out.kind == "NOOP" and "settled by the model" in out.decision.why
    assert "existing" in server.requests[-1]["messages"][1]["content"]
    # A nonsense answer keeps the mechanical decision.
    server.reply(json.dumps({"decision": "DELETE EVERYTHING"}))
    out = m.note("lessons", "migrations", "Run each migration in its own transaction block")
    assert out.kind == "UPDATE" and "mechanical decision kept" in m.knowledge.last_status
    m.close()


def test_unambiguous_notes_never_call_the_model(vault, clock, server) -> None:
    m = _mem(vault, clock, server)
    m.note("lessons", "deploy", "部署时先备份数据库，再升级。")
    m.note("lessons", "deploy", "部署时先备份数据库，再升级。")
    assert server.requests == []
    m.close()


def test_reflection_with_a_model_answers_five_questions_and_routes_insights(vault, clock, server) -> None:
    m = _mem(vault, clock, server)
    m.log("完成数据库迁移", "PostgreSQL 14 -> 16，耗时 45 分钟")
    server.reply(json.dumps({
        "planned_vs_actual": ["计划迁移数据库，按时完成"],
        "went_right": ["迁移前做了完整备份"],
        "went_wrong": [],
        "learned_about_user": ["用户希望每一步都有时间记录"],
        "change_tomorrow": ["提前通知下游团队"],
        "insights": [
            {"category": "lessons", "topic": "数据库迁移", "text": "迁移前先做完整备份，并记录每一步耗时"},
            {"category": "people", "topic": "user profile", "text": "my password is hunter2"},
            {"category": "nonsense", "topic": "x", "text": "y"},
        ],
    }, ensure_ascii=False))  # fmt: skip
    path = m.reflect()
    text = path.read_text(encoding="utf-8")
    for title in ("Planned vs actual", "What went right", "What went wrong", "What I learned about the user", "What to change tomorrow"):
        assert f"## {title}" in text
    assert "迁移前做了完整备份" in text and "ADD" in text and "## Rejected" in text
    note = parse_note((m.vault.memory_dir(m.scope) / "lessons" / "数据库迁移.md").read_text(encoding="utf-8"))
    assert [p.text for p in paragraphs(note.body)] == ["迁移前先做完整备份，并记录每一步耗时"]
    assert not (m.vault.memory_dir(m.scope) / "people").exists()  # the secret was refused
    assert "credentials" in text
    m.close()


def test_reflection_falls_back_when_the_model_fails(vault, clock, server) -> None:
    m = _mem(vault, clock, server)
    m.log("上线", "顺利")
    server.reply(body="{broken")
    path = m.reflect()
    assert "mechanical summary" in path.read_text(encoding="utf-8") and "上线" in path.read_text(encoding="utf-8")
    assert "mechanical summary instead" in m.knowledge.last_status
    m.close()


def test_memory_without_llm_configuration_has_none(mem) -> None:
    assert mem.llm is None
    with pytest.raises(MemdreamError):
        OpenAICompatLLM("", "")
