"""Recall counts: each recall appends its hits to the scope's journal (recall/hits.py), and
they are folded into the files (hc, la) a batch at a time, one rewrite per file."""

from __future__ import annotations

from memdream.core import Core
from memdream.recall.hits import Bump
from memdream.store.format import Document


def count_hits(core: Core, ids: list[str], flush_after: int) -> None:
    """Append recall counts to the scope's hit journal; fold them once `flush_after` gathered."""
    if core.hit_journal.record(ids, core.clock.now(), flush_after):
        flush_hits(core)


def flush_hits(core: Core) -> int:
    """Fold batched recall counts into the files (hc += n, la = last); returns hits folded."""
    hits = core.hit_journal
    with core.writer.locked():
        core.sync()

        def apply(bumps: list[Bump]) -> None:
            by_path: dict[str, list[Bump]] = {}
            paths = core.index.paths_of(core.scope, [b.entry_id for b in bumps])
            for b in bumps:
                for rel in paths.get(b.entry_id, ()):
                    by_path.setdefault(rel, []).append(b)
            written = []
            for rel, group in by_path.items():

                def change(doc: Document, group: list[Bump] = group) -> None:
                    at = doc.find_all({b.entry_id for b in group})
                    for b in group:
                        i = at.get(b.entry_id, -1)
                        e = doc.lines[i].entry if i >= 0 else None
                        if e is not None:
                            last = max(b.last, e.last_recalled) if e.last_recalled else b.last
                            doc.set_entry(i, e.evolve(hits=e.hits + b.count, last_recalled=last))

                path = core.vault.root / rel
                written.append((path, core.update(path, change, index=False)))
            # The index follows once every file is written, as one change (as a dream's moves): a
            # batch touches a hundred files at 100k entries, and a commit each was a fifth of its time.
            core.index_updates(written)

        return hits.flush(apply)
