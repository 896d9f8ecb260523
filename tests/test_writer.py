"""The single writer: atomic replace, hand-edit safety, adoption of hand-written lines."""

from __future__ import annotations

import os

from memdream.store.format import parse_document


def recall_file(mem):
    return mem.vault.recall_file_for(mem.scope, mem.clock.now())


def test_hand_edit_between_two_remembers_survives(mem) -> None:
    first = mem.remember("周五下午有组会")
    path = recall_file(mem)
    text = path.read_text(encoding="utf-8")
    # A person edits the line by hand (and adds a note line) between two calls.
    edited = text.replace("周五下午有组会", "周五下午三点有组会") + "- 手写的一条：牛奶喝完了\n"
    path.write_text(edited, encoding="utf-8")
    second = mem.remember("下周二去上海出差")
    lines = path.read_text(encoding="utf-8").splitlines()
    body = "\n".join(lines)
    assert "周五下午三点有组会" in body and "周五下午有组会 " not in body
    assert any(ln.startswith("- 手写的一条：牛奶喝完了 <!--m:") and "src=manual" in ln for ln in lines)
    assert "下周二去上海出差" in body
    texts = {e.text for e in mem.list()}
    assert texts == {"周五下午三点有组会", "手写的一条：牛奶喝完了", "下周二去上海出差"}
    # The edited entry keeps its id.
    assert mem.get(first.id).text == "周五下午三点有组会"
    assert second.id != first.id


def test_adopted_hand_line_keeps_its_text_byte_for_byte(mem) -> None:
    path = mem.vault.resident_file(mem.scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = "- I   prefer *dark* themes; 100% of the time => always"
    path.write_text("# MEMORY\n\n" + raw + "\n", encoding="utf-8")
    mem.remember("以后都用中文回我")
    lines = path.read_text(encoding="utf-8").splitlines()
    adopted = [ln for ln in lines if ln.startswith(raw + " <!--m:")]
    assert len(adopted) == 1
    e = parse_document(path.read_text(encoding="utf-8")).entries()[0]
    assert e.text == raw[2:] and e.id and e.source == "manual"


def test_atomic_write_leaves_no_temp_files_and_keeps_mode(mem) -> None:
    mem.remember("我喜欢深色主题")
    path = mem.vault.resident_file(mem.scope)
    os.chmod(path, 0o600)
    mem.remember("以后都用中文回我")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    leftovers = [p for p in mem.vault.root.rglob("*.tmp")]
    assert leftovers == []


def test_writer_reapplies_when_file_changes_under_it(mem) -> None:
    """A change function that is applied again on top of an edit made while it ran."""
    path = recall_file(mem)
    mem.remember("第一条")
    calls = []

    def change(doc):
        calls.append(1)
        if len(calls) == 1:  # an editor saves while the writer is working
            path.write_text(path.read_text(encoding="utf-8") + "- 编辑器刚保存的一行\n", encoding="utf-8")
        doc.lines[-1].raw  # read only
        from memdream.model.entry import Entry

        doc.append_entry(Entry(text=f"写入第{len(calls)}次", id=f"w{len(calls)}"))

    mem.writer.update(path, change)
    text = path.read_text(encoding="utf-8")
    assert len(calls) == 2
    assert "编辑器刚保存的一行" in text and "写入第2次" in text and "写入第1次" not in text


def test_a_save_in_the_last_instant_is_not_overwritten(tmp_path) -> None:
    """The swap is an atomic exchange: if what it replaced is not the version the writer read
    (an editor saved after the writer's last check), it is put back and the writer retries."""
    from memdream.store import writer as w

    p = tmp_path / "a.md"
    p.write_text("one\n", encoding="utf-8")
    _, read_state = w.read_file(p)
    p.write_text("saved by an editor meanwhile\n", encoding="utf-8")
    try:
        w.atomic_write(p, b"the writer's version\n", expected=read_state)
    except w.Raced as exc:
        assert exc.rescued is None  # nobody saved on top of the writer's version meanwhile
    else:
        import pytest

        if w._renameat2 is not False:
            pytest.fail("the race went unnoticed")
        pytest.skip("no renameat2 on this system: a plain rename is used")
    assert p.read_text(encoding="utf-8") == "saved by an editor meanwhile\n"
    assert [x.name for x in tmp_path.iterdir()] == ["a.md"]  # no temp file left behind


def test_a_save_made_on_top_of_the_version_swapped_back_out_is_kept(tmp_path) -> None:
    """Between the writer's exchange and its swap back, its version was in place for an
    instant: an editor that read it and saved on top was told its save landed. After the swap
    back the temp file holds that save, not the writer's version, and it is handed back."""
    from memdream.store import writer as w

    tmp = tmp_path / ".a.md.abcdefgh.tmp"
    ours = "- 咖啡 coffee <!--m:id=a1-->\n- new line by memdream <!--m:id=b2-->\n".encode()
    tmp.write_bytes(ours)
    assert w._saved_on_top(tmp, ours) is None  # the common case: what came out is ours
    theirs = ours + "- 手写的一行 a hand note\n".encode()
    tmp.write_bytes(theirs)
    assert w._saved_on_top(tmp, ours) == (ours, theirs)
    # A temp file somebody removed is nothing to merge (not an empty save, which would delete
    # every line of ours from the file).
    tmp.unlink()
    assert w._saved_on_top(tmp, ours) is None


def test_a_rescued_save_is_merged_into_the_file_as_it_is_now() -> None:
    """The rescued save's edits, against the version it was built on, go into the current file;
    the writer's own change is not taken from it (the writer applies its change again)."""
    from memdream.store import writer as w

    file = "# 记忆\n- 我喜欢龙井茶 <!--m:id=a1 t=fact-->\n- I use vim <!--m:id=a2 t=fact-->\n"
    ours = file + "- 我们下周去杭州 <!--m:id=n1 t=fact-->\n"  # the writer's version: one line added
    current = file + "- 原地保存的一行 saved in place\n"  # what was in place, put back by the swap
    theirs = ours.replace("t=fact", "t=Fact", 1) + "- 手写的一行 a hand note\n"  # saved on top of ours
    merged = w.merge_saved(current, [(ours.encode(), theirs.encode())])
    assert merged.splitlines() == [
        "# 记忆",
        "- 我喜欢龙井茶 <!--m:id=a1 t=Fact-->",  # the hand edit of a line
        "- I use vim <!--m:id=a2 t=fact-->",
        "- 原地保存的一行 saved in place",  # both ends changed: both kept, current's first
        "- 手写的一行 a hand note",
    ]
    # An edit that touches nothing the current file changed merges without a doubled line.
    theirs2 = ours.replace("I use vim", "I use neovim")
    assert w.merge_saved(current, [(ours.encode(), theirs2.encode())]) == current.replace("I use vim", "I use neovim")
    # A save identical to the writer's version adds nothing.
    assert w.merge_saved(current, [(ours.encode(), ours.encode())]) == current
