"""Write docs/cli.md from the commands' own --help (a test checks the file is up to date).

    .venv/bin/python scripts/gen_cli_docs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from memdream.cli.main import cli

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name in sorted(group.commands):
        cmd = group.commands[name]
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))


def render() -> str:
    runner = CliRunner()
    parts = [
        "# memdream command reference\n",
        "Generated from each command's `--help` by `scripts/gen_cli_docs.py`; a test keeps it in step with the code.\n",
        "Exit codes: 0 ok; 1 refused input, not found, or problems found (`doctor`); 2 usage error. "
        "A command that did its work with a part unavailable (`recall` or `remember` with the embedder or the model "
        "unreachable) exits 0 and says so on stderr (`warning: ...`; `warning` in `--json`).\n",
        "Shell completion: `eval \"$(_MEMDREAM_COMPLETE=bash_source memdream)\"` in ~/.bashrc "
        "(`zsh_source` in ~/.zshrc; `_MEMDREAM_COMPLETE=fish_source memdream > ~/.config/fish/completions/memdream.fish`).\n",
    ]
    for path, _cmd in _commands(cli):
        name = " ".join(path)
        res = runner.invoke(cli, [*path, "--help"], prog_name="memdream", terminal_width=100)
        parts.append(f"## memdream {name}\n\n```\n{res.output.rstrip()}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
