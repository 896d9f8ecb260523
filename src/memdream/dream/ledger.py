"""Where dreams keep their records.

- memory/dreams/ledger.jsonl (in the vault: it is the truth): one JSON line per applied
  dream with every file's change by entry id (what `memdream undo` reverses: the lines that
  left, with where they stood, and the ids that came), the transcripts a replay or flush has
  read (so they are not read again), and one line per undo. A dream rewrites its own line
  after each phase that changed something, inside that phase's transaction, so an
  interrupted dream is recorded up to its last applied phase.
- .memdream/dream-<agent>__<user>.json (derived): when each phase last ran and the hash of
  its input, for the scheduler. Deleting it costs at most one redundant run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdream.store.files import decode, read_file
from memdream.store.writer import atomic_write

if TYPE_CHECKING:
    from memdream.core import Core


def ledger_path(mem: "Core") -> Path:
    return mem.vault.ledger_file(mem.scope)


def state_path(mem: "Core") -> Path:
    return mem.vault.state_dir / f"dream-{mem.scope.agent}__{mem.scope.user}.json"


def records(mem: "Core") -> list[dict[str, Any]]:
    """Every ledger record, oldest first; a line that does not parse is skipped (and kept)."""
    path = ledger_path(mem)
    data, state = read_file(path)
    out = []
    if state.exists:
        for line in decode(data, path).splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


def append(mem: "Core", record: dict[str, Any]) -> None:
    line = json.dumps(record, ensure_ascii=False, sort_keys=True)

    def add(old: str | None) -> str:
        old = old or ""
        return old + ("" if not old or old.endswith("\n") else "\n") + line + "\n"

    mem.writer.write_text(ledger_path(mem), add)


def put(mem: "Core", record: dict[str, Any]) -> None:
    """Write a dream's record, replacing the one with the same run id if there is one: a dream
    writes its record after each phase that changed something (not only when it finishes), so
    whatever it applied can be undone even if it is interrupted later."""
    line = json.dumps(record, ensure_ascii=False, sort_keys=True)
    run = record["run"]

    def replace(old: str | None) -> str | None:
        if old and (old.startswith(line + "\n") or "\n" + line + "\n" in old):
            return None  # the record as it stands is there already (the phase wrote it): no need to parse the ledger again
        lines = (old or "").splitlines()
        for i in range(len(lines) - 1, -1, -1):
            try:
                rec = json.loads(lines[i])
            except ValueError:
                continue
            if isinstance(rec, dict) and rec.get("run") == run and "undo" not in rec:
                lines[i] = line
                return "\n".join(lines) + "\n"
        return "".join(ln + "\n" for ln in lines) + line + "\n"

    mem.writer.write_text(ledger_path(mem), replace)


def merge_changes(into: dict[str, dict], delta: dict[str, dict]) -> None:
    """Fold one phase's changes by file into a dream's: a line is removed once (as it stood
    before the dream), and a line one phase added and another changed stays one addition."""
    for rel, ch in delta.items():
        mine = into.setdefault(rel, {"removed": {}, "added": []})
        for eid, raw in ch["removed"].items():
            if eid in mine["added"]:
                continue
            mine["removed"].setdefault(eid, raw)
            if eid in ch.get("at", {}):
                mine.setdefault("at", {}).setdefault(eid, ch["at"][eid])
        mine["added"] += [i for i in ch["added"] if i not in mine["added"]]
        if ch.get("created"):
            mine["created"] = True


def read_set(mem: "Core", key: str) -> set[str]:
    """Every value listed under `key` (e.g. "replayed") in any record that was not undone."""
    recs = records(mem)
    undone = {r["undo"] for r in recs if "undo" in r}
    return {v for r in recs if r.get("run") not in undone for v in r.get(key, []) if isinstance(v, str)}


def last_dream(mem: "Core") -> dict[str, Any] | None:
    """The most recent dream that changed something and was not undone."""
    recs = records(mem)
    undone = {r["undo"] for r in recs if "undo" in r}
    for r in reversed(recs):
        if "run" in r and r.get("changes") and r["run"] not in undone:
            return r
    return None


def load_state(mem: "Core") -> dict[str, Any]:
    data, state = read_file(state_path(mem))
    if not state.exists:
        return {}
    try:
        value = json.loads(data)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def save_state(mem: "Core", state: dict[str, Any]) -> None:
    path = state_path(mem)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A temp file of its own (two processes dreaming at once each save: a shared temp name let
    # one rename the other's file away, and the second rename failed with FileNotFoundError).
    atomic_write(path, json.dumps(state, sort_keys=True).encode("utf-8"))
