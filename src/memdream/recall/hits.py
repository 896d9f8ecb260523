"""Recall counts, batched (DESIGN section 6: "each successful recall bumps hc and la, batched").

A recall appends one small line per hit to the scope's journal under the vault's private
folder, ``.memdream/hits/<agent>__<user>.jsonl`` (so the vault itself holds no hidden state,
as Obsidian users expect). When the journal holds
`Memory.hit_flush_after` hits (FLUSH_AFTER by default), the next recall folds them into the memory files through the writer, one
rewrite per file, and empties the journal. The journal is plain text in the vault, so no
count lives only in the index; a crash in the middle of a flush can at worst count a batch
twice, never lose a memory. Deleting .memdream loses at most the counts not yet folded in,
never a memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memdream.store.format import parse_time

# Hits gathered before a recall folds them into the memory files (one rewrite per file that
# holds a hit entry). Large on purpose: at 100k entries the hits of 1,000 recalls sit in
# hundreds of files; the light dream folds them off the query path.
FLUSH_AFTER = 5000
MIN_LINE = len('{"id": "", "at": "2026-01-01T00:00:00"}\n')  # the shortest line record() writes


@dataclass(frozen=True)
class Bump:
    entry_id: str
    count: int
    last: datetime


class HitJournal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, ids: Iterable[str], when: datetime, threshold: int = FLUSH_AFTER) -> bool:
        """Append one line per id; True when `threshold` hits or more are pending."""
        lines = "".join(json.dumps({"id": i, "at": when.isoformat()}) + "\n" for i in ids if i)
        if lines:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, lines.encode("utf-8"))
            finally:
                os.close(fd)
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return False
        # A line is at least MIN_LINE bytes: below that size the count cannot reach the threshold.
        return size >= threshold * MIN_LINE and self.pending() >= threshold

    def pending(self) -> int:
        try:
            return self.path.read_bytes().count(b"\n")  # at most FLUSH_AFTER short lines
        except FileNotFoundError:
            return 0

    def peek(self) -> dict[str, Bump]:
        """The recall counts waiting to be folded (the journal and a flush cut short), read
        only: what a dry-run dream counts in, since a real dream folds them first."""
        bumps: dict[str, Bump] = {}
        for path in (self.path.with_name(self.path.name + ".flushing"), self.path):
            try:
                fh = open(path, encoding="utf-8", errors="replace")
            except FileNotFoundError:
                continue
            with fh:
                for line in fh:
                    try:
                        rec = json.loads(line)
                        eid, at = str(rec["id"]), parse_time(str(rec["at"]))
                    except (ValueError, KeyError, TypeError):
                        continue
                    old = bumps.get(eid)
                    bumps[eid] = Bump(eid, (old.count if old else 0) + 1, max(at, old.last) if old else at)
        return bumps

    def flush(self, apply: Callable[[list[Bump]], None]) -> int:
        """Fold the journal into the files with `apply` (called under the writer's lock by the caller)."""
        work = self.path.with_name(self.path.name + ".flushing")
        if not work.exists():
            try:
                os.replace(self.path, work)
            except FileNotFoundError:
                return 0
        bumps: dict[str, Bump] = {}
        with open(work, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                    eid, at = str(rec["id"]), parse_time(str(rec["at"]))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line from a crash: skip it
                old = bumps.get(eid)
                bumps[eid] = Bump(eid, (old.count if old else 0) + 1, max(at, old.last) if old else at)
        if bumps:
            apply(list(bumps.values()))
        work.unlink()
        return sum(b.count for b in bumps.values())
