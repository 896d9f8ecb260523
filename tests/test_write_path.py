"""The write path (DESIGN section 5): validation, classification, dedup, supersede, salience."""

from __future__ import annotations

import pytest

from memdream.errors import NotFound, RefusedInput, SecretRefused
from memdream.model.classify import classify_type, extract_subject, salience
from memdream.model.similarity import is_duplicate, similarity
from stores import stored_files, stored_text


@pytest.mark.parametrize(
    "text,expected",
    [
        ("以后都用中文回我", "instruction"),
        ("Always answer in English", "instruction"),
        ("from now on, use metric units", "instruction"),
        ("我是一名后端工程师", "identity"),
        ("My name is Lin", "identity"),
        ("我喜欢深色主题", "preference"),
        ("I prefer tabs over spaces", "preference"),
        ("不要在周末给我发消息", "rule"),
        ("务必在提交前跑测试", "rule"),
        ("Never push to main directly", "rule"),
        ("周五下午有组会", "fact"),
        ("The meeting moved to room 401", "fact"),
        # An order's cue counts where it gives an order, not wherever the word appears (issue 14:
        # typed by the word alone, 481 of LoCoMo's 5,882 chat turns were rules or instructions).
        ("I don't mind meeting up, but why Starbucks?", "fact"),
        ("Evan: I'm always here to support you.", "fact"),
        ("Jon: That sign reminds me to never give up.", "fact"),
        ("From now on I'll be working from home.", "fact"),
        ("Every time I go there I feel calm.", "fact"),
        ("Can you always answer in English?", "fact"),
        ("我记得小时候常去河边钓鱼", "fact"),
        ("我总是用 VS Code 写代码", "fact"),
        ("我不要香菜", "fact"),
        ("还记得那次爬山吗？", "fact"),
        ("Please never call me after 10 pm", "rule"),
        ("You must never share the staging key.", "rule"),
        ("Gina: Don't forget the details!", "rule"),
        ("上线前务必备份数据", "rule"),
        ("你千万不要在周五发版", "rule"),
        ("When you reply, always use Chinese.", "instruction"),
        ("Every time you answer, cite the source.", "instruction"),
        ("你记得每周五备份一次", "instruction"),
        ("千万记得给那个老接口加超时兜底", "instruction"),
        # "never" and "always" order only before a verb in its base form; a chat line that drops
        # its "I'm" / "I've" before them tells about the speaker
        ("Nope, never been on a sports team.", "fact"),
        ("Never tried it, but it's supposed to be awesome.", "fact"),
        ("Never heard of it, I'll check it out.", "fact"),
        ("No prob! Always here to help.", "fact"),
        ("You're welcome, always happy to help!", "fact"),
        ("We both have families that are always there for us.", "fact"),
        ("Always staying filled with self-belief.", "fact"),
        ("Never ever commit the .env file", "rule"),
        ("Always look on the bright side of life", "instruction"),
        ("So always reply in Chinese, please.", "instruction"),
        # comfort is no standing rule, a degree or a liking is not who someone is, and a way of
        # speaking (我是说) is not either: an assistant's "Don't worry" went resident as a rule
        ("Don't worry, career planning takes time.", "fact"),
        ("Don't worry too much, anxiety is common.", "fact"),
        ("Don't be afraid to try new genres.", "fact"),
        ("Any time you need help, don't hesitate to ask.", "fact"),
        ("当然可以，朋友，不要担心。", "fact"),
        ("不要太担心了，我相信你一定能够解决问题。", "fact"),
        ("别客气，随时找我", "fact"),
        ("Don't deploy on Fridays", "rule"),
        ("不要在周五发版，也不要担心别的", "rule"),
        ("I'm a bit confused today", "fact"),
        ("I am a little nervous about the talk", "fact"),
        ("I'm a big fan of pottery", "preference"),
        ("Actually, I am a fan of classical music", "preference"),
        ("I'm a nurse, and a big fan of jazz", "identity"),
        ("我是说你可以先试试", "fact"),
        ("我是不是应该多练口语？", "fact"),
        ("我是说真的，我是老师", "identity"),
    ],
)
def test_type_heuristic(text: str, expected: str) -> None:
    assert classify_type(text) == expected


def test_subject_heuristic() -> None:
    assert extract_subject("我在余杭区") == "所在地"
    assert extract_subject("我在写代码") == ""
    assert extract_subject("我的生日是五月三日") == "生日"
    assert extract_subject("My favourite colour is green") == "favourite colour"
    assert extract_subject("I live in Berlin") == "location"


def test_salience_words() -> None:
    assert salience("千万记得给那个老接口加超时兜底") > 0
    assert salience("I'm allergic to peanuts, this is critical") > salience("I'm allergic to peanuts")
    assert salience("周五下午有组会") == 0


def test_similarity_rules() -> None:
    assert similarity("我在余杭区", "我在余杭区。") == 1.0
    assert is_duplicate("以后都用中文回我。", "以后都用中文回我")
    assert not is_duplicate("我在西湖区", "我在余杭区")
    # Similar wording with a new value is not a duplicate: the new value must not be lost.
    assert similarity("my favourite colour is green", "my favourite colour is blue") > 0.5
    assert not is_duplicate("my favourite colour is green", "my favourite colour is blue")
    assert not is_duplicate("meeting on Friday at 3 pm", "meeting on Friday at 4 pm")


@pytest.mark.parametrize("bad", ["", "   ", " \n \r\n ", "bell\x07", "x" * 2001])
def test_invalid_text_is_refused_and_nothing_written(any_mem, bad: str) -> None:
    mem = any_mem
    with pytest.raises(RefusedInput) as info:
        mem.remember(bad)
    assert info.value.hint
    assert not any(r.endswith(".md") for r in stored_files(mem))
    assert not any(p.suffix == ".md" for p in mem.vault.root.rglob("*"))


def test_a_text_said_over_several_lines_is_kept_on_one(any_mem) -> None:
    """A memory is one line: line breaks are joined with a space, not refused (an agent's note
    with a list, a chat message in paragraphs would otherwise be lost)."""
    mem = any_mem
    e = mem.remember("周五的发布清单：\n- 备份数据库\r\n- 通知客服\u2028Then deploy.")
    assert e.text == "周五的发布清单： - 备份数据库 - 通知客服 Then deploy."
    assert [h.entry.id for h in mem.recall("备份数据库", k=1)] == [e.id]
    assert sum(b.count("周五的发布清单".encode()) for r, b in stored_files(mem).items() if r.endswith(".md")) == 1


def test_secret_is_refused_and_nothing_written(any_mem) -> None:
    mem = any_mem
    for text in ("my password is hunter2", "我的密码是 abc123456"):
        with pytest.raises(SecretRefused):
            mem.remember(text)
    assert not any(r.endswith(".md") for r in stored_files(mem))
    assert not any(p.suffix == ".md" for p in mem.vault.root.rglob("*"))


def test_layer_routing(any_mem) -> None:
    mem = any_mem
    assert mem.write("以后都用中文回我").entry.layer == "resident"
    assert mem.write("周五下午有组会").entry.layer == "recall"
    assert mem.write("I am a data engineer").entry.layer == "resident"


def test_a_repeat_with_an_irregular_verb_or_a_contraction_is_found_and_folded(any_mem) -> None:
    """The write path looks a duplicate's candidates up by index terms (`dedup_anchors`): they
    must be the terms the index holds for the line ("went" is indexed as "go"), or a repeat
    finds no candidate and is added again."""
    mem = any_mem
    for text in ("We went to Kyoto and bought matcha", "Caroline's sister didn't come"):
        first = mem.write(text)
        for again in (text.upper(), text + "!"):
            out = mem.write(again)
            assert out.action == "duplicate" and out.entry.id == first.entry.id, again
    assert len(mem.list()) == 2


def test_wordings_are_compared_by_their_own_stems_not_by_index_terms(any_mem) -> None:
    """The index holds "got" as "get"; a comparison of two wordings does not (a question that
    asks "What did you get?" would then say nothing "... Got any fave styles?" lacks)."""
    from memdream.model.similarity import dedup_anchors, is_duplicate

    old = "Gina: Wow Jon, same here! Dance is pretty much my go-to for stress relief. Got any fave styles?"
    new = "Gina: Wow! What did you get?"
    assert not is_duplicate(new, old)
    assert "teach" in dedup_anchors("She taught me chess")  # while candidates are looked up by the index terms
    mem = any_mem
    mem.write(old)
    assert mem.write(new).action == "added"


def test_dedup_refreshes_instead_of_adding(any_mem, clock) -> None:
    mem = any_mem
    first = mem.write("我对花生过敏")
    clock.advance(days=2)
    again = mem.write("我对花生过敏！")
    assert again.action == "duplicate"
    assert again.entry.id == first.entry.id
    assert again.entry.confidence > first.entry.confidence
    assert again.entry.last_recalled == clock.now()
    assert [e.text for e in mem.list()] == ["我对花生过敏"]


def test_supersede_trail_and_move_back(any_mem, clock) -> None:
    mem = any_mem
    a = mem.write("我在余杭区")
    assert a.entry.subject == "所在地" and a.action == "added"
    clock.advance(days=19)
    b = mem.write("我在西湖区")
    assert b.action == "superseded"
    assert b.entry.supersedes == a.entry.id
    assert [e.id for e in b.superseded] == [a.entry.id]
    clock.advance(days=7)
    c = mem.write("我在余杭区")
    assert c.action == "superseded" and c.entry.supersedes == b.entry.id
    trail = mem.history("所在地")
    assert [e.text for e in trail] == ["我在余杭区", "我在西湖区", "我在余杭区"]
    assert trail[0].valid_to == trail[1].valid_from
    assert trail[1].valid_to == trail[2].valid_from
    assert trail[2].valid_to is None
    # Only the current value is listed as valid; the whole trail stays in the files.
    assert [e.text for e in mem.list()] == ["我在余杭区"]
    assert len(mem.list(include_ended=True)) == 3
    # history by id follows the chain too
    assert [e.id for e in mem.history(b.entry.id)] == [e.id for e in trail]


def test_explicit_subject_supersedes_in_english(any_mem, clock) -> None:
    mem = any_mem
    mem.write("Works at Acme", subject="employer")
    clock.advance(days=1)
    out = mem.write("Works at Globex", subject="employer")
    assert out.action == "superseded"
    assert [e.text for e in mem.list()] == ["Works at Globex"]


def test_candidates_come_from_the_index(any_mem) -> None:
    mem = any_mem
    """Dedup consults the index: a duplicate of a line only present in the index is still caught,
    and nothing reads every file (the index is the source of candidates)."""
    mem.write("周五下午有组会")
    assert mem.write("周五下午有组会").action == "duplicate"


def test_forget_soft_moves_to_archive(any_mem, clock) -> None:
    mem = any_mem
    e = mem.remember("周五下午有组会")
    clock.advance(hours=1)
    gone = mem.forget(e.id)
    assert gone.valid_to == clock.now() and gone.end == "forgotten" and gone.layer == "archive"
    assert mem.list() == []
    archived = mem.list(layer="archive", include_ended=True)
    assert [x.id for x in archived] == [e.id]
    assert "周五下午有组会" not in stored_text(mem, mem.vault.recall_file_for(mem.scope, clock.now()))
    assert "周五下午有组会" in stored_text(mem, mem.vault.archive_file_for(mem.scope, clock.now()))
    with pytest.raises(NotFound):
        mem.forget(e.id)


def test_forget_hard_deletes(any_mem) -> None:
    mem = any_mem
    e = mem.remember("周五下午有组会")
    mem.forget(e.id, hard=True)
    assert mem.list(include_ended=True) == []
    assert all("组会".encode() not in data for r, data in stored_files(mem).items() if r.endswith(".md"))


def test_pin_and_unpin(any_mem) -> None:
    mem = any_mem
    e = mem.remember("周五下午有组会")
    assert mem.pin(e.id).pinned
    assert "pin=1" in stored_text(mem, mem.vault.recall_file_for(mem.scope, mem.clock.now()))
    assert not mem.unpin(e.id).pinned
    with pytest.raises(NotFound):
        mem.pin("nope00")


def test_recall_files_roll_over_by_size(mem) -> None:
    from memdream.model.entry import Entry
    from memdream.store.format import render_line
    from memdream.store.vault import RECALL_FILE_MAX_LINES

    def text(i: int) -> str:
        return f"测试事实编号 {i} 号，内容 {i * 7919}"

    # The month's file already holds all but 10 lines (as a vault that grew does; written here
    # in one go and synced, for a thousand writes were ten seconds of the suite), then the
    # write path fills it to the limit and starts the next part.
    before = RECALL_FILE_MAX_LINES - 10
    now = mem.clock.now()
    lines = [render_line(Entry(text=text(i), id=f"p{i:05d}", type="fact", valid_from=now, created_at=now, confidence=0.9, source="user")) for i in range(before)]
    first = mem.vault.recall_file_for(mem.scope, now)
    first.parent.mkdir(parents=True, exist_ok=True)
    first.write_text(f"# Recall memories {now:%Y-%m}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    mem.sync()
    assert len(mem.list()) == before
    for i in range(before, RECALL_FILE_MAX_LINES + 5):
        mem.write(text(i), type="fact")
    files = sorted(p.name for p in mem.vault.recall_dir(mem.scope).iterdir())
    assert files == ["2026-06.2.md", "2026-06.md"]
    assert len(mem.list()) == RECALL_FILE_MAX_LINES + 5
    parts = [sum(1 for ln in (mem.vault.recall_dir(mem.scope) / name).read_text(encoding="utf-8").splitlines() if ln.startswith("- ")) for name in ("2026-06.md", "2026-06.2.md")]
    assert parts == [RECALL_FILE_MAX_LINES, 5]


def test_never_always_must_emphasise_only_an_order() -> None:
    assert salience("I'm always here for you") == 0
    assert salience("Always here to help!") == 0 and salience("Never been there, must be great") == 0
    assert salience("I must say, that was great") == 0
    assert salience("Always back up the database before a migration") > 0
    assert salience("You must never share the staging key") == pytest.approx(0.6)
    assert salience("I'm allergic to peanuts") > 0  # the other words count anywhere
