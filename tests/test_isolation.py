"""Adversarial attempts to reach another scope or a path outside the vault through names and ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.errors import NotFound


def test_ids_of_another_scope_are_not_found(open_scope) -> None:
    alice, bob = open_scope(user="alice"), open_scope(user="bob")
    secret = alice.remember("Alice 的体检报告在抽屉里")
    for op in (lambda: bob.forget(secret.id), lambda: bob.pin(secret.id), lambda: bob.get(secret.id), lambda: bob.forget(secret.id, hard=True)):
        with pytest.raises(NotFound):
            op()
    with pytest.raises(NotFound):
        bob.history(secret.id)
    assert bob.recall("体检报告") == [] and bob.recall("抽屉", as_of="2030-01-01") == []
    assert [e.text for e in alice.list()] == ["Alice 的体检报告在抽屉里"]


def test_hostile_transcript_ids_stay_inside_the_scope(mem, tmp_path: Path) -> None:
    conv = [{"id": "../../../../etc/passwd", "title": "x", "mapping": {"a": {"parent": None, "message": {"author": {"role": "user"}, "content": {"parts": ["hello"]}}}}}]
    (tmp_path / "c.json").write_text(json.dumps(conv), encoding="utf-8")
    jl = tmp_path / "m.jsonl"
    jl.write_text(json.dumps({"role": "user", "content": "hi", "session": "../../../scopes/main/bob/MEMORY"}) + "\n", encoding="utf-8")
    for fmt, path in (("chatgpt", tmp_path / "c.json"), ("jsonl", jl)):
        rep = mem.import_transcripts(fmt, path)
        for rel in rep.imported:
            real = (mem.vault.root / rel).resolve()
            assert str(real).startswith(str(mem.vault.memory_dir(mem.scope).resolve() / "sessions"))
    assert not (mem.vault.root / "scopes" / "main" / "bob").exists()


@pytest.mark.parametrize("name", ["../alice", "alice/../../x", "..", "a b", "x" * 65, "\x00", "~root", "C:\\x"])
def test_cli_scope_names_cannot_escape(tmp_path: Path, name: str) -> None:
    v = str(tmp_path / "v")
    for flag in ("--user", "--agent"):
        r = CliRunner().invoke(cli, ["remember", "hello", "--vault", v, flag, name])
        assert r.exit_code == 2, (flag, name, r.output)
    assert not any(p.suffix == ".md" for p in tmp_path.rglob("*"))
