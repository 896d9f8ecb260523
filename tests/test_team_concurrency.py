"""The team store under interleavings of two processes on one scope (issue 20): a recall's
hit counts, appended without the scope's lock, never make a process's copy of the scope
look current when it is not, and never make an acknowledged write disappear."""

from __future__ import annotations

import threading

import pytest

from memdream.store.vault import Scope

pytest.importorskip("psycopg")

from test_team import second_store  # another process's handle on the same database

ALICE = Scope("alice", "main")


def test_a_recall_during_another_process_write_loses_no_acknowledged_write(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.team import scope_handle

    other = second_store(pg_url, tmp_path, clock)
    try:
        mine = scope_handle(team_store, "alice", "main")
        theirs = scope_handle(other, "alice", "main")
        mine.remember("我喜欢喝龙井茶")
        assert theirs.recall("龙井茶")
        with team_store.session(ALICE) as mem:  # this process writes; the transaction is still open ...
            mem.write("I live in Hangzhou", subject="location")
            assert theirs.recall("龙井茶")  # ... while the other process recalls (its hit counts are appended meanwhile)
            assert [e.text for e in theirs.list()] == ["我喜欢喝龙井茶"]  # the write is not committed yet
        # Committed: the other process sees it on its next operation, and its own write keeps it.
        assert sorted(e.text for e in theirs.list()) == ["I live in Hangzhou", "我喜欢喝龙井茶"]
        theirs.remember("周五下午有组会")  # a fact: the same recall file as the write above
        assert sorted(e.text for e in mine.list()) == ["I live in Hangzhou", "周五下午有组会", "我喜欢喝龙井茶"]
    finally:
        other.close()


def test_a_recall_whose_snapshot_a_write_overtook_fails_no_database_call(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.team import scope_handle
    from memdream.team.store import NeedsLock, state_paths

    other = second_store(pg_url, tmp_path, clock)
    try:
        mine = scope_handle(team_store, "alice", "main")
        mine.remember("我喜欢喝龙井茶")
        hits_path, _ = state_paths(ALICE)
        try:  # a database error here fails the test: either the counts are appended, or the call is to run again locked
            with other.session(ALICE, write=False) as mem:
                assert mem.recall("龙井茶")  # its snapshot is taken; the hit counts are appended at the end ...
                mine.remember("I drink coffee every morning")  # ... after this write committed
        except NeedsLock:
            pass  # the store's signal to run the call again under the lock (what StoreMemory does)
        journal = team_store.scope_files(ALICE).get(hits_path, b"")
        theirs = scope_handle(other, "alice", "main")
        assert theirs.recall("龙井茶")  # through the facade the same interleaving is simply a recall
        assert len(team_store.scope_files(ALICE)[hits_path]) > len(journal)  # its counts are stored
        assert sorted(e.text for e in theirs.list()) == ["I drink coffee every morning", "我喜欢喝龙井茶"]
    finally:
        other.close()


def test_writes_and_recalls_from_two_processes_at_once_all_land(team_store, pg_url, tmp_path, clock) -> None:
    """Four threads over two processes' stores, each remembering and recalling on one scope:
    no call fails (no serialization failure, no deadlock), every acknowledged write is stored."""
    from memdream.team import scope_handle

    other = second_store(pg_url, tmp_path, clock)
    errors: list[BaseException] = []
    ids: list[str] = []
    try:

        def work(w: int) -> None:
            mem = scope_handle(team_store if w % 2 else other, "alice", "main")
            try:
                for i in range(12):
                    tag = f"tag{w}q{i}"  # a word no other text has: never a duplicate of another
                    text = f"writer {w} stored fact {tag} in the garden log" if w % 2 else f"第{w}号写入者记下了 {tag} 这条记录"
                    ids.append(mem.remember(text, type="fact").id)
                    assert mem.recall(tag)
            except BaseException as exc:  # collected: a thread's failure fails the test
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        assert len(ids) == len(set(ids)) == 48
        stored = {e.id for e in scope_handle(other, "alice", "main").list()}
        assert stored == set(ids)
    finally:
        other.close()
