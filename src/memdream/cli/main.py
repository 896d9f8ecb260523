"""The `memdream` command: each command parses options, makes one facade call, prints.

The commands live in modules by area (memory, recall, knowledge, dream, index, imports,
servers); this module is the group that gathers them, and the entry point.

Exit codes: 0 ok, 1 refused input or a problem found, 2 usage error.
"""

from __future__ import annotations

import click

from memdream import __version__
from memdream.cli import dream, imports, index, knowledge, memory, recall, servers
from memdream.cli.common import handle_errors


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="memdream")
def cli() -> None:
    """memdream: long-term memory for AI agents, one Markdown line per memory.

    Files are the truth (scopes/<agent>/<user>/MEMORY.md and memory/recall/*.md in the
    vault); a derived SQLite index under .memdream/ makes them fast to search.
    """


for area in (memory, recall, imports, knowledge, index, dream, servers):
    for command in area.COMMANDS:
        cli.add_command(command)


@cli.command()
@click.option("--keep", type=click.Path(file_okay=False), default=None, help="Build the demo vault here instead of a temporary folder.")
@handle_errors
def demo(keep: str | None) -> None:
    """Tell the 所在地 story on a throwaway vault (no model, no network)."""
    from memdream.demo import run_demo

    run_demo(keep)


def main() -> None:
    cli(prog_name="memdream")


if __name__ == "__main__":
    main()
