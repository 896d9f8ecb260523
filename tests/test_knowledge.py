"""The knowledge vault: NOW.md, the daily log, knowledge files with CRUD verification, INDEX.md, conflicts."""

from __future__ import annotations

import multiprocessing as mp
import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.config import load_config
from memdream.errors import RefusedInput, SecretRefused
from memdream.knowledge.notes import paragraphs, parse_note
from memdream.memory import Memory
from stores import stored_files, stored_text


def test_now_show_and_replace(any_mem) -> None:
    mem = any_mem
    assert mem.now() == ""
    mem.now("# NOW\n\n## Today\n- ✅ 完成数据库迁移\n")
    assert "完成数据库迁移" in mem.now()
    mem.now("# NOW\n\n- 只剩一项\n")
    assert mem.now() == "# NOW\n\n- 只剩一项\n"  # replaced as a whole
    with pytest.raises(SecretRefused):
        mem.now("wifi password: Tr0ub4dor&3x")


def test_daily_log_appends_blocks_and_never_rewrites(any_mem, clock) -> None:
    mem = any_mem
    path, heading = mem.log("完成了数据库迁移", "PostgreSQL 14 -> 16，耗时 45 分钟。")
    assert heading == "### 09:00 — 完成了数据库迁移"
    first = stored_text(mem, path)
    assert first.startswith("# 2026-06-01\n") and "PostgreSQL 14 -> 16" in first
    clock.advance(minutes=75)
    mem.log("Agent B submitted the weekly report")
    second = stored_text(mem, path)
    assert second.startswith(first)  # earlier blocks untouched
    assert re.findall(r"^### (\d\d:\d\d) — (.+)$", second, re.M) == [("09:00", "完成了数据库迁移"), ("10:15", "Agent B submitted the weekly report")]
    clock.advance(days=1)
    other, _ = mem.log("新的一天")
    assert other.name == "2026-06-02.md" and stored_text(mem, path) == second
    with pytest.raises(RefusedInput):
        mem.log("   ")


def test_log_uses_the_configured_time_zone(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "memdream.toml").write_text('timezone = "Asia/Tokyo"\n', encoding="utf-8")
    m = Memory(load_config(tmp_path / "v", env={}))
    m.vault.init()
    before = datetime.now(ZoneInfo("Asia/Tokyo"))
    path, heading = m.log("tz check")
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert path.stem in {before.date().isoformat(), after.date().isoformat()}
    assert heading[4:9] in {f"{before:%H:%M}", f"{after:%H:%M}"}
    m.close()


def _logger(root: str, n: int, w: int) -> None:
    m = Memory(load_config(root, "me", "main", env={}))
    for i in range(n):
        m.log(f"writer {w} block {i}", f"body {w}-{i}")
    m.close()


def test_log_loses_no_block_under_four_concurrent_writers(tmp_path: Path) -> None:
    root = str(tmp_path / "v")
    Memory(load_config(root, "me", "main", env={})).vault.init()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_logger, args=(root, 40, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    text = "".join(p.read_text(encoding="utf-8") for p in Path(root).rglob("20*.md"))
    blocks = re.findall(r"^### \d\d:\d\d — writer (\d) block (\d+)$", text, re.M)
    assert sorted(blocks) == sorted((str(w), str(i)) for w in range(4) for i in range(40))


CRUD_CASES = [
    # (existing, new, outcome)
    ("部署时先备份数据库，再升级。", "部署时先备份数据库，再升级。", "NOOP"),
    ("部署时先备份数据库，再升级。", "部署时先备份数据库和配置文件，再升级。", "UPDATE"),
    ("部署时先备份数据库，再升级。", "部署时不用备份数据库，直接升级。", "CONFLICT"),
    ("部署时先备份数据库，再升级。", "周五下午团队一起吃火锅。", "ADD"),
    ("Always run migrations inside a transaction.", "Always run migrations inside a transaction.", "NOOP"),
    ("Always run migrations inside a transaction.", "Always run migrations inside a transaction and log how long they take.", "UPDATE"),
    ("Always run migrations inside a transaction.", "Never run migrations inside a transaction.", "CONFLICT"),
    ("Always run migrations inside a transaction.", "The office wifi moved to the 5 GHz band.", "ADD"),
]


# Every case on the folder vault; on the team store (a database per test) the cases that
# rewrite a note, in both languages.
STORE_CRUD = [("folder", *c) for c in CRUD_CASES] + [("postgres", *c) for i, c in enumerate(CRUD_CASES) if i in (1, 2, 5, 7)]


@pytest.mark.parametrize("store_kind,existing,new,expected", STORE_CRUD, indirect=["store_kind"])
def test_note_crud_outcomes(any_mem, clock, existing: str, new: str, expected: str) -> None:
    mem = any_mem
    first = mem.note("lessons", "deploy", existing, priority="🔴", tags=("ops",))
    assert first.kind == "ADD"
    clock.advance(days=3)
    out = mem.note("lessons", "deploy", new)
    assert out.kind == expected, out.decision
    note = parse_note(stored_text(mem, out.path))
    assert str(note.meta["last_verified"]) == "2026-06-04"  # updated on every write
    paras = paragraphs(note.body)
    body = note.body
    if expected == "NOOP":
        assert [p.text for p in paras] == [existing]
    elif expected == "UPDATE":
        assert "> [Superseded 2026-06-04]" in body and paras[0].superseded and paras[-1].text == new
    elif expected == "CONFLICT":
        assert "> ⚠️ CONFLICT (2026-06-04)" in body and note.meta["status"] == "conflict"
        assert [p.text for p in paras] == [existing, new]  # both kept
    else:
        assert [p.text for p in paras] == [existing, new] and note.meta["status"] == "active"


def test_frontmatter_is_valid_yaml_and_index_shows_health(any_mem, clock) -> None:
    mem = any_mem
    mem.note("lessons", "cron discipline", "定时任务必须幂等", priority="🔴", tags=("cron", "automation"))
    mem.note("people", "user profile", "用户是夜猫子，常在凌晨工作", priority="🔴")
    mem.note("decisions", "architecture v2", "Move the index to SQLite FTS5")
    clock.advance(days=40)
    mem.note("lessons", "api patterns", "Retry with jitter on 429", priority="⚪")
    mem.note("lessons", "deploy", "部署前先备份")
    mem.note("lessons", "deploy", "部署前不用备份")
    notes = {r: d for r, d in stored_files(mem).items() if r.endswith(".md") and r.split("/")[-2] in ("lessons", "people", "decisions")}
    assert len(notes) == 5
    for data in notes.values():
        meta = yaml.safe_load(data.decode("utf-8").split("---")[1])  # what Obsidian reads
        assert {"title", "date", "category", "priority", "status", "last_verified", "tags"} <= set(meta)
    index = stored_text(mem, mem.vault.memory_dir(mem.scope) / "INDEX.md")
    assert "## Lessons" in index and "## People" in index and "## Decisions" in index
    assert re.search(r"\| \[\[cron-discipline\]\] \| 🔴 \| ⚠️ stale \| 2026-06-01 \|", index)
    assert re.search(r"\| \[\[api-patterns\]\] \| ⚪ \| ✅ active \| 2026-07-11 \|", index)
    assert re.search(r"\| \[\[deploy\]\] \| 🟡 \| 🔀 conflict \|", index)
    assert "[[2026-06-01-architecture-v2]]" in index


@pytest.mark.parametrize(
    "store_kind,keep", [("folder", k) for k in ("a", "b", "both", "edit")] + [("postgres", "a"), ("postgres", "edit")], indirect=["store_kind"]
)
def test_conflicts_and_resolve(any_mem, clock, keep: str) -> None:
    mem = any_mem
    mem.note("lessons", "deploy", "部署用方案 A")
    clock.advance(days=1)
    mem.note("lessons", "deploy", "部署不用方案 A")
    found = mem.conflicts()
    assert len(found) == 1 and found[0].a == "部署用方案 A" and found[0].b == "部署不用方案 A"
    mem.resolve(found[0].id, keep, text="部署用方案 B" if keep == "edit" else None)
    assert mem.conflicts() == []
    note = parse_note(stored_text(mem, found[0].path))
    assert note.meta["status"] == "active"
    live = [p.text for p in paragraphs(note.body) if not p.superseded]
    expected = {"a": ["部署用方案 A"], "b": ["部署不用方案 A"], "both": ["部署用方案 A", "部署不用方案 A"], "edit": ["部署用方案 B"]}[keep]
    assert live == expected
    assert "部署用方案 A" in note.body and "部署不用方案 A" in note.body  # history kept
    index = stored_text(mem, mem.vault.memory_dir(mem.scope) / "INDEX.md")
    assert "| 🔀 conflict |" not in index and "[[deploy]]" in index


def test_cli_knowledge_commands(tmp_path: Path) -> None:
    v = str(tmp_path / "v")
    r = CliRunner()
    assert r.invoke(cli, ["log", "上线", "v2 发布完成", "--vault", v]).exit_code == 0
    assert r.invoke(cli, ["now", "--set", "-", "--vault", v], input="# NOW\n- 发布 v2\n").exit_code == 0
    assert "发布 v2" in r.invoke(cli, ["now", "--vault", v]).output
    out = r.invoke(cli, ["note", "add", "lessons", "deploy", "部署用方案 A", "--vault", v])
    assert out.exit_code == 0 and out.output.startswith("ADD:")
    out = r.invoke(cli, ["note", "add", "lessons", "deploy", "部署不用方案 A", "--vault", v])
    assert out.output.startswith("CONFLICT:")
    listed = r.invoke(cli, ["conflicts", "--vault", v, "--json"])
    import json

    cid = json.loads(listed.output)["conflicts"][0]["id"]
    assert r.invoke(cli, ["resolve", cid, "--keep", "b", "--vault", v]).exit_code == 0
    assert "no open conflicts" in r.invoke(cli, ["conflicts", "--vault", v]).output
    assert r.invoke(cli, ["note", "add", "nonsense", "x", "y", "--vault", v]).exit_code == 2
    assert r.invoke(cli, ["note", "add", "lessons", "../../etc", "x", "--vault", v]).exit_code == 0  # slug stays inside
    assert not (Path(v).parent / "etc.md").exists()
    assert (Path(v) / "scopes/main/me/memory/lessons/etc.md").exists()


COFFEE = [("我每天早上喝咖啡", "我每天早上不喝咖啡了"), ("I drink coffee every morning", "I don't drink coffee every morning anymore")]


@pytest.mark.parametrize(
    "store_kind,old,new,keep",
    [("folder", o, n, k) for o, n in COFFEE for k in ("a", "b", "both", "edit")] + [("postgres", o, n, k) for o, n in COFFEE for k in ("b", "edit")],
    indirect=["store_kind"],
)
def test_contradictory_memories_open_a_conflict(any_mem, clock, old: str, new: str, keep: str) -> None:
    mem = any_mem
    a = mem.write(old, type="fact").entry
    clock.advance(days=2)
    out = mem.write(new, type="fact")
    assert out.action == "added" and out.contradicts is not None and out.contradicts.id == a.id
    assert out.entry.conflicts_with == a.id
    found = [c for c in mem.conflicts() if c.kind == "entry"]
    assert len(found) == 1 and found[0].a == old and found[0].b == new
    mem.resolve(found[0].id, keep, text="每周只喝一次咖啡" if keep == "edit" else None)
    assert [c for c in mem.conflicts() if c.kind == "entry"] == []
    current = sorted(e.text for e in mem.list())
    expected = {"a": [old], "b": [new], "both": sorted([old, new]), "edit": ["每周只喝一次咖啡"]}[keep]
    assert current == expected
    assert len(mem.list(include_ended=True)) >= 2  # nothing erased


def test_unrelated_memories_do_not_conflict(any_mem) -> None:
    mem = any_mem
    mem.write("我每天早上喝咖啡", type="fact")
    assert mem.write("我不喜欢下雨天", type="fact").contradicts is None
