"""Concurrent writers from several processes lose nothing (issue acceptance: 8 x 250)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from memdream.config import load_config
from memdream.memory import Memory
from memdream.store.format import parse_document

PROCS, PER_PROC = 8, 250

TOPICS = ["咖啡", "tea", "跑步", "chess", "火锅", "jazz", "摄影", "hiking", "围棋", "piano"]


def _worker(root: str, worker: int, out) -> None:  # type: ignore[no-untyped-def]
    mem = Memory(load_config(root, "me", "main", env={}))
    ids = []
    for i in range(PER_PROC):
        topic = TOPICS[(worker + i) % len(TOPICS)]
        text = f"进程{worker} 第{i}条：{topic} 记录编号 {worker * 100000 + i}"
        ids.append(mem.write(text, type="fact").entry.id)
    mem.close()
    out.put(ids)


def test_eight_processes_2000_remembers(tmp_path: Path) -> None:
    root = str(tmp_path / "vault")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(root, w, q)) for w in range(PROCS)]
    for p in procs:
        p.start()
    acked = [i for _ in procs for i in q.get(timeout=600)]
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0
    assert len(acked) == PROCS * PER_PROC == len(set(acked))
    # Every file parses, and together they hold exactly the acknowledged entries.
    found = []
    for path in Path(root).rglob("*.md"):
        doc = parse_document(path.read_text(encoding="utf-8"))
        assert all(not ln.problems for ln in doc.lines)
        found += [e.id for e in doc.entries()]
    assert sorted(found) == sorted(acked)
    mem = Memory(load_config(root, "me", "main", env={}))
    assert len(mem.list()) == 2000
    from memdream.doctor import check_vault

    assert check_vault(mem.vault, mem.index) == []
    mem.close()


def test_mixed_writers_a_dreamer_and_a_person_lose_nothing(soak) -> None:
    """The soak of bench/soak.py at suite size: 4 processes x 60 mixed operations (remember,
    forget, pin, log, recall, light dreams) while a person edits the files by hand."""
    # The person edits for 4 s (it was 8 s; bench/soak.py: 20 s beside 16 x 500): the four
    # processes' 240 operations take about 3 s on 2 cores, and the editing after them raced nothing
    r = soak.concurrency(4, 60, person_seconds=4.0)
    assert r["acked"] > 100
    assert r["acked_missing"] == 0 and r["logs_missing"] == 0 and r["hand_missing"] == 0, r
    assert r["parse_problems"] == 0 and r["doctor"] == [] and r["errors"] == [], r


def test_an_editor_that_saves_in_place_costs_no_acknowledged_write(soak) -> None:
    """Issue 17, item 13: 2 processes remember (and forget, pin, log, dream) while one person's
    editor saves the recall files in place (truncate, first half, 5 ms pause, the rest) and
    another saves by rename. Before the writer waited for a file to settle, it built on the
    half-saved file: the issue's run lost 575 of 600 acknowledged remembers. After that, a
    stat taken after memdream's rename could catch the editor half way through its save and
    record that torn state as memdream's own, so the next write took it without waiting: 0 to
    34 of 78 missing before `doctor --fix` in five runs, 19 of 78 in 2 of 9 runs on an idle
    machine (the record now comes from the temp file's descriptor before the rename and includes
    the content hash; after: 0 of 780 in 10 runs, docs/reliability.md item 13). Under load it
    still failed in 4 of 67 runs: the writer's swap back deleted a save made on top of its
    version, and a dream's move left a line edited mid-move in two files (0 of 100 since)."""
    # 4 s of editing (it was 8 s): the two processes' 160 operations take about 2 s on 2 cores
    r = soak.concurrency(2, 80, person_seconds=4.0, in_place=True)
    assert r["acked"] > 50 and r["in_place_saves"] > 20, r
    # Every acknowledged write is in the files, without help, and doctor has nothing to name.
    assert r["acked_missing"] == 0 and r["logs_missing"] == 0, r
    # The record of acknowledged writes still agrees: --fix finds nothing to put back.
    assert r["restored_by_doctor_fix"] == 0 and r["acked_missing_after_fix"] == 0, r
    # The lines saved by rename survive too: a light dream whose check read a file half saved in
    # place saw its ids gone, rolled back, and its restore wiped the edits made meanwhile (lost
    # 1 to 10 such lines in 7 of 10 runs before the check read files at rest).
    assert r["hand_missing"] == 0, r
    assert r["parse_problems"] == 0 and r["doctor"] == [] and r["errors"] == [], r
