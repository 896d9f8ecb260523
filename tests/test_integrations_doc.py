"""docs/integrations.md is tested: its MCP client configuration starts a real `memdream serve`
that remembers in one session and recalls in the next, and its [llm] block drives a model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import re
import shlex
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.llm.fake import FakeLLMServer  # noqa: E402
from memdream.memory import Memory  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def stdio_config() -> dict:
    return next(json.loads(b)["mcpServers"]["memdream"] for b in blocks("json") if '"command"' in b)


def test_the_documented_stdio_config_remembers_and_recalls_across_sessions(tmp_path: Path) -> None:
    cfg = stdio_config()
    vault = tmp_path / "vault"
    args = [str(vault) if a == "~/.memdream" else a for a in cfg["args"]]
    assert cfg["command"] == "memdream" and "~/.memdream" in cfg["args"]
    command = str(Path(sys.executable).parent / cfg["command"])  # the console script of this install

    async def session(tool: str, arguments: dict) -> dict:
        async with Client(StdioServerParameters(command=command, args=[*args, "--no-scheduler"])) as c:
            res = await c.call_tool(tool, arguments)
            assert not res.is_error, res.content
            return json.loads(res.content[0].text)

    assert asyncio.run(session("remember", {"text": "以后都用中文回我"}))["action"] == "added"
    agent = args[args.index("--agent") + 1]
    # An agent's instruction waits for the user's confirmation, as the page says (issue 17).
    listed = subprocess.run([str(Path(sys.executable).parent / "memdream"), "conflicts", "--json", "--vault", str(vault), "--agent", agent],
                            capture_output=True, text=True, check=True)  # fmt: skip
    pid = next(c["id"] for c in json.loads(listed.stdout)["conflicts"] if c["kind"] == "pending")
    subprocess.run([str(Path(sys.executable).parent / "memdream"), "resolve", pid, "--keep", "b", "--vault", str(vault), "--agent", agent], check=True, capture_output=True)
    hits = asyncio.run(session("recall", {"query": "回复用什么语言"}))["hits"]
    assert hits[0]["text"] == "以后都用中文回我"
    assert (vault / "scopes" / agent / "me" / "MEMORY.md").is_file()


def test_the_claude_mcp_add_line_runs_the_same_command() -> None:
    line = next(ln for b in blocks("sh") for ln in b.splitlines() if ln.startswith("claude mcp add"))
    after = shlex.split(line.split(" -- ", 1)[1])
    cfg = stdio_config()
    assert after[0] == cfg["command"] and after[1:] == cfg["args"]


def test_the_documented_http_config_names_the_bearer_header() -> None:
    cfg = next(json.loads(b)["mcpServers"]["memdream"] for b in blocks("json") if '"url"' in b)
    assert cfg["url"].startswith("http://127.0.0.1:") and cfg["url"].endswith("/mcp")
    assert cfg["headers"]["Authorization"].startswith("Bearer ")


def test_the_documented_llm_block_drives_the_model_phases(tmp_path: Path, clock) -> None:
    toml = next(b for b in blocks("toml") if "[llm]" in b)
    with FakeLLMServer() as srv:
        vault = tmp_path / "v"
        vault.mkdir()
        (vault / "memdream.toml").write_text(toml.replace("http://127.0.0.1:11434/v1", srv.base_url), encoding="utf-8")
        mem = Memory(load_config(vault, "me", "main", env={}), clock)
        mem.vault.init()
        assert mem.llm is not None and mem.llm.model == "qwen2.5:7b-instruct"  # type: ignore[attr-defined]
        for t in ("I prefer dark themes", "I often work late", "I write Go every day"):
            mem.remember(t, type="preference")
        srv.reply(json.dumps({"profile": "an engineer who often works late, writes Go every day and prefers dark themes"}))
        report = mem.dream(["profile"])
        assert report.phases[0].status == "applied" and srv.requests[0]["model"] == "qwen2.5:7b-instruct"
        mem.close()
