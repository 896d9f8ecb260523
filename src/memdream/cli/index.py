"""The derived index and the checks of files against it: index rebuild, embed, sync; doctor."""

from __future__ import annotations

import sys
import time

import click

from memdream.cli.common import emit, handle_errors, json_option, open_scope, scope_options


@click.group()
def index() -> None:
    """The derived SQLite index (safe to delete; rebuilt from the files)."""


@index.command("rebuild")
@scope_options
@json_option
@handle_errors
def index_rebuild(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Delete the index and build it again from every scope's files."""
    with open_scope(vault, user, agent) as mem:
        start = time.perf_counter()
        n = mem.rebuild_index()
        took = time.perf_counter() - start
    if as_json:
        emit({"entries": n, "seconds": round(took, 3)})
    else:
        click.echo(f"index rebuilt: {n} entries in {took:.2f} s")


@index.command("embed")
@scope_options
@json_option
@handle_errors
def index_embed(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Embed the scope's memories that have no vector for the configured embedder yet."""
    with open_scope(vault, user, agent) as mem:
        if mem.vectors is None:
            if as_json:
                emit({"embedded": 0, "embedder": "none"})
            else:
                click.echo("no embedder configured (keyword recall only); set [embedder] name in memdream.toml or MEMDREAM_EMBEDDER")
            return
        with click.progressbar(length=0, label="embedding", file=sys.stderr, show_pos=True) as bar:

            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            n = mem.embed_pending(progress=progress)
        model = mem.embedder.model_id
    if as_json:
        emit({"embedded": n, "embedder": model})
    else:
        click.echo(f"embedded {n} memories with {model}")


@index.command("sync")
@scope_options
@json_option
@handle_errors
def index_sync(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Catch the index up with edits made to the files (every command also does this)."""
    with open_scope(vault, user, agent) as mem:
        n = mem.sync_all()
    if as_json:
        emit({"files_changed": n})
    else:
        click.echo(f"index synced: {n} file(s) re-read")


@click.command()
@click.option("--fix", is_flag=True, help="First delete the temp files interrupted writes left (older than a minute) and put back acknowledged memories no file holds any more, then check.")
@scope_options
@json_option
@handle_errors
def doctor(fix: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Check that every file parses and that the index agrees with the files (exit 1 on problems)."""
    with open_scope(vault, user, agent) as mem:
        removed, restored, unrestored, problems = mem.doctor(fix)
    if as_json:
        emit({"ok": not problems, "problems": [p.to_json() for p in problems], "removed": removed, "restored": restored, "not_restored": unrestored})
    else:
        for r in removed:
            click.echo(f"removed {r} (temp file of an interrupted write)")
        for r in restored:
            click.echo(f"restored {r} (acknowledged, then missing from the files)")
        for r in unrestored:
            click.echo(f"could not restore {r}")
        for p in problems:
            click.echo(str(p))
        click.echo("all files parse and the index agrees with them" if not problems else f"{len(problems)} problem(s) found")
    sys.exit(1 if problems else 0)


COMMANDS = (index, doctor)
