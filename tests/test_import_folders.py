"""Importers from other memory systems' folders, on small realistic fixtures made here:
Claude Code (MEMORY.md index + topic files), OpenClaw and CowAgent workspaces."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.memory import Memory


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


CLAUDE_CODE = {
    "MEMORY.md": """# Memory Index

- [User profile](user_profile.md) — who the user is
- [Feedback](feedback_testing.md) — how they want tests written
- The user's repo uses pnpm, not npm
""",
    "user_profile.md": """---
name: user profile
description: who the user is
type: user
---

The user is a backend engineer who writes Go and some Python.

Prefers short answers without emojis.

Their staging API key is sk-proj-Qx7Lm9Rt4Vb8Nc1Zd5Hf3Jk6Wp2Ys0Ae
""",
    "feedback_testing.md": """---
name: feedback testing
type: feedback
---

Integration tests must hit a real database, not mocks.
**Why:** a mocked test passed while the migration failed in production.
**How to apply:** use the docker-compose database in CI.

- 测试要覆盖中文输入
""",
}

OPENCLAW = {
    "MEMORY.md": "# MEMORY\n\n## 偏好\n- 以后都用中文回我\n- 我对花生过敏\n\n## Tools\n* Lin uses Obsidian for notes\n",
    "NOW.md": "# NOW\n\n- 迁移数据库到 PostgreSQL 16\n",
    "memory/2026-05-30.md": "# 2026-05-30\n\n### 09:12 — 完成了数据库迁移\n\nPostgreSQL 14 -> 16，耗时 45 分钟。\n",
    "memory/lessons/deploy.md": "---\ntitle: deploy\ncategory: lessons\npriority: 🔴\nstatus: active\n---\n\n部署前先备份数据库。\n",
}

COWAGENT = {
    "MEMORY.md": "- 用户是一名产品经理，在杭州工作\n- 用户喜欢简洁的回复\n- 用户喜欢简洁的回复。\n",
    "memory/2026-05-28.md": "# 2026-05-28\n\n- 讨论了新版本的发布计划\n- 决定周五上线\n",
    "memory/dreams/2026-05-28.md": "# 梦境日记 2026-05-28\n\n今天整理了记忆：合并了两条关于回复风格的偏好。\n",
}


def test_claude_code_folder(tmp_path: Path, mem: Memory) -> None:
    src = write(tmp_path / "claude", CLAUDE_CODE)
    report = mem.import_folder("claude-code", src)
    texts = {e.text: e for e in mem.list()}
    assert "The user's repo uses pnpm, not npm" in texts
    assert "The user is a backend engineer who writes Go and some Python." in texts
    assert "Prefers short answers without emojis." in texts
    assert "测试要覆盖中文输入" in texts and all(e.source == "import" for e in texts.values())
    assert not any("User profile" in t or "[Feedback]" in t for t in texts)  # index links are not memories
    assert not any("sk-proj" in t for t in texts) and any("credential" in why for _, why in report.refused)
    assert not any("mocked test passed" in t for t in texts)  # part of a paragraph: kept in the document only
    assert mem.search_raw("docker-compose")  # the topic file is kept and searchable
    again = mem.import_folder("claude-code", src)
    assert again.added == [] and again.known == len(report.added) and again.imported == []


def test_openclaw_workspace(tmp_path: Path, mem: Memory) -> None:
    src = write(tmp_path / "openclaw", OPENCLAW)
    report = mem.import_folder("openclaw", src)
    assert {e.text for e in mem.list()} == {"以后都用中文回我", "我对花生过敏", "Lin uses Obsidian for notes"}
    # Classified an instruction; imported, so it waits for the user's confirmation (issue 17).
    waiting = [c for c in mem.conflicts() if c.kind == "pending"]
    assert [c.b for c in waiting] == ["以后都用中文回我"] and not mem.list("resident")
    daily = mem.knowledge.log_path(__import__("datetime").date(2026, 5, 30)).read_text(encoding="utf-8")
    assert "### 09:12 — 完成了数据库迁移" in daily
    assert mem.search_raw("备份数据库") and report.refused == []
    mem.log("今天的事", "写了导入器")  # a block of our own in a day the import also touched
    again = mem.import_folder("openclaw", src)
    assert again.added == [] and again.imported == [] and len(again.unchanged) == len(report.imported)


def test_cowagent_workspace_and_the_cli_summary(tmp_path: Path) -> None:
    src = write(tmp_path / "cow", COWAGENT)
    v = str(tmp_path / "v")
    runner = CliRunner()
    res = runner.invoke(cli, ["import", "--from", "cowagent", str(src), "--vault", v, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out["memories_added"]) == 2 and out["memories_known"] == 1  # the repeat with a full stop folds
    assert any(p.endswith("memory/2026-05-28.md") for p in out["imported"])
    assert any("import-cowagent" in p and "dreams" in p for p in out["imported"])
    again = runner.invoke(cli, ["import", "--from", "cowagent", str(src), "--vault", v])
    assert again.exit_code == 0 and "0 added, 3 already known, 0 refused" in again.output and "0 imported" in again.output


def test_a_symlink_in_a_folder_is_skipped_not_followed(tmp_path: Path, mem: Memory) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- a secret plan\n", encoding="utf-8")
    src = write(tmp_path / "cc", {"MEMORY.md": "- I like tea\n"})
    (src / "link.md").symlink_to(outside)
    report = mem.import_folder("claude-code", src)
    assert {e.text for e in mem.list()} == {"I like tea"} and any("symlink" in why for _, why in report.skipped)


def test_a_pasted_key_in_a_conversation_never_reaches_the_raw_layer(tmp_path: Path, mem: Memory) -> None:
    conv = tmp_path / "c.jsonl"
    conv.write_text(
        "\n".join(json.dumps(m) for m in [
            {"role": "user", "content": "here is the deploy config\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion eu-west-1"},
            {"role": "assistant", "content": "Thanks, deploying to eu-west-1."},
        ]) + "\n", encoding="utf-8",
    )  # fmt: skip
    report = mem.import_transcripts("jsonl", conv)
    assert report.refused and "left out" in report.refused[0][1]
    stored = "".join(p.read_text(encoding="utf-8") for p in (mem.vault.root / "scopes").rglob("*.md"))
    assert "wJalrXUtnFEMI" not in stored and "region eu-west-1" in stored and "credentials never enter memory" in stored
    assert not any("wJalr" in s.text for s in mem.search_raw("AWS_SECRET_ACCESS_KEY deploy config"))
    again = mem.import_transcripts("jsonl", conv)
    assert again.imported == [] and len(again.unchanged) == 1
