"""Nothing is lost or leaked: crashes mid-write, symlinks, bad bytes, huge input, read-only and full disks.

The longer soak versions live in bench/soak.py; these run in the suite.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memdream.config import load_config
from memdream.doctor import check_vault
from memdream.errors import RefusedInput, VaultError
from memdream.memory import Memory
from memdream.store.format import parse_document

CHILD = r"""
import sys
from memdream.config import load_config
from memdream.memory import Memory
mem = Memory(load_config(sys.argv[1], "me", "main", env={}))
mem.vault.init()
i = int(sys.argv[2])
while True:
    kind = "instruction" if i % 7 == 0 else "fact"
    e = mem.write(f"第{i}条 crash-test fact number {i} 编号{i * 31}", type=kind).entry
    if i % 5 == 0:
        mem.pin(e.id)
    print(e.id, flush=True)
    i += 1
"""


def _entries(root: Path) -> tuple[list[str], list[str]]:
    """(ids, problems) over every memory file; temp files (dot-names) are not memory."""
    ids, problems = [], []
    for p in root.rglob("*.md"):
        if p.name.startswith("."):
            continue
        doc = parse_document(p.read_text(encoding="utf-8"))
        for n, ln in enumerate(doc.lines, 1):
            problems += [f"{p}:{n}: {m}" for m in ln.problems]
            if ln.entry is not None:
                ids.append(ln.entry.id)
    return ids, problems


def test_kill_9_at_random_points_loses_no_acknowledged_write(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    rng = random.Random(1234)
    acked: list[str] = []
    trials = 20
    for trial in range(trials):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(trial * 10_000)], stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + rng.uniform(0.4, 1.2)
        got: list[str] = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            got.append(line.strip())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        acked += got
        ids, problems = _entries(root)
        assert problems == [], problems
        missing = set(acked) - set(ids)
        assert not missing, f"trial {trial}: acknowledged but lost: {sorted(missing)[:5]}"
    assert len(acked) > trials  # the children did real work between kills
    mem = Memory(load_config(root, "me", "main", env={}))
    listed = {e.id for e in mem.list()}
    assert set(acked) <= listed
    ids, _ = _entries(root)
    assert len(listed) == len(set(ids))  # nothing but real lines is read as memory
    mem.index.rebuild(mem.vault.scopes())
    remaining = [p for p in check_vault(mem.vault, mem.index) if "temp file" not in p.message]
    assert remaining == []
    mem.close()


def test_symlinks_pointing_outside_are_refused(tmp_path: Path, clock) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- 外面的秘密 outside secret\n", encoding="utf-8")
    root = tmp_path / "vault"
    mem = Memory(load_config(root, "me", "main", env={}), clock)
    mem.vault.init()
    mem.vault.scope_dir(mem.scope).mkdir(parents=True)
    mem.vault.resident_file(mem.scope).symlink_to(outside)
    assert mem.list() == []  # not read
    with pytest.raises(VaultError) as info:
        mem.remember("以后都用中文回我")
    assert "symlink" in info.value.message and info.value.hint
    assert outside.read_text(encoding="utf-8") == "- 外面的秘密 outside secret\n"  # not written
    # A whole scope folder linked outside is refused too.
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    (root / "scopes" / "main" / "bob").symlink_to(other_dir, target_is_directory=True)
    bob = Memory(load_config(root, "bob", "main", env={}), clock)
    with pytest.raises(VaultError):
        bob.remember("周五下午有组会")
    assert list(other_dir.iterdir()) == []
    problems = check_vault(mem.vault, mem.index)
    assert any("symlink" in p.message for p in problems)
    mem.close()
    bob.close()


def test_invalid_utf8_never_breaks_reading(mem) -> None:
    mem.remember("周五下午有组会")
    path = mem.vault.recall_file_for(mem.scope, mem.clock.now())
    path.write_bytes(path.read_bytes() + b"- broken \xff\xfe bytes here\n")
    texts = [e.text for e in mem.list()]
    assert "周五下午有组会" in texts and any("broken" in t for t in texts)
    assert mem.recall("组会")
    problems = check_vault(mem.vault, mem.index)
    assert any(p.path.endswith("2026-06.md") and p.line == 4 and "UTF-8" in p.message for p in problems)


def test_huge_input_is_refused_fast(mem) -> None:
    start = time.monotonic()
    with pytest.raises(RefusedInput):
        mem.remember("很长的文本" * 2_000_000)
    assert time.monotonic() - start < 2.0
    assert not any(p.suffix == ".md" for p in mem.vault.root.rglob("*"))


def _mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True).returncode == 0


def test_full_disk_gives_a_clear_error_and_leaves_files_whole(tmp_path: Path, clock) -> None:
    root = tmp_path / "small"
    if not _mount_tmpfs(root, "256k"):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        mem = Memory(load_config(root, "me", "main", env={}), clock)
        mem.vault.init()
        mem.remember("以后都用中文回我")
        before = mem.vault.resident_file(mem.scope).read_bytes()
        with pytest.raises(VaultError) as info:
            for i in range(100_000):
                mem.write(f"把磁盘写满的第 {i} 条事实，附带一些填充文字 {'x' * 200}", type="instruction")
        assert "disk is full" in info.value.message or "cannot" in info.value.message
        after = mem.vault.resident_file(mem.scope).read_bytes()
        assert after.startswith(before[: len(before) // 2])  # the old or a newer complete version
        ids, problems = _entries(root)
        assert problems == [] and len(ids) == len(set(ids))
        assert not any(p.name.endswith(".tmp") for p in root.rglob("*"))  # no half-written temp file left
        mem.close()
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


def test_read_only_vault_gives_a_clear_error(tmp_path: Path, clock) -> None:
    root = tmp_path / "ro"
    if not _mount_tmpfs(root, "4m"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        mem = Memory(load_config(root, "me", "main", env={}), clock)
        mem.vault.init()
        mem.remember("以后都用中文回我")
        mem.close()
        if subprocess.run(["mount", "-o", "remount,ro", str(root)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        ro = Memory(load_config(root, "me", "main", env={}), clock)
        with pytest.raises(VaultError) as info:
            ro.remember("周五下午有组会")
        assert info.value.hint
        assert "以后都用中文回我" in ro.vault.resident_file(ro.scope).read_text(encoding="utf-8")
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


DREAMER = r"""
import sys
from memdream.config import load_config
from memdream.memory import Memory
mem = Memory(load_config(sys.argv[1], "me", "main", env={}))
print("start", flush=True)
mem.dream(["light"])
print("done", flush=True)
"""


def _dream_vault(root: Path, n: int) -> None:
    """n entries written straight into recall files: many superseded, stale and repeated lines."""
    from datetime import datetime, timedelta, timezone

    from memdream.model.entry import Entry
    from memdream.store.format import render_line

    now = datetime.now(timezone.utc).replace(microsecond=0)
    folder = root / "scopes" / "main" / "me" / "memory" / "recall"
    folder.mkdir(parents=True)
    (root / ".memdream").mkdir()
    lines = []
    for i in range(n):
        day = now - timedelta(days=(i * 7) % 400)
        text = f"fact {i // 2}: 第{i // 2}号 the locker code hint is blue" + ("!" if i % 2 else "") if i % 10 < 2 else f"fact {i}: 客户{i} ordered {i % 9} boxes"
        ended = i % 13 == 0
        e = Entry(text=text, id=f"c{i:05d}", type="fact", created_at=day, valid_from=day, source="import",
                  valid_to=now - timedelta(hours=1) if ended else None, end="superseded" if ended else "", hits=3 if i % 101 == 0 else 0)  # fmt: skip
        lines.append(render_line(e))
    for part in range(0, n, 500):
        (folder / f"2025-{part // 500:02d}.md").write_text("# Recall\n\n" + "\n".join(lines[part : part + 500]) + "\n", encoding="utf-8")


def test_kill_9_during_a_dream_loses_nothing_and_the_next_dream_heals(tmp_path: Path) -> None:
    template = tmp_path / "template"
    _dream_vault(template, 1500)
    before, _ = _entries(template)
    rng = random.Random(99)
    interrupted = 0
    for trial in range(20):
        root = tmp_path / f"v{trial}"
        shutil.copytree(template, root)
        proc = subprocess.Popen([sys.executable, "-c", DREAMER, str(root)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "start"
        time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        interrupted += "done" not in (proc.stdout.read() or "")
        ids, problems = _entries(root)
        assert problems == [], problems
        assert set(before) <= set(ids), f"trial {trial}: lost {sorted(set(before) - set(ids))[:5]}"
        mem = Memory(load_config(root, "me", "main", env={}))
        mem.index.rebuild(mem.vault.scopes())
        report = mem.dream(["light"])  # finishes the work and heals a move cut short
        assert report.phases[0].status in ("applied", "nothing to do"), report.phases[0]
        after, problems = _entries(root)
        after = [i for i in after if i]  # the diary's list items are prose, not memories
        assert problems == [] and set(before) <= set(after) and len(after) == len(set(after))
        assert [p for p in check_vault(mem.vault, mem.index) if "temp file" not in p.message] == []
        mem.close()
        shutil.rmtree(root)
    assert interrupted >= 10  # most kills landed mid-dream
