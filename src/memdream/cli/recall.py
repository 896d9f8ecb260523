"""Commands that find memories: recall, context, search."""

from __future__ import annotations

import click

from memdream.cli.common import emit, entry_line, handle_errors, json_option, open_scope, scope_options
from memdream.model.scoring import QUESTION_SHARE


@click.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many memories to return.")
@click.option("--as-of", "as_of", default=None, metavar="DATE", help="Answer as of a past date or time (YYYY-MM-DD = end of that day).")
@click.option("--explain", is_flag=True, help="Show each hit's score parts: relevance, lifted by recency and importance.")
@scope_options
@json_option
@handle_errors
def recall(query: str, k: int, as_of: str | None, explain: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Recall the memories that best fit QUERY (relevance, lifted by recency and importance)."""
    with open_scope(vault, user, agent) as mem:
        hits = mem.recall(query, k=k, as_of=as_of)
        warning = mem.last_warning
    if warning:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        emit({"query": query, "as_of": as_of, "hits": [h.to_json() for h in hits], "warning": warning or None})
        return
    if not hits:
        click.echo("nothing found" + (f" valid at {as_of}" if as_of else "") + "; try other words, or 'memdream list'")
    for h in hits:
        click.echo(f"{h.score:5.2f}  {entry_line(h.entry)}")
        if explain:
            t = h.trace
            cos = f", cosine {t.cosine:.2f} -> dense {t.dense or 0.0:.2f}" if t.cosine is not None else ""
            near = f"; said next to {t.near}, which matched: at least {t.context:.2f}" if t.context is not None else ""
            near += (f"; it writes out {t.day}, the day the query names" if t.day_written else f"; said on {t.day}, the day the query names") if t.day else ""
            near += f"; it ends asking: {QUESTION_SHARE:g} x its match {t.asked:.2f}" if t.asked is not None else ""
            click.echo(
                f"       = relevance {t.relevance:.2f} ({t.fusion}: keyword {t.bm25:.2f}{cos}{near})"
                f" x lift {t.lift:.2f} (from recency {t.recency:.2f}, age {t.age_days:.1f} d, half-life 30 d"
                f"{', not counted: the query asks about the past' if t.past else ''}"
                f"{'; the query asks about now: the full lift' if t.now else ''};"
                f" importance {t.importance:.2f} = prior {t.prior:.2f} + salience {t.salience:.2f} + recalls {t.hit_bonus:.2f})"
            )


@click.command()
@click.option("--query", "-q", default=None, help="The user's message: adds recalled entries and transcript snippets.")
@click.option("--budget", type=click.IntRange(50, 200_000), default=2000, show_default=True, help="Token budget of the whole block.")
@click.option("--group", is_flag=True, help="A group conversation: no active recall from past transcripts.")
@scope_options
@json_option
@handle_errors
def context(query: str | None, budget: int, group: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Print the memory block an agent injects: resident snapshot, recalled entries, snippets."""
    with open_scope(vault, user, agent) as mem:
        block = mem.context(query=query, budget=budget, one_to_one=not group)
    if as_json:
        emit(block.to_json())
    else:
        click.echo(block.render(), nl=False)


@click.command()
@click.argument("query")
@click.option("--raw", "raw", is_flag=True, help="Search stored conversation transcripts (the raw layer).")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=5, show_default=True)
@scope_options
@json_option
@handle_errors
def search(query: str, raw: bool, k: int, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Full-text search; with --raw, over stored transcripts instead of memories."""
    with open_scope(vault, user, agent) as mem:
        if raw:
            found = mem.search_raw(query, k=k)
            if as_json:
                emit({"query": query, "snippets": [s.to_json() for s in found]})
                return
            if not found:
                click.echo("no transcript matches; import some with 'memdream import --from FORMAT PATH'")
            for s in found:
                click.echo(f"{s.path}  [{s.role}{' ' + s.at if s.at else ''}]\n    {s.text}")
        else:
            hits = mem.recall(query, k=k)
            if as_json:
                emit({"query": query, "hits": [h.to_json() for h in hits]})
                return
            for h in hits:
                click.echo(entry_line(h.entry))


COMMANDS = (recall, context, search)
