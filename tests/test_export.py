"""`memdream export` and `memdream import --from vault`: a self-contained copy of the truth
(Markdown, dream ledgers, memdream.toml; never the derived index), restored byte for byte
into a new vault that then answers, and can undo, as the original did."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def truth(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".memdream" not in p.parts}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    assert run("init", "--vault", str(v)).exit_code == 0
    for t in ("我在余杭区", "我在西湖区", "以后都用中文回我", "My sister Anna lives in Lyon"):
        assert run("remember", t, "--vault", str(v)).exit_code == 0
    assert run("remember", "Ship the release notes on Friday", "--agent", "work", "--vault", str(v)).exit_code == 0
    assert run("log", "组会", "讨论了导出和备份", "--vault", str(v)).exit_code == 0
    assert run("dream", "--phase", "light", "--vault", str(v)).exit_code == 0  # an archive file and a ledger
    return v


@pytest.mark.parametrize("target", ["copy", "copy.tar.gz"])
def test_export_then_import_restores_every_file_and_the_index_follows(vault: Path, tmp_path: Path, target: str) -> None:
    to = tmp_path / target
    res = run("export", "--to", str(to), "--json", "--vault", str(vault))
    assert res.exit_code == 0, res.output
    files = json.loads(res.output)["files"]
    assert "memdream.toml" in files and any(f.endswith("dreams/ledger.jsonl") for f in files) and any("/.archive/" in f for f in files)
    assert not any(f.startswith(".memdream") for f in files)  # the derived index is left out
    if to.is_dir():
        assert not (to / ".memdream").exists()
    else:
        with tarfile.open(to) as tar:
            assert sorted(tar.getnames()) == sorted(files)
    new = tmp_path / "restored"
    restored = run("import", "--from", "vault", str(to), "--vault", str(new))
    assert restored.exit_code == 0 and f"restored {len(files)} file(s)" in restored.output, restored.output
    assert truth(new) == truth(vault)  # byte for byte
    hits = json.loads(run("recall", "西湖", "--json", "--vault", str(new)).output)["hits"]
    assert hits and hits[0]["text"] == "我在西湖区"
    assert "Ship the release notes" in run("list", "--agent", "work", "--vault", str(new)).output
    assert run("undo", "--yes", "--vault", str(new)).exit_code == 0  # the ledger came along
    again = run("import", "--from", "vault", str(to), "--vault", str(vault))
    assert again.exit_code == 0 and "restored 0 file(s)" in again.output  # the original has them all


def test_a_scope_exports_alone_and_a_restore_never_overwrites(vault: Path, tmp_path: Path) -> None:
    to = tmp_path / "work.tar.gz"
    assert run("export", "--to", str(to), "--scope", "me/work", "--vault", str(vault)).exit_code == 0
    with tarfile.open(to) as tar:
        names = tar.getnames()
    assert names and all(n.startswith("scopes/work/me/") or n == "memdream.toml" for n in names), names
    assert run("export", "--to", str(to), "--vault", str(vault)).exit_code == 1  # never overwrites a file
    bad = run("export", "--to", str(tmp_path / "x"), "--scope", "nobody", "--vault", str(vault))
    assert bad.exit_code == 1 and "USER/AGENT" in bad.output
    # A vault whose file differs keeps it; a copy that restores nothing is an error with a hint.
    other = tmp_path / "other"
    assert run("remember", "Ship the release notes on Monday", "--agent", "work", "--vault", str(other)).exit_code == 0
    before = truth(other)
    res = run("import", "--from", "vault", str(to), "--vault", str(other))
    kept = [k for k in before if k.startswith("scopes/work/me/memory/recall/")]
    assert kept and all(truth(other)[k] == before[k] for k in kept)
    assert res.exit_code == 0 and "kept as they were" in res.output and "already in the vault with other content" in res.output, res.output
    assert "restored 0 file(s)" not in res.output  # what it lacked (memdream.toml) was restored


def test_a_copy_that_points_outside_is_refused(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        data = b"- pwned\n"
        info = tarfile.TarInfo("../outside.md")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    res = run("import", "--from", "vault", str(evil), "--vault", str(tmp_path / "v"))
    assert res.exit_code == 1 and "not a plain file inside the copy" in res.output
    assert not (tmp_path / "outside.md").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    res = run("import", "--from", "vault", str(empty), "--vault", str(tmp_path / "v"))
    assert res.exit_code == 1 and "holds no memdream files" in res.output and "hint:" in res.output
