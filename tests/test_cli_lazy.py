"""The CLI imports a command's module only when the command runs, and the facade its engine
modules only when they are called: the table of where each command lives stays equal to
what the modules define, and a recall leaves the other areas and the write path unimported
(a fresh interpreter, so nothing else imported them first)."""

from __future__ import annotations

import importlib
import subprocess
import sys

from memdream.cli.main import WHERE, cli
from memdream.memory import open_memory


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
        "r = CliRunner().invoke(cli, ['recall', '咖啡 coffee', '--vault', v])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(' '.join(m for m in sys.modules if m.startswith('memdream.')))\n"
    )
    open_memory(tmp_path / "v").close()  # the vault exists: the probe only recalls
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert "memdream.cli.recall" in out
    assert not {"memdream.cli.servers", "memdream.cli.dream", "memdream.mcp.server", "memdream.web.app", "memdream.dream.run"} & set(out)
    # Nor the write path, the knowledge vault, the importers or doctor: the facade loads them on first use.
    assert not {"memdream.engine.write", "memdream.index.slots", "memdream.model.hostile", "memdream.knowledge.base", "memdream.importers", "memdream.doctor"} & set(out)
