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


def test_clear_failures(server) -> None:
    server.reply(body="not json at all")
    llm = OpenAICompatLLM(server.base_url, "m", retries=3)
    with pytest.raises(LLMError) as info:
        llm.complete([{"role": "user", "content": "x"}])
    assert "unexpected answer" in info.value.message
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
    assert out.model.startswith("asked, but the model's answer was ignored") and "DELETE EVERYTHING" in out.model
    m.close()


def test_note_add_says_whether_the_model_decided(vault, clock, server) -> None:
    m = _mem(vault, clock, server)
    first = m.note("lessons", "迁移", "Always run database migrations inside a transaction.")
    assert first.model == "not asked: a new file" and first.to_json()["model"] == first.model
    server.reply(json.dumps({"decision": "UPDATE", "reason": "refines it"}))
    out = m.note("lessons", "迁移", "Run each migration in its own transaction block")
    assert out.kind == "UPDATE" and out.model == "asked; the model decided UPDATE" and "settled by the model" in out.decision.why
    assert server.requests[-1]["response_format"]["type"] == "json_schema"
    clear = m.note("lessons", "迁移", "部署前先通知下游团队")
    assert clear.model == "not asked: the comparison was clear" and len(server.requests) == 1
    server.reply('{"decision": "NOOP", "reason": "' + "x" * 2000 + '"}')  # cut off at max_tokens
    m.note("lessons", "db", "Always run database migrations inside a transaction.")
    cut = m.note("lessons", "db", "Run each migration in its own transaction block")
    assert "ignored" in cut.model and "ran out of tokens" in cut.model
    m.close()
    none = Memory(load_config(vault, "me", "main", env={}), clock)
    assert none.note("lessons", "迁移", "Run every migration inside its own transaction").model == "not asked: no model is configured"
    none.close()


def test_cli_note_add_prints_what_the_model_did(tmp_path, server) -> None:
    from click.testing import CliRunner

    from memdream.cli.main import cli

    v = str(tmp_path / "v")
    env = {"MEMDREAM_LLM_BASE_URL": server.base_url, "MEMDREAM_LLM_MODEL": "fake"}
    CliRunner().invoke(cli, ["note", "add", "lessons", "migrations", "Always run database migrations inside a transaction.", "--vault", v], env=env)
    server.reply(status=500, body='{"error": "boom"}')
    res = CliRunner().invoke(cli, ["note", "add", "lessons", "migrations", "Run each migration in its own transaction block", "--vault", v], env=env)
    assert res.exit_code == 0 and "model: asked, but the model could not be used" in res.output and "boom" in res.output


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
    text = path.read_text(encoding="utf-8")
    assert "mechanical summary" in text and "上线" in text and "no model configured" not in text
    assert "could not be used" in text and "mechanical summary instead" in m.knowledge.last_status
    # The model answered, but not JSON: said as such, not as "unavailable".
    server.reply("Today went well, I think.")
    text = m.reflect().read_text(encoding="utf-8")
    assert "answered, but unusably" in text and "model answered, but its reflection was unusable" in m.knowledge.last_status
    assert "unavailable" not in m.knowledge.last_status
    assert server.requests[-1]["response_format"]["type"] == "json_schema"
    m.close()
    none = Memory(load_config(vault, "me", "main", env={}), clock)
    assert "generated_by: memdream (mechanical summary; no model configured)" in none.reflect().read_text(encoding="utf-8")
    none.close()


def test_memory_without_llm_configuration_has_none(mem) -> None:
    assert mem.llm is None
    with pytest.raises(MemdreamError):
        OpenAICompatLLM("", "")


# -- what a real local server does (issue 16), reproduced by the fake server


def test_tools_go_out_with_tool_choice_auto(server) -> None:
    """A server that takes a missing tool_choice as "none" (llama-cpp-python) still gets to call tools."""
    server.reply(tool_calls=[{"name": "manage_memory", "arguments": {"action": "add", "text": "x"}}])
    llm = OpenAICompatLLM(server.base_url, "m")
    tools = [{"type": "function", "function": {"name": "manage_memory", "parameters": {"type": "object"}}}]
    c = llm.complete([{"role": "user", "content": "remember x"}], tools=tools)
    assert server.requests[-1]["tool_choice"] == "auto" and c.tool_calls and c.tool_calls[0].name == "manage_memory"
    forced = {"type": "function", "function": {"name": "manage_memory"}}
    server.reply(tool_calls=[{"name": "manage_memory", "arguments": {"action": "add", "text": "y"}}])
    llm.complete([{"role": "user", "content": "remember y"}], tools=tools, tool_choice=forced)
    assert server.requests[-1]["tool_choice"] == forced


def test_a_500_is_not_retried_and_shows_its_body(server) -> None:
    llm = OpenAICompatLLM(server.base_url, "m", retries=3)
    with pytest.raises(LLMError) as info:
        llm.complete([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}])
    assert len(server.requests) == 1  # not retried
    assert "HTTP 500" in info.value.message and "Input should be a valid string" in info.value.message
    assert "running" not in info.value.hint  # the server is running: it said what is wrong
    server.reply(status=500, body='{"error": "model exploded"}')
    with pytest.raises(LLMError) as info:
        llm.complete([{"role": "user", "content": "x"}])
    assert "model exploded" in info.value.message and len(server.requests) == 2


def test_only_429_503_and_refused_connections_are_retried(server) -> None:
    server.reply(status=503)
    server.reply(status=429)
    server.reply("fine")
    llm = OpenAICompatLLM(server.base_url, "m", retries=3)
    c = llm.complete([{"role": "user", "content": "x"}])
    assert c.text == "fine" and len(server.requests) == 3
    # every attempt is timed, the backoffs too (0.5 s + 1 s)
    assert c.seconds >= 1.5
    with pytest.raises(LLMError) as info:
        OpenAICompatLLM("http://127.0.0.1:9/v1", "m", retries=2).complete([{"role": "user", "content": "x"}])
    assert "after 2 attempts" in info.value.message and "running" in info.value.hint and info.value.seconds >= 0.5


def test_a_read_timeout_is_not_asked_again() -> None:
    """On a single-slot server a second copy would wait behind the first, which is still generating."""
    with FakeLLMServer(slots=1) as srv:
        srv.reply("late", delay=1.5)
        srv.reply("second copy")
        llm = OpenAICompatLLM(srv.base_url, "m", timeout=0.3, retries=3)
        with pytest.raises(LLMError) as info:
            llm.complete([{"role": "user", "content": "x"}], max_tokens=1)
        assert "not asked again" in info.value.message and "timeout" in info.value.hint
        assert info.value.seconds >= 0.3
        assert len(srv.requests) == 1 and len(srv.queue) == 1
    with FakeLLMServer(slots=1) as srv:  # the next request waits behind the abandoned one: it gets longer
        srv.reply("late", delay=2.5)
        srv.reply("next")
        llm = OpenAICompatLLM(srv.base_url, "m", timeout=1.0)
        with pytest.raises(LLMError):
            llm.complete([{"role": "user", "content": "x"}])
        assert llm.complete([{"role": "user", "content": "y"}]).text == "next"


def test_the_read_timeout_grows_with_max_tokens() -> None:
    llm = OpenAICompatLLM("http://127.0.0.1:9/v1", "m", timeout=60)
    assert llm.read_timeout(1500) > llm.read_timeout(800) > llm.read_timeout(200) == 60
    assert llm.read_timeout(1500) >= 5 + 1500 / 22  # 1,500 tokens at 22 tokens/s fit, prompt included


def test_a_truncated_answer_is_reported_as_truncation(server) -> None:
    server.reply('{"operations": [{"op": "merge", "ids": [1, 2], "text": "' + "long " * 200 + '"}]}')
    c = OpenAICompatLLM(server.base_url, "m").complete([{"role": "user", "content": "x"}], json_mode=True, max_tokens=50)
    assert c.finish_reason == "length" and c.truncated
    with pytest.raises(LLMError) as info:
        c.json()
    assert "ran out of tokens" in info.value.message and "max_tokens=50" in info.value.message and info.value.answered
    server.reply('{"ok": true} and some chatter after it')
    assert OpenAICompatLLM(server.base_url, "m").complete([{"role": "user", "content": "x"}]).json() == {"ok": True}
    server.reply('{"facts": [{"text": "Lin likes\ttea\n"}]}')  # raw control characters, as SmolLM2 wrote them
    assert OpenAICompatLLM(server.base_url, "m").complete([{"role": "user", "content": "x"}]).json() == {"facts": [{"text": "Lin likes\ttea\n"}]}


SCHEMA = {"type": "object", "properties": {"ok": {"type": "integer"}}, "required": ["ok"]}


def test_json_schema_first_then_json_object_then_text_remembered() -> None:
    with FakeLLMServer() as srv:
        srv.reply('{"ok": 1}')
        llm = OpenAICompatLLM(srv.base_url, "m")
        assert llm.complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA).json() == {"ok": 1}
        fmt = srv.requests[-1]["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA
        srv.reply('{"ok": 2}')  # no schema given: json_object
        llm.complete([{"role": "user", "content": "x"}], json_mode=True)
        assert srv.requests[-1]["response_format"] == {"type": "json_object"}
    with FakeLLMServer(reject_formats=("json_schema",)) as srv:  # llama-cpp-python: its json_object takes a schema
        srv.reply('{"ok": 3}')
        llm = OpenAICompatLLM(srv.base_url, "m")
        assert llm.complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA).json() == {"ok": 3}
        assert [r["response_format"]["type"] for r in srv.requests] == ["json_schema", "json_object"]
        assert srv.requests[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
        srv.reply('{"ok": 4}')
        OpenAICompatLLM(srv.base_url, "m").complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA)  # another client, same process
        assert srv.requests[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA} and len(srv.requests) == 3
    with FakeLLMServer(reject_formats=("json_schema", "json_object+schema")) as srv:
        srv.reply('{"ok": 7}')
        llm = OpenAICompatLLM(srv.base_url, "m")
        assert llm.complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA).json() == {"ok": 7}
        assert srv.requests[-1]["response_format"] == {"type": "json_object"} and len(srv.requests) == 3
    with FakeLLMServer(reject_formats=("json_schema", "json_object+schema", "json_object")) as srv:
        srv.reply('Sure! Here it is: {"ok": 5} Hope that helps.')
        llm = OpenAICompatLLM(srv.base_url, "m")
        assert llm.complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA).json() == {"ok": 5}
        assert "response_format" not in srv.requests[-1] and llm.json_format == "text"
        srv.reply('{"ok": 6}')
        llm.complete([{"role": "user", "content": "x"}], json_mode=True, schema=SCHEMA)
        assert "response_format" not in srv.requests[-1] and len(srv.requests) == 5
