"""The only dream code that writes. Applies a phase's plan as one transaction:

1. under the writer lock, each operation is re-checked against the files (an entry that
   changed since the phase planned is left alone) and applied through the single writer;
2. the invariants are checked on the result (dream/invariants.py);
3. if any fails, every file the phase wrote is put back as it was, and the diary says why.
"""

from __future__ import annotations

import signal
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memdream.core import Core, set_entry
from memdream.dream.invariants import Baseline, check
from memdream.dream.pause import collector_paused
from memdream.dream.plan import Drop, Merge, Move, Op, Plan, Rejected, Remember
from memdream.engine.write import write
from memdream.errors import MemdreamError
from memdream.model.entry import ARCHIVE, Entry
from memdream.model.secrets import find_secret
from memdream.store.format import Document, Line, parse_document, quick_id, render_line
from memdream.store.files import decode, read_file
from memdream.store.transaction import Transaction
from memdream.store.writer import Update


@dataclass
class Applied:
    """What applying a plan did."""

    done: list[tuple[Op, str]] = field(default_factory=list)  # (operation, what it did)
    skipped: list[Rejected] = field(default_factory=list)  # valid when planned, stale when applied
    failed: list[str] = field(default_factory=list)  # invariants that failed: nothing was applied
    delta: dict[str, dict] = field(default_factory=dict)  # file -> {removed, added}: what undo reverses
    new_ids: list[str] = field(default_factory=list)

    @property
    def rolled_back(self) -> bool:
        return bool(self.failed)


def _current(core: Core, rel: str) -> Document:
    path = core.vault.root / rel
    data, state = read_file(path)
    return parse_document(decode(data, path) if state.exists else "")


def _by_id(doc: Document, wanted: set[str]) -> dict[str, Line]:
    """The lines of `doc` whose id is in `wanted` (only those lines are parsed)."""
    return {eid: doc.lines[i] for eid, i in doc.find_all(wanted).items()}


def _ids(doc: Document) -> set[str]:
    return {quick_id(ln.raw) for ln in doc.lines if ln.is_entry}


def _apply_moves(core: Core, tx: Transaction, moves: list[Move], out: Applied, now) -> None:  # type: ignore[no-untyped-def]
    # Check each entry is still there as planned, then copy to the destinations, then remove
    # from the sources: a crash in between leaves a line in two places, never in none.
    by_src: dict[str, list[Move]] = defaultdict(list)
    for mv in moves:
        by_src[mv.path].append(mv)
    to_layer: dict[str, list[Line]] = defaultdict(list)
    to_remove: dict[str, set[str]] = defaultdict(set)  # source -> the raw lines that leave it
    copied: dict[tuple[str, str], tuple[Move, Line]] = {}  # (source, raw line) -> its move and its copy
    for rel, group in by_src.items():
        found = _by_id(_current(core, rel), {mv.entry.id for mv in group})
        for mv in group:
            ln = found.get(mv.entry.id)
            e = ln.entry if ln is not None else None
            if ln is None or e is None or e.text != mv.entry.text or e.valid_to != mv.entry.valid_to:
                out.skipped.append(Rejected(f"{mv.kind} `{mv.entry.id}`", "the memory changed after the dream looked at it"))
                continue
            moved = Line(ln.raw.rstrip("\r"), e)  # a plain move copies the line byte for byte
            if mv.valid_to is not None:
                marked = e.evolve(valid_to=mv.valid_to, end=mv.end or e.end, superseded_by=mv.superseded_by or e.superseded_by)
                moved = Line(render_line(marked), marked)
            to_layer[mv.to].append(moved)
            to_remove[rel].add(ln.raw)
            copied[(rel, ln.raw)] = (mv, moved)
            out.done.append((mv, mv.reason))
    to_dest: dict[Path, tuple[str, list[Line]]] = {}
    for layer, lines in to_layer.items():  # this month's parts, none over RECALL_FILE_MAX_LINES lines
        at = 0
        for path, header, n in core.files_for_new(layer, now, len(lines)):
            to_dest[path] = (header, lines[at : at + n])
            at += n
    # The index follows once every file is written, as one change: a moved line keeps its row.
    written: list[tuple[Path, Update]] = []
    dest_of = {id(ln): path for path, (_, lines) in to_dest.items() for ln in lines}
    for path, (header, lines) in to_dest.items():

        def add(doc: Document, lines: list[Line] = lines) -> None:
            present = _ids(doc)
            for ln in lines:
                if ln.entry is not None and ln.entry.id not in present:
                    doc.lines.append(ln)

        written.append((path, core.update(path, add, header=header, tx=tx, index=False)))
    back: dict[Path, set[str]] = defaultdict(set)  # destination -> copies to take out again
    for rel, raws in to_remove.items():
        # Only the very line that was copied (byte for byte): a line edited meanwhile stays.
        upd = core.update(core.vault.root / rel, _dropping(raws), tx=tx, index=False)
        written.append((core.vault.root / rel, upd))
        # A line somebody edited between the check above and this drop stayed (their edit
        # wins): its copy comes out of the destination again, or the id would be in two places.
        left = Counter(upd.removed)
        for raw in sorted(raws):
            if left[raw] > 0:
                left[raw] -= 1
                continue
            mv, moved = copied[(rel, raw)]
            back[dest_of[id(moved)]].add(moved.raw)
            out.done = [(op, why) for op, why in out.done if op is not mv]
            out.skipped.append(Rejected(f"{mv.kind} `{mv.entry.id}`", "the memory was edited while the dream moved it"))
    for path, raws in back.items():
        written.append((path, core.update(path, _dropping(raws), tx=tx, index=False)))
    core.index_updates(written)


def _dropping(raws: set[str]) -> Callable[[Document], None]:
    """A change that removes the entry lines whose text is exactly one of `raws`."""

    def drop(doc: Document) -> None:
        doc.lines[:] = [ln for ln in doc.lines if not (ln.raw in raws and ln.is_entry)]

    return drop


def _apply_drops(core: Core, tx: Transaction, drops: list[Drop], out: Applied) -> None:
    by_path: dict[str, list[Drop]] = defaultdict(list)
    for d in drops:
        # Only while another copy of the same line remains elsewhere.
        others = [r for r in core.index.by_id(core.scope, d.entry.id) if r.path != d.path and r.entry().text == d.entry.text]
        if others:
            by_path[d.path].append(d)
        else:
            out.skipped.append(Rejected(f"heal `{d.entry.id}`", "no other copy of the line is left"))
    for rel, group in by_path.items():
        ids = {d.entry.id: d.entry.text for d in group}

        def drop(doc: Document, ids: dict[str, str] = ids) -> None:
            for eid, text in ids.items():
                i = doc.find(eid)
                if i >= 0 and doc.lines[i].entry is not None and doc.lines[i].entry.text == text:
                    doc.remove(i)

        core.update(core.vault.root / rel, drop, tx=tx)
        out.done.extend((d, d.reason) for d in group)


def _apply_merge(core: Core, tx: Transaction, op: Merge, out: Applied, now) -> None:  # type: ignore[no-untyped-def]
    rows = []
    for src in op.sources:
        found = [r for r in core.index.by_id(core.scope, src.id) if r.vt is None and r.layer != ARCHIVE]
        e = found[0].entry() if found else None
        if e is None or e.text != src.text:
            out.skipped.append(Rejected(f"merge of {', '.join('`' + s.id + '`' for s in op.sources)}", f"`{src.id}` changed after the model saw it"))
            return
        rows.append(found[0])
    if find_secret(op.text):
        out.skipped.append(Rejected(f"merge into {op.text[:60]!r}", "the text looks like a credential"))
        return
    confs = [s.confidence for s in op.sources if s.confidence is not None]
    # The merged line is as old as its newest source and keeps their best recall count: a
    # merge must not make old facts look fresh, nor forget that they were asked about.
    starts = [t for s in op.sources for t in (s.valid_from or s.created_at,) if t is not None]
    new = Entry(
        text=op.text,
        id=core.new_id(),
        type=op.type,
        subject=op.subject,
        valid_from=max(starts) if starts and op.end == "merged" else now,
        created_at=now if op.end != "merged" or not starts else max(starts),
        confidence=min(confs) if confs else None,
        hits=max((s.hits for s in op.sources), default=0) if op.end == "merged" else 0,
        salience=max((s.salience for s in op.sources), default=0.0),
        supersedes=op.sources[0].id,
        source="dream",
    )
    path, header = core.file_for_new(op.layer, now)
    core.update(path, lambda doc: doc.append_entry(new) if doc.find(new.id) < 0 else None, header=header, tx=tx)
    for row, src in zip(rows, op.sources):
        core.update(core.vault.root / row.path, set_entry(src.id, lambda e: e.evolve(valid_to=now, end=op.end, superseded_by=new.id)), tx=tx)
    out.new_ids.append(new.id)
    out.done.append((op, op.reason))


def _apply_remember(core: Core, tx: Transaction, op: Remember, out: Applied) -> None:
    try:
        res = write(core, op.text, type=op.type, subject=op.subject, pin=op.pin, source=op.source, tx=tx)
    except MemdreamError as exc:
        out.skipped.append(Rejected(f"remember {op.text[:60]!r}", exc.message))
        return
    if res.action != "duplicate":
        out.new_ids.append(res.entry.id)
    what = {"added": "added", "duplicate": "already known: refreshed", "superseded": "added, superseding " + ", ".join(f"`{e.id}`" for e in res.superseded)}
    out.done.append((op, f"{op.reason} ({what[res.action]})"))


def apply_plan(
    core: Core, plan: Plan, budget: int, canaries: tuple[str, ...] = (), record: Callable[[Applied], None] | None = None
) -> Applied:
    """Apply `plan` as one transaction; roll it back if an invariant fails.

    `record` (the dream's ledger) is called with the result once the checks pass, still inside
    the transaction: if anything interrupts the phase before the record is written (an
    exception, Ctrl-C, a SIGTERM the dream turned into an exception), every file is put back,
    so what stays applied is always in the ledger and `memdream undo` can revert it."""
    out = Applied()
    if not plan.ops:
        return out
    with core.writer.locked(), core.index.batch(), collector_paused():  # one index commit for the whole plan
        core.sync()
        now = core.clock.now()
        moves_only = all(isinstance(op, (Move, Drop)) for op in plan.ops)
        touched = {op.entry.id for op in plan.ops if isinstance(op, (Move, Drop))} if moves_only else None
        base = Baseline.take(core, budget, canaries, touched)
        tx = Transaction()
        try:
            drops = [op for op in plan.ops if isinstance(op, Drop)]
            if drops:
                _apply_drops(core, tx, drops, out)
            moves = [op for op in plan.ops if isinstance(op, Move)]
            for op in plan.ops:
                if isinstance(op, Merge):
                    _apply_merge(core, tx, op, out, now)
                elif isinstance(op, Remember):
                    _apply_remember(core, tx, op, out)
            if moves:
                _apply_moves(core, tx, moves, out, now)
            out.failed = check(core, base, tx)
            if out.failed:
                _rollback(core, tx)
                out.done.clear()
                out.new_ids.clear()
                return out
            out.delta = tx.delta(core.vault.relpath)
            if record is not None and out.delta:
                record(out)
        except BaseException:
            _rollback(core, tx)
            raise
    return out


_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def _rollback(core: Core, tx: Transaction) -> None:
    # A second Ctrl-C must not cut the rollback short: the signals wait until it is done.
    masked = hasattr(signal, "pthread_sigmask")
    if masked:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        for path, fc in reversed(list(tx.files.items())):
            core.writer.restore(path, fc.before)
        core.sync()
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
