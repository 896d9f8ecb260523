"""The derived index: Chinese-aware full text, incremental sync, rebuild equivalence."""

from __future__ import annotations

from memdream.model.tokens import tokens


def test_bigrams_and_words() -> None:
    toks = tokens("我在余杭区，盘前简报")
    for t in ("余杭", "余杭区", "盘前", "简报", "前简"):
        assert t in toks
    assert "我" not in toks  # function characters carry no signal


def test_contractions_and_the_possessive_are_undone() -> None:
    """An apostrophe no longer splits off fragments (don + t, carolin + s) that matched every
    line holding any contraction: 's, 'm, 'd, 'll, 're, 've leave their word, n't is "not"."""
    assert tokens("Caroline's new job") == tokens("Caroline new job")
    assert tokens("I don't drink coffee") == tokens("I do not drink coffee") == ["not", "drink", "coffe"]
    assert tokens("we can't, they won't") == ["can", "not", "not"]  # won't is not "win"
    assert tokens("It’s Melanie’s") == tokens("it is melanie")  # a typographic apostrophe too
    for frag in ("s", "t", "m", "ll", "re", "ve", "d"):
        assert frag not in tokens("she's, don't, I'm, you'll, they're, we've, I'd")
    assert tokens("我喜欢 Caroline's 龙井茶") == tokens("我喜欢 Caroline 龙井茶")


def test_a_contraction_matches_no_line_by_its_fragment(mem) -> None:
    mem.remember("It's sunny and I'm out on the bike")
    mem.remember("Caroline's new job starts in May")
    assert _texts(mem.index.search(mem.scope, "What's the plan?", 5)) == []  # no "s" to share
    assert _texts(mem.index.search(mem.scope, "Caroline job", 5)) == ["Caroline's new job starts in May"]


def _texts(hits):
    return [row.entry().text for row, _ in hits]


def test_match_newest_returns_the_last_indexed_lines_first(mem) -> None:
    # The write path's look-alike candidates: unranked, newest first, a short list however many match.
    for text in ("咖啡店周一开门", "Coffee shop opens at 8 on Mondays", "咖啡店周二开门", "The coffee shop is closed on Sundays", "咖啡店周三开门"):
        mem.remember(text)
    newest = mem.index.match(mem.scope, ["咖啡店", "开门"], 2, op="AND", newest=True)
    assert _texts(newest) == ["咖啡店周三开门", "咖啡店周二开门"]
    assert all(score == 0.0 for _, score in newest)
    ranked = mem.index.match(mem.scope, ["咖啡店", "开门"], 5, op="AND")
    assert sorted(_texts(ranked)) == ["咖啡店周一开门", "咖啡店周三开门", "咖啡店周二开门"] and all(score > 0 for _, score in ranked)
    assert _texts(mem.index.match(mem.scope, tokens("coffee shop"), 5, op="AND", newest=True)) == ["The coffee shop is closed on Sundays", "Coffee shop opens at 8 on Mondays"]


def test_chinese_substrings_are_found(mem) -> None:
    mem.remember("我在余杭区")
    mem.remember("每天早上看盘前简报")
    mem.remember("I prefer dark themes in every editor")
    assert _texts(mem.index.search(mem.scope, "余杭", 5)) == ["我在余杭区"]
    assert _texts(mem.index.search(mem.scope, "盘前", 5)) == ["每天早上看盘前简报"]
    assert _texts(mem.index.search(mem.scope, "theme", 5)) == ["I prefer dark themes in every editor"]
    assert _texts(mem.index.search(mem.scope, "Editors", 5)) == ["I prefer dark themes in every editor"]


def test_hand_edit_is_seen_by_the_next_call(mem) -> None:
    mem.remember("周五下午有组会")
    path = mem.vault.recall_file_for(mem.scope, mem.clock.now())
    path.write_text(path.read_text(encoding="utf-8").replace("组会", "羽毛球"), encoding="utf-8")
    mem.sync()
    assert _texts(mem.index.search(mem.scope, "羽毛球", 5)) == ["周五下午有羽毛球"]
    assert mem.index.search(mem.scope, "组会", 5) == []


def test_deleted_file_leaves_the_index(mem) -> None:
    mem.remember("周五下午有组会")
    mem.vault.recall_file_for(mem.scope, mem.clock.now()).unlink()
    assert mem.list() == []


def test_rebuilt_index_equals_incremental(mem, clock, open_scope) -> None:
    other = open_scope(user="bob")
    for i, t in enumerate(["我在余杭区", "我在西湖区", "I like green tea", "以后都用中文回我", "我在余杭区", "周五有组会", "my cat is called Mochi"]):
        clock.advance(days=1)
        mem.remember(t)
        other.remember(f"{t} (bob {i})")
    mem.pin(mem.list()[0].id)
    mem.forget(next(e.id for e in mem.list() if "tea" in e.text))
    # A hand edit and a hand-written line, picked up by sync.
    path = mem.vault.resident_file(mem.scope)
    path.write_text(path.read_text(encoding="utf-8") + "- 手写：我对花生过敏\n", encoding="utf-8")
    mem.sync()
    before = mem.index.snapshot()
    before_fts = mem.index.fts_snapshot()
    before_terms = mem.index.terms_snapshot()
    queries = ["余杭", "组会", "花生", "cat Mochi", "中文"]
    results_before = [sorted((round(s, 9), r.line) for r, s in mem.index.search(mem.scope, q, 10)) for q in queries]
    # Delete the index entirely and rebuild it.
    mem.close()
    mem.vault.index_path.unlink()
    n = mem.index.rebuild(mem.vault.scopes())
    assert n == len(before)
    assert mem.index.snapshot() == before
    assert mem.index.fts_snapshot() == before_fts
    assert mem.index.terms_snapshot() == before_terms  # document frequencies kept right incrementally
    assert [sorted((round(s, 9), r.line) for r, s in mem.index.search(mem.scope, q, 10)) for q in queries] == results_before
    assert all(results_before)



def test_a_batch_commits_its_parts_once_and_a_failed_part_alone_is_undone(mem) -> None:
    import pytest

    db = mem.index.db
    with mem.index.batch():
        mem.remember("周五下午有组会")
        with pytest.raises(RuntimeError):
            with mem.index.transaction() as tx:
                tx.execute("DELETE FROM entries")
                raise RuntimeError("a part fails")
        assert db.in_transaction  # one open transaction: nothing committed yet
        mem.remember("I water the plants on Sundays")
    assert not db.in_transaction
    assert _texts(mem.index.search(mem.scope, "组会", 5)) == ["周五下午有组会"]  # the failed part alone was undone
    assert _texts(mem.index.search(mem.scope, "plants", 5)) == ["I water the plants on Sundays"]


def test_a_batch_cut_short_leaves_an_index_that_catches_up_with_the_files(mem) -> None:
    import pytest

    with pytest.raises(KeyboardInterrupt):
        with mem.index.batch():
            mem.remember("周六上午去爬莫干山")  # the file is written at once; the index rows wait for the batch
            raise KeyboardInterrupt
    assert mem.index.db.execute("SELECT count(*) FROM entries").fetchone()[0] == 0  # rolled back with the batch
    mem.sync()
    assert _texts(mem.index.search(mem.scope, "莫干山", 5)) == ["周六上午去爬莫干山"]
