"""A long-lived process learns of changes to the memory files from the kernel (index/watch.py):
every kind of change made outside it is still seen by its next read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memdream.config import load_config
from memdream.index.watch import LOCAL_FILE_SYSTEMS, file_system_of
from memdream.memory import Memory


def texts(mem: Memory, query: str) -> list[str]:
    return [h.entry.text for h in mem.recall(query, k=10)]


@pytest.fixture
def watched(vault: Path, clock):  # type: ignore[no-untyped-def]
    if file_system_of(str(vault)) not in LOCAL_FILE_SYSTEMS:
        pytest.skip(f"{vault} is on {file_system_of(str(vault))}: no watch there, by design")
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.remember("我喜欢喝龙井茶", type="fact")
    mem.remember("The spare key is under the blue flowerpot", type="fact")
    assert texts(mem, "龙井茶") == ["我喜欢喝龙井茶"]
    assert texts(mem, "spare key") and mem.index.watching(mem.scope)  # the second read set it up
    yield mem
    mem.close()


def recall_file(mem: Memory) -> Path:
    (path,) = sorted(mem.vault.recall_dir(mem.scope).glob("*.md"))
    return path


def test_a_one_shot_process_sets_up_no_watch(mem: Memory) -> None:
    mem.remember("我住在杭州")
    assert not mem.index.watching(mem.scope)  # one sync so far (the remember's): a stat of each file


def test_a_line_saved_in_place_is_found(watched: Memory) -> None:
    path = recall_file(watched)
    with open(path, "a", encoding="utf-8") as fh:  # an editor appending to the same inode
        fh.write("- 周末去爬了莫干山\n- I moved to Lisbon in March\n")
    assert texts(watched, "莫干山") == ["周末去爬了莫干山"]
    assert texts(watched, "Lisbon") == ["I moved to Lisbon in March"]
    assert watched.index.watching(watched.scope)


def test_a_line_changed_by_a_save_by_rename_is_found(watched: Memory) -> None:
    path = recall_file(watched)
    tmp = path.with_name(".edit.tmp")
    tmp.write_text(path.read_text(encoding="utf-8").replace("龙井茶", "碧螺春"), encoding="utf-8")
    os.replace(tmp, path)
    assert texts(watched, "碧螺春") == ["我喜欢喝碧螺春"] and texts(watched, "龙井茶") == []


def test_new_deleted_and_resident_files_are_followed(watched: Memory) -> None:
    extra = recall_file(watched).with_name("2020-01.md")
    extra.write_text("- 我的车是一辆蓝色的比亚迪\n", encoding="utf-8")
    assert texts(watched, "比亚迪") == ["我的车是一辆蓝色的比亚迪"]
    extra.unlink()
    assert texts(watched, "比亚迪") == []
    resident = watched.vault.resident_file(watched.scope)
    with open(resident, "a", encoding="utf-8") as fh:
        fh.write("- Always answer in British English\n")
    assert "Always answer in British English" in texts(watched, "British English")


def test_a_file_replaced_by_a_symlink_leaves_the_index(watched: Memory, tmp_path: Path) -> None:
    path = recall_file(watched)
    outside = tmp_path / "elsewhere.md"
    outside.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path.unlink()
    path.symlink_to(outside)
    assert texts(watched, "spare key") == []  # never read through a link, watched or not


def test_many_files_changed_at_once_are_all_read(watched: Memory) -> None:
    folder = watched.vault.recall_dir(watched.scope)
    for i in range(40):  # more than the named files a watched read compares one by one
        (folder / f"2019-{i:02d}.md").write_text(f"- 第{i}号储物柜 locker number {i}\n", encoding="utf-8")
    assert len(watched.recall("locker number", k=50)) == 40
    for i in range(0, 40, 2):
        (folder / f"2019-{i:02d}.md").unlink()
    assert len(watched.recall("locker number", k=50)) == 20


def test_a_recall_folder_replaced_by_another_is_read_again(watched: Memory) -> None:
    folder = watched.vault.recall_dir(watched.scope)
    old = folder.with_name("recall-old")
    folder.rename(old)
    folder.mkdir()
    (folder / "2026-06.md").write_text("- 我养了一只叫豆豆的猫\n", encoding="utf-8")
    assert texts(watched, "豆豆") == ["我养了一只叫豆豆的猫"] and texts(watched, "龙井茶") == []
    shutil.rmtree(folder)
    old.rename(folder)
    assert texts(watched, "龙井茶") == ["我喜欢喝龙井茶"] and texts(watched, "豆豆") == []


def test_a_parent_folder_replaced_by_another_is_read_again(watched: Memory) -> None:
    """Moving `memory/` away moves the watched recall folder without an event on it: the
    folders' identity (device, inode) is checked at every read."""
    parent = watched.vault.recall_dir(watched.scope).parent
    parent.rename(parent.with_name("memory-old"))
    (parent / "recall").mkdir(parents=True)
    (parent / "recall" / "2026-06.md").write_text("- 我养了一只叫豆豆的猫\n", encoding="utf-8")
    assert texts(watched, "豆豆") == ["我养了一只叫豆豆的猫"] and texts(watched, "龙井茶") == []


def test_a_symlinked_folder_is_refused_as_without_a_watch(watched: Memory, tmp_path: Path) -> None:
    folder = watched.vault.recall_dir(watched.scope)
    outside = tmp_path / "outside"
    shutil.move(str(folder), str(outside))
    folder.symlink_to(outside, target_is_directory=True)
    assert texts(watched, "龙井茶") == []  # nothing is read through a link, watched or not


def test_a_rebuild_by_another_process_is_followed(watched: Memory, vault: Path, clock) -> None:  # type: ignore[no-untyped-def]
    other = Memory(load_config(vault, "me", "main", env={}), clock)
    with open(recall_file(watched), "a", encoding="utf-8") as fh:
        fh.write("- 我妈妈在深圳上班\n")
    other.index.rebuild(other.vault.scopes())
    other.close()
    assert texts(watched, "深圳") == ["我妈妈在深圳上班"] and texts(watched, "龙井茶") == ["我喜欢喝龙井茶"]


def test_an_index_emptied_by_another_process_is_filled_again(watched: Memory, vault: Path, clock) -> None:  # type: ignore[no-untyped-def]
    """Another process's rebuild empties the index, then fills it scope by scope; killed in
    between, it leaves it empty, with no file changed: the index's epoch tells."""
    other = Memory(load_config(vault, "me", "main", env={}), clock)
    other.index._clear()  # what a rebuild does first (index/sync.py)
    other.close()
    assert texts(watched, "龙井茶") == ["我喜欢喝龙井茶"]


def test_without_a_watch_the_same_changes_are_found(vault: Path, clock) -> None:  # type: ignore[no-untyped-def]
    from memdream.index.db import Index

    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.remember("我喜欢喝龙井茶", type="fact")
    mem.index.close()
    mem.core.index = mem.index = Index(mem.vault, watch=False)
    assert texts(mem, "龙井茶") == texts(mem, "龙井茶") == ["我喜欢喝龙井茶"]
    assert not mem.index.watching(mem.scope)
    with open(recall_file(mem), "a", encoding="utf-8") as fh:
        fh.write("- 周末去爬了莫干山\n")
    assert texts(mem, "莫干山") == ["周末去爬了莫干山"]
    mem.close()


def test_the_file_system_of_a_path() -> None:
    assert file_system_of("/proc/self") == "proc"
    assert file_system_of("/") is not None
