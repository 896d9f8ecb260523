"""Vault layout, scopes and name validation (DESIGN section 2)."""

from __future__ import annotations

import pytest

from memdream.config import load_config
from memdream.errors import InvalidName
from memdream.memory import Memory, open_memory
from memdream.store.vault import Scope, validate_name


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "", "x" * 65, "nul\x00byte", "a\\b", "space name", "../etc", "中文"])
def test_bad_names_are_refused_and_nothing_is_created(tmp_path, bad: str) -> None:
    root = tmp_path / "v"
    for kwargs in ({"user": bad}, {"agent": bad}):
        with pytest.raises(InvalidName) as info:
            open_memory(root, **kwargs)
        assert info.value.hint
        assert not root.exists()


def test_good_names() -> None:
    for good in ("me", "main", "ou_3f2a", "agent-1.2", "A" * 64):
        assert validate_name(good) == good


def test_scopes_never_see_each_other(open_scope) -> None:
    alice = open_scope(user="alice")
    bob = open_scope(user="bob")
    coder = open_scope(user="alice", agent="coder")
    alice.remember("我在余杭区")
    bob.remember("I live in Berlin")
    assert [e.text for e in alice.list()] == ["我在余杭区"]
    assert [e.text for e in bob.list()] == ["I live in Berlin"]
    assert coder.list() == []
    # The same text in another scope is not a duplicate of the first.
    out = bob.write("我在余杭区")
    assert out.action != "duplicate"
    # It may supersede bob's own home (the same slot: a move from Berlin), never alice's line.
    assert [e.text for e in out.superseded] in ([], ["I live in Berlin"])
    assert [e.text for e in alice.list()] == ["我在余杭区"]
    assert {s.key for s in alice.vault.scopes()} == {"main/alice", "main/bob"}


def test_layout(mem) -> None:
    mem.remember("以后都用中文回我")
    mem.remember("周五下午有组会")
    assert mem.vault.resident_file(mem.scope).read_text(encoding="utf-8").count("以后都用中文回我") == 1
    assert (mem.vault.root / "scopes/main/me/memory/recall/2026-06.md").read_text(encoding="utf-8").count("周五下午有组会") == 1
    assert Scope("me", "main").key == "main/me"


def test_env_defaults(tmp_path) -> None:
    cfg = load_config(None, None, None, env={"MEMDREAM_VAULT": str(tmp_path / "e"), "MEMDREAM_USER": "u1", "MEMDREAM_AGENT": "a1"})
    assert cfg.vault == tmp_path / "e" and cfg.user == "u1" and cfg.agent == "a1"
    m = Memory(cfg)
    assert m.scope.key == "a1/u1"
