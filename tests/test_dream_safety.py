"""Dreams as transactions: invariants that roll a phase back, edits made meanwhile, undo by
ledger and by git revert, the CLI's refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.dream.apply import apply_plan
from memdream.dream.invariants import Baseline, check
from memdream.dream.light import plan_light
from memdream.store.transaction import Transaction
from memdream.errors import NotFound
from memdream.memory import Memory
from memdream.store.format import Document, parse_document
from stores import hand_append, stored_files


def entry_files(vault: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in vault.rglob("*.md") if "dreams" not in p.parts}


def test_a_canary_that_would_be_lost_rolls_the_phase_back(tmp_path: Path, clock) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "memdream.toml").write_text('[dream]\ncanaries = ["Where is the spare key?"]\n', encoding="utf-8")
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    key = mem.remember("The spare key is under the blue flowerpot", type="fact")
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=200)
    mem.remember("我在西湖区", subject="所在地")
    before = entry_files(vault)
    report = mem.dream(["light"])
    light = report.phases[0]
    # The old, never-recalled key fact would be archived: the canary catches it.
    assert light.status == "rolled back" and "spare key" in light.failed[0] and key.id in light.failed[0]
    assert entry_files(vault) == before
    assert mem.recall("spare key", k=1)[0].entry.id == key.id
    diary = (vault / report.diary).read_text(encoding="utf-8")
    assert "put every file back" in diary and "spare key" in diary
    mem.close()


def test_the_invariants_catch_a_lost_entry_and_a_secret(mem: Memory) -> None:
    keep = mem.remember("I like hiking in the Alps")
    gone = mem.remember("My bike is a red Canyon")
    base = Baseline.take(mem.core, budget=30, queries=())
    tx = Transaction()
    path = mem.vault.root / mem.index.by_id(mem.scope, gone.id)[0].path

    def drop_and_leak(doc: Document) -> None:
        doc.remove(doc.find(gone.id))
        doc.lines.append(parse_document("- db password is hunter2hunter2 <!--m:id=leak01;t=fact-->\n").lines[0])

    mem.core.update(path, drop_and_leak, tx=tx)
    failed = check(mem.core, base, tx)
    assert any("disappear" in f and gone.id in f for f in failed)
    assert any("leak01" in f and "credential" in f for f in failed)
    assert mem.get(keep.id)


def test_an_entry_edited_after_planning_is_left_alone(mem: Memory, clock) -> None:
    old = mem.remember("我在余杭区", subject="所在地")
    mem.remember("我在西湖区", subject="所在地")
    plan = plan_light(mem.core, 30)
    assert [op.entry.id for op in plan.ops] == [old.id]
    path = mem.vault.root / mem.index.by_id(mem.scope, old.id)[0].path
    text = path.read_text(encoding="utf-8").replace("我在余杭区", "我以前在余杭区")  # a person edits it meanwhile
    path.write_text(text, encoding="utf-8")
    applied = apply_plan(mem.core, plan, 30)
    assert applied.skipped and "changed after" in applied.skipped[0].why and not applied.done
    assert "我以前在余杭区" in path.read_text(encoding="utf-8")


class _ClockWithAPerson(FrozenClock):
    """A frozen clock beside which a person makes one edit, at the `at`-th look at the clock
    once armed: the seam through which a test acts between two steps of a dream's apply."""

    def __init__(self, start: datetime) -> None:
        super().__init__(start)
        self.at, self.edit = 0, None  # type: ignore[var-annotated]

    def now(self) -> datetime:
        if self.edit is not None:
            self.at -= 1
            if self.at == 0:
                self.edit()
        return super().now()


def test_a_line_edited_while_the_dream_moves_it_ends_in_one_place(tmp_path: Path) -> None:
    """A move copies the line to its destination, then drops the very line it copied: a line
    a person edited in between stays (their edit wins), and its copy comes out of the
    destination again, so the id is never in two files (the in-place soak under load left one
    in recall and MEMORY.md)."""
    clock = _ClockWithAPerson(datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc))
    mem = Memory(load_config(tmp_path / "vault", "me", "main", env={}), clock)
    mem.vault.init()
    old = mem.remember("我在余杭区", subject="所在地")
    mem.remember("我在西湖区", subject="所在地")
    plan = plan_light(mem.core, 30)
    assert [(op.entry.id, op.to) for op in plan.ops] == [(old.id, "archive")]
    path = mem.vault.root / mem.index.by_id(mem.scope, old.id)[0].path

    def edit() -> None:  # the person retypes the confidence: the same memory, other bytes
        text = path.read_text(encoding="utf-8")
        assert ";conf=0.9;" in text
        path.write_text(text.replace(";conf=0.9;", ";conf=0.90;", 1), encoding="utf-8")

    # The clock's looks in apply: 1, the dream's time (before the check); 2, the archive file's
    # write (after the check, before the drop from recall). Landing at 1 instead, the edit would
    # be checked and the move done: the asserts below would fail, not pass by accident.
    clock.at, clock.edit = 2, edit
    applied = apply_plan(mem.core, plan, 30)
    clock.edit = None
    assert clock.at < 0, "the person never got to edit"
    assert not applied.done and [r.why for r in applied.skipped] == ["the memory was edited while the dream moved it"]
    holding = sorted(str(p.relative_to(mem.vault.root)) for p in mem.vault.root.rglob("*.md") if old.id in p.read_text(encoding="utf-8"))
    assert holding == [str(path.relative_to(mem.vault.root))]
    assert ";conf=0.90;" in path.read_text(encoding="utf-8")
    from memdream.doctor import check_vault

    assert check_vault(mem.vault, mem.index) == []
    assert [e.id for e in mem.list(include_ended=True) if e.id == old.id] == [old.id]


def test_undo_reverses_the_last_dream_and_keeps_later_memories(any_mem: Memory, clock) -> None:
    mem = any_mem
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=1)
    mem.remember("我在西湖区", subject="所在地")
    dup = mem.remember("My sister Anna lives in Lyon")
    hand_append(mem, mem.vault.recall_file_for(mem.scope, clock.now()), "- my sister Anna lives in Lyon!\n")
    mem.adopt()
    before = {e.id: (e.layer, e.text, e.valid_to) for e in mem.list(include_ended=True)}
    entries_before = {r: d for r, d in stored_files(mem).items() if r.endswith(".md") and "/dreams/" not in r}
    report = mem.dream(["light"])
    assert report.phases[0].changes == 2
    later = mem.remember("I started learning the cello")
    out = mem.undo()
    assert out["how"] == "ledger"
    after = {e.id: (e.layer, e.text, e.valid_to) for e in mem.list(include_ended=True)}
    assert {k: v for k, v in after.items() if k != later.id} == before
    assert later.id in after and mem.get(dup.id).valid_to is None
    # As stored: every entry line is back where it stood; only the later memory was added.
    entries_after = {r: d for r, d in stored_files(mem).items() if r.endswith(".md") and "/dreams/" not in r}
    lines = lambda files: sorted(ln for d in files.values() for ln in d.decode("utf-8").splitlines() if "<!--m:" in ln)  # noqa: E731
    assert [ln for ln in lines(entries_after) if f"id={later.id}" not in ln] == lines(entries_before)
    with pytest.raises(NotFound):
        mem.undo()  # the last dream is undone; there is no earlier one


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_in_a_git_vault_each_dream_is_one_commit_and_undo_reverts_it(mem: Memory, clock) -> None:
    root = mem.vault.root
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=1)
    mem.remember("我在西湖区", subject="所在地")
    report = mem.dream(["light"])
    log = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True).stdout.splitlines()
    assert log[0].startswith(f"dream {report.run}: light 1") and log[1].startswith("memdream: changes before dream")
    shown = subprocess.run(["git", "show", "--stat", "--format=", "HEAD"], cwd=root, capture_output=True, text=True).stdout
    assert ".archive/entries" in shown and "dreams/" in shown and "MEMORY.md" not in shown
    later = mem.remember("I started learning the cello")
    assert mem.history("所在地")[0].layer == "archive"
    out = mem.undo()
    assert out["how"] == "git revert"
    assert mem.history("所在地")[0].layer == "recall"  # the index followed the files
    assert mem.get(later.id).text == "I started learning the cello"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert status == ""
    subjects = subprocess.run(["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True).stdout
    assert f"undo dream {report.run}" in subjects


def test_cli_dream_undo_and_their_refusals(tmp_path: Path) -> None:
    runner = CliRunner()
    v = str(tmp_path / "v")
    assert runner.invoke(cli, ["init", "--vault", v]).exit_code == 0
    for t in ("我在余杭区", "我在西湖区"):
        assert runner.invoke(cli, ["remember", t, "--subject", "所在地", "--vault", v]).exit_code == 0
    bad = runner.invoke(cli, ["dream", "--days", "31", "--vault", v])
    assert bad.exit_code == 2 and "1<=x<=30" in bad.output
    dry = runner.invoke(cli, ["dream", "--dry-run", "--json", "--vault", v])
    assert dry.exit_code == 0 and json.loads(dry.output)["phases"][0]["status"] == "dry run"
    res = runner.invoke(cli, ["dream", "--vault", v])
    assert res.exit_code == 0 and "light: applied" in res.output and "no model is configured" in res.output
    assert res.output.count("no model is configured") == 1
    undo = runner.invoke(cli, ["undo", "--yes", "--vault", v])
    assert undo.exit_code == 0 and "undid dream" in undo.output
    again = runner.invoke(cli, ["undo", "--yes", "--vault", v])
    assert again.exit_code == 1 and "hint:" in again.output


def test_a_move_cut_short_by_a_crash_is_healed_by_the_next_light_dream(mem: Memory, clock) -> None:
    """A kill between a move's copy and its removal leaves one line in two files."""
    from memdream.doctor import check_vault

    keep = mem.remember("Lin's passport expires in 2031", type="fact")
    recall = mem.vault.root / mem.index.by_id(mem.scope, keep.id)[0].path
    line = next(ln for ln in recall.read_text(encoding="utf-8").splitlines() if keep.id in ln)
    archive = mem.vault.archive_file_for(mem.scope, clock.now())
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_text("# Archived memories\n\n" + line + "\n", encoding="utf-8")
    mem.sync()
    assert any("id" in str(p) for p in check_vault(mem.vault, mem.index))  # doctor sees the twin
    report = mem.dream(["light"])
    assert report.phases[0].changes == 1
    assert len(mem.index.by_id(mem.scope, keep.id)) == 1 and mem.get(keep.id).text == keep.text
    assert not check_vault(mem.vault, mem.index)
    assert "a move was cut short" in (mem.vault.root / report.diary).read_text(encoding="utf-8")
