"""What every command shares: the scope options, --json, error handling, opening the scope
and the few formats more than one command prints."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from memdream.errors import MemdreamError

if TYPE_CHECKING:
    from memdream.memory import Memory
    from memdream.model.entry import Entry


def _keep_store(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        ctx.meta["memdream_store_url"] = value
    return value


store_option = click.option(
    "--store", envvar="MEMDREAM_STORE", default=None, metavar="URL", expose_value=False, callback=_keep_store,
    help="A PostgreSQL URL: work on the team server's database instead of the vault folder [env MEMDREAM_STORE; or [store] url in memdream.toml].",
)


def scope_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = store_option(fn)
    fn = click.option("--agent", envvar="MEMDREAM_AGENT", default=None, help="Agent name of the scope [env MEMDREAM_AGENT; default main].")(fn)
    fn = click.option("--user", envvar="MEMDREAM_USER", default=None, help="User name of the scope [env MEMDREAM_USER; default me].")(fn)
    fn = click.option("--vault", envvar="MEMDREAM_VAULT", default=None, type=click.Path(file_okay=False), help="Vault folder [env MEMDREAM_VAULT; default ~/.memdream].")(fn)
    return fn


json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")


def handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemdreamError as exc:
            click.echo(f"error: {exc.message}", err=True)
            if exc.hint:
                click.echo(f"hint: {exc.hint}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:  # a file-system oddity no check foresaw: still a message, never a traceback
            where = f" ({exc.filename})" if exc.filename else ""
            click.echo(f"error: {exc.strerror or exc}{where}", err=True)
            click.echo("hint: check that path in the vault (a folder or special file where a file should be?); 'memdream doctor' lists what it finds", err=True)
            sys.exit(1)

    return wrapper


def store_url(config: Any) -> str:
    """The store a command works on: --store, else MEMDREAM_STORE or [store] url ("" = the vault folder)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get("memdream_store_url") if ctx is not None else None) or config.store


def open_store(config: Any) -> Any:
    """The team store of `config` (see store_url), closed when the command ends."""
    from memdream.team import open_store as open_team_store

    store = open_team_store(store_url(config), config)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(store.close)
    return store


def location_of(mem: Any) -> str:
    """What a command worked on, for messages: the vault folder or the store (without its password)."""
    store = getattr(mem, "store_url", None)
    return store if isinstance(store, str) else str(mem.vault.root)


def open_scope(vault: str | None, user: str | None, agent: str | None, create: bool = False) -> "Memory":
    """The scope's facade: on the vault folder, or, with a store, one transaction per call on
    the team server's database (the same methods)."""
    from memdream.memory import load_config, open_memory  # loaded by the command that needs it, not by --help or --version

    cfg = load_config(vault, user, agent)
    if store_url(cfg):
        from memdream.team import scope_handle

        return scope_handle(open_store(cfg), cfg.user, cfg.agent)
    return open_memory(config=cfg, create=create)


def emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def when(d: Any) -> str:
    return d.strftime("%Y-%m-%d %H:%M") if d is not None else "…"


def entry_line(e: "Entry") -> str:
    flags = []
    if e.pending:
        flags.append(f"pending: {e.pending}, see memdream conflicts")
    if e.pinned:
        flags.append("pinned")
    if e.subject:
        flags.append(f"subject={e.subject}")
    if e.valid_to is not None:
        flags.append(f"ended {when(e.valid_to)}" + (f" ({e.end})" if e.end else ""))
    extra = f"  [{', '.join(flags)}]" if flags else ""
    return f"{e.id or '-':6}  {e.effective_type:11}  {e.text}{extra}"


def now() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")

