"""The CLI imports a command's module only when the command runs: the table of where each
command lives stays equal to what the modules define, and running one command leaves the
other areas unimported (a fresh interpreter, so nothing else imported them first)."""

from __future__ import annotations

import importlib
import subprocess
import sys

from memdream.cli.main import WHERE, cli


def test_the_table_names_every_command_of_every_module() -> None:
    defined = {c.name: m for m in set(WHERE.values()) for c in importlib.import_module(m).COMMANDS}
    assert defined == WHERE
    assert sorted(cli.commands) == sorted([*WHERE, "demo"])


def test_recall_loads_neither_the_servers_nor_the_dream_runner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from memdream.cli.main import cli\n"
        f"v = {str(tmp_path / 'v')!r}\n"
        "assert CliRunner().invoke(cli, ['init', '--vault', v]).exit_code == 0\n"
        "r = CliRunner().invoke(cli, ['recall', '咖啡 coffee', '--vault', v])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(' '.join(m for m in sys.modules if m.startswith('memdream.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert "memdream.cli.recall" in out
    assert not {"memdream.cli.servers", "memdream.cli.dream", "memdream.mcp.server", "memdream.web.app", "memdream.dream.run"} & set(out)
