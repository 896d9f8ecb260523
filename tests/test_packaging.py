"""Packaging conventions: one version for the package, the CLI and the MCP handshake; typed;
a changelog; a vault file-format version that an older memdream refuses instead of misreading."""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import memdream
from memdream.cli.main import cli
from memdream.config import CONFIG_TEMPLATE, VAULT_FORMAT, load_config
from memdream.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def test_one_version_everywhere(tmp_path: Path) -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", memdream.__version__)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "memdream.__version__"}
    assert importlib.metadata.version("memdream") == memdream.__version__  # the installed metadata agrees
    out = CliRunner().invoke(cli, ["--version"]).output
    assert out.strip() == f"memdream, version {memdream.__version__}"
    assert f"## {memdream.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert (ROOT / "src" / "memdream" / "py.typed").is_file() and project["tool"]["setuptools"]["package-data"]["memdream"] == ["py.typed"]
    assert "Typing :: Typed" in project["project"]["classifiers"]


def test_the_mcp_handshake_names_the_version(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp.client import Client

    from memdream.mcp.server import build_server
    from memdream.memory import Memory

    mem = Memory(load_config(tmp_path / "v", "me", "main", env={}), None)
    mem.vault.init()

    async def info():  # type: ignore[no-untyped-def]
        async with Client(build_server(mem)) as c:
            return c.server_info

    try:
        got = asyncio.run(info())
    finally:
        mem.close()
    assert got.name == "memdream" and got.version == memdream.__version__


def test_the_vault_format_version(tmp_path: Path) -> None:
    """init writes the format; a vault without it is format 1; a newer format is refused
    with a hint, by the library and the CLI alike, and nothing is written."""
    v = tmp_path / "v"
    assert CliRunner().invoke(cli, ["init", "--vault", str(v)]).exit_code == 0
    toml = (v / "memdream.toml").read_text(encoding="utf-8")
    assert toml == CONFIG_TEMPLATE and re.search(rf"^format = {VAULT_FORMAT}\b", toml, re.M)
    assert load_config(v, env={}).vault == v
    (v / "memdream.toml").write_text("# an older vault: no format key\n", encoding="utf-8")
    load_config(v, env={})  # format 1
    (v / "memdream.toml").write_text(f"format = {VAULT_FORMAT + 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_config(v, env={})
    assert "newer memdream" in exc.value.message and "upgrade memdream" in exc.value.hint
    before = sorted(p.relative_to(v) for p in v.rglob("*"))
    res = CliRunner().invoke(cli, ["remember", "我在西湖区", "--vault", str(v)])
    assert res.exit_code != 0 and "file format 2" in res.output and "hint:" in res.output
    assert sorted(p.relative_to(v) for p in v.rglob("*")) == before
    for bad in ('"1"', "0", "true"):
        (v / "memdream.toml").write_text(f"format = {bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError):
            load_config(v, env={})
