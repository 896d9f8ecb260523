"""The in-process postings give the same candidates and BM25 as the FTS5 path, and keep up
with writes, hand edits, deletions and rebuilds made by this or another process."""

from __future__ import annotations

import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.index.db import Index
from memdream.memory import Memory

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from corpus import facts  # noqa: E402

QUERIES = ["Alice birthday", "王芳 围棋", "hotel room Nairobi", "订单 乌龙茶 送达", "recommended chess book", "李雷 火锅"]


def both(mem, query: str, limit: int = 20):
    fts = Index(mem.vault, postings_min_entries=10**9)  # never warms up
    warm = Index(mem.vault, postings_min_entries=1)
    warm.keyword_candidates(mem.scope, "warm up", 1)
    assert warm.postings_ready()  # loaded in the background from the second search on
    a = [(r.rowid, round(s, 6)) for r, s in fts.keyword_candidates(mem.scope, query, limit)]
    b = [(r.rowid, round(s, 6)) for r, s in warm.keyword_candidates(mem.scope, query, limit)]
    assert warm._postings is not None
    fts.close()
    warm.close()
    return a, b


@pytest.fixture(scope="module")
def filled_vault(tmp_path_factory) -> Path:
    """A vault after 600 writes over 12 days, written once for the module (each test's 600
    writes were 5 s of its setup); each test gets its own copy (`filled`)."""
    root = tmp_path_factory.mktemp("filled") / "vault"
    clock = FrozenClock(datetime(2026, 6, 1, 9, 0, tzinfo=timezone(timedelta(hours=8))))  # conftest's clock
    mem = Memory(load_config(root, "me", "main", env={}), clock)
    mem.vault.init()
    for i, text in enumerate(facts(600, seed=2)):
        if i % 50 == 0:
            clock.advance(days=1)
        mem.write(text, type="fact")
    mem.close()
    return root


@pytest.fixture
def filled(filled_vault: Path, vault: Path, clock):  # type: ignore[no-untyped-def]
    """This test's copy of the vault (its files, index and journals), opened with the suite's
    clock where the writes left it."""
    shutil.copytree(filled_vault, vault, symlinks=True)
    clock.advance(days=12)
    mem = Memory(load_config(vault, "me", "main", env={}), clock)
    mem.vault.init()
    yield mem
    mem.close()


def test_same_scores_as_fts(filled) -> None:
    for q in QUERIES:
        a, b = both(filled, q)
        assert a, q
        # The FTS path only sees matches of the rarest terms, so its set may be smaller, but
        # every row it returns has the same exact score, and the postings' best is at least as good.
        scores_b = dict(b)
        for rowid, s in a:
            if rowid in scores_b:
                assert scores_b[rowid] == pytest.approx(s, rel=1e-5)  # float32 in the postings
        assert b[0][1] >= a[0][1] - 1e-4


def test_postings_follow_changes(filled, clock, open_scope) -> None:
    warm = Index(filled.vault, postings_min_entries=1)
    warm.keyword_candidates(filled.scope, "x", 1)
    assert warm.postings_ready()
    first = warm.keyword_candidates(filled.scope, "Mochi kitten", 5)
    assert first == []
    # Another handle (another process, as far as the cache knows) writes, forgets, edits by hand.
    other = open_scope()
    e = other.remember("Mochi the kitten sleeps on the keyboard")
    got = warm.keyword_candidates(filled.scope, "Mochi kitten", 5)
    assert [r.entry().id for r, _ in got] == [e.id]
    other.forget(e.id)
    assert warm.keyword_candidates(filled.scope, "Mochi kitten", 5) == []
    path = filled.vault.recall_file_for(filled.scope, clock.now())
    path.write_text(path.read_text(encoding="utf-8") + "- 手写：Mochi 是一只橘猫\n", encoding="utf-8")
    other.sync()
    assert [r.entry().text for r, _ in warm.keyword_candidates(filled.scope, "Mochi", 5)] == ["手写：Mochi 是一只橘猫"]
    # Scopes stay apart in the shared cache.
    bob = open_scope(user="bob")
    bob.remember("Mochi is Bob's dog")
    assert [r.entry().text for r, _ in warm.keyword_candidates(filled.scope, "Mochi", 5)] == ["手写：Mochi 是一只橘猫"]
    # A rebuild renumbers nothing and the cache reloads, in the background: the search right
    # after it is answered by FTS5 without waiting for the load.
    other.index.rebuild(other.vault.scopes())
    assert [r.entry().text for r, _ in warm.keyword_candidates(filled.scope, "Mochi", 5)] == ["手写：Mochi 是一只橘猫"]
    assert warm._postings is None
    assert warm.postings_ready()
    assert [r.entry().text for r, _ in warm.keyword_candidates(filled.scope, "Mochi", 5)] == ["手写：Mochi 是一只橘猫"]
    assert warm._postings is not None
    warm.close()


def test_the_second_search_does_not_wait_for_the_postings(filled) -> None:
    """The postings load in a thread of their own: the search that starts the load, and every
    search until it is done, is answered by FTS5 (the same best hits), never held up by it."""
    fts = Index(filled.vault, postings_min_entries=10**9)
    warm = Index(filled.vault, postings_min_entries=1)
    for q in QUERIES[:2]:
        got = warm.keyword_candidates(filled.scope, q, 10)
        assert [r.rowid for r, _ in got] == [r.rowid for r, _ in fts.keyword_candidates(filled.scope, q, 10)]
        assert warm._postings is None  # a load finished meanwhile is taken over by the next search, not this one
    assert warm.postings_ready()
    held = warm._postings
    warm.keyword_candidates(filled.scope, QUERIES[2], 10)
    assert warm._postings is held  # searches use them from now on
    # In a process that loads them in the search (postings_background=False), the second search does.
    inline = Index(filled.vault, postings_min_entries=1, postings_background=False)
    inline.keyword_candidates(filled.scope, QUERIES[0], 10)
    inline.keyword_candidates(filled.scope, QUERIES[1], 10)
    assert inline._postings is not None and inline._postings_loader is None
    for ix in (fts, warm, inline):
        ix.close()


def test_recall_results_identical_cold_and_warm(filled) -> None:
    """A long-lived process (postings) and a one-shot one (FTS5) rank the same top hits."""
    cold = [[h.entry.id for h in filled.recall(q, k=5)] for q in QUERIES]
    filled.index.postings_min_entries = 1
    filled.recall("warm up")
    assert filled.index.postings_ready()
    warm = [[h.entry.id for h in filled.recall(q, k=5)] for q in QUERIES]
    assert filled.index._postings is not None
    assert warm == cold
