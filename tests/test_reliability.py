"""Nothing is lost or leaked: crashes mid-write, symlinks, bad bytes, huge input, read-only and full disks.

The longer soak versions live in bench/soak.py; these run in the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from memdream.config import load_config
from memdream.doctor import check_vault
from memdream.errors import RefusedInput, VaultError
from memdream.memory import Memory
from memdream.store.format import parse_document

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


def test_kill_9_during_remember_pin_log_and_forget_loses_no_acknowledged_write(soak) -> None:
    # 12 trials (bench/soak.py runs 500): each still acknowledges a dozen writes or more before its kill
    r = soak.crashes(12, seed=1234, kinds=("write",))["write"]
    assert r["trials"] == 12 and r["bad"] == [], r["bad"]  # after each kill: every file parses, nothing acknowledged lost
    assert r["acked_remember"] > 20 and r["acked_log"] > 10  # the children did real work between kills
    assert r["doctor"] == [] and r["rebuilt_entries"] >= r["acked_remember"]  # the index rebuilds from the files
    assert r["listed"] == r["ids_in_files"]  # nothing but real lines is read as memory


def test_kill_9_during_gc_leaves_every_file_whole_and_the_next_gc_finishes(soak) -> None:
    # 6 trials of 200 files each (bench/soak.py runs 250 of 800): the finishing gc of the bigger
    # vault was most of a trial; each kill lands within 80% of the job's measured time
    r = soak.crashes(6, seed=5, kinds=("gc",), gc_days=100)["gc"]
    assert r["trials"] == 6 and r["bad"] == [], r["bad"]  # each log in its old place or the archive, whole; then archived once
    assert r["interrupted"] >= 3  # most kills landed mid-gc


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


def test_kill_9_during_a_dream_loses_nothing_and_the_next_dream_heals(soak) -> None:
    # 12 trials over 750 entries (bench/soak.py runs 250 over 1,500)
    r = soak.crashes(12, seed=99, kinds=("dream",), dream_entries=750)["dream"]
    assert r["trials"] == 12 and r["bad"] == [], r["bad"]  # every id kept, in one place; the next dream applies; doctor clean
    assert r["interrupted"] >= 6  # most kills landed mid-dream

