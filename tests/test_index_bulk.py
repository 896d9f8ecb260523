"""Many new files indexed at once (a rebuild, a first sync: index/bulk.py) give the rows, tokens,
document frequencies and totals that indexing the same files one sync at a time gives, in
this process and in forked workers (issue 21, point 3)."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.memory import Memory
from memdream.model.entry import Entry
from memdream.store.format import render_line

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)


def _files(mem: Memory) -> dict[Path, str]:
    out = {}
    for m in range(12):
        when = NOW - timedelta(days=31 * m)
        lines = []
        for i in range(60):
            n = m * 100 + i
            text = f"第{n}条：我不喝咖啡，住在杭州" if n % 3 == 0 else (f"Note {n}: I never drink coffee in Lyon" if n % 3 == 1 else f"Meeting {n} with Ana about the sourdough")
            e = Entry(text=text, id=f"x{n:05d}", type="fact", created_at=when, valid_from=when, hits=n % 4, pinned=n % 29 == 0,
                      subject="城市" if n % 17 == 0 else "", valid_to=when + timedelta(days=1) if n % 13 == 0 else None)  # fmt: skip
            lines.append(render_line(e))
        lines.append("- a line typed by hand, without an id")
        out[mem.vault.recall_file_for(mem.scope, when)] = "# Recall\n\n" + "\n".join(lines) + "\n"
    return out


def _state(mem: Memory) -> tuple:
    ix = mem.index
    return ix.snapshot(), ix.terms_snapshot(), ix.fts_snapshot(), sorted(r[0] for r in ix.indexed_lines(mem.scope))


def test_bulk_indexing_matches_file_by_file(tmp_path: Path) -> None:
    one = Memory(load_config(tmp_path / "one", "me", "main", env={}), FrozenClock(NOW))
    one.vault.init()
    files = _files(one)
    for path, text in files.items():  # one new file per sync: the file-by-file path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        assert one.sync() == 1
    expected = _state(one)
    assert len(expected[0]) == 12 * 61
    one.close()

    for workers in (1, 2):
        root = tmp_path / f"bulk{workers}"
        shutil.copytree(tmp_path / "one", root, ignore=shutil.ignore_patterns(".memdream"))
        mem = Memory(load_config(root, "me", "main", env={}), FrozenClock(NOW))
        mem.index.bulk_workers = workers
        mem.index.bulk_parallel_min_bytes = 0  # prepare in workers even for this small vault
        assert mem.sync() == 12  # twelve new files at once: the bulk path
        assert _state(mem) == expected
        hits = mem.recall("咖啡 杭州", k=3)
        assert hits and all("咖啡" in h.entry.text for h in hits)
        assert mem.index.rebuild(mem.vault.scopes()) == 12 * 61
        assert _state(mem) == expected
        assert mem.recall("sourdough Ana", k=1)[0].entry.text.startswith("Meeting")
        mem.close()


def test_workers_default_to_two_cores_only_in_a_process_without_other_threads(monkeypatch) -> None:
    """MEMDREAM_INDEX_WORKERS decides when set; unset, a one-thread process on Linux with two
    cores or more forks two workers, and a process running other threads (a server) none."""
    import os
    import sys
    import threading

    from memdream.index.bulk import default_workers

    for value, want in (("1", 1), ("0", 1), ("3", 3), ("two", 1)):
        monkeypatch.setenv("MEMDREAM_INDEX_WORKERS", value)
        assert default_workers() == want
    monkeypatch.delenv("MEMDREAM_INDEX_WORKERS")
    alone = threading.active_count() == 1
    expected = min(2, os.cpu_count() or 1) if sys.platform.startswith("linux") and alone else 1
    assert default_workers() == expected
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert default_workers() == 1  # never forked beside another thread
    finally:
        stop.set()
        other.join()
