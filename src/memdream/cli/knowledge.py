"""The knowledge vault: now, log, note, conflicts, resolve, gc, reflect, lookup, aggregate."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memdream.cli.common import emit, handle_errors, json_option, open_scope, scope_options
from memdream.memory import NOTE_CATEGORIES, NOTE_PRIORITIES


@click.command("now")
@click.option("--set", "source", default=None, metavar="FILE|-", help="Replace NOW.md with this file's text ('-' reads standard input).")
@scope_options
@json_option
@handle_errors
def now_(source: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Show NOW.md, the workbench (current state and priorities), or replace it with --set."""
    text = None
    if source is not None:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    with open_scope(vault, user, agent, create=text is not None) as mem:
        current = mem.now(text)
        path = mem.relpath(mem.now_file())
    if as_json:
        emit({"path": path, "text": current})
    elif text is not None:
        click.echo(f"NOW.md replaced ({len(current)} characters)")
    else:
        click.echo(current or "NOW.md is empty; set it with: memdream now --set FILE", nl=not current.endswith("\n"))


@click.command("log")
@click.argument("title")
@click.argument("body", required=False, default="")
@scope_options
@json_option
@handle_errors
def log_(title: str, body: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Append "### HH:MM — TITLE" (and BODY) to today's daily log, memory/YYYY-MM-DD.md."""
    with open_scope(vault, user, agent, create=True) as mem:
        path, heading = mem.log(title, body)
        rel = mem.relpath(path)
    if as_json:
        emit({"path": rel, "heading": heading})
    else:
        click.echo(f"logged to {rel}: {heading}")


@click.group()
def note() -> None:
    """Knowledge files (lessons, decisions, people, projects, preferences) with frontmatter."""


@note.command("add")
@click.argument("category", type=click.Choice(NOTE_CATEGORIES))
@click.argument("topic")
@click.argument("text")
@click.option("--priority", type=click.Choice(NOTE_PRIORITIES), default=None, help="🔴 core (never archived), 🟡 important, ⚪ reference.")
@click.option("--tag", "tags", multiple=True, help="A tag for the frontmatter (repeatable).")
@scope_options
@json_option
@handle_errors
def note_add(category: str, topic: str, text: str, priority: str | None, tags: tuple[str, ...], vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Read the topic's file, then ADD, UPDATE (old paragraph marked superseded), NOOP or CONFLICT."""
    with open_scope(vault, user, agent, create=True) as mem:
        out = mem.note(category, topic, text, priority, tags)
    if as_json:
        emit(out.to_json())
    else:
        click.echo(f"{out.kind}: {out.path} ({out.decision.why})")
        if out.model:
            click.echo(f"  model: {out.model}")
        if out.kind == "CONFLICT":
            click.echo("  both versions are kept; decide with: memdream conflicts, then memdream resolve ID --keep a|b|both|edit")


@note.command("list")
@scope_options
@json_option
@handle_errors
def note_list(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Knowledge files with priority, status and last verification (what INDEX.md shows)."""
    with open_scope(vault, user, agent) as mem:
        notes = mem.notes()
    if as_json:
        emit({"notes": [{"path": n.path, "category": n.category, "title": n.title, "priority": n.priority, "status": n.status,
                          "last_verified": n.last_verified.isoformat() if n.last_verified else None, "stale": n.stale} for n in notes]})  # fmt: skip
        return
    for n in notes:
        flag = " ⚠️ stale" if n.stale else ""
        click.echo(f"{n.priority} {n.status:9} {n.last_verified or '—'}  {n.path}{flag}")


@click.command()
@scope_options
@json_option
@handle_errors
def conflicts(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """List every open conflict with both sides and where they are, and the memories waiting for your confirmation (p-...)."""
    with open_scope(vault, user, agent) as mem:
        found = mem.conflicts()
    if as_json:
        emit({"conflicts": [c.to_json() for c in found]})
        return
    if not found:
        click.echo("no open conflicts")
    for c in found:
        click.echo(f"{c.id}  {c.path}  ({c.day})")
        click.echo(f"   a: {c.a}")
        click.echo(f"   b: {c.b}")


@click.command()
@click.argument("conflict_id")
@click.option("--keep", type=click.Choice(["a", "b", "both", "edit"]), required=True, help="a: the older text, b: the newer, both, or edit (with --text). For a memory waiting for confirmation (p-...): b confirms it, a drops it.")
@click.option("--text", default=None, help="The corrected text, with --keep edit.")
@scope_options
@json_option
@handle_errors
def resolve(conflict_id: str, keep: str, text: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Close a conflict: the other side is marked superseded (kept as history), status back to active."""
    with open_scope(vault, user, agent) as mem:
        c = mem.resolve(conflict_id, keep, text)
    if as_json:
        emit({"resolved": c.to_json(), "kept": keep})
    else:
        click.echo(f"resolved {c.id} in {c.path}: kept {keep}")


@click.command()
@click.option("--dry-run", is_flag=True, help="Print the plan and change nothing.")
@scope_options
@json_option
@handle_errors
def gc(dry_run: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Archive old daily logs, reflections and done actions to memory/.archive/ (never deletes)."""
    with open_scope(vault, user, agent) as mem:
        plan = mem.gc(dry_run=dry_run)
        lines = plan.lines(mem.vault.root)
    if as_json:
        emit({"dry_run": dry_run, "plan": lines})
        return
    click.echo(("plan (nothing changed):" if dry_run else "done:") if lines else "nothing to archive")
    for line in lines:
        click.echo(f"  {line}")


@click.command()
@click.option("--date", "day", default=None, metavar="YYYY-MM-DD", help="The day to reflect on (default: today).")
@scope_options
@json_option
@handle_errors
def reflect(day: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Write memory/reflections/DAY.md: a summary of the day's log, open conflicts and stale files."""
    with open_scope(vault, user, agent) as mem:
        path = mem.relpath(mem.reflect(day))
        status = mem.knowledge_status
    if as_json:
        emit({"path": path, "status": status})
    else:
        click.echo(f"wrote {path} ({status})")


@click.command()
@click.argument("query")
@click.option("--archive", is_flag=True, help="Search archived files too.")
@scope_options
@json_option
@handle_errors
def lookup(query: str, archive: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Find knowledge the cheap way first: INDEX.md, then the named file, then search."""
    with open_scope(vault, user, agent) as mem:
        res = mem.lookup(query, archive=archive)
    if as_json:
        emit(res.to_json())
        return
    click.echo(f"answered by: {res.level}")
    for f in res.files:
        click.echo(f"  {f}")
    if res.text:
        click.echo(res.text)
    for h in res.hits:
        click.echo(f"  [{h['kind']}] {h['path']}: {h['text'][:160]}")
    if res.level == "search" and not res.hits:
        click.echo("  nothing found" + ("" if archive else "; try --archive"))


@click.command()
@click.option("--from", "from_agent", required=True, help="The sub-agent whose daily-log blocks to copy (same user).")
@scope_options
@json_option
@handle_errors
def aggregate(from_agent: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Copy a sub-agent's new log blocks into this agent's daily logs (read-only on the source)."""
    with open_scope(vault, user, agent) as mem:
        n = mem.aggregate(from_agent)
    if as_json:
        emit({"copied": n})
    else:
        click.echo(f"copied {n} new block(s) from {from_agent}")


COMMANDS = (now_, log_, note, conflicts, resolve, gc, reflect, lookup, aggregate)
