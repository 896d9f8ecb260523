"""One phase of a dream: plan it (or say why it is skipped), apply the plan as a transaction
whose ledger record is written inside it, and report what came of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memdream.dream import ledger
from memdream.dream import state as phase_state
from memdream.dream.apply import Applied, apply_plan
from memdream.dream.plan import LLM_PHASES, PHASES, UNCHANGED, Plan
from memdream.errors import RefusedInput
from memdream.llm.client import LLMError

if TYPE_CHECKING:
    from memdream.core import Core

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


Planner = Callable[["Core", int, str], Plan]


def planners() -> dict[str, Planner]:
    from memdream.dream.deep import plan_deep
    from memdream.dream.distill import plan_distill
    from memdream.dream.light import plan_light
    from memdream.dream.profile import plan_profile
    from memdream.dream.replay import plan_replay

    return {
        "light": lambda core, days, last: plan_light(core, core.config.dream.resident_budget, int(last or 0)),
        # A scheduled run (last given) does not show the model groups it already left alone.
        "deep": lambda core, days, last: plan_deep(core, core.llm, last, frozenset(ledger.load_state(core).get("deep", {}).get("declined", [])) if last else frozenset()),  # type: ignore[arg-type]
        "distill": lambda core, days, last: plan_distill(core, core.llm, days, core.config.dream.resident_budget, last),  # type: ignore[arg-type]
        "replay": lambda core, days, last: plan_replay(core, core.llm, last),  # type: ignore[arg-type]
        "profile": lambda core, days, last: plan_profile(core, core.llm, last),  # type: ignore[arg-type]
    }


def check_args(phases: list[str] | tuple[str, ...] | None, days: int) -> list[str]:
    """The chosen phases in their order; RefusedInput for an unknown one or a bad --days."""
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise RefusedInput(f"--days must be a whole number from 1 to {MAX_DAYS}, not {days!r}", "e.g. memdream dream --days 7")
    chosen = list(phases) if phases else list(PHASES)
    for p in chosen:
        if p not in PHASES:
            raise RefusedInput(f"unknown dream phase {p!r}", "use one of: " + ", ".join(PHASES))
    return [p for p in PHASES if p in chosen]


def plan_phase(core: "Core", phase: str, state: dict[str, Any], days: int, force: bool, plans: dict[str, Planner]) -> Plan:
    """The phase's plan, or a Plan whose status says why it does not run. `force=False` (the
    scheduler) skips the light phase when its input is unchanged since its last run."""
    if phase in LLM_PHASES and core.llm is None:
        return Plan(phase, status=NO_MODEL)
    if not force and phase_state.unchanged(core, state, phase):
        return Plan(phase, status=UNCHANGED)
    try:
        return plans[phase](core, days, "" if force and phase != "light" else phase_state.last_mark(state, phase))
    except LLMError as exc:
        why = "the model answered, but not usefully" if exc.answered else "the model could not be used"
        return Plan(phase, status=f"Skipped: {why} ({exc.message}). Nothing was changed.", tokens=exc.tokens, seconds=exc.seconds)


def run_phase(core: "Core", plan: Plan, record: dict[str, Any], dry_run: bool, progress: Callable[[str], None] | None) -> tuple[PhaseReport, Applied | None, bool]:
    """Apply `plan` (unless it is skipped or this is a dry run); returns the phase's report,
    what was applied, and whether the ledger `record` was written inside the transaction."""
    phase = plan.phase
    message = plan.status[len("Skipped: "):] if plan.status.startswith("Skipped: ") else plan.status
    pr = PhaseReport(phase, "skipped" if plan.status else "nothing to do", message, tokens=plan.tokens, seconds=plan.seconds)
    pr.rejected = [{"what": r.what, "why": r.why} for r in plan.rejected]
    applied: Applied | None = None
    recorded: list[bool] = []
    if not plan.status and dry_run:
        pr.status, pr.changes = "dry run", len(plan.ops)
    elif not plan.status and plan.ops:
        if progress:
            progress(f"{phase}: applying {len(plan.ops)} change" + ("" if len(plan.ops) == 1 else "s"))

        def write_ledger(done: Applied) -> None:
            # Inside the phase's transaction: the files stay changed only if this is on disk.
            ledger.merge_changes(record["changes"], done.delta)
            record["phases"][phase] = "applied"
            record["replayed"] += plan.replayed
            ledger.put(core, record)
            recorded.append(True)

        applied = apply_plan(core, plan, core.config.dream.resident_budget, core.config.dream.canaries, record=write_ledger)
        pr.failed = applied.failed
        pr.rejected += [{"what": r.what, "why": r.why} for r in applied.skipped]
        if applied.failed:
            pr.status = "rolled back"
        else:
            pr.status, pr.changes = "applied", len(applied.done)
    n = f"{pr.changes} change" + ("" if pr.changes == 1 else "s")
    pr.message = pr.message or {"applied": n, "nothing to do": "nothing to change", "rolled back": "a safety check failed; nothing was applied", "dry run": f"{n} planned"}.get(pr.status, "")
    return pr, applied, bool(recorded)
