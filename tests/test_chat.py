"""`memdream chat` against a real OpenAI-compatible server on loopback with scripted replies,
including tool calls (one of which tries to store a secret)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.chat.session import ChatSession
from memdream.cli.main import cli
from memdream.config import load_config
from memdream.llm.client import OpenAICompatLLM
from memdream.llm.fake import FakeLLMServer, Scripted
from memdream.memory import Memory


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


def open_mem(vault: Path, clock, server) -> Memory:  # type: ignore[no-untyped-def]
    m = Memory(load_config(vault, "me", "main", env={}), clock, llm=OpenAICompatLLM(server.base_url, "fake", retries=1))
    m.vault.init()
    return m


def call(action: str, **args: str) -> dict:
    return {"name": "manage_memory", "arguments": {"action": action, **args}}


def test_a_tool_call_stores_a_memory_that_the_next_session_sees(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply(tool_calls=[call("add", text="以后都用中文回我", type="instruction")])
    server.reply("好的，以后都用中文回复你。")
    turn = chat.send("以后都用中文回我")
    assert turn.reply == "好的，以后都用中文回复你。" and turn.actions[0].startswith("remembered")
    stored = [e for e in mem.list() if e.text == "以后都用中文回我"]
    assert stored and stored[0].source == "agent" and stored[0].type == "instruction"
    # An instruction from the model's tool call waits for the user's confirmation (issue 17).
    assert stored[0].pending == "unconfirmed" and stored[0].layer == "recall"
    second = server.requests[1]
    assert second["tools"][0]["function"]["name"] == "manage_memory"
    assert second["messages"][-1]["role"] == "tool" and json.loads(second["messages"][-1]["content"])["ok"] is True
    # The conversation is in the raw layer, searchable.
    assert any("以后都用中文回我" in s.text for s in mem.search_raw("中文回我"))

    unconfirmed = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply("你好！")
    unconfirmed.send("hello")
    assert "以后都用中文回我" not in server.requests[-1]["messages"][0]["content"]
    mem.resolve(next(c.id for c in mem.conflicts() if c.kind == "pending"), "b")  # the user confirms it

    again = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply("你好！")
    again.send("hello")
    system = server.requests[-1]["messages"][0]["content"]
    assert "以后都用中文回我" in system and "not instructions from anyone else" in system


def test_a_tool_call_that_tries_to_store_a_secret_is_refused(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply(tool_calls=[call("add", text="my AWS key is AKIAIOSFODNN7EXAMPLE"), {"name": "manage_memory", "arguments": "{not json"}])
    server.reply("I can't store credentials, but I'll remember that you use AWS.")
    turn = chat.send("remember my AWS key AKIAIOSFODNN7EXAMPLE")
    assert turn.actions[0].startswith("refused") and "malformed" in turn.actions[1]
    results = [json.loads(m["content"]) for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert results[0]["ok"] is False and "credentials never enter memory" in results[0]["error"]
    assert mem.list() == []
    files = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "v").rglob("*.md"))
    assert "AKIAIOSFODNN7EXAMPLE" not in files  # not in memory, and not in the stored conversation either


def test_update_delete_and_pin_go_through_the_write_path(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    tea = mem.remember("I like green tea")
    gym = mem.remember("My gym is on Baker Street")
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply(tool_calls=[call("update", id=tea.id, text="I like oolong tea"), call("delete", id=gym.id), call("add", text="I am allergic to peanuts")])
    server.reply(tool_calls=[call("pin", id="nosuch")])
    server.reply("Done.")
    turn = chat.send("I switched to oolong, cancelled the gym, and I'm allergic to peanuts")
    assert len(turn.actions) == 4 and turn.actions[-1].startswith("refused")
    texts = {e.text for e in mem.list()}
    assert texts == {"I like oolong tea", "I am allergic to peanuts"}
    assert [e.text for e in mem.history(tea.id)] == ["I like green tea", "I like oolong tea"]
    assert mem.get(gym.id).layer == "archive"


def test_slash_commands(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    mem.remember("我喜欢深色主题", type="preference")
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    out = chat.send("/remember 我对花生过敏")
    assert out.command and out.reply.startswith("added")
    eid = out.reply.split()[1]
    assert "我对花生过敏" in chat.send("/recall 过敏").reply
    assert chat.send("/now 在写 memdream 的聊天功能").reply.startswith("在写")
    shown = chat.send("/memory show").reply
    assert "我喜欢深色主题" in shown and "过敏" not in shown  # the resident snapshot, frozen at the session start
    assert chat.send(f"/forget {eid}").reply.startswith("forgot")
    assert "error" in chat.send("/forget nosuch").reply
    dream = chat.send("/memory dream 2").reply
    assert "light:" in dream
    assert "/memory dream" in chat.send("/help").reply
    assert all("tools" not in r for r in server.requests)  # commands never send a chat turn to the model


def test_a_long_chat_is_trimmed_and_the_trimmed_turns_reach_the_daily_memory(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)

    def answer(req: dict) -> str | Scripted:
        if req["messages"][0]["content"].startswith("Summarize this conversation"):
            return json.dumps({"events": ["Lin is planning a trip to Chengdu"]})
        return "Noted: " + req["messages"][-1]["content"][:40]

    server.default = answer
    chat = ChatSession(mem, mem.llm, budget=500)  # type: ignore[arg-type]
    trimmed = 0
    for i in range(12):
        clock.advance(minutes=1)
        trimmed += chat.send(f"Message {i}: Lin is planning a trip to Chengdu, day {i} of the plan, with many details " * 3).trimmed
    assert trimmed > 0
    daily = (mem.vault.memory_dir(mem.scope) / "2026-06-01.md").read_text(encoding="utf-8")
    assert "Conversation summary" in daily and "Lin is planning a trip to Chengdu" in daily
    sessions = sorted((mem.vault.memory_dir(mem.scope) / "sessions" / "2026-06-01").glob("chat-*.md"))
    assert len(sessions) >= 2  # a new segment after each trim; nothing is lost from the raw layer
    assert sum(p.read_text(encoding="utf-8").count("### user") for p in sessions) == 12


def test_cli_chat_with_piped_input_and_without_a_model(tmp_path: Path, server) -> None:
    runner = CliRunner()
    v = str(tmp_path / "v")
    none = runner.invoke(cli, ["chat", "--vault", v, "--no-scheduler"], input="hi\n", env={"MEMDREAM_LLM_BASE_URL": "", "MEMDREAM_LLM_MODEL": ""})
    assert none.exit_code == 1 and "needs a model" in none.output and "MEMDREAM_LLM_BASE_URL" in none.output
    server.reply(tool_calls=[call("add", text="以后都用中文回我")])
    server.reply("好的")
    env = {"MEMDREAM_LLM_BASE_URL": server.base_url, "MEMDREAM_LLM_MODEL": "fake"}
    res = runner.invoke(cli, ["chat", "--vault", v, "--no-scheduler"], input="以后都用中文回我\n/recall 中文\n/exit\n", env=env)
    assert res.exit_code == 0, res.output
    assert "[memory] remembered" in res.output and "assistant> 好的" in res.output and "以后都用中文回我" in res.output


def test_the_message_just_typed_is_not_sent_back_as_a_past_conversation(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    past = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply("记下了。")
    past.send("上次体检说我对花生过敏，peanut allergy")
    clock.advance(hours=2)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply("最好不要。")
    chat.send("周末想吃花生酱面包，peanut butter 可以吗")
    system = server.requests[-1]["messages"][0]["content"]
    snippets = system.split("## From past conversations", 1)[1] if "## From past conversations" in system else ""
    assert "我对花生过敏" in snippets, system  # the earlier session is a past conversation ...
    assert "花生酱面包" not in snippets, system  # ... the message being answered is not
    server.reply("那就换一种。")
    chat.send("那花生牛奶呢，peanut milk")
    system = server.requests[-1]["messages"][0]["content"]
    snippets = system.split("## From past conversations", 1)[1]
    assert "花生牛奶" not in snippets and "花生酱面包" not in snippets, system  # this session's turns are in the context already
    assert "我对花生过敏" in snippets


def test_tool_calls_reach_a_server_that_needs_tool_choice_and_content_is_never_null(tmp_path: Path, clock, server) -> None:
    """llama-cpp-python takes a missing tool_choice as "none" and rejects `"content": null`
    with HTTP 500 (the fake server does both by default)."""
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply(tool_calls=[call("add", text="I live in Lisbon", subject="location")])
    server.reply("Noted.")
    turn = chat.send("I live in Lisbon")
    assert turn.actions and turn.actions[0].startswith("remembered") and not turn.error
    assert server.requests[0]["tool_choice"] == "auto" and server.errors == []
    sent = server.requests[1]["messages"]
    assert all(isinstance(m["content"], str) for m in sent)
    assert any(m["role"] == "assistant" and m.get("tool_calls") for m in sent)
    assert [e.text for e in mem.list()] == ["I live in Lisbon"]


def test_a_refused_request_leaves_the_context_and_later_turns_work(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply(status=500, body='{"error": {"message": "context window exceeded"}}')
    turn = chat.send("你好")
    assert turn.error and "context window exceeded" in turn.error and turn.reply == ""
    assert len(server.requests) == 1  # a 500 is not retried
    server.reply("你好！")
    turn = chat.send("再说一次")
    assert turn.reply == "你好！" and not turn.error
    assert [m["content"] for m in server.requests[-1]["messages"][1:]] == ["再说一次"]  # the failed turn left the context


def test_a_forced_tool_choice_applies_to_the_first_round_only(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    forced = {"type": "function", "function": {"name": "manage_memory"}}
    server.reply(tool_calls=[call("add", text="I prefer dark themes", type="preference")])
    server.reply("OK")
    chat.send("I prefer dark themes", tool_choice=forced)
    assert server.requests[0]["tool_choice"] == forced and server.requests[1]["tool_choice"] == "auto"


def test_a_cut_off_reply_says_so(tmp_path: Path, clock, server) -> None:
    mem = open_mem(tmp_path / "v", clock, server)
    chat = ChatSession(mem, mem.llm)  # type: ignore[arg-type]
    server.reply("word " * 2000)
    turn = chat.send("tell me a long story")
    assert turn.reply.endswith("(cut off: the model ran out of tokens)")
    assert server.requests[0]["max_tokens"] > 0
