"""A dream: the phases in order, each planned, applied as a transaction and written to the
diary; then one ledger record and, in a git vault, one commit. And `undo`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
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
    whose input is unchanged since its last run."""
    chosen = check_args(phases, days)
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
    no_model_said = False
    record: dict[str, Any] = {"run": report.run, "at": now.isoformat(), "phases": {}, "changes": {}, "replayed": []}
    plans = planners()
    for phase in chosen:
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
        if not plan.status:
            if dry_run:
                pr.status, pr.changes = "dry run", len(plan.ops)
            elif plan.ops:
                applied = apply_plan(mem, plan, mem.config.dream.resident_budget, mem.config.dream.canaries)
                pr.failed = applied.failed
                pr.rejected += [{"what": r.what, "why": r.why} for r in applied.skipped]
                if applied.failed:
                    pr.status = "rolled back"
                else:
                    pr.status, pr.changes = "applied", len(applied.done)
                    for rel, ch in applied.delta.items():
                        mine = record["changes"].setdefault(rel, {"removed": {}, "added": []})
                        for eid, raw in ch["removed"].items():
                            if eid in mine["added"]:
                                continue
                            mine["removed"].setdefault(eid, raw)
                        mine["added"] += [i for i in ch["added"] if i not in mine["added"]]
            if not dry_run:
                last_state = state.get(phase, {})
                state[phase] = {"at": now.isoformat(), "inputs": light_inputs(mem) if phase == "light" else plan.inputs}
                if phase == "light" and (applied is None or not applied.failed):
                    state[phase]["rowid_hw"] = high_water(mem)
                if plan.declined:
                    state[phase]["declined"] = (list(last_state.get("declined", [])) + plan.declined)[-DECLINED_KEPT:]
                elif "declined" in last_state:
                    state[phase]["declined"] = last_state["declined"]
                if plan.replayed and (applied is None or not applied.failed):
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
            sections.append(diary.section(plan, applied, mem.clock.now(), dry_run))
    text = "\n".join(s.rstrip("\n") + "\n" for s in sections)
    if dry_run:
        report.diary = text
        return report
    ledger.save_state(mem, state)
    if report.changes or any(p.status in ("rolled back",) or p.rejected or p.seconds for p in report.phases):
        path = mem.vault.memory_dir(mem.scope) / "dreams" / f"{now:%Y-%m-%d}.md"
        mem.writer.write_text(path, lambda old: (old if old else diary.header(f"{now:%Y-%m-%d}")) + ("\n" if old and not old.endswith("\n\n") else "") + text)
        report.diary = mem.vault.relpath(path)
        ledger.append(mem, record)
        if git:
            report.commit = gitvault.commit_all(mem.vault.root, _commit_message(report))
    return report


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

            def put_back(doc: Document, removed: dict[str, str] = ch["removed"]) -> None:
                for eid, raw in removed.items():
                    old = parse_document(raw + "\n").lines[0]
                    i = doc.find(eid)
                    if i >= 0:
                        cur = doc.lines[i].entry
                        if cur is not None and old.entry is not None and cur.hits > old.entry.hits:
                            doc.set_entry(i, old.entry.evolve(hits=cur.hits, last_recalled=cur.last_recalled))
                        else:
                            doc.lines[i] = old
                    else:
                        doc.lines.append(Line(raw))

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

            mem._update(mem.vault.root / rel, take_out)
