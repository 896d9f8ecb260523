"""The CLI as a user meets it: exit codes, messages with hints, --json, and documentation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def v(tmp_path: Path) -> str:
    root = str(tmp_path / "vault")
    assert run("init", "--vault", root).exit_code == 0
    return root


def snapshot(root: str) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in Path(root).rglob("*") if p.is_file() and ".memdream" not in p.parts}


def test_remember_secret_exits_1_and_changes_nothing(v: str) -> None:
    assert run("remember", "我喜欢深色主题", "--vault", v).exit_code == 0
    before = snapshot(v)
    r = run("remember", "my password is hunter2", "--vault", v)
    assert r.exit_code == 1
    assert "credentials never enter memory" in r.output
    assert "hint:" in r.output
    assert snapshot(v) == before


def test_usage_errors_exit_2(v: str) -> None:
    assert run("remember", "--vault", v).exit_code == 2  # missing TEXT
    assert run("remember", "x", "--type", "nonsense", "--vault", v).exit_code == 2
    r = run("list", "--vault", v, "--user", "../etc")
    assert r.exit_code == 2 and "hint:" in r.output


def test_missing_vault_says_what_to_do(tmp_path: Path) -> None:
    r = run("list", "--vault", str(tmp_path / "nowhere"))
    assert r.exit_code == 1
    assert "memdream init" in r.output
    assert not (tmp_path / "nowhere").exists()


def test_json_contract(v: str) -> None:
    r = run("remember", "我在余杭区", "--vault", v, "--json")
    out = json.loads(r.output)
    assert out["action"] == "added"
    entry = out["entry"]
    for key in ("id", "text", "type", "layer", "subject", "valid_from", "valid_to", "supersedes", "pinned", "hits", "source"):
        assert key in entry
    assert entry["subject"] == "所在地" and entry["layer"] == "recall" and entry["source"] == "user"
    run("remember", "我在西湖区", "--vault", v)
    hist = json.loads(run("history", "所在地", "--vault", v, "--json").output)
    assert [e["text"] for e in hist["entries"]] == ["我在余杭区", "我在西湖区"]
    assert hist["entries"][0]["valid_to"] == hist["entries"][1]["valid_from"]
    listed = json.loads(run("list", "--vault", v, "--json", "--all").output)
    assert len(listed["entries"]) == 2


def test_forget_pin_unpin_and_hard_forget_confirmation(v: str) -> None:
    eid = json.loads(run("remember", "周五下午有组会", "--vault", v, "--json").output)["entry"]["id"]
    assert run("pin", eid, "--vault", v).exit_code == 0
    assert json.loads(run("list", "--vault", v, "--json").output)["entries"][0]["pinned"] is True
    assert run("unpin", eid, "--vault", v).exit_code == 0
    r = run("forget", eid, "--hard", "--vault", v, input="n\n")
    assert r.exit_code == 1 and "nothing deleted" in r.output
    assert run("forget", eid, "--vault", v).exit_code == 0
    assert json.loads(run("list", "--vault", v, "--json").output)["entries"] == []
    assert run("forget", eid, "--hard", "--vault", v, "--yes").exit_code == 0
    assert json.loads(run("list", "--vault", v, "--json", "--all").output)["entries"] == []
    r = run("forget", "zzzzzz", "--vault", v)
    assert r.exit_code == 1 and "memdream list" in r.output


def test_doctor_reports_file_and_line(v: str) -> None:
    assert run("remember", "周五下午有组会", "--vault", v).exit_code == 0
    assert run("doctor", "--vault", v).exit_code == 0
    res = Path(v) / "scopes/main/me/MEMORY.md"
    res.write_text("# MEMORY\n\n- ok line\n- broken <!--m:id=zz1;hc=many-->\n", encoding="utf-8")
    r = run("doctor", "--vault", v, "--json")
    assert r.exit_code == 1
    problems = json.loads(r.output)["problems"]
    assert {"path": "scopes/main/me/MEMORY.md", "line": 4, "message": "bad value for 'hc': 'many'"} in problems
    # A malformed line never breaks reading.
    assert run("list", "--vault", v).exit_code == 0


def test_doctor_fix_removes_only_old_temp_files_of_interrupted_writes(v: str) -> None:
    assert run("remember", "以后都用中文回我", "--vault", v).exit_code == 0
    folder = Path(v) / "scopes/main/me"
    old = folder / ".MEMORY.md.k3x_9q2a.tmp"  # as atomic_write names them
    fresh = folder / ".MEMORY.md.p0w8zz1b.tmp"
    mine = folder / ".notes.tmp"  # not a name memdream makes: someone else's file
    for f in (old, fresh, mine):
        f.write_text("- half a line", encoding="utf-8")
    for f in (old, mine):
        os.utime(f, (time.time() - 3600, time.time() - 3600))
    r = run("doctor", "--vault", v)
    assert r.exit_code == 1 and ".MEMORY.md.k3x_9q2a.tmp: temp file left by an interrupted write" in r.output
    r = run("doctor", "--fix", "--vault", v, "--json")
    out = json.loads(r.output)
    assert out["removed"] == ["scopes/main/me/.MEMORY.md.k3x_9q2a.tmp"]
    assert not old.exists() and fresh.exists() and mine.exists()  # a young one may be a write in flight
    assert [p["path"] for p in out["problems"]] == ["scopes/main/me/.MEMORY.md.p0w8zz1b.tmp"]
    assert "以后都用中文回我" in (folder / "MEMORY.md").read_text(encoding="utf-8")


def test_index_rebuild_and_sync(v: str) -> None:
    run("remember", "我在余杭区", "--vault", v)
    r = run("index", "rebuild", "--vault", v, "--json")
    assert json.loads(r.output)["entries"] == 1
    assert run("index", "sync", "--vault", v).exit_code == 0


def test_every_command_is_documented() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    docs = readme + (Path(__file__).parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    for name, cmd in cli.commands.items():
        assert f"memdream {name}" in docs, f"command {name} is not documented"
        assert cmd.help or cmd.short_help, name
        r = run(name, "--help")
        assert r.exit_code == 0
        if hasattr(cmd, "commands"):
            for sub in cmd.commands:
                assert f"memdream {name} {sub}" in docs


def test_scope_options_on_every_command() -> None:
    def leaves(group, prefix=()):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from leaves(cmd, prefix + (name,))
            else:
                yield prefix + (name,), cmd

    for path, cmd in leaves(cli):
        if path == ("demo",):
            continue
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"--vault", "--user", "--agent"} <= opts, path


def test_console_script_runs(tmp_path: Path) -> None:
    """The installed entry point works as a separate process (as an agent would call it)."""
    exe = Path(sys.executable).parent / "memdream"
    env = dict(os.environ, MEMDREAM_VAULT=str(tmp_path / "v"))
    r = subprocess.run([str(exe), "remember", "以后都用中文回我"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe), "list", "--json"], capture_output=True, text=True, env=env)
    assert json.loads(r.stdout)["entries"][0]["type"] == "instruction"


def test_cli_reference_matches_help() -> None:
    """docs/cli.md is generated from --help; regenerate with scripts/gen_cli_docs.py."""
    import importlib.util

    root = Path(__file__).parent.parent
    spec = importlib.util.spec_from_file_location("gen_cli_docs", root / "scripts" / "gen_cli_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (root / "docs" / "cli.md").read_text(encoding="utf-8") == mod.render()


def test_import_search_raw_and_index_embed(v: str, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        json.dumps({"role": "user", "content": "明早的盘前简报记得加上汇率"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"role": "assistant", "content": "好的，已加入汇率一节"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    r = run("import", str(chat), "--from", "jsonl", "--vault", v, "--json")
    assert r.exit_code == 0 and len(json.loads(r.output)["imported"]) == 1
    r = run("import", str(chat), "--from", "jsonl", "--vault", v)
    assert "imported 0 transcript(s), 1 already there" in r.output
    hits = json.loads(run("search", "盘前", "--raw", "--vault", v, "--json").output)["snippets"]
    assert hits and hits[0]["text"].startswith("明早的盘前简报")
    r = run("index", "embed", "--vault", v)
    assert r.exit_code == 0 and "no embedder configured" in r.output
    bad = run("import", str(chat), "--from", "nonsense", "--vault", v)
    assert bad.exit_code == 2


def test_list_shows_each_layer_header_once_and_the_archive_on_its_own(v: str) -> None:
    """Interleaved creation (recall, resident, recall, resident) printed the headers four times;
    `list --layer archive` without --all said "no memories yet" beside archived entries."""
    for t in ("我在余杭区", "以后都用中文回我", "周五下午有组会", "Never send me messages on weekends"):
        assert run("remember", t, "--vault", v).exit_code == 0
    assert run("remember", "我在西湖区", "--vault", v).exit_code == 0  # supersedes 我在余杭区
    gone = json.loads(run("remember", "The staging database lives on host db-2", "--json", "--vault", v).output)["entry"]["id"]
    assert run("forget", gone, "--vault", v).exit_code == 0
    out = run("list", "--vault", v).output
    headers = [ln for ln in out.splitlines() if ln.startswith("# ")]
    assert headers == ["# resident", "# recall"], out
    assert out.index("以后都用中文回我") < out.index("Never send me") < out.index("# recall") < out.index("周五下午有组会")
    assert run("dream", "--phase", "light", "--vault", v).exit_code == 0  # the superseded line moves to the archive
    archive = run("list", "--layer", "archive", "--vault", v)
    assert archive.exit_code == 0 and "我在余杭区" in archive.output and "The staging database" in archive.output, archive.output
    assert "no memories yet" not in archive.output
    every = run("list", "--all", "--vault", v).output
    assert [ln for ln in every.splitlines() if ln.startswith("# ")] == ["# resident", "# recall", "# archive"], every
    other = str(Path(v).parent / "other")
    assert run("init", "--vault", other).exit_code == 0
    assert "no memories in the archive layer" in run("list", "--layer", "archive", "--vault", other).output


def test_shell_completion_as_documented(tmp_path: Path) -> None:
    """README and docs/cli.md: eval "$(_MEMDREAM_COMPLETE=bash_source memdream)"."""
    exe = str(Path(sys.executable).parent / "memdream")
    env = {**os.environ, "_MEMDREAM_COMPLETE": "bash_source"}
    src = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60)
    assert src.returncode == 0 and "_memdream_completion()" in src.stdout
    for words, cword, want in (("memdream rec", "1", "plain,recall"), ("memdream list --layer ar", "3", "plain,archive")):
        env = {**os.environ, "_MEMDREAM_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
        out = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60).stdout.split()
        assert want in out, out
    for doc in ("README.md", "docs/cli.md"):
        assert "_MEMDREAM_COMPLETE=bash_source memdream" in (Path(__file__).parent.parent / doc).read_text(encoding="utf-8")


def test_a_bad_date_is_refused_with_the_form_not_a_traceback(v: str) -> None:
    run("log", "部署完成", "--vault", v)
    for args in (("reflect", "--date", "nope"), ("flush", "--day", "2026-13-40"), ("reflect", "--date", "六月一日")):
        r = run(*args, "--vault", v)
        assert r.exit_code == 1, (args, r.output)
        assert "YYYY-MM-DD" in r.output  # the error says the form (run() lets any other exception through)
    assert run("reflect", "--date", "2026-06-01", "--vault", v).exit_code == 0


def test_remember_says_when_the_new_line_contradicts_one(v: str) -> None:
    assert run("remember", "这周六我们不加班", "--vault", v).exit_code == 0
    r = run("remember", "这周六我们加班", "--vault", v)
    assert r.exit_code == 0
    assert "contradicts" in r.output and "这周六我们不加班" in r.output
    new_id = r.output.split()[1]  # "remembered <id> (...)"
    assert f"memdream resolve e-{new_id} --keep a|b|both" in r.output
    listed = run("conflicts", "--vault", v)
    assert f"e-{new_id}" in listed.output
    assert run("resolve", f"e-{new_id}", "--keep", "b", "--vault", v).exit_code == 0
    assert "这周六我们不加班" not in run("list", "--vault", v).output


def test_remember_says_when_the_embedder_was_unreachable(v: str) -> None:
    # A remote embedder configured but down (nothing listens on the discard port): the line is
    # written all the same, compared by words only, and the user is told why.
    Path(v, "memdream.toml").write_text('[embedder]\nname = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n', encoding="utf-8")
    r = run("remember", "I moved to Lisbon last spring", "--vault", v)
    assert r.exit_code == 0 and "remembered" in r.stdout
    assert "warning: embedder unavailable, restatements compared by words only" in r.stderr
    out = json.loads(run("remember", "我对花生过敏", "--vault", v, "--json").stdout)
    assert out["action"] == "added" and "embedder unavailable" in out["warning"]
    listed = run("list", "--vault", v).output
    assert "Lisbon" in listed and "花生" in listed


def test_remember_has_no_warning_when_nothing_degraded(v: str) -> None:
    r = run("remember", "I moved to Lisbon last spring", "--vault", v, "--json")
    assert json.loads(r.stdout)["warning"] is None and "warning" not in r.stderr
