"""Indexing many new files at once: a rebuild, or the first sync of a large vault (issue 21).

Reading, parsing and tokenizing a file is pure (bytes in, prepared rows out: index/rows.py
`prepared_row`), so it can run in worker processes (forked, so the tokenizer's dictionary is
not loaded again; two by default in a process without other threads, MEMDREAM_INDEX_WORKERS
to choose: see default_workers), in file
order, while this process inserts what they made: a few batched statements per file, one transaction per BATCH_ROWS rows, and the
terms and BM25 totals added once per transaction instead of once per file. The rows are the
ones the file-by-file path writes (same columns, same tokens, same rowid order).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from memdream.index.rows import flush_counts, insert_prepared, item, next_rowid, prepared_row
from memdream.store.format import parse_document
from memdream.store.vault import Scope, Vault
from memdream.store.writer import FileState, NotRegularFile, decode, read_file

BATCH_ROWS = 50_000  # rows per transaction: bounded WAL growth, and other writers get a turn between batches
PARALLEL_MIN_BYTES = 2_000_000  # below this (about 10k entries) starting workers costs more than it saves
CHUNK_FILES = 2  # files handed to a worker at a time


class _Index(Protocol):
    """What bulk indexing needs of the index (index/sync.py FileSync, mixed into Index)."""

    vault: Vault

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def drop_rows_of(self, db: sqlite3.Connection, rel: str) -> int: ...

    def set_file(self, db: sqlite3.Connection, rel: str, scope: Scope, layer: str, state: FileState) -> None: ...


def default_workers() -> int:
    """Worker processes for bulk indexing. `MEMDREAM_INDEX_WORKERS` when set (0 or 1: in this
    process). Unset: two on Linux with two or more cores, when this process runs no other thread
    (a CLI command or a script: never forked from a server's threads), else one. Measured on an
    idle 2-core machine, a rebuild of 100k entries took 4.4 s with two workers and 6.4 s without;
    on one shared with other work 4% less (docs/benchmarks.md). Where processes cannot be
    forked: 1."""
    env = os.environ.get("MEMDREAM_INDEX_WORKERS", "").strip()
    if env:
        if not env.isdigit() or int(env) <= 1:
            return 1
        wanted = int(env)
    else:
        import threading

        if not sys.platform.startswith("linux") or threading.active_count() > 1:
            return 1
        wanted = min(2, os.cpu_count() or 1)
        if wanted <= 1:
            return 1
    import multiprocessing  # imported here: importing memdream stays cheap

    return wanted if "fork" in multiprocessing.get_all_start_methods() else 1


def prepare_file(job: tuple[str, str]) -> tuple[FileState, list[tuple]] | None:
    """(state, prepared rows) of the file at `job` = (path, layer), or None when it is not a
    regular file any more or is gone. Runs in a worker process: no index access here."""
    path, layer = Path(job[0]), job[1]
    try:
        data, state = read_file(path)
    except NotRegularFile:
        return None
    if not state.exists:
        return None
    doc = parse_document(decode(data, path))
    rows = []
    for ln in doc.lines:
        if ln.is_entry:
            assert ln.entry is not None
            rows.append(prepared_row(*item(ln.raw, ln.entry, layer)))
    return state, rows


def _prepared(jobs: list[tuple[str, str]], workers: int, min_bytes: int) -> Iterator[tuple[FileState, list[tuple]] | None]:
    """prepare_file of each job, in order: in `workers` forked processes when that pays."""
    size = 0
    for path, _ in jobs:
        try:
            size += os.lstat(path).st_size
        except OSError:
            pass
    if workers > 1 and len(jobs) > 1 and size >= min_bytes:
        import multiprocessing

        try:
            pool = multiprocessing.get_context("fork").Pool(min(workers, len(jobs)))
        except (OSError, ValueError):
            pool = None
        if pool is not None:
            with pool:
                yield from pool.imap(prepare_file, jobs, chunksize=CHUNK_FILES)
            return
    for job in jobs:
        yield prepare_file(job)


def index_new_files(
    index: _Index, scope: Scope, files: Iterable[tuple[str, str]], workers: int | None = None, min_bytes: int = PARALLEL_MIN_BYTES
) -> tuple[int, set[str]]:
    """Index the files (relative path, layer) the index does not know yet; returns (files
    whose rows changed, relative paths that turned out not to be regular files or were gone).
    With `workers` > 1 and at least `min_bytes` to read, files are prepared in that many forked processes."""
    jobs = list(files)
    workers = default_workers() if workers is None else workers
    root = str(index.vault.root) + os.sep
    results = _prepared([(root + rel, layer) for rel, layer in jobs], workers, min_bytes)
    skipped: set[str] = set()
    done = 0
    pos = 0
    while pos < len(jobs):
        with index.transaction() as db:
            first = next_rowid(db)
            rowid = first
            df: Counter[str] = Counter()
            tokens = 0
            while pos < len(jobs) and rowid - first < BATCH_ROWS:
                rel, layer = jobs[pos]
                pos += 1
                got = next(results)
                if got is None:
                    skipped.add(rel)
                    continue
                state, rows = got
                dropped = index.drop_rows_of(db, rel)  # a path the files table forgot may still have rows
                d, t = insert_prepared(db, rel, scope.key, layer, rows, rowid)
                df.update(d)
                tokens += t
                rowid += len(rows)
                index.set_file(db, rel, scope, layer, state)
                done += bool(rows or dropped)  # as the file-by-file path counts: rows changed
            if rowid > first:
                flush_counts(db, df, rowid - first, tokens, rowid - 1)
    return done, skipped
