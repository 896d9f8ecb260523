"""The `memdream` command: each command parses options, makes one facade call, prints.

The commands live in modules by area (memory, recall, knowledge, dream, index, imports,
servers); this module is the group that gathers them, and the entry point.

Exit codes: 0 ok, 1 refused input or a problem found, 2 usage error.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

from memdream import __version__
from memdream.cli.common import handle_errors

# Where each command lives. A command's module is imported when the command is run (or
# listed by --help), so `memdream recall` loads neither the servers nor the dream runner;
# tests/test_cli_lazy.py keeps this table equal to the modules' COMMANDS.
WHERE = {
    **dict.fromkeys(("init", "remember", "forget", "pin", "unpin", "history", "list"), "memdream.cli.memory"),
    **dict.fromkeys(("recall", "context", "search"), "memdream.cli.recall"),
    **dict.fromkeys(("import", "export"), "memdream.cli.imports"),
    **dict.fromkeys(("now", "log", "note", "conflicts", "resolve", "gc", "reflect", "lookup", "aggregate"), "memdream.cli.knowledge"),
    **dict.fromkeys(("index", "doctor"), "memdream.cli.index"),
    **dict.fromkeys(("dream", "undo", "flush", "daemon"), "memdream.cli.dream"),
    **dict.fromkeys(("serve", "chat", "web"), "memdream.cli.servers"),
    **dict.fromkeys(("push", "token"), "memdream.cli.team"),
}


class Commands(MutableMapping):
    """The group's commands by name, each module imported on first use of one of its commands."""

    def __init__(self, where: dict[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            for command in importlib.import_module(self._where[name]).COMMANDS:
                self._loaded.setdefault(command.name, command)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command
        self._where.setdefault(name, command.callback.__module__ if command.callback else "")

    def __delitem__(self, name: str) -> None:
        self._loaded.pop(name, None)
        del self._where[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="memdream")
def cli() -> None:
    """memdream: long-term memory for AI agents, one Markdown line per memory.

    Files are the truth (scopes/<agent>/<user>/MEMORY.md and memory/recall/*.md in the
    vault); a derived SQLite index under .memdream/ makes them fast to search.
    """


cli.commands = Commands(WHERE)


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
