"""Commands on single memories: init, remember, forget, pin, unpin, history, list."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from memdream.cli.common import emit, entry_line, handle_errors, json_option, open_scope, scope_options, when
from memdream.model.entry import LAYERS, TYPES


@click.command()
@scope_options
@handle_errors
def init(vault: str | None, user: str | None, agent: str | None) -> None:
    """Create a vault (and a commented memdream.toml) if there is none."""
    mem = open_scope(vault, user, agent, create=True)
    created_cfg = mem.write_config_template()
    click.echo(f"vault ready at {mem.vault.root}" + (" (memdream.toml written)" if created_cfg else ""))
    click.echo(f'next: memdream remember "I prefer dark themes" --vault {mem.vault.root}')


@click.command()
@click.argument("text")
@click.option("--type", "type_", type=click.Choice(TYPES), default=None, help="Memory type; guessed from the text when omitted.")
@click.option("--subject", default=None, help="Subject key (e.g. 所在地, location): a new value for the same subject supersedes the old one.")
@click.option("--pin", is_flag=True, help="Pin it: always in the resident snapshot, never touched by dreams.")
@scope_options
@json_option
@handle_errors
def remember(text: str, type_: str | None, subject: str | None, pin: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Remember TEXT (one fact, preference, rule, ...). Secrets are refused (exit 1)."""
    with open_scope(vault, user, agent, create=True) as mem:
        out = mem.write(text, type=type_, subject=subject, pin=pin)
    if out.warning:
        click.echo(f"warning: {out.warning}", err=True)
    if as_json:
        emit(out.to_json())
        return
    e = out.entry
    if out.action == "duplicate":
        click.echo(f"already known as {e.id} (similarity {out.similarity:.2f}); refreshed it instead of adding a copy")
    else:
        click.echo(f"remembered {e.id} ({e.effective_type}, {e.layer} layer)")
        for old in out.superseded:
            click.echo(f"  supersedes {old.id}: {old.text}  (valid until {when(old.valid_to)})")
        if out.contradicts is not None:
            other = out.contradicts
            click.echo(f"  contradicts {other.id}: {other.text}  (both kept; settle it: memdream resolve e-{e.id} --keep a|b|both)")


@click.command()
@click.argument("entry_id")
@click.option("--hard", is_flag=True, help="Delete the line from the files for good (asks first).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation with --hard.")
@scope_options
@json_option
@handle_errors
def forget(entry_id: str, hard: bool, yes: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Forget ENTRY_ID: end its validity and move it to the archive (or delete it with --hard)."""
    with open_scope(vault, user, agent) as mem:
        if hard and not yes:
            e = mem.get(entry_id)
            if not click.confirm(f"Delete {entry_id} ({e.text!r}) for good? History of it will be gone", default=False):
                click.echo("nothing deleted")
                sys.exit(1)
        e = mem.forget(entry_id, hard=hard)
    if as_json:
        emit(e.to_json())
    else:
        click.echo(f"deleted {entry_id}: {e.text}" if hard else f"forgot {entry_id} (archived, still in the files): {e.text}")


def _pin_command(pinned: bool) -> Callable[..., None]:
    @scope_options
    @json_option
    @handle_errors
    def command(entry_id: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
        with open_scope(vault, user, agent) as mem:
            e = mem.pin(entry_id, pinned=pinned)
        if as_json:
            emit(e.to_json())
        else:
            click.echo(f"{'pinned' if pinned else 'unpinned'} {e.id}: {e.text}")

    return command


pin = click.command("pin", help="Pin ENTRY_ID: always in the resident snapshot, never touched by dreams.")(
    click.argument("entry_id")(_pin_command(True))
)
unpin = click.command("unpin", help="Unpin ENTRY_ID.")(click.argument("entry_id")(_pin_command(False)))


@click.command()
@click.argument("subject_or_id")
@scope_options
@json_option
@handle_errors
def history(subject_or_id: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """The supersede trail of a subject (or of an entry id) with validity windows."""
    with open_scope(vault, user, agent) as mem:
        trail = mem.history(subject_or_id)
    if as_json:
        emit({"subject": subject_or_id, "entries": [e.to_json() for e in trail]})
        return
    for e in trail:
        state = "current" if e.valid_to is None else (e.end or "ended")
        sup = f"  supersedes {e.supersedes}" if e.supersedes else ""
        click.echo(f"{when(e.valid_from or e.created_at)} → {when(e.valid_to) if e.valid_to else 'now':16}  {e.id}  {e.text}  [{state}]{sup}")


@click.command("list")
@click.option("--layer", type=click.Choice(LAYERS), default=None, help="Only this layer (default: resident and recall).")
@click.option("--all", "include_ended", is_flag=True, help="Include superseded, forgotten and archived entries.")
@scope_options
@json_option
@handle_errors
def list_(layer: str | None, include_ended: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """List memories by layer."""
    with open_scope(vault, user, agent) as mem:
        entries = mem.list(layer=layer, include_ended=include_ended)
    if as_json:
        emit({"entries": [e.to_json() for e in entries]})
        return
    if not entries:
        if layer:
            click.echo(f"no memories in the {layer} layer; 'memdream list --all' shows every layer")
        else:
            click.echo('no memories yet; add one with: memdream remember "..."')
    current = None
    order = {name: i for i, name in enumerate(LAYERS)}
    for e in sorted(entries, key=lambda e: order.get(e.layer, len(order))):  # one header per layer, oldest first within it
        if e.layer != current:
            current = e.layer
            click.echo(f"# {current}")
        click.echo(entry_line(e))


COMMANDS = (init, remember, forget, pin, unpin, history, list_)
