"""The `memdream` command: each command parses options, makes one facade call, prints.

Exit codes: 0 ok, 1 refused input or a problem found, 2 usage error.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from memdream import __version__
from memdream.errors import MemdreamError
from memdream.model.entry import LAYERS, TYPES, Entry


def _scope_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--agent", envvar="MEMDREAM_AGENT", default=None, help="Agent name of the scope [env MEMDREAM_AGENT; default main].")(fn)
    fn = click.option("--user", envvar="MEMDREAM_USER", default=None, help="User name of the scope [env MEMDREAM_USER; default me].")(fn)
    fn = click.option("--vault", envvar="MEMDREAM_VAULT", default=None, type=click.Path(file_okay=False), help="Vault folder [env MEMDREAM_VAULT; default ~/.memdream].")(fn)
    return fn


_json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")


def _handle_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _open(vault: str | None, user: str | None, agent: str | None, create: bool = False):  # type: ignore[no-untyped-def]
    from memdream.memory import open_memory

    return open_memory(vault, user, agent, create=create)


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _when(d: Any) -> str:
    return d.strftime("%Y-%m-%d %H:%M") if d is not None else "…"


def _line(e: Entry) -> str:
    flags = []
    if e.pending:
        flags.append(f"pending: {e.pending}, see memdream conflicts")
    if e.pinned:
        flags.append("pinned")
    if e.subject:
        flags.append(f"subject={e.subject}")
    if e.valid_to is not None:
        flags.append(f"ended {_when(e.valid_to)}" + (f" ({e.end})" if e.end else ""))
    extra = f"  [{', '.join(flags)}]" if flags else ""
    return f"{e.id or '-':6}  {e.effective_type:11}  {e.text}{extra}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="memdream")
def cli() -> None:
    """memdream: long-term memory for AI agents, one Markdown line per memory.

    Files are the truth (scopes/<agent>/<user>/MEMORY.md and memory/recall/*.md in the
    vault); a derived SQLite index under .memdream/ makes them fast to search.
    """


@cli.command()
@_scope_options
@_handle_errors
def init(vault: str | None, user: str | None, agent: str | None) -> None:
    """Create a vault (and a commented memdream.toml) if there is none."""
    from memdream.config import CONFIG_TEMPLATE
    from memdream.memory import open_memory

    mem = open_memory(vault, user, agent, create=True)
    created_cfg = False
    if not mem.vault.config_path.exists():
        mem.vault.config_path.write_text(CONFIG_TEMPLATE, encoding="utf-8")
        created_cfg = True
    click.echo(f"vault ready at {mem.vault.root}" + (" (memdream.toml written)" if created_cfg else ""))
    click.echo(f'next: memdream remember "I prefer dark themes" --vault {mem.vault.root}')


@cli.command()
@click.argument("text")
@click.option("--type", "type_", type=click.Choice(TYPES), default=None, help="Memory type; guessed from the text when omitted.")
@click.option("--subject", default=None, help="Subject key (e.g. 所在地, location): a new value for the same subject supersedes the old one.")
@click.option("--pin", is_flag=True, help="Pin it: always in the resident snapshot, never touched by dreams.")
@_scope_options
@_json_option
@_handle_errors
def remember(text: str, type_: str | None, subject: str | None, pin: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Remember TEXT (one fact, preference, rule, ...). Secrets are refused (exit 1)."""
    with _open(vault, user, agent, create=True) as mem:
        out = mem.write(text, type=type_, subject=subject, pin=pin)
    if as_json:
        _emit(out.to_json())
        return
    e = out.entry
    if out.action == "duplicate":
        click.echo(f"already known as {e.id} (similarity {out.similarity:.2f}); refreshed it instead of adding a copy")
    else:
        click.echo(f"remembered {e.id} ({e.effective_type}, {e.layer} layer)")
        for old in out.superseded:
            click.echo(f"  supersedes {old.id}: {old.text}  (valid until {_when(old.valid_to)})")


@cli.command()
@click.argument("entry_id")
@click.option("--hard", is_flag=True, help="Delete the line from the files for good (asks first).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation with --hard.")
@_scope_options
@_json_option
@_handle_errors
def forget(entry_id: str, hard: bool, yes: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Forget ENTRY_ID: end its validity and move it to the archive (or delete it with --hard)."""
    with _open(vault, user, agent) as mem:
        if hard and not yes:
            e = mem.get(entry_id)
            if not click.confirm(f"Delete {entry_id} ({e.text!r}) for good? History of it will be gone", default=False):
                click.echo("nothing deleted")
                sys.exit(1)
        e = mem.forget(entry_id, hard=hard)
    if as_json:
        _emit(e.to_json())
    else:
        click.echo(f"deleted {entry_id}: {e.text}" if hard else f"forgot {entry_id} (archived, still in the files): {e.text}")


def _pin_command(pinned: bool) -> Callable[..., None]:
    @_scope_options
    @_json_option
    @_handle_errors
    def command(entry_id: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
        with _open(vault, user, agent) as mem:
            e = mem.pin(entry_id, pinned=pinned)
        if as_json:
            _emit(e.to_json())
        else:
            click.echo(f"{'pinned' if pinned else 'unpinned'} {e.id}: {e.text}")

    return command


cli.command("pin", help="Pin ENTRY_ID: always in the resident snapshot, never touched by dreams.")(
    click.argument("entry_id")(_pin_command(True))
)
cli.command("unpin", help="Unpin ENTRY_ID.")(click.argument("entry_id")(_pin_command(False)))


@cli.command()
@click.argument("subject_or_id")
@_scope_options
@_json_option
@_handle_errors
def history(subject_or_id: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """The supersede trail of a subject (or of an entry id) with validity windows."""
    with _open(vault, user, agent) as mem:
        trail = mem.history(subject_or_id)
    if as_json:
        _emit({"subject": subject_or_id, "entries": [e.to_json() for e in trail]})
        return
    for e in trail:
        state = "current" if e.valid_to is None else (e.end or "ended")
        sup = f"  supersedes {e.supersedes}" if e.supersedes else ""
        click.echo(f"{_when(e.valid_from or e.created_at)} → {_when(e.valid_to) if e.valid_to else 'now':16}  {e.id}  {e.text}  [{state}]{sup}")


@cli.command("list")
@click.option("--layer", type=click.Choice(LAYERS), default=None, help="Only this layer (default: resident and recall).")
@click.option("--all", "include_ended", is_flag=True, help="Include superseded, forgotten and archived entries.")
@_scope_options
@_json_option
@_handle_errors
def list_(layer: str | None, include_ended: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """List memories by layer."""
    with _open(vault, user, agent) as mem:
        entries = mem.list(layer=layer, include_ended=include_ended)
    if as_json:
        _emit({"entries": [e.to_json() for e in entries]})
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
        click.echo(_line(e))


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many memories to return.")
@click.option("--as-of", "as_of", default=None, metavar="DATE", help="Answer as of a past date or time (YYYY-MM-DD = end of that day).")
@click.option("--explain", is_flag=True, help="Show each hit's score parts: relevance, lifted by recency and importance.")
@_scope_options
@_json_option
@_handle_errors
def recall(query: str, k: int, as_of: str | None, explain: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Recall the memories that best fit QUERY (relevance, lifted by recency and importance)."""
    with _open(vault, user, agent) as mem:
        hits = mem.recall(query, k=k, as_of=as_of)
        warning = mem.last_warning
    if warning:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        _emit({"query": query, "as_of": as_of, "hits": [h.to_json() for h in hits], "warning": warning or None})
        return
    if not hits:
        click.echo("nothing found" + (f" valid at {as_of}" if as_of else "") + "; try other words, or 'memdream list'")
    for h in hits:
        click.echo(f"{h.score:5.2f}  {_line(h.entry)}")
        if explain:
            t = h.trace
            cos = f", cosine {t.cosine:.2f} -> dense {t.dense or 0.0:.2f}" if t.cosine is not None else ""
            click.echo(
                f"       = relevance {t.relevance:.2f} ({t.fusion}: keyword {t.bm25:.2f}{cos})"
                f" x lift {t.lift:.2f} (from recency {t.recency:.2f}, age {t.age_days:.1f} d, half-life 30 d;"
                f" importance {t.importance:.2f} = prior {t.prior:.2f} + salience {t.salience:.2f} + recalls {t.hit_bonus:.2f})"
            )


@cli.command()
@click.option("--query", "-q", default=None, help="The user's message: adds recalled entries and transcript snippets.")
@click.option("--budget", type=click.IntRange(50, 200_000), default=2000, show_default=True, help="Token budget of the whole block.")
@click.option("--group", is_flag=True, help="A group conversation: no active recall from past transcripts.")
@_scope_options
@_json_option
@_handle_errors
def context(query: str | None, budget: int, group: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Print the memory block an agent injects: resident snapshot, recalled entries, snippets."""
    with _open(vault, user, agent) as mem:
        block = mem.context(query=query, budget=budget, one_to_one=not group)
    if as_json:
        _emit(block.to_json())
    else:
        click.echo(block.render(), nl=False)


@cli.command()
@click.argument("query")
@click.option("--raw", "raw", is_flag=True, help="Search stored conversation transcripts (the raw layer).")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=5, show_default=True)
@_scope_options
@_json_option
@_handle_errors
def search(query: str, raw: bool, k: int, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Full-text search; with --raw, over stored transcripts instead of memories."""
    with _open(vault, user, agent) as mem:
        if raw:
            found = mem.search_raw(query, k=k)
            if as_json:
                _emit({"query": query, "snippets": [s.to_json() for s in found]})
                return
            if not found:
                click.echo("no transcript matches; import some with 'memdream import --from FORMAT PATH'")
            for s in found:
                click.echo(f"{s.path}  [{s.role}{' ' + s.at if s.at else ''}]\n    {s.text}")
        else:
            hits = mem.recall(query, k=k)
            if as_json:
                _emit({"query": query, "hits": [h.to_json() for h in hits]})
                return
            for h in hits:
                click.echo(_line(h.entry))


@cli.command("import")
@click.argument("path", type=click.Path(exists=True))
@click.option(
    "--from",
    "fmt",
    type=click.Choice(["jsonl", "chatgpt", "markdown", "claude-code", "openclaw", "cowagent", "vault"]),
    required=True,
    help="jsonl, chatgpt (the export .zip or its conversations.json), markdown: conversations for the raw layer. claude-code, openclaw, cowagent: another memory system's folder. vault: a copy 'memdream export' wrote (a folder or .tar.gz), restored.",
)
@click.option("--from-scope", "from_scope", default=None, metavar="AGENT/USER", help="PATH is inside that scope of this vault and you mean to copy its memories here (refused without it).")
@_scope_options
@_json_option
@_handle_errors
def import_(path: str, fmt: str, from_scope: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Import conversations or another memory system's folder (importing twice adds nothing).

    Conversations are stored verbatim in the raw layer. From a memory folder, list items
    become memories through the write path (secrets refused, repeats folded), daily logs join
    the daily memory, and the other files are kept verbatim and searchable. A folder inside
    another scope of the same vault is refused unless --from-scope names that scope.
    """
    with _open(vault, user, agent, create=True) as mem:
        folder = fmt in ("claude-code", "openclaw", "cowagent")
        if fmt == "vault":
            report = mem.import_vault(path)
        else:
            mem.check_import_source(path, from_scope)
            report = mem.import_folder(fmt, path, from_scope) if folder else mem.import_transcripts(fmt, path)
    if as_json:
        _emit(report.to_json())
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


@cli.command("export")
@click.option("--to", "to", required=True, metavar="DIR|FILE.tar.gz", help="A new (or empty) folder, or a .tar.gz file to write.")
@click.option("--scope", "only", default=None, metavar="USER/AGENT", help="Only this scope (e.g. me/main); default: the whole vault.")
@_scope_options
@_json_option
@_handle_errors
def export_(to: str, only: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Copy the vault's files (Markdown, dream ledgers, memdream.toml) to DIR or FILE.tar.gz.

    The index under .memdream/ is left out: it is derived ('memdream index rebuild').
    Restore with 'memdream import --from vault DIR|FILE.tar.gz --vault NEW'. A plain backup
    is also just a copy of the vault folder, or 'git init' in it (each dream is then a commit).
    """
    from memdream.errors import RefusedInput
    from memdream.store.vault import Scope

    scope = None
    if only is not None:
        u, sep, a = only.partition("/")
        if not sep or not u or not a:
            raise RefusedInput(f"--scope must be USER/AGENT, not {only!r}", "e.g. --scope me/main")
        scope = Scope(u, a)
    with _open(vault, user, agent) as mem:
        if scope is not None and scope not in mem.vault.scopes():
            raise RefusedInput(f"there is no scope {only} in {mem.vault.root}", "memdream status lists the scopes")
        rep = mem.export(to, scope)
    if as_json:
        _emit(rep.to_json())
    else:
        click.echo(f"exported {len(rep.files)} file(s), {rep.bytes:,} bytes, to {rep.to} (the index is left out: it is derived)")


@cli.command("now")
@click.option("--set", "source", default=None, metavar="FILE|-", help="Replace NOW.md with this file's text ('-' reads standard input).")
@_scope_options
@_json_option
@_handle_errors
def now_(source: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Show NOW.md, the workbench (current state and priorities), or replace it with --set."""
    text = None
    if source is not None:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    with _open(vault, user, agent, create=text is not None) as mem:
        current = mem.now(text)
        path = mem.vault.relpath(mem.knowledge.now_path)
    if as_json:
        _emit({"path": path, "text": current})
    elif text is not None:
        click.echo(f"NOW.md replaced ({len(current)} characters)")
    else:
        click.echo(current or "NOW.md is empty; set it with: memdream now --set FILE", nl=not current.endswith("\n"))


@cli.command("log")
@click.argument("title")
@click.argument("body", required=False, default="")
@_scope_options
@_json_option
@_handle_errors
def log_(title: str, body: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Append "### HH:MM — TITLE" (and BODY) to today's daily log, memory/YYYY-MM-DD.md."""
    with _open(vault, user, agent, create=True) as mem:
        path, heading = mem.log(title, body)
        rel = mem.vault.relpath(path)
    if as_json:
        _emit({"path": rel, "heading": heading})
    else:
        click.echo(f"logged to {rel}: {heading}")


@cli.group()
def note() -> None:
    """Knowledge files (lessons, decisions, people, projects, preferences) with frontmatter."""


@note.command("add")
@click.argument("category", type=click.Choice(["lessons", "decisions", "people", "projects", "preferences"]))
@click.argument("topic")
@click.argument("text")
@click.option("--priority", type=click.Choice(["🔴", "🟡", "⚪"]), default=None, help="🔴 core (never archived), 🟡 important, ⚪ reference.")
@click.option("--tag", "tags", multiple=True, help="A tag for the frontmatter (repeatable).")
@_scope_options
@_json_option
@_handle_errors
def note_add(category: str, topic: str, text: str, priority: str | None, tags: tuple[str, ...], vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Read the topic's file, then ADD, UPDATE (old paragraph marked superseded), NOOP or CONFLICT."""
    with _open(vault, user, agent, create=True) as mem:
        out = mem.note(category, topic, text, priority, tags)
    if as_json:
        _emit(out.to_json())
    else:
        click.echo(f"{out.kind}: {out.path} ({out.decision.why})")
        if out.model:
            click.echo(f"  model: {out.model}")
        if out.kind == "CONFLICT":
            click.echo("  both versions are kept; decide with: memdream conflicts, then memdream resolve ID --keep a|b|both|edit")


@note.command("list")
@_scope_options
@_json_option
@_handle_errors
def note_list(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Knowledge files with priority, status and last verification (what INDEX.md shows)."""
    with _open(vault, user, agent) as mem:
        notes = mem.knowledge.notes()
    if as_json:
        _emit({"notes": [{"path": n.path, "category": n.category, "title": n.title, "priority": n.priority, "status": n.status,
                          "last_verified": n.last_verified.isoformat() if n.last_verified else None, "stale": n.stale} for n in notes]})  # fmt: skip
        return
    for n in notes:
        flag = " ⚠️ stale" if n.stale else ""
        click.echo(f"{n.priority} {n.status:9} {n.last_verified or '—'}  {n.path}{flag}")


@cli.command()
@_scope_options
@_json_option
@_handle_errors
def conflicts(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """List every open conflict with both sides and where they are, and the memories waiting for your confirmation (p-...)."""
    with _open(vault, user, agent) as mem:
        found = mem.conflicts()
    if as_json:
        _emit({"conflicts": [c.to_json() for c in found]})
        return
    if not found:
        click.echo("no open conflicts")
    for c in found:
        click.echo(f"{c.id}  {c.path}  ({c.day})")
        click.echo(f"   a: {c.a}")
        click.echo(f"   b: {c.b}")


@cli.command()
@click.argument("conflict_id")
@click.option("--keep", type=click.Choice(["a", "b", "both", "edit"]), required=True, help="a: the older text, b: the newer, both, or edit (with --text). For a memory waiting for confirmation (p-...): b confirms it, a drops it.")
@click.option("--text", default=None, help="The corrected text, with --keep edit.")
@_scope_options
@_json_option
@_handle_errors
def resolve(conflict_id: str, keep: str, text: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Close a conflict: the other side is marked superseded (kept as history), status back to active."""
    with _open(vault, user, agent) as mem:
        c = mem.resolve(conflict_id, keep, text)
    if as_json:
        _emit({"resolved": c.to_json(), "kept": keep})
    else:
        click.echo(f"resolved {c.id} in {c.path}: kept {keep}")


@cli.command()
@click.option("--dry-run", is_flag=True, help="Print the plan and change nothing.")
@_scope_options
@_json_option
@_handle_errors
def gc(dry_run: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Archive old daily logs, reflections and done actions to memory/.archive/ (never deletes)."""
    with _open(vault, user, agent) as mem:
        plan = mem.gc(dry_run=dry_run)
        lines = plan.lines(mem.vault.root)
    if as_json:
        _emit({"dry_run": dry_run, "plan": lines})
        return
    click.echo(("plan (nothing changed):" if dry_run else "done:") if lines else "nothing to archive")
    for line in lines:
        click.echo(f"  {line}")


@cli.command()
@click.option("--date", "day", default=None, metavar="YYYY-MM-DD", help="The day to reflect on (default: today).")
@_scope_options
@_json_option
@_handle_errors
def reflect(day: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Write memory/reflections/DAY.md: a summary of the day's log, open conflicts and stale files."""
    with _open(vault, user, agent) as mem:
        path = mem.vault.relpath(mem.reflect(day))
        status = mem.knowledge.last_status
    if as_json:
        _emit({"path": path, "status": status})
    else:
        click.echo(f"wrote {path} ({status})")


@cli.command()
@click.argument("query")
@click.option("--archive", is_flag=True, help="Search archived files too.")
@_scope_options
@_json_option
@_handle_errors
def lookup(query: str, archive: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Find knowledge the cheap way first: INDEX.md, then the named file, then search."""
    with _open(vault, user, agent) as mem:
        res = mem.lookup(query, archive=archive)
    if as_json:
        _emit(res.to_json())
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


@cli.command()
@click.option("--from", "from_agent", required=True, help="The sub-agent whose daily-log blocks to copy (same user).")
@_scope_options
@_json_option
@_handle_errors
def aggregate(from_agent: str, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Copy a sub-agent's new log blocks into this agent's daily logs (read-only on the source)."""
    with _open(vault, user, agent) as mem:
        n = mem.aggregate(from_agent)
    if as_json:
        _emit({"copied": n})
    else:
        click.echo(f"copied {n} new block(s) from {from_agent}")


@cli.group()
def index() -> None:
    """The derived SQLite index (safe to delete; rebuilt from the files)."""


@index.command("rebuild")
@_scope_options
@_json_option
@_handle_errors
def index_rebuild(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Delete the index and build it again from every scope's files."""
    import time

    with _open(vault, user, agent) as mem:
        from memdream.index.raw import sync_raw

        start = time.perf_counter()
        n = mem.index.rebuild(mem.vault.scopes())
        for scope in mem.vault.scopes():
            sync_raw(mem.index, scope)
        took = time.perf_counter() - start
    if as_json:
        _emit({"entries": n, "seconds": round(took, 3)})
    else:
        click.echo(f"index rebuilt: {n} entries in {took:.2f} s")


@index.command("embed")
@_scope_options
@_json_option
@_handle_errors
def index_embed(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Embed the scope's memories that have no vector for the configured embedder yet."""
    with _open(vault, user, agent) as mem:
        if mem.vectors is None:
            if as_json:
                _emit({"embedded": 0, "embedder": "none"})
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
        _emit({"embedded": n, "embedder": model})
    else:
        click.echo(f"embedded {n} memories with {model}")


@index.command("sync")
@_scope_options
@_json_option
@_handle_errors
def index_sync(vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Catch the index up with edits made to the files (every command also does this)."""
    with _open(vault, user, agent) as mem:
        n = sum(mem.index.sync_scope(s) for s in mem.vault.scopes())
    if as_json:
        _emit({"files_changed": n})
    else:
        click.echo(f"index synced: {n} file(s) re-read")


@cli.command()
@click.option("--fix", is_flag=True, help="First delete the temp files interrupted writes left (older than a minute) and put back acknowledged memories no file holds any more, then check.")
@_scope_options
@_json_option
@_handle_errors
def doctor(fix: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Check that every file parses and that the index agrees with the files (exit 1 on problems)."""
    from memdream.doctor import check_vault, remove_temp_files, restore_acknowledged

    with _open(vault, user, agent) as mem:
        removed = remove_temp_files(mem.vault, mem.writer) if fix else []
        restored, unrestored = restore_acknowledged(mem.vault, mem.writer) if fix else ([], [])
        problems = check_vault(mem.vault, mem.index)
    if as_json:
        _emit({"ok": not problems, "problems": [p.to_json() for p in problems], "removed": removed, "restored": restored, "not_restored": unrestored})
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


@cli.command()
@click.option("--days", type=click.IntRange(1, 30), default=3, show_default=True, help="Days of daily memory the distillation reads (1-30).")
@click.option(
    "--phase",
    "phases",
    multiple=True,
    type=click.Choice(["light", "deep", "distill", "replay", "profile"]),
    help="Run only this phase (repeatable). Default: all; the model phases are skipped when no model is configured.",
)
@click.option("--dry-run", is_flag=True, help="Plan and print the diary; change nothing.")
@_scope_options
@_json_option
@_handle_errors
def dream(days: int, phases: tuple[str, ...], dry_run: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Tidy the memory: archive, merge, promote (light); consolidate with a model (deep, distill, replay, profile).

    Every change is checked (nothing lost, resident budget, canary queries, no secrets)
    and written to the dream diary memory/dreams/YYYY-MM-DD.md; 'memdream undo' reverts it.
    """
    with _open(vault, user, agent) as mem:
        say = None if as_json else (lambda p: click.echo(f"… {p}", err=True))
        report = mem.dream(list(phases) or None, days=days, dry_run=dry_run, progress=say)
    if as_json:
        _emit(report.to_json())
        return
    shown: set[str] = set()
    for p in report.phases:
        if p.status == "skipped" and p.message in shown:
            continue  # e.g. one line for every phase skipped for want of a model
        shown.add(p.message)
        names = ", ".join(q.phase for q in report.phases if q.status == "skipped" and q.message == p.message) if p.status == "skipped" else p.phase
        line = f"{names}: {p.status}" + (f", {p.message}" if p.message else "")
        if p.rejected:
            line += f" ({len(p.rejected)} rejected)"
        if p.seconds:
            line += f" [model {p.seconds:.1f} s]"
        click.echo(line)
        for f in p.failed:
            click.echo(f"  check failed: {f}")
    if dry_run:
        click.echo("\n" + report.diary.rstrip() if report.diary.strip() else "\nnothing to do")
    elif report.diary:
        click.echo(f"diary: {report.diary}" + (f"  commit: {report.commit[:10]}" if report.commit else ""))


@cli.command()
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_scope_options
@_json_option
@_handle_errors
def undo(yes: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Revert the last dream (git revert in a git vault; otherwise from the dream ledger)."""
    with _open(vault, user, agent) as mem:
        from memdream.dream.ledger import last_dream

        rec = last_dream(mem)
        if rec is not None and not yes and not as_json:
            click.confirm(f"undo dream {rec['run']} ({len(rec.get('changes', {}))} file(s))?", abort=True)
        out = mem.undo()
    if as_json:
        _emit(out)
    else:
        click.echo(f"undid dream {out['undone']} by {out['how']}: " + ", ".join(out["files"]))


@cli.command()
@click.option("--day", default=None, metavar="YYYY-MM-DD", help="The day whose conversations to summarize (default: today).")
@_scope_options
@_json_option
@_handle_errors
def flush(day: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Summarize the day's stored conversations into the daily memory memory/YYYY-MM-DD.md (needs a model)."""
    with _open(vault, user, agent) as mem:
        rep = mem.flush(day=day)
    if as_json:
        _emit(rep.to_json())
    else:
        click.echo(f"{rep.status}: {rep.message}" + (f" ({rep.log})" if rep.log else "") + (f"; model time {rep.seconds:.1f} s" if rep.seconds else ""))
        for r in rep.rejected:
            click.echo(f"  rejected {r['what']}: {r['why']}")


@cli.command()
@click.option("--once", is_flag=True, help="Run what is due now and exit (for cron or systemd timers).")
@click.option("--tick", type=click.FloatRange(1, 3600), default=60, show_default=True, help="Seconds between looks at the clock.")
@_scope_options
@_handle_errors
def daemon(once: bool, tick: float, vault: str | None, user: str | None, agent: str | None) -> None:
    """Run the dream scheduler: light hourly, flush at 23:55, model phases nightly; catches up after downtime."""
    from memdream.dream.schedule import Scheduler

    def say(msg: str) -> None:
        click.echo(f"{_now()}  {msg}")

    sched = Scheduler(lambda: _open(vault, user, agent), tick=tick, say=say)
    try:
        sched.run(once=once)
    except KeyboardInterrupt:
        click.echo("stopped")
    if once and sched.errors:
        sys.exit(1)


@cli.command()
@click.option("--http", "http", default=None, metavar="HOST:PORT", help="Serve streamable HTTP on HOST:PORT (e.g. 127.0.0.1:8765) instead of stdio.")
@click.option("--token", envvar="MEMDREAM_MCP_TOKEN", default=None, help="Bearer token HTTP clients must send [env MEMDREAM_MCP_TOKEN]; generated and printed when absent.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background while serving.")
@_scope_options
@_handle_errors
def serve(http: str | None, token: str | None, scheduler: bool, vault: str | None, user: str | None, agent: str | None) -> None:
    """Serve this scope's memory over MCP (stdio by default; needs the 'mcp' extra).

    Tools: remember, recall, context, forget, pin, history, log, dream, conflicts, resolve.
    Resources: memdream://MEMORY.md, memdream://NOW.md, memdream://daily/today. The scope is
    fixed by --vault/--user/--agent; no tool argument can reach another scope.
    """
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MemdreamError("the MCP server needs the official MCP SDK (the 'mcp' extra)", "in the memdream clone: .venv/bin/pip install -e '.[mcp]' (make demo installs it too)") from exc
    from memdream.mcp.server import build_server, new_token, serve_http

    mem = _open(vault, user, agent, create=True)
    sched = _background_scheduler(vault, user, agent, loud=True) if scheduler else None
    try:
        if http is None:
            build_server(mem).run("stdio")
            return
        host, _, port = http.rpartition(":")
        if not host or not port.isdigit():
            raise click.BadParameter("use HOST:PORT, e.g. 127.0.0.1:8765", param_hint="--http")
        if not token:
            token = new_token()
            click.echo(f"memdream MCP over HTTP: bearer token {token}", err=True)
        click.echo(f"serving scope {mem.scope.key} of {mem.vault.root} at http://{host}:{port}/mcp", err=True)
        serve_http(mem, host, int(port), token)
    finally:
        if sched is not None:
            sched.stop(timeout=5)
        mem.close()


@cli.command()
@click.option("--budget", type=click.IntRange(500, 200_000), default=6000, show_default=True, help="Tokens of conversation kept in the model's context; older turns are summarized into the daily memory.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background during the chat (model jobs already due at the start wait for their next slot).")
@_scope_options
@_handle_errors
def chat(budget: int, scheduler: bool, vault: str | None, user: str | None, agent: str | None) -> None:
    """Chat with the configured model, with memory (needs [llm] in memdream.toml or MEMDREAM_LLM_*).

    The model sees the resident memory, the memories recalled for each message and snippets
    of past conversations, and can add, update, delete and pin memories (secrets refused).
    Slash commands: /remember, /forget, /recall, /memory show, /memory dream [N], /now, /help, /exit.
    """
    from memdream.chat.session import ChatSession
    from memdream.llm.client import LLMError

    mem = _open(vault, user, agent, create=True)
    sched = None
    try:
        session = ChatSession(mem, mem.llm, budget)  # type: ignore[arg-type]
        if scheduler:
            # Quiet (the chat owns the terminal), and the model jobs already due wait for their next
            # slot: a chat's first turn never starts a night's dream on a one-slot model server.
            sched = _background_scheduler(vault, user, agent, loud=False, defer=True)
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


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; keep the loopback default unless a TLS proxy is in front.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--token", envvar="MEMDREAM_WEB_TOKEN", default=None, help="Access token [env MEMDREAM_WEB_TOKEN]; generated and printed when absent.")
@click.option("--scheduler/--no-scheduler", default=True, show_default=True, help="Run the dream scheduler in the background.")
@_scope_options
@_handle_errors
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

    mem = _open(vault, user, agent, create=True)
    supplied = bool(token)
    token = token or new_token()
    sched = _background_scheduler(vault, user, agent, loud=True) if scheduler else None
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


def _background_scheduler(vault: str | None, user: str | None, agent: str | None, loud: bool, defer: bool = False):  # type: ignore[no-untyped-def]
    """The dream scheduler as a background thread of a long-running shell, with its own Memory."""
    from memdream.dream.schedule import Scheduler

    sched = Scheduler(lambda: _open(vault, user, agent), say=(lambda m: click.echo(f"{_now()}  {m}", err=True)) if loud else (lambda m: None), defer=defer)
    sched.start()
    return sched


def _now() -> str:
    from datetime import datetime

    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


@cli.command()
@click.option("--keep", type=click.Path(file_okay=False), default=None, help="Build the demo vault here instead of a temporary folder.")
@_handle_errors
def demo(keep: str | None) -> None:
    """Tell the 所在地 story on a throwaway vault (no model, no network)."""
    from memdream.demo import run_demo

    run_demo(keep)


def main() -> None:
    cli(prog_name="memdream")


if __name__ == "__main__":
    main()
