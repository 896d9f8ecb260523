"""The light phase: the lifecycle table over real vaults, with a frozen clock and no model.
It may only move and mark: every test compares every entry's text before and after."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from memdream.config import load_config
from memdream.memory import Memory
from memdream.model.entry import Entry
from memdream.model.lifecycle import RULES
from memdream.store.format import parse_document, parse_line, render_line
from stores import engine, hand_append, stored_files, stored_text


def texts(mem: Memory) -> dict[str, str]:
    """id -> text of every entry line in the scope's entry files (archive included), as stored."""
    out: dict[str, str] = {}
    for rel, data in stored_files(mem).items():
        parts = rel.split("/")
        if not rel.endswith(".md") or "dreams" in parts or "sessions" in parts:
            continue
        for e in parse_document(data.decode("utf-8")).entries():
            if e.id:
                assert out.get(e.id, e.text) == e.text, f"{e.id} has two texts"
                out[e.id] = e.text
    return out


def layer_of(rel: str) -> str | None:
    """The layer a stored memory file holds (None: not a memory file)."""
    if rel.endswith("/MEMORY.md"):
        return "resident"
    if "/memory/.archive/entries/" in rel:
        return "archive"
    return "recall" if "/memory/recall/" in rel else None


def where(mem: Memory, entry_id: str) -> tuple[str, Entry]:
    """The layer and entry of the one stored line with this id (a second line is a failure)."""
    found = []
    for rel, data in stored_files(mem).items():
        layer = layer_of(rel)
        if layer is None:
            continue
        for ln in parse_document(data.decode("utf-8")).lines:
            if ln.is_entry and ln.entry.id == entry_id:
                found.append((layer, parse_line(ln.raw, layer)))
    assert len(found) == 1, found
    assert mem.get(entry_id).layer == found[0][0]  # the index agrees with the files
    return found[0]


def ledger(mem: Memory) -> list[dict]:
    return [json.loads(ln) for ln in stored_text(mem, mem.vault.ledger_file(mem.scope)).splitlines() if ln.strip()]


def test_the_table_names_every_rule_once() -> None:
    states = [r.state for r in RULES]
    assert len(states) == len(set(states))
    assert RULES[0].action == "keep" and "pinned" in RULES[0].state  # protection comes first


def test_light_moves_and_marks_but_never_changes_a_text(any_mem: Memory, clock) -> None:
    mem = any_mem
    old_fact = mem.remember("The old gym was on Baker Street")
    pinned = mem.remember("Old pinned note about the garage code location", pin=True)
    rule = mem.remember("不要在周末给我发工作消息")
    pref = mem.remember("I prefer window seats on trains")
    clock.advance(days=200)
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=1)
    moved = mem.remember("我在西湖区", subject="所在地")
    often = mem.remember("The wifi password hint is the cat's birthday", type="fact")
    keeper = mem.remember("My sister Anna lives in Lyon")
    engine(mem).hit_flush_after = 1
    for _ in range(3):
        mem.recall("wifi hint cat birthday")
    # A person types a near-duplicate by hand; the dream adopts and then merges it.
    recall_file = mem.vault.recall_file_for(mem.scope, clock.now())
    hand_append(mem, recall_file, "- my sister Anna lives in Lyon!\n")
    before = texts(mem)
    report = mem.dream(["light"])
    after = texts(mem)
    assert before.items() <= after.items()  # nothing lost, no text changed
    assert len(after) == len(before) + 1  # only the adopted hand-written line got an id
    assert report.phases[0].status == "applied"

    layer, e = where(mem, often.id)
    assert layer == "resident" and e.text == often.text  # promoted: recalled 3 times
    layer, e = where(mem, old_fact.id)
    assert layer == "archive" and e.valid_to is None  # old and unimportant: archived, still true
    layer, e = where(mem, pref.id)
    assert layer == "recall"  # a resident preference idle for 200 days: demoted
    layer, e = where(mem, moved.supersedes)
    assert layer == "archive" and e.end == "superseded"
    hand = next(i for i, t in after.items() if t == "my sister Anna lives in Lyon!")
    # Same age, no recalls: either copy may stay; the other is merged into it and archived.
    (loser, winner) = (hand, keeper.id) if where(mem, hand)[0] == "archive" else (keeper.id, hand)
    layer, e = where(mem, loser)
    assert layer == "archive" and e.end == "merged" and e.superseded_by == winner and e.valid_to == clock.now()
    assert where(mem, winner)[1].valid_to is None
    for protected in (pinned, rule):  # untouched, though old and never recalled
        layer, e = where(mem, protected.id)
        assert layer == protected.layer and e == protected

    diary = stored_text(mem, report.diary)
    assert "promoted" in diary and "recalled 3 times" in diary
    assert f"`{loser}`" in diary and f"near-duplicate of `{winner}`" in diary
    assert "No memory's text was changed." in diary
    rec = ledger(mem)[-1]
    assert rec["phases"] == {"light": "applied"} and rec["changes"]


def test_recall_after_a_light_dream_still_finds_moved_memories(any_mem: Memory, clock) -> None:
    mem = any_mem
    mem.remember("我在余杭区", subject="所在地")
    clock.advance(days=3)
    mem.remember("我在西湖区", subject="所在地")
    mem.dream(["light"])
    assert [h.text for h in mem.recall("我在哪个区", k=3)][:1] == ["我在西湖区"]
    as_of = [h.text for h in mem.recall("我在哪个区", as_of=(clock.now() - timedelta(days=2)).date().isoformat())]
    assert as_of[:1] == ["我在余杭区"]  # the archive still answers as-of questions
    assert [e.text for e in mem.history("所在地")] == ["我在余杭区", "我在西湖区"]


def test_a_full_resident_layer_takes_no_promotions(vault: Path, clock) -> None:
    vault.mkdir(parents=True)
    (vault / "memdream.toml").write_text("[dream]\nresident_budget = 2\n", encoding="utf-8")
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    mem.remember("I prefer tea", type="preference")
    mem.hit_flush_after = 1
    ids = [mem.remember(t, type="fact").id for t in ("Project Apollo starts in May", "Project Zephyr ends in June", "Project Hermes has 5 people")]
    for _ in range(3):
        for q in ("Apollo May", "Zephyr June", "Hermes people"):
            mem.recall(q)
    report = mem.dream(["light"])
    layers = [where(mem, i)[0] for i in ids]
    assert layers.count("resident") == 1 and layers.count("recall") == 2
    diary = (vault / report.diary).read_text(encoding="utf-8")
    assert "it is full (2/2)" in diary
    mem.close()


def test_dry_run_changes_no_byte(any_mem: Memory, clock) -> None:
    mem = any_mem
    mem.remember("我在余杭区", subject="所在地")
    mem.remember("我在西湖区", subject="所在地")
    snapshot = {r: data for r, data in stored_files(mem).items() if not r.startswith(".memdream/")}
    report = mem.dream(["light"], dry_run=True)
    assert report.phases[0].status == "dry run" and "我在余杭区" in report.diary
    assert {r: data for r, data in stored_files(mem).items() if not r.startswith(".memdream/")} == snapshot


def test_a_light_dream_over_5000_entries_changes_no_text(mem: Memory, clock) -> None:
    """Files written directly (the files are the truth), then synced: 5,000 entries with
    duplicates, superseded lines and often-recalled ones; no model configured."""
    now = clock.now()
    lines = []
    for i in range(5000):
        day = now - timedelta(days=i % 300)
        if i % 50 == 0:
            text = f"Meeting note {i // 50}: the budget review moved to room {i % 7}"
        elif i % 50 == 1:
            text = f"meeting note {(i - 1) // 50}: the budget review moved to room {(i - 1) % 7}!"  # a near-duplicate
        elif i % 2:
            text = f"第{i}号客户喜欢在周{i % 7 + 1}开会，偏好{['绿茶', '咖啡', '红茶'][i % 3]}"
        else:
            text = f"Customer {i} ordered {i % 13} boxes of item {i * 7 % 101} on day {i % 28}"
        e = Entry(
            text=text, id=f"e{i:05d}", type="fact", created_at=day, valid_from=day, source="import",
            valid_to=now - timedelta(days=1) if i % 97 == 0 else None, end="superseded" if i % 97 == 0 else "",
            hits=3 if i % 401 == 0 else 0,
        )  # fmt: skip
        lines.append(render_line(e))
    folder = mem.vault.recall_dir(mem.scope)
    folder.mkdir(parents=True)
    for part in range(5):
        (folder / f"2026-0{part + 1}.md").write_text("# Recall\n\n" + "\n".join(lines[part * 1000 : (part + 1) * 1000]) + "\n", encoding="utf-8")
    mem.sync()
    assert mem.llm is None
    before = texts(mem)
    report = mem.dream()
    after = texts(mem)
    assert before == after
    light = report.phases[0]
    assert light.status == "applied" and light.changes > 100, light.failed
    assert all(p.status == "skipped" for p in report.phases[1:])
    diary = (mem.vault.root / report.diary).read_text(encoding="utf-8")
    moved = {i for i, t in before.items() if mem.get(i).layer != "recall" or mem.get(i).valid_to is not None}
    assert len(moved) == light.changes and all(f"`{i}`" in diary for i in moved)  # every move is in the diary
    counts = mem.stats()
    assert sum(n for k, n in counts.items() if k.startswith("recall.")) < 5000


def test_later_dreams_compare_only_new_lines_and_still_find_their_duplicates(any_mem: Memory, clock) -> None:
    mem = any_mem
    old = mem.remember("我女儿小雨在学钢琴")
    short = mem.remember("Lin takes the 8:15 train")
    for i in range(30):
        mem.remember(f"Unrelated fact number {i} about the garden")
    first = mem.dream(["light"])
    assert first.phases[0].status == "nothing to do"
    clock.advance(hours=2)
    recall_file = mem.vault.recall_file_for(mem.scope, clock.now())
    hand_append(mem, recall_file, "- 我女儿小雨在学钢琴！\n" "- Lin takes the 8:15 train to work\n")  # the same fact typed again; a line that says more than the old one
    second = mem.dream(["light"])
    assert second.phases[0].changes == 2, second.phases[0]
    assert mem.get(old.id).valid_to is None  # the older, identical one stays
    ended = mem.get(short.id)
    assert ended.end == "merged" and mem.get(ended.superseded_by).text == "Lin takes the 8:15 train to work"


def test_docs_dreaming_lists_every_rule_of_the_table() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "dreaming.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"| {rule.state} | {rule.action} |" in doc, rule.state


def test_an_ended_resident_line_does_not_make_room_for_a_promotion(vault: Path, clock) -> None:
    """A superseded line still in MEMORY.md leaves it, but it never counted against the budget."""
    vault.mkdir(parents=True)
    (vault / "memdream.toml").write_text("[dream]\nresident_budget = 3\n", encoding="utf-8")
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    mem.remember("My favourite football team is Arsenal", subject="football team", type="preference")
    mem.remember("My favourite football team is Liverpool", subject="football team", type="preference")
    mem.hit_flush_after = 1
    for i in range(4):
        mem.remember(f"Project codename {i} is stored in bucket zone{i}", type="fact")
        for _ in range(3):
            mem.recall(f"codename {i} zone{i}", k=1)
    report = mem.dream(["light"])
    assert report.phases[0].status == "applied", report.phases[0].failed
    assert len(mem.list("resident")) == 3  # Liverpool + 2 promotions
    mem.close()


def test_a_dry_run_plans_what_the_real_run_applies(any_mem, clock) -> None:
    """The newcomer's case: recall counts still in the journal (a real dream folds them first)
    made a dry run plan 1 change where the real run applied 2."""
    mem = any_mem
    mem.remember("我在余杭区", subject="所在地")
    mem.remember("我在西湖区", subject="所在地")
    meeting = mem.remember("周五下午有组会，在 3 号会议室")
    for _ in range(3):
        assert mem.recall("组会")  # three recalls: the journal holds them, the file still says hc=0
    assert mem.get(meeting.id).hits == 0
    files = {r: data for r, data in stored_files(mem).items() if r.endswith(".md")}
    dry = mem.dream(["light"], dry_run=True)
    assert {r: data for r, data in stored_files(mem).items() if r.endswith(".md")} == files  # a dry run writes nothing
    real = mem.dream(["light"])
    assert (dry.phases[0].status, real.phases[0].status) == ("dry run", "applied")
    assert dry.phases[0].changes == real.phases[0].changes == 2
    assert mem.get(meeting.id).layer == "resident"  # promoted: recalled three times
    assert f"promoted `{meeting.id}`" in dry.diary


def test_a_dry_run_of_several_phases_says_why_a_later_phase_may_differ(tmp_path, clock) -> None:
    from memdream.llm.fake import FakeLLMServer
    from memdream.llm.client import OpenAICompatLLM

    with FakeLLMServer() as srv:
        srv.default = lambda req: '{"operations": []}'
        m = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock, llm=OpenAICompatLLM(srv.base_url, "fake", retries=1))
        m.vault.init()
        try:
            m.remember("我在余杭区", subject="所在地")
            m.remember("I moved to Hangzhou's Xihu district", subject="所在地")
            for t in ("Lin drinks coffee every morning", "Lin takes coffee with oat milk"):
                m.remember(t, type="fact")
            clock.advance(days=5)
            dry = m.dream(["light", "deep"], dry_run=True)
            assert [p.status for p in dry.phases] == ["dry run", "dry run"] and dry.phases[0].changes == 1
            assert "A real run applies each phase before the next one plans" in dry.diary
            alone = m.dream(["light"], dry_run=True)
            assert "A real run applies each phase" not in alone.diary  # one phase: nothing to chain
        finally:
            m.close()
