"""What a dream keeps between runs, per phase (the ledger's state file): when the phase ran,
its inputs (so the scheduler skips a phase whose input is unchanged), the light phase's
high-water rowid, and fingerprints of the groups the model left alone (not sent again)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from memdream.dream.light import high_water
from memdream.dream.light import inputs as light_inputs
from memdream.dream.plan import Plan

if TYPE_CHECKING:
    from memdream.core import Core
    from memdream.dream.apply import Applied

DECLINED_KEPT = 500  # fingerprints of groups the model left alone, remembered so they are not sent again


def unchanged(core: "Core", state: dict[str, Any], phase: str) -> bool:
    """The light phase's input is what it was at its last run (only the light phase can tell)."""
    return phase == "light" and state.get("light", {}).get("inputs") == light_inputs(core)


def last_mark(state: dict[str, Any], phase: str) -> str:
    """Where the phase's last run left off: the light phase's high-water rowid, else its inputs."""
    return str(state.get(phase, {}).get("rowid_hw" if phase == "light" else "inputs") or "")


def after_phase(core: "Core", state: dict[str, Any], phase: str, plan: Plan, applied: "Applied | None", now: datetime) -> None:
    """Record in `state` that `phase` ran at `now` with this plan (and this result)."""
    last_state = state.get(phase, {})
    state[phase] = {"at": now.isoformat(), "inputs": light_inputs(core) if phase == "light" else plan.inputs}
    if phase == "light" and (applied is None or not applied.failed):
        state[phase]["rowid_hw"] = high_water(core)
    if plan.declined:
        state[phase]["declined"] = (list(last_state.get("declined", [])) + plan.declined)[-DECLINED_KEPT:]
    elif "declined" in last_state:
        state[phase]["declined"] = last_state["declined"]
