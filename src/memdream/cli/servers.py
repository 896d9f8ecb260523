"""Long-running shells: serve (MCP), chat, web; each may run the dream scheduler beside it."""

from __future__ import annotations

import sys

import click

from memdream.cli.common import handle_errors, now, open_scope, open_store, scope_options, store_url
from memdream.errors import MemdreamError
from memdream.memory import LLMError, Scheduler, load_config


@click.command()
@click.option("--http", "http", default=None, metavar="HOST:PORT", help="Serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8765) instead of stdio.")
@click.option("--token", envvar="MEMDREAM_MCP_TOKEN", default=None, help="Bearer token HTTP clients must send [env MEMDREAM_MCP_TOKEN]; generated and printed when absent.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background while serving.")
@scope_options
@handle_errors
def serve(http: str | None, token: str | None, scheduler: bool, vault: str | None, user: str | None, agent: str | None) -> None:
    """Serve this scope's memory over MCP (stdio by default; needs the 'mcp' extra).

    Tools: remember, recall, context, forget, pin, history, log, dream, conflicts, resolve.
    Resources: memdream://MEMORY.md, memdream://NOW.md, memdream://daily/today. The scope is
    fixed by --vault/--user/--agent; no tool argument can reach another scope.

    With --store and --http: the team server. Every scope of the database is served, each
    request's scope from its bearer token ('memdream token create'); any number of these
    processes may share the database behind a load balancer (GET /healthz answers it).
    """
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MemdreamError("the MCP server needs the official MCP SDK (the 'mcp' extra)", "in the memdream clone: .venv/bin/pip install -e '.[mcp]' (make demo installs it too)") from exc
    from memdream.mcp.server import build_server, new_token, serve_http

    host, _, port = (http or "").rpartition(":")
    if http is not None and (not host or not port.isdigit()):
        raise click.BadParameter("use HOST:PORT, e.g. 127.0.0.1:8765", param_hint="--http")
    cfg = load_config(vault, user, agent)
    if store_url(cfg) and http is not None:
        _serve_store(cfg, host, int(port), token, scheduler)
        return
    mem = open_scope(vault, user, agent, create=True)
    sched = (store_scheduler(mem) if store_url(cfg) else background_scheduler(vault, user, agent, loud=True)) if scheduler else None
    try:
        if http is None:
            build_server(mem).run("stdio")
            return
        if not token:
            token = new_token()
            click.echo(f"memdream MCP over HTTP: bearer token {token}", err=True)
        click.echo(f"serving scope {mem.scope.key} of {mem.vault.root} at http://{host}:{port}/mcp", err=True)
        serve_http(mem, host, int(port), token)
    finally:
        if sched is not None:
            sched.stop(timeout=5)
        mem.close()


@click.command()
@click.option("--budget", type=click.IntRange(500, 200_000), default=6000, show_default=True, help="Tokens of conversation kept in the model's context; older turns are summarized into the daily memory.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background during the chat (model jobs already due at the start wait for their next slot).")
@scope_options
@handle_errors
def chat(budget: int, scheduler: bool, vault: str | None, user: str | None, agent: str | None) -> None:
    """Chat with the configured model, with memory (needs [llm] in memdream.toml or MEMDREAM_LLM_*).

    The model sees the resident memory, the memories recalled for each message and snippets
    of past conversations, and can add, update, delete and pin memories (secrets refused).
    Slash commands: /remember, /forget, /recall, /memory show, /memory dream [N], /now, /help, /exit.
    """
    from memdream.chat.session import ChatSession

    mem = open_scope(vault, user, agent, create=True)
    sched = None
    try:
        session = ChatSession(mem, mem.llm, budget)  # type: ignore[arg-type]
        if scheduler:
            # Quiet (the chat owns the terminal), and the model jobs already due wait for their next
            # slot: a chat's first turn never starts a night's dream on a one-slot model server.
            sched = background_scheduler(vault, user, agent, loud=False, defer=True)
        click.echo(f"memdream chat · scope {mem.scope.key} · /help for commands, /exit to leave", err=True)
        interactive = sys.stdin.isatty()
        while True:
            if interactive:
                click.echo("you> ", nl=False)
            line = sys.stdin.readline()
            if not line or line.strip() in ("/exit", "/quit"):
                break
            try:
                turn = session.send(line)
            except LLMError as exc:
                click.echo(f"error: {exc.message}\nhint: {exc.hint}", err=True)
                continue
            for action in turn.actions:
                click.echo(f"  [memory] {action}")
            if turn.error:
                click.echo(f"error: {turn.error}" + (f"\nhint: {turn.hint}" if turn.hint else ""), err=True)
            if turn.reply:
                click.echo(turn.reply if turn.command else f"assistant> {turn.reply}")
            if turn.trimmed:
                click.echo(f"  [memory] {turn.trimmed} older messages left the context; their summary went into today's daily memory", err=True)
    finally:
        if sched is not None:
            sched.stop(timeout=5)
        mem.close()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; keep the loopback default unless a TLS proxy is in front.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--token", envvar="MEMDREAM_WEB_TOKEN", default=None, help="Access token [env MEMDREAM_WEB_TOKEN]; generated and printed when absent.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background.")
@scope_options
@handle_errors
def web(host: str, port: int, token: str | None, scheduler: bool, vault: str | None, user: str | None, agent: str | None) -> None:
    """The web console: entries with score traces, subject timelines, the dream diary with undo,
    the conflict inbox, knowledge files; edit, pin and forget (needs the 'web' extra)."""
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise MemdreamError(f"the web console needs the 'web' extra ({exc.name} is missing)", "in the memdream clone: .venv/bin/pip install -e '.[web]' (make demo installs it too)") from exc
    from memdream.web.app import create_app, new_token

    cfg = load_config(vault, user, agent)
    mem = open_scope(vault, user, agent, create=True)
    supplied = bool(token)
    token = token or new_token()
    sched = (store_scheduler(mem) if store_url(cfg) else background_scheduler(vault, user, agent, loud=True)) if scheduler else None
    if supplied:  # never echo a secret the user gave: they know it, a terminal log need not
        click.echo(f"memdream web console for scope {mem.scope.key}: http://{host}:{port}/?token=<your --token>", err=True)
    else:
        click.echo(f"memdream web console for scope {mem.scope.key}: http://{host}:{port}/?token={token}", err=True)
    try:
        uvicorn.run(create_app(mem, token, host=host, port=port), host=host, port=port, log_level="warning")
    finally:
        if sched is not None:
            sched.stop(timeout=5)
        mem.close()


def _serve_store(cfg, host: str, port: int, token: str | None, scheduler: bool) -> None:  # type: ignore[no-untyped-def]
    """`serve --http --store`: every scope of the store, each request's scope from its token."""
    if token:
        raise MemdreamError(
            "with --store, the tokens are the database's: --token (or MEMDREAM_MCP_TOKEN) is not used",
            "create one per scope with 'memdream token create --user U --agent A --store ...', and leave --token out",
        )
    from memdream.mcp.server import serve_store_http
    from memdream.team import redact

    store = open_store(cfg)
    sched = store_scheduler(store) if scheduler else None
    click.echo(f"serving every scope of {redact(store.url)} at http://{host}:{port}/mcp (a scope per token; health: /healthz)", err=True)
    try:
        serve_store_http(store, host, port)
    finally:
        if sched is not None:
            sched.stop(timeout=5)


def store_scheduler(store_or_mem):  # type: ignore[no-untyped-def]
    """The team server's dream loop (leased jobs: one dreamer per scope across all processes)."""
    from memdream.team import scheduler

    store = getattr(store_or_mem, "team_store", store_or_mem)
    sched = scheduler(store, say=lambda m: click.echo(f"{now()}  {m}", err=True))
    sched.start()
    return sched


def background_scheduler(vault: str | None, user: str | None, agent: str | None, loud: bool, defer: bool = False) -> Scheduler:
    """The dream scheduler as a background thread of a long-running shell, with its own Memory."""
    sched = Scheduler(lambda: open_scope(vault, user, agent), say=(lambda m: click.echo(f"{now()}  {m}", err=True)) if loud else (lambda m: None), defer=defer)
    sched.start()
    return sched


COMMANDS = (serve, chat, web)
