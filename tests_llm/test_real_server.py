"""Every model phase, `note add`, `reflect`, `memdream undo` and a scripted `memdream chat`
against a real llama.cpp server (see conftest.py), through the production client.

A 135M model gives no useful answers; that is not what is tested. What is: the protocol
(no request rejected by the server, tool calls round-tripped), the cage (nothing invalid
applied), the truth of every status and diary line, and that undo restores the vault."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.chat.session import MANAGE_MEMORY, ChatSession
from memdream.cli.main import cli
from memdream.clock import FrozenClock, SystemClock
from memdream.config import load_config
from memdream.dream import ledger
from memdream.dream.validate import ungrounded
from memdream.llm.client import load_llm
from memdream.memory import Memory
from memdream.model.secrets import find_secret
from memdream.store.format import parse_document

MODEL = os.environ.get("MEMDREAM_TEST_LLM_MODEL") or "smollm2-135m"  # llama-cpp-python serves its one model under any name
FORCED = {"type": "function", "function": {"name": "manage_memory"}}
OLD = [  # (text, type, subject): written 10 days ago, so deep may merge them
    ("Lin drinks coffee every morning", "fact", None),
    ("Lin takes coffee with oat milk every morning", "fact", None),
    ("Lin's cat is named Mochi", "fact", None),
    ("Lin's cat Mochi is three years old", "fact", None),
    ("我每天早上喝咖啡", "fact", None),
    ("我每天早上喝咖啡，加燕麦奶", "fact", None),
    ("I prefer dark themes in every editor", "preference", None),
    ("I write Go at work", "preference", None),
    ("I like working late at night", "preference", None),
    ("回复我时请用中文", "instruction", None),
    ("I live in Berlin", "fact", "location"),
    ("I live in Lisbon", "fact", "location"),  # supersedes Berlin: the light phase archives it
]
CONVERSATION = [
    {"role": "user", "content": "I decided to visit Chengdu in July with my sister Mei."},
    {"role": "assistant", "content": "That sounds great. Do you need help planning?"},
    {"role": "user", "content": "Yes. I always book aisle seats, and I am allergic to peanuts."},
    {"role": "user", "content": "我们打算七月去成都看熊猫。"},
]
CHAT = [
    "Hello! My name is Lin.",
    "Please remember that I am allergic to peanuts.",
    "I moved to Lisbon last year.",
    "我喜欢喝绿茶。",
    "What do you remember about me?",
    "/recall peanuts",
    "My sister Mei lives in Chengdu.",
    "Remember: I prefer aisle seats on flights.",
    "请记住我每周三去游泳。",
    "Thanks, that is all for today.",
]


def env(proxy) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {"MEMDREAM_LLM_BASE_URL": proxy.base_url, "MEMDREAM_LLM_MODEL": MODEL}


def open_mem(vault: Path, proxy, clock=None) -> Memory:  # type: ignore[no-untyped-def]
    cfg = load_config(vault, "me", "main", env=env(proxy))
    m = Memory(cfg, clock or SystemClock(), llm=load_llm(cfg))  # the production client, as configured
    m.vault.init()
    return m


def entries(vault: Path) -> dict[str, set[tuple]]:
    """Every memory line of the vault by file: (id, text, end of validity, pinned)."""
    out: dict[str, set[tuple]] = {}
    for f in sorted(vault.rglob("*.md")):
        rel = str(f.relative_to(vault))
        if "/dreams/" in rel or "/sessions/" in rel:
            continue
        got = {(e.id, e.text, str(e.valid_to), e.pinned) for e in parse_document(f.read_text(encoding="utf-8")).entries()}
        if got:
            out[rel] = got
    return out


def protocol_ok(proxy, since: int = 0) -> None:  # type: ignore[no-untyped-def]
    """No request rejected, except the one probe for `json_schema` the client makes per process
    (llama-cpp-python 0.3.36 answers it with HTTP 500 and a validation error naming
    response_format, and takes its schema in `json_object`), which the client then remembers."""

    def probe(x) -> bool:  # type: ignore[no-untyped-def]
        return x.status in (400, 422, 500) and (x.body.get("response_format") or {}).get("type") == "json_schema" and "response_format" in x.answer

    bad = [x for x in proxy.exchanges[since:] if x.status != 200]
    others = [x for x in bad if not probe(x)]
    assert not others, [(x.status, x.answer[:300]) for x in others]
    assert len([x for x in proxy.exchanges if probe(x)]) <= 1  # remembered for the process


@pytest.fixture(scope="module")
def vault(tmp_path_factory, llm_server) -> Path:  # type: ignore[no-untyped-def]
    v = tmp_path_factory.mktemp("real") / "vault"
    v.mkdir()
    (v / "memdream.toml").write_text("[llm]\ntimeout = 120\n", encoding="utf-8")  # a busy 2-core machine
    then = FrozenClock(datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=10))
    m = open_mem(v, llm_server, then)
    for text, type_, subject in OLD:
        m.remember(text, type=type_, subject=subject)
        then.advance(minutes=5)
    m.close()
    return v


def model_seconds_true(reported: float, wall: float, exchanges) -> None:  # type: ignore[no-untyped-def]
    """The model time a report gives is true: at least what the server spent on the phase's
    requests (every attempt), at most the phase's wall-clock time."""
    spent = sum(x.seconds for x in exchanges)
    assert spent - 0.2 <= reported <= wall + 0.2, (reported, spent, wall)


def test_flush(vault, llm_server) -> None:
    m = open_mem(vault, llm_server)
    n = len(llm_server.exchanges)
    t0 = time.monotonic()
    rep = m.flush(CONVERSATION)
    wall = time.monotonic() - t0
    print(f"\n[test-llm] flush: {rep.status}, {rep.message} ({rep.seconds:.1f} s of {wall:.1f} s)")
    for r in rep.rejected:
        print(f"[test-llm]   rejected {r['what']}: {r['why']}")
    protocol_ok(llm_server, n)
    assert len(llm_server.exchanges) > n
    model_seconds_true(rep.seconds, wall, llm_server.exchanges[n:])
    flushed = ledger.read_set(m, "flushed")
    daily = m.vault.memory_dir(m.scope) / f"{m.clock.now().date().isoformat()}.md"
    if rep.status == "flushed":
        assert rep.events > 0 and set(rep.flushed) <= flushed
        text = daily.read_text(encoding="utf-8")
        source = "\n".join((vault / rel).read_text(encoding="utf-8") for rel in rep.flushed)  # what the model was shown
        for line in text.split("Conversation summary", 1)[1].splitlines():
            if line.startswith("- "):
                assert not find_secret(line) and not [w for w in ungrounded(line[2:], [source]) if w], line  # the cage held
    else:
        assert rep.status in ("nothing kept", "skipped") and rep.events == 0 and not (set(rep.empty) & flushed)
        assert not daily.exists() or "Conversation summary" not in daily.read_text(encoding="utf-8")
        if rep.status == "nothing kept":
            assert rep.empty and "flush" in rep.message
        else:
            assert rep.rejected and all(r["why"] for r in rep.rejected)
    m.log("Trip planning", "Lin decided to visit Chengdu in July with her sister Mei.")  # daily memory for distill
    m.close()


def test_every_dream_phase_and_undo(vault, llm_server) -> None:
    m = open_mem(vault, llm_server)
    m.adopt()  # what a dream does first (ids for hand-written lines): not part of what undo reverses
    m.flush_hits()
    before = entries(vault)
    sources = [t for t, _, _ in OLD] + [x["content"] for x in CONVERSATION] + ["Lin decided to visit Chengdu in July with her sister Mei."]
    sources += [p.read_text(encoding="utf-8") for p in vault.rglob("*.md")]  # everything the phases may read
    n = len(llm_server.exchanges)
    t0 = time.monotonic()
    walls: dict[str, float] = {}
    spans: dict[str, list] = {}
    last: list = [time.monotonic(), "", n]

    def progress(phase: str) -> None:
        now = time.monotonic()
        if last[1]:
            walls[last[1]] = now - last[0]
            spans[last[1]] = llm_server.exchanges[last[2] : len(llm_server.exchanges)]
        last[:] = [now, phase, len(llm_server.exchanges)]

    report = m.dream(days=3, progress=progress)
    progress("")
    wall = time.monotonic() - t0
    for p in report.phases:
        print(f"[test-llm] {p.phase}: {p.status}, {p.message} [{p.seconds:.1f} s of {walls[p.phase]:.1f} s, {p.tokens[0]}+{p.tokens[1]} tokens]")
        for r in p.rejected:
            print(f"[test-llm]   rejected {r['what']}: {r['why']}")
    print(f"[test-llm] dream: {wall:.1f} s, {report.changes} changes, diary {report.diary}")
    protocol_ok(llm_server, n)
    asked = [x for x in llm_server.exchanges[n:] if x.status == 200]
    assert asked, "no model phase asked the model"
    assert all((x.body.get("response_format") or {}).get("schema") for x in asked)  # every phase's answer constrained by its schema
    assert {p.phase for p in report.phases} == {"light", "deep", "distill", "replay", "profile"}
    diary = (vault / report.diary).read_text(encoding="utf-8") if report.diary else ""
    for p in report.phases:
        assert p.status in ("applied", "nothing to do", "skipped", "rolled back"), p
        model_seconds_true(p.seconds, walls[p.phase], spans[p.phase])
        if p.status == "applied":
            assert p.changes > 0
        else:
            assert p.changes == 0
        if p.status == "skipped":
            assert p.message
        if p.seconds:  # the model was asked: the diary says what came of it, with the real time
            assert f"{p.seconds:.1f} s" in diary, (p.phase, diary)
        if p.status == "skipped" and p.seconds:
            assert p.message.split(" (")[0] in diary
        if p.status == "nothing to do" and p.seconds and not p.rejected:
            assert "The model proposed nothing to change." in diary
        for r in p.rejected:
            assert r["why"] and r["why"] in diary
    # The cage: every line a model phase added is grounded in what it read, and no secret.
    rec = next(r for r in reversed(ledger.records(m)) if r.get("run") == report.run)
    after = entries(vault)
    added_ids = {i for ch in rec["changes"].values() for i in ch["added"]}
    added = [e for rows in after.values() for e in rows if e[0] in added_ids]
    for eid, text, _, _ in added:
        assert not find_secret(text) and len(ungrounded(text, sources)) <= 2, (eid, text)  # profile may name what Lin is
    assert report.changes > 0  # at least the light phase's archive of Berlin
    # memdream undo restores the vault.
    m.close()
    res = CliRunner().invoke(cli, ["undo", "--yes", "--vault", str(vault), "--user", "me", "--agent", "main"], env=env(llm_server))
    print(f"[test-llm] undo: {res.output.strip()}")
    assert res.exit_code == 0, res.output
    assert entries(vault) == before


def test_note_add_and_reflect(vault, llm_server) -> None:
    m = open_mem(vault, llm_server)
    first = m.note("lessons", "migrations", "Always run database migrations inside a transaction.")
    assert first.model == "not asked: a new file"
    n = len(llm_server.exchanges)
    out = m.note("lessons", "migrations", "Run each migration in its own transaction block")
    print(f"[test-llm] note add: {out.kind}, model: {out.model}")
    protocol_ok(llm_server, n)
    assert out.model.startswith("asked") and len(llm_server.exchanges) > n
    if out.model.startswith("asked; the model decided"):
        decided = out.model.rsplit(" ", 1)[1]
        assert out.kind == decided or out.kind == "ADD"
    else:
        assert "mechanical decision" in out.model and "settled by the model" not in out.decision.why
    n = len(llm_server.exchanges)
    path = m.reflect()
    status = m.knowledge.last_status
    text = path.read_text(encoding="utf-8")
    print(f"[test-llm] reflect: {status}")
    protocol_ok(llm_server, n)
    assert len(llm_server.exchanges) > n and "no model configured" not in text
    if status.startswith("reflected with"):
        assert f"generated_by: {m.llm.model_id}" in text  # type: ignore[union-attr]
    else:
        assert "mechanical summary instead" in status and "mechanical summary; the model" in text
        assert ("answered" in status) == ("answered" in text)
    m.close()


def test_scripted_chat(vault, llm_server) -> None:
    n = len(llm_server.exchanges)
    script = "\n".join(CHAT) + "\n/exit\n"
    t0 = time.monotonic()
    res = CliRunner().invoke(cli, ["chat", "--vault", str(vault), "--user", "me", "--agent", "main"], input=script, env=env(llm_server))
    wall = time.monotonic() - t0
    print(f"[test-llm] chat, {len(CHAT)} turns in {wall:.1f} s:\n" + res.stdout + res.stderr)
    assert res.exit_code == 0, res.output + res.stderr
    assert "error:" not in res.output, res.stderr
    turns = llm_server.exchanges[n:]
    protocol_ok(llm_server, n)
    assert turns and all(x.body.get("tools") and x.body.get("tool_choice") == "auto" for x in turns)  # no dream request among them
    assert all(isinstance(msg.get("content"), str) for x in turns for msg in x.body["messages"])
    calls = [c for x in turns for c in (json.loads(x.answer)["choices"][0]["message"].get("tool_calls") or [])]
    assert res.stdout.count("[memory] ") == len(calls)  # every tool call that arrived: applied or refused, and said
    print(f"[test-llm] chat: {len(turns)} requests, {len(calls)} tool calls arrived unforced")


def test_forced_tool_call_round_trip(vault, llm_server) -> None:
    """SmolLM2 under llama-cpp-python's default chat handler does not call tools on its own:
    a tool_choice naming the function forces one, and the round trip is tested."""
    m = open_mem(vault, llm_server)
    chat = ChatSession(m, m.llm)  # type: ignore[arg-type]
    n = len(llm_server.exchanges)
    turn = chat.send("Please remember that I am allergic to peanuts.", tool_choice=FORCED)
    print(f"[test-llm] forced tool call: actions {turn.actions}, reply {turn.reply[:120]!r}, error {turn.error!r}")
    protocol_ok(llm_server, n)
    assert not turn.error
    first, *rest = llm_server.exchanges[n:]
    assert first.body["tool_choice"] == FORCED and first.body["tools"] == [MANAGE_MEMORY]
    calls = json.loads(first.answer)["choices"][0]["message"].get("tool_calls") or []
    assert calls and calls[0]["function"]["name"] == "manage_memory"
    assert len(turn.actions) >= len(calls) and rest  # applied or refused, then the model was told
    results = [json.loads(msg["content"]) for msg in rest[0].body["messages"] if msg["role"] == "tool"]
    assert len(results) == len(calls) and all("ok" in r for r in results)
    assert all(r.get("error") for r in results if not r["ok"])  # a refusal gives the model its reason
    for r in results:
        if r["ok"] and r.get("id"):
            assert m.get(r["id"]) is not None  # applied through the write path
    assert rest[0].body["tool_choice"] == "auto"
    m.close()
