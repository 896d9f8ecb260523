"""Temperature, GC protection rules, reflection, lookup levels and multi-agent aggregation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memdream.knowledge.gc import band, temperature
from memdream.knowledge.notes import parse_note

CST = timezone(timedelta(hours=8))


def _write(mem, rel: str, text: str):
    p = mem.vault.memory_dir(mem.scope) / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _note(category: str, priority: str, day: str, tags: str = "[]") -> str:
    return f"---\ntitle: t\ndate: {day}\ncategory: {category}\npriority: {priority}\nstatus: active\nlast_verified: {day}\ntags: {tags}\n---\n\nbody\n"


def test_temperature_formula() -> None:
    assert temperature(0, 3, "🔴") == pytest.approx(1.0)
    assert temperature(0, 0, "⚪") == pytest.approx(0.5)
    assert band(temperature(100, 0, "⚪")) == "cold" and band(temperature(0, 3, "🟡")) == "hot"
    assert band(temperature(10, 1, "🟡")) == "warm"


@pytest.fixture
def vault_at(mem, clock):
    clock.set(datetime(2026, 6, 30, 12, 0, tzinfo=CST))
    return mem


def test_old_reflected_log_is_archived(vault_at) -> None:
    m = vault_at
    _write(m, "2026-05-01.md", "# 2026-05-01\n\n### 09:00 — old\n")
    _write(m, "reflections/2026-05-01.md", "reflected\n")
    plan = m.gc(dry_run=True)
    assert any(x.src.name == "2026-05-01.md" and x.dst.parent.name == ".archive" for x in plan.moves)
    m.gc()
    assert not (m.vault.memory_dir(m.scope) / "2026-05-01.md").exists()
    assert (m.vault.memory_dir(m.scope) / ".archive" / "2026-05-01.md").read_text(encoding="utf-8").startswith("# 2026-05-01")


def test_unreflected_log_is_marked_and_kept(vault_at) -> None:
    m = vault_at
    p = _write(m, "2026-05-02.md", "# 2026-05-02\n\n### 09:00 — old\n")
    m.gc()
    text = p.read_text(encoding="utf-8")
    assert text.startswith("# 2026-05-02\n\n### 09:00 — old\n") and "[UNREFLECTED]" in text
    m.gc()
    assert p.read_text(encoding="utf-8").count("[UNREFLECTED]") == 1  # idempotent


def test_referenced_log_is_kept(vault_at) -> None:
    m = vault_at
    p = _write(m, "2026-05-03.md", "# 2026-05-03\n")
    _write(m, "reflections/2026-05-03.md", "x\n")
    _write(m, "2026-06-28.md", "# 2026-06-28\n\n### 10:00 — follow-up\n\nsee [[2026-05-03]]\n")
    plan = m.gc(dry_run=True)
    assert not any(x.src == p for x in plan.moves)
    assert any(k == p and "referenced" in why for k, why in plan.kept)


def test_recent_log_and_protected_folders_are_never_archived(vault_at) -> None:
    m = vault_at
    _write(m, "2026-06-10.md", "# 2026-06-10\n")  # 20 days: too young
    for cat in ("decisions", "people", "projects", "preferences"):
        _write(m, f"{cat}/old.md", _note(cat, "⚪", "2025-01-01"))
    _write(m, "lessons/core.md", _note("lessons", "🔴", "2025-01-01"))
    before = sorted(p.relative_to(m.vault.root) for p in m.vault.root.rglob("*.md"))
    plan = m.gc()
    moved = {x.src.name for x in plan.moves}
    assert moved == set()
    after = sorted(p.relative_to(m.vault.root) for p in m.vault.root.rglob("*.md") if p.name != "INDEX.md")
    assert [p for p in before if p.name != "INDEX.md"] == after
    assert "COLD" not in str(parse_note((m.vault.memory_dir(m.scope) / "lessons/core.md").read_text(encoding="utf-8")).meta["tags"])


def test_old_reflections_and_done_actions_are_archived(vault_at) -> None:
    m = vault_at
    _write(m, "reflections/2026-05-20.md", "r\n")  # 41 days
    _write(m, "reflections/2026-06-20.md", "r\n")  # 10 days
    _write(m, "actions/done/2026-06-10-ship.md", "done\n")  # 20 days
    _write(m, "actions/done/2026-06-25-fix.md", "done\n")  # 5 days
    m.gc()
    arch = m.vault.memory_dir(m.scope) / ".archive"
    assert (arch / "reflections/2026-05-20.md").exists() and not (arch / "reflections/2026-06-20.md").exists()
    assert (arch / "actions/done/2026-06-10-ship.md").exists() and (m.vault.memory_dir(m.scope) / "actions/done/2026-06-25-fix.md").exists()


def test_cold_lessons_are_tagged_not_moved(vault_at) -> None:
    m = vault_at
    p = _write(m, "lessons/legacy.md", _note("lessons", "⚪", "2025-06-01"))
    warm = _write(m, "lessons/fresh.md", _note("lessons", "🟡", "2026-06-29"))
    m.gc()
    assert p.exists() and parse_note(p.read_text(encoding="utf-8")).meta["tags"] == ["COLD"]
    assert parse_note(warm.read_text(encoding="utf-8")).meta["tags"] == []


def test_dry_run_changes_nothing(vault_at) -> None:
    m = vault_at
    _write(m, "2026-05-01.md", "# 2026-05-01\n")
    _write(m, "2026-05-02.md", "# 2026-05-02\n")
    _write(m, "reflections/2026-05-01.md", "x\n")
    _write(m, "lessons/legacy.md", _note("lessons", "⚪", "2025-06-01"))
    snap = {p: p.read_bytes() for p in m.vault.root.rglob("*") if p.is_file() and ".memdream" not in p.parts}
    plan = m.gc(dry_run=True)
    assert plan.moves and plan.unreflected and plan.cold
    assert {p: p.read_bytes() for p in m.vault.root.rglob("*") if p.is_file() and ".memdream" not in p.parts} == snap


def test_reflection_without_a_model_summarizes_the_day(mem) -> None:
    mem.log("上线 v2", "顺利")
    mem.note("lessons", "deploy", "部署用方案 A")
    mem.note("lessons", "deploy", "部署不用方案 A")
    path = mem.reflect()
    text = path.read_text(encoding="utf-8")
    assert path.name == "2026-06-01.md" and "上线 v2" in text and "部署不用方案 A" in text and "[[2026-06-01]]" in text


def test_lookup_levels(mem) -> None:
    mem.note("lessons", "cron discipline", "定时任务必须幂等，失败要能重跑")
    mem.note("people", "user profile", "用户是夜猫子")
    mem.log("排查告警", "磁盘 I/O 抖动导致超时")
    by_file = mem.lookup("cron-discipline")
    assert by_file.level == "file" and "幂等" in by_file.text
    by_index = mem.lookup("cron discipline")
    assert by_index.level == "index" and by_index.files[0].endswith("lessons/cron-discipline.md")
    by_search = mem.lookup("磁盘抖动")
    assert by_search.level == "search" and any(h["kind"] == "document" and "磁盘" in h["text"] for h in by_search.hits)


def test_archived_files_are_searchable_with_archive(vault_at) -> None:
    m = vault_at
    _write(m, "2026-05-01.md", "# 2026-05-01\n\n### 09:00 — 机房搬迁\n\n旧机房的钥匙在前台\n")
    _write(m, "reflections/2026-05-01.md", "x\n")
    m.gc()
    assert m.lookup("机房钥匙").hits == [] or all("archive" not in h["path"] for h in m.lookup("机房钥匙").hits)
    found = m.lookup("机房钥匙", archive=True)
    assert any(".archive" in h["path"] for h in found.hits)


def test_aggregate_copies_new_blocks_once(open_scope, clock) -> None:
    coord, sub = open_scope(agent="main"), open_scope(agent="agent-a")
    sub.log("完成了数据迁移", "耗时 45 分钟")
    sub.log("提交周报")
    src = sub.vault.memory_dir(sub.scope) / "2026-06-01.md"
    before = src.read_bytes()
    assert coord.aggregate("agent-a") == 2
    assert coord.aggregate("agent-a") == 0  # idempotent
    clock.advance(minutes=30)
    sub.log("又一件事")
    assert coord.aggregate("agent-a") == 1
    text = (coord.vault.memory_dir(coord.scope) / "2026-06-01.md").read_text(encoding="utf-8")
    assert text.count("[agent-a]") == 3 and "耗时 45 分钟" in text
    assert src.read_bytes() != before and src.read_bytes().startswith(before)  # only the sub-agent wrote its file
