"""Moving memories in and out of a vault: import (conversations, other memory systems' folders,
a copy export wrote) and export."""

from __future__ import annotations

import click

from memdream.cli.common import emit, handle_errors, json_option, location_of, open_scope, scope_options
from memdream.errors import RefusedInput
from memdream.memory import FOLDER_FORMATS, TRANSCRIPT_FORMATS, Scope


@click.command("import")
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--from",
    "fmt",
    type=click.Choice([*TRANSCRIPT_FORMATS, *FOLDER_FORMATS, "vault"]),
    required=True,
    help="jsonl, chatgpt (the export .zip or its conversations.json), markdown: conversations for the raw layer. claude-code, openclaw, cowagent: another memory system's folder. vault: a copy 'memdream export' wrote (a folder or .tar.gz), restored.",
)
@click.option("--from-scope", "from_scope", default=None, metavar="AGENT/USER", help="PATH is inside that scope of this vault and you mean to copy its memories here (refused without it).")
@scope_options
@json_option
@handle_errors
def import_(path: str, fmt: str, from_scope: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Import conversations or another memory system's folder (importing twice adds nothing).

    Conversations are stored verbatim in the raw layer. From a memory folder, list items
    become memories through the write path (secrets refused, repeats folded), daily logs join
    the daily memory, and the other files are kept verbatim and searchable. A folder inside
    another scope of the same vault is refused unless --from-scope names that scope.
    """
    with open_scope(vault, user, agent, create=True) as mem:
        folder = fmt in FOLDER_FORMATS
        if fmt == "vault":
            report = mem.import_vault(path)
        else:
            mem.check_import_source(path, from_scope)
            report = mem.import_folder(fmt, path, from_scope) if folder else mem.import_transcripts(fmt, path)
    if as_json:
        emit(report.to_json())
        return
    if fmt == "vault":
        click.echo(f"restored {len(report.imported)} file(s), {len(report.unchanged)} already there, {len(report.skipped)} kept as they were")
    elif folder:
        click.echo(f"memories: {len(report.added)} added, {report.known} already known, {len(report.refused)} refused")
        click.echo(f"files: {len(report.imported)} imported, {len(report.unchanged)} already there, {len(report.skipped)} skipped")
    else:
        click.echo(f"imported {len(report.imported)} transcript(s), {len(report.unchanged)} already there, {len(report.skipped)} skipped")
    for where, why in report.refused:
        click.echo(f"  refused {where}: {why}")
    for where, why in report.skipped:
        click.echo(f"  skipped {where}: {why}")


@click.command("export")
@click.option("--to", "to", required=True, metavar="DIR|FILE.tar.gz", help="A new (or empty) folder, or a .tar.gz file to write.")
@click.option("--scope", "only", default=None, metavar="USER/AGENT", help="Only this scope (e.g. me/main); default: the whole vault.")
@scope_options
@json_option
@handle_errors
def export_(to: str, only: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Copy the vault's files (Markdown, dream ledgers, memdream.toml) to DIR or FILE.tar.gz.

    The index under .memdream/ is left out: it is derived ('memdream index rebuild').
    With --store, the team server's scopes (or --scope's) are written to DIR as the folder
    vault holds them, byte for byte; 'memdream push DIR --store ...' loads it back.
    Restore with 'memdream import --from vault DIR|FILE.tar.gz --vault NEW'. A plain backup
    is also just a copy of the vault folder, or 'git init' in it (each dream is then a commit).
    """
    scope = None
    if only is not None:
        u, sep, a = only.partition("/")
        if not sep or not u or not a:
            raise RefusedInput(f"--scope must be USER/AGENT, not {only!r}", "e.g. --scope me/main")
        scope = Scope(u, a)
    with open_scope(vault, user, agent) as mem:
        if scope is not None and scope not in mem.scopes():
            raise RefusedInput(f"there is no scope {only} in {location_of(mem)}", "leave --scope out to export every scope")
        rep = mem.export(to, scope)
    if as_json:
        emit(rep.to_json())
    else:
        click.echo(f"exported {len(rep.files)} file(s), {rep.bytes:,} bytes, to {rep.to} (the index is left out: it is derived)")


COMMANDS = (import_, export_)
