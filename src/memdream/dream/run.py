"""A dream: the phases in order, each planned, applied as a transaction and written to the
diary; then one ledger record and, in a git vault, one commit. And `undo`.
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
from memdream.dream.apply import Applied, apply_plan
from memdream.dream.light import high_water
from memdream.dream.light import inputs as light_inputs
from memdream.dream.plan import UNCHANGED, Plan
from memdream.errors import NotFound, RefusedInput, VaultError
from memdream.llm.client import LLMError
from memdream.store.format import Document, Line, parse_document

if TYPE_CHECKING:
    from memdream.memory import Memory

PHASES = ("light", "deep", "distill", "replay", "profile")
LLM_PHASES = frozenset({"deep", "distill", "replay", "profile"})
DECLINED_KEPT = 500  # fingerprints of groups the model left alone, remembered so they are not sent again
DEFAULT_DAYS, MAX_DAYS = 3, 30  # `dream --days N`: the daily memories distillation reads (CowAgent: default 3, at most 30)
NO_MODEL = (
    "Skipped: no model is configured, so the phases that ask a model (deep, distill, replay, profile) did not run. "
    "Set [llm] base_url and model in memdream.toml, or MEMDREAM_LLM_BASE_URL and MEMDREAM_LLM_MODEL."
)

# A dry run plans every phase on the memories as they are; a real run applies each phase
# before planning the next one, so after a phase with changes the next may plan otherwise.
CHAINED = (
    "_This dry run planned each phase on the memories as they are now. A real run applies each phase "
    "before the next one plans, so a phase after one with changes may plan differently "
    "(run the phases one at a time with --phase to see each on the result of the last)._"
)


@dataclass
class PhaseReport:
    phase: str
    status: str  # applied | nothing to do | skipped | rolled back | dry run
    message: str = ""
    changes: int = 0
    rejected: list[dict[str, str]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    tokens: tuple[int, int] = (0, 0)
    seconds: float = 0.0  # time spent on the model, every attempt counted (failed ones too)

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "status": self.status,
            "message": self.message,
            "changes": self.changes,
            "rejected": self.rejected,
            "failed": self.failed,
            "tokens": {"prompt": self.tokens[0], "completion": self.tokens[1]},
            "seconds": round(self.seconds, 1),
        }


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


Planner = Callable[["Memory", int, str], Plan]


def planners() -> dict[str, Planner]:
    from memdream.dream.deep import plan_deep
    from memdream.dream.distill import plan_distill
    from memdream.dream.light import plan_light
    from memdream.dream.profile import plan_profile
    from memdream.dream.replay import plan_replay

    return {
        "light": lambda mem, days, last: plan_light(mem, mem.config.dream.resident_budget, int(last or 0)),
        # A scheduled run (last given) does not show the model groups it already left alone.
        "deep": lambda mem, days, last: plan_deep(mem, mem.llm, last, frozenset(ledger.load_state(mem).get("deep", {}).get("declined", [])) if last else frozenset()),  # type: ignore[arg-type]
        "distill": lambda mem, days, last: plan_distill(mem, mem.llm, days, mem.config.dream.resident_budget, last),  # type: ignore[arg-type]
        "replay": lambda mem, days, last: plan_replay(mem, mem.llm, last),  # type: ignore[arg-type]
        "profile": lambda mem, days, last: plan_profile(mem, mem.llm, last),  # type: ignore[arg-type]
    }


def check_args(phases: list[str] | tuple[str, ...] | None, days: int) -> list[str]:
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise RefusedInput(f"--days must be a whole number from 1 to {MAX_DAYS}, not {days!r}", "e.g. memdream dream --days 7")
    chosen = list(phases) if phases else list(PHASES)
    for p in chosen:
        if p not in PHASES:
            raise RefusedInput(f"unknown dream phase {p!r}", "use one of: " + ", ".join(PHASES))
    return [p for p in PHASES if p in chosen]


def dream(
    mem: "Memory",
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
            return _dream(mem, chosen, days, dry_run, force, progress, where)
        except BaseException as exc:
            if not dry_run and where.book is not None:
                _interrupted(mem, where, exc)
            raise


@dataclass
class _Where:
    """How far a dream got, for the note an interruption leaves."""

    phase: str = ""
    record: dict[str, Any] = field(default_factory=dict)
    book: "_Diary | None" = None


def _dream(mem: "Memory", chosen: list[str], days: int, dry_run: bool, force: bool, progress: Callable[[str], None] | None, where: _Where) -> DreamReport:
    now = mem.clock.now()
    report = DreamReport(f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}", now, dry_run)
    state = ledger.load_state(mem)
    git = not dry_run and gitvault.is_git_vault(mem.vault.root)
    if git:
        gitvault.commit_all(mem.vault.root, f"memdream: changes before dream {report.run}")
    if not dry_run:
        mem.adopt()  # hand-written lines get their id first: a dream moves and marks lines by id
        mem.flush_hits()  # the lifecycle reads recall counts from the files
    sections: list[str] = []
    book = _Diary(mem, now)
    no_model_said = False
    record: dict[str, Any] = {"run": report.run, "at": now.isoformat(), "phases": {}, "changes": {}, "replayed": []}
    plans = planners()
    where.record, where.book = record, book
    for phase in chosen:
        where.phase = phase
        if progress:
            progress(phase)
        mem.sync()
        if phase in LLM_PHASES and mem.llm is None:
            plan = Plan(phase, status=NO_MODEL)
        elif phase == "light" and not force and state.get("light", {}).get("inputs") == light_inputs(mem):
            plan = Plan(phase, status=UNCHANGED)
        else:
            try:
                last = str(state.get(phase, {}).get("rowid_hw" if phase == "light" else "inputs") or "")
                plan = plans[phase](mem, days, "" if force and phase != "light" else last)
            except LLMError as exc:
                why = "the model answered, but not usefully" if exc.answered else "the model could not be used"
                plan = Plan(phase, status=f"Skipped: {why} ({exc.message}). Nothing was changed.", tokens=exc.tokens, seconds=exc.seconds)
        message = plan.status[len("Skipped: "):] if plan.status.startswith("Skipped: ") else plan.status
        pr = PhaseReport(phase, "skipped" if plan.status else "nothing to do", message, tokens=plan.tokens, seconds=plan.seconds)
        pr.rejected = [{"what": r.what, "why": r.why} for r in plan.rejected]
        applied: Applied | None = None
        recorded: list[bool] = []
        if not plan.status:
            if dry_run:
                pr.status, pr.changes = "dry run", len(plan.ops)
            elif plan.ops:
                if progress:
                    progress(f"{phase}: applying {len(plan.ops)} change" + ("" if len(plan.ops) == 1 else "s"))

                def write_ledger(done: Applied, phase: str = phase, plan: Plan = plan, recorded: list[bool] = recorded) -> None:
                    # Inside the phase's transaction: the files stay changed only if this is on disk.
                    ledger.merge_changes(record["changes"], done.delta)
                    record["phases"][phase] = "applied"
                    record["replayed"] += plan.replayed
                    ledger.put(mem, record)
                    recorded.append(True)

                applied = apply_plan(mem, plan, mem.config.dream.resident_budget, mem.config.dream.canaries, record=write_ledger)
                pr.failed = applied.failed
                pr.rejected += [{"what": r.what, "why": r.why} for r in applied.skipped]
                if applied.failed:
                    pr.status = "rolled back"
                else:
                    pr.status, pr.changes = "applied", len(applied.done)
            if not dry_run:
                last_state = state.get(phase, {})
                state[phase] = {"at": now.isoformat(), "inputs": light_inputs(mem) if phase == "light" else plan.inputs}
                if phase == "light" and (applied is None or not applied.failed):
                    state[phase]["rowid_hw"] = high_water(mem)
                if plan.declined:
                    state[phase]["declined"] = (list(last_state.get("declined", [])) + plan.declined)[-DECLINED_KEPT:]
                elif "declined" in last_state:
                    state[phase]["declined"] = last_state["declined"]
                if plan.replayed and not recorded and (applied is None or not applied.failed):
                    record["replayed"] += plan.replayed
        record["phases"][phase] = pr.status
        n = f"{pr.changes} change" + ("" if pr.changes == 1 else "s")
        pr.message = pr.message or {"applied": n, "nothing to do": "nothing to change", "rolled back": "a safety check failed; nothing was applied", "dry run": f"{n} planned"}.get(pr.status, "")
        report.phases.append(pr)
        if plan.status == NO_MODEL:
            if no_model_said:
                continue  # one status line for all the model phases
            no_model_said = True
            plan = Plan("model phases", status=NO_MODEL)
        if pr.status != "nothing to do" or plan.rejected or plan.notes or plan.seconds:  # a model asked: the diary says what came of it
            text = diary.section(plan, applied, mem.clock.now(), dry_run)
            sections.append(text)
            if not dry_run:
                book.add(text, worth=bool(pr.changes) or pr.status == "rolled back" or bool(pr.rejected) or bool(plan.seconds))
    if dry_run:
        report.diary = "\n".join(s.rstrip("\n") + "\n" for s in sections)
        planned = [p for p in report.phases if p.status == "dry run"]
        if len(planned) > 1 and any(p.changes for p in planned[:-1]):
            report.diary += "\n" + CHAINED + "\n"
        return report
    ledger.save_state(mem, state)
    if report.changes or any(p.status in ("rolled back",) or p.rejected or p.seconds for p in report.phases):
        report.diary = mem.vault.relpath(book.path)
        ledger.put(mem, record)
        if git:
            report.commit = gitvault.commit_all(mem.vault.root, _commit_message(report))
    return report


class _Diary:
    """The day's diary, written as the dream goes: sections wait until a phase has something
    worth recording (a change, a rollback, a rejection), then go to the file at once."""

    def __init__(self, mem: "Memory", now: datetime) -> None:
        self.mem = mem
        self.path = mem.vault.dreams_dir(mem.scope) / f"{now:%Y-%m-%d}.md"
        self.day = f"{now:%Y-%m-%d}"
        self.pending: list[str] = []
        self.started = False

    def add(self, section: str, worth: bool) -> None:
        self.pending.append(section)
        if worth or self.started:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        text = "\n".join(s.rstrip("\n") + "\n" for s in self.pending)
        day = self.day
        self.mem.writer.write_text(self.path, lambda old: (old if old else diary.header(day)) + ("\n" if old and not old.endswith("\n\n") else "") + text)
        self.pending = []
        self.started = True


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


def _interrupted(mem: "Memory", where: _Where, exc: BaseException) -> None:
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
            ledger.put(mem, record)
            what = "What was applied before it stopped stays applied and is in the ledger: `memdream undo` reverts it."
        else:
            what = "Nothing had been changed."
        book.add(f"## {mem.clock.now():%H:%M} — interrupted\n\nThe dream stopped during the {phase} phase ({why}). {what}\n", worth=bool(record["changes"]))
    except Exception:  # noqa: BLE001 - the error that stopped the dream is the one to report
        pass


def _commit_message(report: DreamReport) -> str:
    parts = [f"{p.phase} {p.changes}" for p in report.phases if p.changes]
    return f"dream {report.run}: " + (", ".join(parts) if parts else "no changes") + "\n\nmemdream undo reverts this commit."


def undo(mem: "Memory") -> dict[str, Any]:
    """Revert the last dream that changed something: by `git revert` in a git vault, else by
    reversing its ledger record entry by entry. The index follows."""
    rec = ledger.last_dream(mem)
    if rec is None:
        raise NotFound("there is no dream to undo", "run 'memdream dream' first; 'memdream dream --dry-run' shows what it would do")
    root = mem.vault.root
    how = "ledger"
    if gitvault.is_git_vault(root):
        gitvault.commit_all(root, f"memdream: changes before undoing dream {rec['run']}")
        sha = _dream_commit(root, rec["run"])
        if sha and gitvault.revert(root, sha, f"undo dream {rec['run']}"):
            how = "git revert"
    if how == "ledger":
        _reverse(mem, rec["changes"])
    mem.sync()
    ledger.append(mem, {"undo": rec["run"], "at": mem.clock.now().isoformat(), "how": how})
    now = mem.clock.now()
    book = _Diary(mem, now)
    files = sorted(rec["changes"])
    book.add(
        f"## {now:%H:%M} — undo\n\nDream {rec['run']} was undone ({how}): "
        + ("every line it moved or marked is back where it stood, and what it added is gone" if how == "ledger" else "its commit was reverted")
        + f", in {len(files)} file{'' if len(files) == 1 else 's'}.\n",
        worth=True,
    )
    if gitvault.is_git_vault(root):
        gitvault.commit_all(root, f"memdream: ledger after undoing dream {rec['run']}")
    return {"undone": rec["run"], "how": how, "files": sorted(rec["changes"])}


def _dream_commit(root, run: str) -> str | None:  # type: ignore[no-untyped-def]
    res = gitvault._git(root, "log", "--format=%H", "-F", f"--grep=dream {run}:", check=False)
    shas = res.stdout.split()
    return shas[0] if shas else None


def _reverse(mem: "Memory", changes: dict[str, dict]) -> None:
    """Put back every line the dream removed (keeping recall counts gathered since), then take
    out every line it added. Lines are found by id, so later edits elsewhere survive."""
    with mem.writer.locked():
        for rel, ch in changes.items():
            path = mem.vault.root / rel
            if not ch.get("removed"):
                continue
            if not mem.vault.is_inside(path.parent if path.parent.exists() else mem.vault.root):
                raise VaultError(f"the ledger names {rel}, outside the vault", "the ledger was edited by hand; undo with git instead")

            def put_back(doc: Document, removed: dict[str, str] = ch["removed"], at: dict[str, list] = ch.get("at", {})) -> None:
                # In the order the lines stood, each back where it was: after the entry line
                # that was above it, else at its old line number (older ledgers: at the end).
                for eid in sorted(removed, key=lambda e: at[e][0] if e in at else 1 << 30):
                    raw = removed[eid]
                    old = parse_document(raw + "\n").lines[0]
                    i = doc.find(eid)
                    if i >= 0:
                        cur = doc.lines[i].entry
                        if cur is not None and old.entry is not None and cur.hits > old.entry.hits:
                            doc.set_entry(i, old.entry.evolve(hits=cur.hits, last_recalled=cur.last_recalled))
                        else:
                            doc.lines[i] = old
                        continue
                    where = len(doc.lines)
                    if eid in at:
                        line_no, above = at[eid][0], at[eid][1]
                        j = doc.find(above) if above else -1
                        where = j + 1 if j >= 0 else min(int(line_no), len(doc.lines))
                    doc.lines.insert(where, Line(raw))

            mem._update(path, put_back)
        for rel, ch in changes.items():
            gone = [i for i in ch.get("added", []) if i not in ch.get("removed", {})]
            if not gone:
                continue

            def take_out(doc: Document, gone: list[str] = gone) -> None:
                for eid in gone:
                    i = doc.find(eid)
                    if i >= 0:
                        doc.remove(i)

            upd = mem._update(mem.vault.root / rel, take_out)
            if ch.get("created") and not any(ln.is_entry for ln in upd.document.lines):
                mem.writer.restore(mem.vault.root / rel, None)  # the dream made this file: no empty husk stays
