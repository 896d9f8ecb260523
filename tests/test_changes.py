"""A change names its old value (model/changes.py): the write path ends the user's current
memories naming it, and recall lets the current line answer what the ended lines answered
(recall/search.py `_successors`). On both stores, in English and Chinese."""

from __future__ import annotations

import pytest

from memdream.engine.write import NAMED_MAX_ENTRIES
from memdream.model.changes import about_someone_else, old_values


@pytest.mark.parametrize(
    "text, values",
    [
        ("Finally switched from Sublime Text to Neovim this spring.", ["Sublime Text"]),
        ("We moved out of Glasgow in March, Cardiff is lovely.", ["Glasgow"]),
        ("Resigned from Umbrella Corp, I start at Wayne Enterprises soon.", ["Umbrella Corp"]),
        ("Quit my job at Initrode to freelance.", ["Initrode"]),
        ("Handed in my notice at Globex today, scary but right.", ["Globex"]),
        ("Jordan and I split up over the summer.", ["Jordan"]),
        ("My Nokia 3310 finally gave out, so I bought something modern.", ["Nokia 3310"]),
        ("I used to drive a Fiat Panda; these days it's the bus.", ["Fiat Panda"]),
        ("Gave up on paleo, it was too much meat.", ["paleo"]),
        ("从成都搬到重庆快一个月了。", ["成都"]),
        ("上周把那辆捷达卖了，准备换电动车。", ["捷达"]),
        ("我跟小周分手了，现在一个人挺好。", ["小周"]),
        ("离开网易了，下个月去米哈游。", ["网易"]),
        ("以前用Eclipse，现在全用IntelliJ。", ["Eclipse"]),
        ("I'm no longer vegan, fish is back on the menu.", ["vegan"]),
        ("They moved me from Support to the Platform team.", ["Support"]),  # the user is the one moved
        ("Uninstalled Node.js for good.", ["Node.js"]),
        ("我不再养那只仓鼠了。", ["仓鼠"]),
        ("我不用钉钉了，公司换成了飞书。", ["钉钉"]),
        ("把Photoshop卸了，改用GIMP。", ["Photoshop"]),
        ("卸载了抖音，睡得早多了。", ["抖音"]),
        ("新电脑到了，旧电脑ThinkPad X1再见。", ["ThinkPad X1"]),  # a farewell after the value
        ("搬进了新公寓，西湖区拜拜了。", ["西湖区"]),
        ("再见了，我的五菱宏光。", ["五菱宏光"]),  # a farewell before it
        ("那台大众宝来上个月卖掉了，现在坐地铁。", ["大众宝来"]),  # sold, said after the value
        ("不做前端了，转去做运维。", ["前端"]),
        ("不再是素食者，偶尔也吃鱼。", ["素食者"]),
        ("和阿杰结束了，各自安好。", ["阿杰"]),
        ("以前最爱火锅，现在口味清淡了。", ["火锅"]),
        ("I switched from 微信 to Telegram.", ["微信"]),  # English words, a Chinese value
        ("我从Vim换到Helix了", ["Vim"]),  # Chinese words, a Latin value
    ],
)
def test_a_change_names_its_old_value(text: str, values: list[str]) -> None:
    assert old_values(text) == values


@pytest.mark.parametrize(
    "text",
    [
        "I never left Glasgow, I love it here.",  # negated
        "Maybe I should switch from Sublime Text to Neovim.",  # only thought of
        "My brother quit Initrode last week.",  # someone else
        "She and I split up the bill.",  # someone else in the clause
        "Sam: I left Glasgow years ago.",  # a speaker's transcript line
        "The library is open from Monday to Saturday.",  # a range, not a change
        "I left the umbrella at the office.",  # leaving a thing ends nothing held: only names count
        "我没离开成都。",
        "我打算从成都搬到重庆。",
        "我哥把那辆捷达卖了。",
        "他跟小周分手了。",
        "They moved from Glasgow to Cardiff.",  # someone else moved
        "Okay, the meeting is over.",  # an event ending is no value of the user's
        "不用客气，随时找我。",  # 不用 as "no need"
        "要从心理上调整过来。",  # 从…调整 is no move from a value
        "上班跟丢了魂一样。",
        "明天见，拜拜！",  # taking leave of a conversation ends no value
        "那就这样拜拜。",
        "拜拜，明天再聊。",
        "说了再见就走了。",
        "今天不用电脑了，休息一天。",  # for now, not for good
        "他的车上周卖了。",
    ],
)
def test_no_old_value_without_a_change_of_the_users(text: str) -> None:
    assert old_values(text) == []


def test_someone_else_in_a_memory() -> None:
    assert about_someone_else("My sister lives in Glasgow.")
    assert about_someone_else("我同事住在成都。")
    assert not about_someone_else("Glasgow is grey but I like it.")


def test_a_change_ends_every_line_naming_the_old_value_en(any_mem, clock) -> None:
    mem = any_mem
    a = mem.write("Sublime Text is what I open first every morning.")
    clock.advance(days=3)
    b = mem.write("Bought a Sublime Text licence, worth every penny.")
    clock.advance(days=1)
    sister = mem.write("My sister swears by Sublime Text too.")
    rule = mem.write("Never paste secrets into Sublime Text scratch buffers.", type="rule")
    clock.advance(days=30)
    out = mem.write("Finally switched from Sublime Text to Neovim this spring.")
    assert out.action == "superseded"
    assert {e.id for e in out.superseded} == {a.entry.id, b.entry.id}
    assert out.entry.supersedes == b.entry.id  # the newest line it ended
    current = {e.text for e in mem.list()}
    assert current == {sister.entry.text, rule.entry.text, out.entry.text}
    ended = {e.id: e for e in mem.list(include_ended=True)}
    for old in (a, b):  # the trail kept: the ended lines stay, their validity ends at the change
        assert ended[old.entry.id].valid_to == out.entry.valid_from
        assert ended[old.entry.id].end == "superseded"


def test_a_change_ends_every_line_naming_the_old_value_zh(any_mem, clock) -> None:
    mem = any_mem
    a = mem.write("我在网易做游戏策划。")
    clock.advance(days=5)
    b = mem.write("网易的年会今年在杭州办。")
    clock.advance(days=1)
    colleague = mem.write("我同事也在网易待了三年。")
    clock.advance(days=40)
    out = mem.write("离开网易了，下个月去米哈游。")
    assert out.action == "superseded"
    assert {e.id for e in out.superseded} == {a.entry.id, b.entry.id}
    assert {e.text for e in mem.list()} == {colleague.entry.text, out.entry.text}
    assert len(mem.list(include_ended=True)) == 4


def test_a_common_word_is_not_a_value(any_mem, clock) -> None:
    mem = any_mem
    for i in range(NAMED_MAX_ENTRIES + 1):
        mem.write(f"Paris trip idea number {i}: a museum I have not seen yet.")
        clock.advance(hours=1)
    out = mem.write("Goodbye Paris, the move to Lyon is done.")
    assert out.action == "added" and out.superseded == ()
    assert len(mem.list()) == NAMED_MAX_ENTRIES + 2


@pytest.mark.parametrize(
    "lines, query, current",
    [
        (["Spent the evening tuning my Sublime Text keymap.", "Finally switched from Sublime Text to Neovim this spring.",
          "Dropped Neovim, Zed won me over."], "keymap", "Dropped Neovim, Zed won me over."),
        (["周末开着那辆捷达去爬山了，底盘有点低。", "上周把那辆捷达卖了，换了比亚迪。"], "底盘", "上周把那辆捷达卖了，换了比亚迪。"),
    ],
)
def test_recall_finds_the_current_line_through_what_it_ended(any_mem, clock, lines, query, current) -> None:
    mem = any_mem
    written = []
    for line in lines:
        written.append(mem.write(line))
        clock.advance(days=10)
    assert written[-1].action == "superseded"
    hits = mem.recall(query, k=3)
    assert [h.text for h in hits][:1] == [current]  # the current value answers the old wording's question
    assert lines[0] not in [h.text for h in hits]  # ended lines are never served now
    past = mem.recall(query, k=3, as_of=written[0].entry.valid_from)
    assert [h.text for h in past][:1] == [lines[0]]  # as of then, the old line itself


def test_the_current_line_stands_for_what_it_ended_on_the_dense_side_too(tmp_path, clock) -> None:
    """With an embedder, a successor found through an ended line takes that line's cosine when it
    is the higher: the change answers the old wording's question in both halves of the fusion."""
    from memdream.config import load_config
    from memdream.embed.fake import HashEmbedder
    from memdream.memory import Memory

    emb = HashEmbedder(dim=256)
    mem = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock, emb)
    mem.vault.init()
    old, new = "周末开着那辆捷达去爬山了，底盘有点低。", "上周把那辆捷达卖了，换了比亚迪。"
    mem.write(old)
    clock.advance(days=10)
    assert mem.write(new).action == "superseded"
    q = emb.embed(["底盘"], kind="query")[0]
    own, ended = (float(emb.embed([t])[0] @ q) for t in (new, old))
    assert ended > own  # the old line is the closer one: what is inherited
    hit = mem.recall("底盘", k=3)[0]
    assert hit.text == new and hit.trace.cosine == pytest.approx(ended, abs=1e-5)
    # The dense side brings every line of this small scope as a nearest one; the successor it
    # brought still keeps the ended line's keyword half, as it does without an embedder.
    keyword = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock).recall("底盘", k=3)[0]
    assert keyword.text == new and keyword.trace.bm25 > 0
    assert hit.trace.bm25 == pytest.approx(keyword.trace.bm25)


@pytest.mark.parametrize(
    "first, change, later",
    [
        ("My job title is support engineer.", "No longer support engineer: I joined the platform team as an SRE.",
         "In my role as engineering lead I review every design."),
        ("我的职位是测试工程师。", "从测试工程师转到产品经理了。", "我的岗位是架构师。"),
    ],
)
def test_a_change_without_the_slots_words_keeps_the_slot(any_mem, clock, first, change, later) -> None:
    """The change takes the subject of the line it ended, and the slot's next value, said with
    the slot's words again, finds that subject through the trail and supersedes the change."""
    mem = any_mem
    a = mem.write(first)
    assert a.entry.subject
    clock.advance(days=20)
    b = mem.write(change)
    assert b.action == "superseded" and [e.id for e in b.superseded] == [a.entry.id]
    assert b.entry.subject == a.entry.subject
    clock.advance(days=20)
    c = mem.write(later)
    assert c.action == "superseded" and [e.id for e in c.superseded] == [b.entry.id]
    assert c.entry.subject == a.entry.subject and c.entry.supersedes == b.entry.id
    assert [e.text for e in mem.history(a.entry.subject)] == [first, change, later]
    assert [e.text for e in mem.list()] == [later]


def test_a_change_ends_a_line_naming_the_same_person_in_other_words(any_mem, clock) -> None:
    """A swap signal (here the speaker's "I" and Lena in another order) between two lines that
    share few words is no swapped frame: the change ends the line naming the value it ended."""
    mem = any_mem
    lena = mem.write("My partner Lena keeps stealing my hoodies, I've given up.")
    clock.advance(days=12)
    out = mem.write("Things ended with Lena. I met Priya at a friend's party and we've been inseparable since.")
    assert out.action == "superseded" and [e.id for e in out.superseded] == [lena.entry.id]
    assert out.entry.subject == lena.entry.subject == "partner"


@pytest.mark.parametrize("a, b", [("We moved from Oslo to Rome", "We moved from Rome to Oslo"), ("去年从网易跳槽到了腾讯", "去年从腾讯跳槽到了网易")])
def test_a_look_alike_with_a_contradiction_signal_is_left_to_the_contradiction_rule(any_mem, clock, a, b) -> None:
    """Two lines that look alike and differ by a swapped order are judged by the dedup and
    contradiction rules, not ended by a named value: both stay current."""
    mem = any_mem
    first = mem.write(a)
    clock.advance(days=1)
    out = mem.write(b)
    assert out.action == "added" and out.superseded == ()
    assert {e.text for e in mem.list()} == {a, b}
    assert first.entry.id in {e.id for e in mem.list()}


# ---- the English markers' gate (changes._EN_MARKERS) --------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memdream.model import changes  # noqa: E402
from memdream.model.script import fold_case  # noqa: E402
from regex_gen import matches  # noqa: E402

@pytest.mark.parametrize("pattern,words", [(p, w) for _any, p, w in changes._EN_RES], ids=[p.pattern[:40] for _a, p, _w in changes._EN_RES])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_english_marker_match_holds_a_marker_word(pattern, words: tuple[str, ...], data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    # The value one letter (stricter; its stop-word lookahead is also slow to generate).
    match = data.draw(matches(pattern, {changes._VALUE: "(?P<v>x)"}))
    folded = fold_case(match)
    assert any(w in folded for w in words), match


@pytest.mark.parametrize("pattern,words", list(zip(changes._ZH_RES, changes._ZH_MARKERS)), ids=[p.pattern[:24] for p in changes._ZH_RES])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_chinese_marker_match_holds_a_marker_word(pattern, words: tuple[str, ...], data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    match = data.draw(matches(pattern, {changes._ZH_V: "(?P<v>x)"}))  # the value one character: stricter
    assert any(w in match for w in words), match
