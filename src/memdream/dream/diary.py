"""The dream diary, memory/dreams/YYYY-MM-DD.md: per phase, a short narrative of what was
found and done, then the list of every move, merge and rejection with its reason."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

from memdream.dream.plan import Drop, Merge, Move, Plan, Remember

if TYPE_CHECKING:
    from memdream.core import Core
    from memdream.dream.apply import Applied

LIST_MAX = 40  # items listed per phase; the ledger keeps every one

_PHASE_TITLE = {
    "light": "light phase",
    "deep": "deep phase",
    "distill": "distillation",
    "replay": "replay",
    "profile": "profile",
    "flush": "daily flush",
}


def _q(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= n else text[: n - 1] + "…") + "”"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _story(plan: Plan, kinds: Counter[str], applied: "Applied | None", dry_run: bool) -> list[str]:
    will = "would be" if dry_run else "was"
    were = "would be" if dry_run else "were"
    s: list[str] = []
    if plan.phase == "light":
        s.append(f"I looked over {_plural(plan.seen, 'memory', 'memories')}.")
        if kinds["supersede"]:
            n = kinds["supersede"]
            s.append(f"{_plural(n, 'memory', 'memories')} only repeated what another already says: the original stays, the {'copy' if n == 1 else 'copies'} {will if n == 1 else were} marked merged and archived.")
        if kinds["archive"]:
            n = kinds["archive"]
            s.append(f"{_plural(n, 'memory', 'memories')} had ended or gone cold and {will if n == 1 else were} moved to the archive, where {'it stays' if n == 1 else 'they stay'} readable.")
        if kinds["promote"]:
            n = kinds["promote"]
            s.append(f"{_plural(n, 'memory', 'memories')} you keep coming back to {'moves' if n == 1 else 'move'} into MEMORY.md.")
        if kinds["demote"]:
            n = kinds["demote"]
            s.append(f"{_plural(n, 'preference')} nobody asked about for two months {'goes' if n == 1 else 'go'} back to the recall layer.")
        if kinds["heal"]:
            s.append(f"{_plural(kinds['heal'], 'line')} sat in two files at once (a move cut short); the extra {'copy was' if kinds['heal'] == 1 else 'copies were'} removed.")
        if not kinds:
            s.append("Everything is where it belongs; nothing to move.")
        else:
            s.append("No memory's text was changed.")
    else:
        if kinds["merge"]:
            s.append(f"{_plural(kinds['merge'], 'group')} of related memories {'becomes' if kinds['merge'] == 1 else 'become'} one line each; the originals stay, marked merged.")
        if kinds["update"]:
            s.append(f"{_plural(kinds['update'], 'memory', 'memories')} {will if kinds['update'] == 1 else were} updated with newer information; the old wording stays in the history.")
        if kinds["retire"]:
            s.append(f"{_plural(kinds['retire'], 'memory', 'memories')} {will if kinds['retire'] == 1 else were} retired to the archive as redundant or stale.")
        if kinds["remember"]:
            s.append(f"{_plural(kinds['remember'], 'fact')} {will if kinds['remember'] == 1 else were} written through the normal write path.")
        if not kinds and not plan.rejected:
            s.append("The model proposed nothing to change.")
    if plan.rejected:
        s.append(f"I turned down {_plural(len(plan.rejected), 'proposal')} that broke the rules (listed below).")
    if applied is not None and applied.skipped:
        s.append(f"{_plural(len(applied.skipped), 'change')} {'was' if len(applied.skipped) == 1 else 'were'} dropped because the memory changed meanwhile.")
    if applied is not None and applied.failed:
        s.append("Then a safety check failed, so I put every file back as it was: " + "; ".join(applied.failed) + ".")
    return s


def _kind(op: object) -> str:
    if isinstance(op, (Move, Drop)):
        return op.kind
    if isinstance(op, Merge):
        return "update" if op.end == "superseded" else "merge"
    if isinstance(op, Remember):
        return "remember"
    return "other"


def _item(op: object, why: str) -> str:
    if isinstance(op, Drop):
        return f"- healed `{op.entry.id}` {_q(op.entry.text)}: {why}"
    if isinstance(op, Move):
        verb = {"archive": "archived", "supersede": "merged", "promote": "promoted", "demote": "demoted", "retire": "retired"}.get(op.kind, op.kind)
        return f"- {verb} `{op.entry.id}` {_q(op.entry.text)}: {why}"
    if isinstance(op, Merge):
        ids = ", ".join(f"`{s.id}`" for s in op.sources)
        return f"- {'updated' if op.end == 'superseded' else 'merged'} {ids} into {_q(op.text, 120)}"
    if isinstance(op, Remember):
        return f"- remembered {_q(op.text, 120)}: {why}"
    return f"- {why}"


def _model_line(plan: Plan) -> str:
    """The model's share of a phase: tokens, and the time of every attempt (failed ones too)."""
    who = f"Model {plan.model}" if plan.model else "Model"
    return f"_{who}: {plan.tokens[0]} prompt and {plan.tokens[1]} completion tokens, {plan.seconds:.1f} s._"


def section(plan: Plan, applied: "Applied | None", when: datetime, dry_run: bool = False) -> str:
    title = _PHASE_TITLE.get(plan.phase, plan.phase)
    head = f"## {when:%H:%M} — {title}" + (" (dry run: nothing was changed)" if dry_run else "")
    lines = [head, ""]
    if plan.status:
        lines += [plan.status, ""]
        if plan.seconds:
            lines += [_model_line(plan), ""]
        return "\n".join(lines)
    done = [(op, why) for op, why in (applied.done if applied is not None else [(op, getattr(op, "reason", "")) for op in plan.ops])]
    if applied is not None and applied.failed:
        done = [(op, op.reason) for op in plan.ops]
    kinds = Counter(_kind(op) for op, _ in done)
    lines.append(" ".join(_story(plan, kinds, applied, dry_run)))
    lines.append("")
    for note in plan.notes:
        lines.append(f"_{note}_")
        lines.append("")
    if plan.model or plan.seconds:
        lines.append(_model_line(plan))
        lines.append("")
    items = [_item(op, why) for op, why in done]
    items += [f"- rejected {r.what}: {r.why}" for r in plan.rejected]
    if applied is not None:
        items += [f"- dropped {r.what}: {r.why}" for r in applied.skipped]
    if items:
        lines += items[:LIST_MAX]
        if len(items) > LIST_MAX:
            # Every further move still gets its line: grouped by the rule that decided it.
            groups: dict[str, list[str]] = {}
            for op, why in done[LIST_MAX:]:
                key = f"{_kind(op)} ({op.rule})" if isinstance(op, Move) and op.rule else f"{_kind(op)}: {why}"
                groups.setdefault(key, []).append(f"`{op.entry.id}`" if isinstance(op, (Move, Drop)) else _item(op, why)[2:])
            rest = [f"- {r.what}: {r.why}" for r in plan.rejected] + ([f"- dropped {r.what}: {r.why}" for r in applied.skipped] if applied else [])
            extra = len(items) - LIST_MAX
            lines.append(f"- … and {extra} more:")
            for key, ids in groups.items():
                lines.append(f"  - {key}, {len(ids)}: " + ", ".join(ids))
            for r in rest[max(0, LIST_MAX - len(done)) :]:
                lines.append("  " + r)
        lines.append("")
    return "\n".join(lines)


def header(day: str) -> str:
    return f"# Dream diary {day}\n\n"


class Book:
    """The day's diary file, written as the dream goes: sections wait until a phase has
    something worth recording (a change, a rollback, a rejection), then go to the file at once."""

    def __init__(self, core: "Core", now: datetime) -> None:
        self.core = core
        self.path = core.vault.dreams_dir(core.scope) / f"{now:%Y-%m-%d}.md"
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
        self.core.writer.write_text(self.path, lambda old: (old if old else header(day)) + ("\n" if old and not old.endswith("\n\n") else "") + text)
        self.pending = []
        self.started = True
