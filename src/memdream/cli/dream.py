"""Maintaining the memory: dream, undo, flush, and the daemon that schedules them."""

from __future__ import annotations

import sys

import click

from memdream.cli.common import emit, handle_errors, json_option, now, open_scope, scope_options
from memdream.memory import PHASES, Scheduler


@click.command()
@click.option("--days", type=click.IntRange(1, 30), default=3, show_default=True, help="Days of daily memory the distillation reads (1-30).")
@click.option(
    "--phase",
    "phases",
    multiple=True,
    type=click.Choice(PHASES),
    help="Run only this phase (repeatable). Default: all; the model phases are skipped when no model is configured.",
)
@click.option("--dry-run", is_flag=True, help="Plan and print the diary; change nothing.")
@scope_options
@json_option
@handle_errors
def dream(days: int, phases: tuple[str, ...], dry_run: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Tidy the memory: archive, merge, promote (light); consolidate with a model (deep, distill, replay, profile).

    Every change is checked (nothing lost, resident budget, canary queries, no secrets)
    and written to the dream diary memory/dreams/YYYY-MM-DD.md; 'memdream undo' reverts it.
    """
    with open_scope(vault, user, agent) as mem:
        say = None if as_json else (lambda p: click.echo(f"… {p}", err=True))
        report = mem.dream(list(phases) or None, days=days, dry_run=dry_run, progress=say)
    if as_json:
        emit(report.to_json())
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


@click.command()
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@scope_options
@json_option
@handle_errors
def undo(yes: bool, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Revert the last dream (git revert in a git vault; otherwise from the dream ledger)."""
    with open_scope(vault, user, agent) as mem:
        rec = mem.last_dream()
        if rec is not None and not yes and not as_json:
            click.confirm(f"undo dream {rec['run']} ({len(rec.get('changes', {}))} file(s))?", abort=True)
        out = mem.undo()
    if as_json:
        emit(out)
    else:
        click.echo(f"undid dream {out['undone']} by {out['how']}: " + ", ".join(out["files"]))


@click.command()
@click.option("--day", default=None, metavar="YYYY-MM-DD", help="The day whose conversations to summarize (default: today).")
@scope_options
@json_option
@handle_errors
def flush(day: str | None, vault: str | None, user: str | None, agent: str | None, as_json: bool) -> None:
    """Summarize the day's stored conversations into the daily memory memory/YYYY-MM-DD.md (needs a model)."""
    with open_scope(vault, user, agent) as mem:
        rep = mem.flush(day=day)
    if as_json:
        emit(rep.to_json())
    else:
        click.echo(f"{rep.status}: {rep.message}" + (f" ({rep.log})" if rep.log else "") + (f"; model time {rep.seconds:.1f} s" if rep.seconds else ""))
        for r in rep.rejected:
            click.echo(f"  rejected {r['what']}: {r['why']}")


@click.command()
@click.option("--once", is_flag=True, help="Run what is due now and exit (for cron or systemd timers).")
@click.option("--tick", type=click.FloatRange(1, 3600), default=60, show_default=True, help="Seconds between looks at the clock.")
@scope_options
@handle_errors
def daemon(once: bool, tick: float, vault: str | None, user: str | None, agent: str | None) -> None:
    """Run the dream scheduler: light hourly, flush at 23:55, model phases nightly; catches up after downtime."""

    def say(msg: str) -> None:
        click.echo(f"{now()}  {msg}")

    sched = Scheduler(lambda: open_scope(vault, user, agent), tick=tick, say=say)
    try:
        sched.run(once=once)
    except KeyboardInterrupt:
        click.echo("stopped")
    if once and sched.errors:
        sys.exit(1)


COMMANDS = (dream, undo, flush, daemon)
