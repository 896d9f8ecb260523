"""The team server's own commands: push a folder vault into the store, and tenants' tokens.

Everything else works on a store through --store (or MEMDREAM_STORE, or [store] url):
serve, web, export, doctor, and every memory command.
"""

from __future__ import annotations

import click

from memdream.cli.common import emit, handle_errors, json_option, open_store, scope_options
from memdream.errors import RefusedInput


def _config(vault: str | None, user: str | None, agent: str | None):  # type: ignore[no-untyped-def]
    from memdream.cli.common import store_url
    from memdream.memory import load_config

    cfg = load_config(vault, user, agent)
    if not store_url(cfg):
        raise RefusedInput("this command needs a store", "give --store postgresql://USER@HOST/DB, or set MEMDREAM_STORE")
    return cfg


def _scope(value: str):  # type: ignore[no-untyped-def]
    from memdream.memory import Scope

    u, sep, a = value.partition("/")
    if not sep or not u or not a:
        raise RefusedInput(f"--scope must be USER/AGENT, not {value!r}", "e.g. --scope me/main")
    return Scope(u, a)


@click.command("push")
@click.argument("source", type=click.Path(exists=True, file_okay=False))
@click.option("--scope", "only", default=None, metavar="USER/AGENT", help="Only this scope of SOURCE (e.g. me/main); default: every scope.")
@scope_options
@json_option
@handle_errors
def push(source: str, only: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Load the folder vault SOURCE into the store (--store): each scope in the database
    becomes exactly what its files are. Idempotent: pushing again writes nothing. 'memdream
    export --store ... --to DIR' goes the other way, byte for byte."""
    from memdream.team import push_vault

    store = open_store(_config(vault, user, agent))
    moved = push_vault(store, source, _scope(only) if only else None, progress=(lambda m: None) if as_json else (lambda m: click.echo(m, err=True)))
    if as_json:
        emit(moved.to_json())
    else:
        click.echo(f"pushed {len(moved.scopes)} scope(s), {moved.files} file(s), {moved.bytes:,} bytes: {moved.written} written, {moved.deleted} deleted")


@click.group("token")
def token() -> None:
    """Bearer tokens of the team server, one scope each (stored hashed in the database)."""


@token.command("create")
@click.option("--label", default="", help="A note to tell tokens apart in 'token list' (e.g. the bot's name).")
@scope_options
@json_option
@handle_errors
def token_create(label: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Issue a token for the scope --user/--agent and print it (once: only its hash is kept)."""
    from memdream.memory import Scope
    from memdream.team import create_token

    cfg = _config(vault, user, agent)
    store = open_store(cfg)
    scope = Scope(cfg.user, cfg.agent)
    value = create_token(store, scope, label)
    if as_json:
        emit({"token": value, "user": scope.user, "agent": scope.agent})
    else:
        click.echo(value)
        click.echo(f"a token for {scope.user}/{scope.agent}; it is shown only now. Clients send it as 'Authorization: Bearer <token>'", err=True)


@token.command("list")
@click.option("--all", "everyone", is_flag=True, help="Every scope's tokens (default: only --user/--agent's when either is given).")
@click.option("--revoked", is_flag=True, help="Show revoked tokens too.")
@scope_options
@json_option
@handle_errors
def token_list(everyone: bool, revoked: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """The tokens the store holds, by fingerprint (never the token itself)."""
    from memdream.memory import Scope
    from memdream.team import list_tokens

    cfg = _config(vault, user, agent)
    store = open_store(cfg)
    scope = Scope(cfg.user, cfg.agent) if (user or agent) and not everyone else None
    infos = list_tokens(store, scope, revoked)
    if as_json:
        emit({"tokens": [i.to_json() for i in infos]})
        return
    for i in infos:
        state = f"revoked {i.revoked_at:%Y-%m-%d %H:%M}" if i.revoked_at else "live"
        click.echo(f"{i.fingerprint}  {i.scope.user}/{i.scope.agent}  {state}  created {i.created_at:%Y-%m-%d %H:%M}  {i.label}")
    if not infos:
        click.echo("no tokens")


@token.command("revoke")
@click.argument("token_or_fingerprint")
@scope_options
@json_option
@handle_errors
def token_revoke(token_or_fingerprint: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Revoke a token (the whole token, or its fingerprint from 'token list'): the next request with it is refused."""
    from memdream.team import revoke_token

    store = open_store(_config(vault, user, agent))
    info = revoke_token(store, token_or_fingerprint)
    if as_json:
        emit(info.to_json())
    else:
        click.echo(f"revoked {info.fingerprint} ({info.scope.user}/{info.scope.agent})")


COMMANDS = (push, token)
