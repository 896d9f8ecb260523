"""A dream: the phases in order, each planned and applied as a transaction (dream/phase.py),
the day's diary written as it goes (dream/diary.py), the phases' state kept for the next run
(dream/state.py); then one ledger record and, in a git vault, one commit. `undo` is in
dream/undo.py; an interrupted dream says so in the ledger and the diary.
"""

from __future__ import annotations

import secrets
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdream.dream import diary, gitvault, ledger
from memdream.dream import state as phase_state
from memdream.dream.diary import Book
from memdream.dream.phase import DEFAULT_DAYS, LLM_PHASES, MAX_DAYS, NO_MODEL, PHASES, PhaseReport, check_args, plan_phase, planners, run_phase
from memdream.dream.plan import Plan
from memdream.dream.undo import undo
from memdream.engine.edits import adopt
from memdream.engine.hits import flush_hits

if TYPE_CHECKING:
    from memdream.core import Core

__all__ = ["DEFAULT_DAYS", "LLM_PHASES", "MAX_DAYS", "PHASES", "DreamReport", "PhaseReport", "Stopped", "dream", "undo"]

# A dry run plans every phase on the memories as they are; a real run applies each phase
# before planning the next one, so after a phase with changes the next may plan otherwise.
CHAINED = (
    "_This dry run planned each phase on the memories as they are now. A real run applies each phase "
    "before the next one plans, so a phase after one with changes may plan differently "
    "(run the phases one at a time with --phase to see each on the result of the last)._"
)


@dataclass
class DreamReport:
    run: str
    started: datetime
    dry_run: bool
    phases: list[PhaseReport] = field(default_factory=list)
    diary: str = ""  # the diary file (relative to the vault), or the diary text in a dry run
    commit: str | None = None

    @property
    def changes(self) -> int:
        return sum(p.changes for p in self.phases)

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "started": self.started.isoformat(),
            "dry_run": self.dry_run,
            "changes": self.changes,
            "phases": [p.to_json() for p in self.phases],
            "diary": self.diary,
            "commit": self.commit,
        }


def dream(
    core: "Core",
    phases: list[str] | tuple[str, ...] | None = None,
    days: int = DEFAULT_DAYS,
    dry_run: bool = False,
    force: bool = True,
    progress: Callable[[str], None] | None = None,
) -> DreamReport:
    """Run the chosen phases (all by default). `force=False` (the scheduler) skips a phase
    whose input is unchanged since its last run.

    The ledger record and the diary are written as the dream goes: each phase that changes
    something records its changes inside its own transaction, so whatever stopped the dream
    afterwards (Ctrl-C, SIGTERM, a closed pipe, an exception in a later phase), everything
    still applied is in the ledger and `memdream undo` reverts it."""
    chosen = check_args(phases, days)
    where = _Where()
    with _signals_stop_the_dream(enabled=not dry_run):
        try:
            return _dream(core, chosen, days, dry_run, force, progress, where)
        except BaseException as exc:
            if not dry_run and where.book is not None:
                _interrupted(core, where, exc)
            raise


@dataclass
class _Where:
    """How far a dream got, for the note an interruption leaves."""

    phase: str = ""
    record: dict[str, Any] = field(default_factory=dict)
    book: Book | None = None


def _dream(core: "Core", chosen: list[str], days: int, dry_run: bool, force: bool, progress: Callable[[str], None] | None, where: _Where) -> DreamReport:
    now = core.clock.now()
    report = DreamReport(f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}", now, dry_run)
    state = ledger.load_state(core)
    git = not dry_run and gitvault.is_git_vault(core.vault.root)
    if git:
        gitvault.commit_all(core.vault.root, f"memdream: changes before dream {report.run}")
    if not dry_run:
        adopt(core)  # hand-written lines get their id first: a dream moves and marks lines by id
        flush_hits(core)  # the lifecycle reads recall counts from the files
    sections: list[str] = []
    said_no_model = False
    record: dict[str, Any] = {"run": report.run, "at": now.isoformat(), "phases": {}, "changes": {}, "replayed": []}
    plans = planners()
    where.record, where.book = record, Book(core, now)
    for phase in chosen:
        where.phase = phase
        if progress:
            progress(phase)
        core.sync()
        plan = plan_phase(core, phase, state, days, force, plans)
        pr, applied, recorded = run_phase(core, plan, record, dry_run, progress)
        if not plan.status and not dry_run:
            phase_state.after_phase(core, state, phase, plan, applied, now)
            if plan.replayed and not recorded and (applied is None or not applied.failed):
                record["replayed"] += plan.replayed
        record["phases"][phase] = pr.status
        report.phases.append(pr)
        _tell_diary(core, plan, pr, applied, sections, where.book, dry_run, said_no_model)
        said_no_model = said_no_model or plan.status == NO_MODEL
    if dry_run:
        report.diary = "\n".join(s.rstrip("\n") + "\n" for s in sections)
        planned = [p for p in report.phases if p.status == "dry run"]
        if len(planned) > 1 and any(p.changes for p in planned[:-1]):
            report.diary += "\n" + CHAINED + "\n"
        return report
    ledger.save_state(core, state)
    if report.changes or any(p.status in ("rolled back",) or p.rejected or p.seconds for p in report.phases):
        report.diary = core.vault.relpath(where.book.path)
        ledger.put(core, record)
        if git:
            report.commit = gitvault.commit_all(core.vault.root, _commit_message(report))
    return report


def _tell_diary(core: "Core", plan: Plan, pr: PhaseReport, applied: Any, sections: list[str], book: Book, dry_run: bool, said_no_model: bool) -> None:
    """The phase's diary section, if it did or was told anything (a model asked: the diary
    says what came of it); the model phases skipped for want of a model share one line."""
    if plan.status == NO_MODEL:
        if said_no_model:
            return
        plan = Plan("model phases", status=NO_MODEL)
    if pr.status != "nothing to do" or plan.rejected or plan.notes or plan.seconds:
        text = diary.section(plan, applied, core.clock.now(), dry_run)
        sections.append(text)
        if not dry_run:
            book.add(text, worth=bool(pr.changes) or pr.status == "rolled back" or bool(pr.rejected) or bool(plan.seconds))


class Stopped(SystemExit):
    """SIGTERM or SIGHUP during a dream: raised like Ctrl-C's KeyboardInterrupt, so the phase
    in progress is rolled back and the ledger stays true; the exit status is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


@contextmanager
def _signals_stop_the_dream(enabled: bool) -> Iterator[None]:
    """While a dream runs, SIGTERM and SIGHUP (whose default is to end the process between
    two writes) raise `Stopped` instead. Only in the main thread, and only where nobody else
    (a web server, the daemon's caller) handles them already."""
    old: dict[int, Any] = {}
    if enabled and threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
                old[sig] = signal.signal(sig, _raise_stopped)
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _interrupted(core: "Core", where: _Where, exc: BaseException) -> None:
    """Say in the ledger and the diary that the dream stopped, and what undo reverts."""
    book, record, phase = where.book, where.record, where.phase
    if book is None:
        return
    if isinstance(exc, Stopped):
        why = f"stopped by signal {signal.Signals(exc.signum).name}"
    elif isinstance(exc, KeyboardInterrupt):
        why = "interrupted (Ctrl-C)"
    elif isinstance(exc, BrokenPipeError):
        why = "its output pipe was closed"
    else:
        why = f"{type(exc).__name__}: {exc}"
    try:
        if record["changes"]:
            record["interrupted"] = f"{phase}: {why}"
            ledger.put(core, record)
            what = "What was applied before it stopped stays applied and is in the ledger: `memdream undo` reverts it."
        else:
            what = "Nothing had been changed."
        book.add(f"## {core.clock.now():%H:%M} — interrupted\n\nThe dream stopped during the {phase} phase ({why}). {what}\n", worth=bool(record["changes"]))
    except Exception:  # noqa: BLE001 - the error that stopped the dream is the one to report
        pass


def _commit_message(report: DreamReport) -> str:
    parts = [f"{p.phase} {p.changes}" for p in report.phases if p.changes]
    return f"dream {report.run}: " + (", ".join(parts) if parts else "no changes") + "\n\nmemdream undo reverts this commit."


