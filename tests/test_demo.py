"""`make demo` runs `memdream demo`: it must tell the three-step trail and show the refusals."""

from __future__ import annotations

from click.testing import CliRunner

from memdream.cli.main import cli


def test_demo_prints_the_trail(tmp_path) -> None:
    r = CliRunner().invoke(cli, ["demo", "--keep", str(tmp_path / "demo")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    out = r.output
    assert "2026-06-01 09:00 → 2026-06-20 18:30  我在余杭区" in out
    assert "2026-06-20 18:30 → 2026-06-27 10:00  我在西湖区" in out
    assert "2026-06-27 10:00 → now" in out
    assert out.count("credentials never enter memory") >= 3  # two remembers, the imported token, the MCP call
    assert "duplicate: already known as" in out
    for text in ("Tom: I love hiking in the Alps!", "Anna: I love hiking in the Alps!", "小王明天去北京", "小王明天去北京吗？"):
        assert f'remember "{text}"  ->  added' in out  # another speaker, a question: another memory
    assert "<!--m:id=" in out  # the raw lines are shown with their metadata
    assert "->  定在良渚的农家乐，周五早上九点出发  (relevance" in out and ", which matched; on its own" in out  # the answer, said after its question
    assert "The question itself holds no answer: 周五的团建定在哪儿了？" in out and "it ends asking" in out
    # The kept vault holds exactly the story.
    recall = (tmp_path / "demo/scopes/main/me/memory/recall/2026-06.md").read_text(encoding="utf-8")
    archive = (tmp_path / "demo/scopes/main/me/memory/.archive/entries/2026-07.md").read_text(encoding="utf-8")
    assert recall.count("subj=所在地") == 1 and archive.count("subj=所在地") == 2  # the dream archived the superseded two
    # The recall act: as-of answers and explained scores.
    assert "recall 所在地 --as-of 2026-06-01  ->  我在余杭区" in out
    assert "recall 所在地 --as-of 2026-06-21  ->  我在西湖区" in out
    assert "recency 0.25, age 60 d; importance 1.10" in out
    assert "The 60-day-old warning ranks #2" in out  # after the wiki line, above forty newer trivia lines
    assert "recall 茶  ->  我喜欢喝龙井茶" in out
    assert 'recall "which desk did I buy?"  ->  Bought a standing desk for the home office last week' in out
    # The knowledge act: the four CRUD outcomes show, and the conflict is resolved.
    assert "->  ADD" in out and "->  UPDATE" in out and "->  CONFLICT" in out
    assert "| [[deploy]] | 🔴 | ✅ active |" in out
    # The dream act: a diary that names each move, one line for the skipped model phases, undo.
    assert "a near-duplicate of" in out and "promoted" in out and "recalled 3 times" in out
    assert out.count("no model is configured") == 2  # the report line and the diary
    assert "reverted by ledger" in out
    # The interfaces act: an import that refuses a token, and an agent over MCP.
    assert "import --from claude-code  ->  2 added, 1 already known, 2 refused" in out and "GitHub token" in out
    assert "tools: remember, recall, context" in out and 'recall "用什么语言回复我"  ->  以后都用中文回我' in out
    # The reliability act: a line broken by hand is named with its file and line, and still reads.
    assert "memdream doctor  ->  scopes/main/me/MEMORY.md:" in out and "bad value for 'hc': 'many'" in out
    assert 'recall "组会"  ->  周五下午有组会' in out
    # The team server act: on a throwaway PostgreSQL where one is installed (CI requires it).
    import os

    if "(skipped:" in out.split("The team server", 1)[1]:
        assert os.environ.get("MEMDREAM_PG_TESTS") != "required", out
    else:
        assert "memdream export --store ... --to DIR  ->  the same files, byte for byte" in out
        assert "process B at once: recall 团队服务器  ->  团队服务器上线了" in out
        assert "alice's token: recall 团队服务器  ->  0 hits" in out
    assert not (tmp_path / "demo/.team-demo").exists()


def test_demo_cleans_up_its_throwaway_vault(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    tempfile.tempdir = None
    try:
        r = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)
    finally:
        tempfile.tempdir = None
    assert r.exit_code == 0
    assert list(tmp_path.iterdir()) == []
