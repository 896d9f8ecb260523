"""The team server on a real PostgreSQL (issue 20): the store, its transactions, two
processes on one database, tokens, push and export, dream leases, row-level security."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdream.config import load_config
from memdream.memory import Memory
from memdream.store.vault import Scope

pytest.importorskip("psycopg")

ALICE = Scope("alice", "main")
BOB = Scope("bob", "main")


def second_store(pg_url: str, tmp_path: Path, clock):  # type: ignore[no-untyped-def]
    """Another process's handle on the same database (its own pool and local copy)."""
    from memdream.team import open_store

    return open_store(pg_url, load_config(tmp_path / "cfg2", env={}), clock=clock, cache_dir=tmp_path)


def test_a_memory_written_through_one_process_is_recalled_through_another(team_store, pg_url, tmp_path, clock) -> None:
    other = second_store(pg_url, tmp_path, clock)
    try:
        with team_store.session(ALICE) as mem:
            mem.write("I live in Hangzhou", subject="location")
            mem.write("我喜欢喝龙井茶")
        with other.session(ALICE, write=False) as mem:
            assert [h.entry.text for h in mem.recall("龙井茶")][:1] == ["我喜欢喝龙井茶"]
        with other.session(ALICE) as mem:
            out = mem.write("I moved to Shanghai", subject="location")
            assert out.action == "superseded"
        with team_store.session(ALICE, write=False) as mem:
            trail = mem.history("location")
            assert [e.text for e in trail] == ["I live in Hangzhou", "I moved to Shanghai"]
            assert trail[0].valid_to is not None and trail[1].valid_to is None
    finally:
        other.close()


def test_the_stored_lines_are_the_files_verbatim(team_store) -> None:
    with team_store.session(ALICE) as mem:
        mem.write("我的猫叫咪咪", subject="猫")
        root = Path(mem.vault.root)
    stored = team_store.scope_files(ALICE)  # committed: the process's local copy and the rows agree
    local = {rel: (root / rel).read_bytes() for rel in stored}
    assert stored == local and any(rel.endswith("recall/2026-06.md") for rel in stored)
    with team_store.pool.connection() as conn:
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (ALICE.key,))
        rows = conn.execute("SELECT line, entry_id, subject FROM memdream_lines WHERE entry_id IS NOT NULL").fetchall()
    assert len(rows) == 1 and rows[0][0].startswith("- 我的猫叫咪咪 <!--m:") and rows[0][2] == "猫"


def test_a_failed_operation_stores_nothing_and_the_next_one_starts_clean(team_store) -> None:
    from memdream.errors import RefusedInput

    with team_store.session(ALICE) as mem:
        mem.write("I drink coffee every morning")
    before = team_store.scope_files(ALICE)
    with pytest.raises(RefusedInput):
        with team_store.session(ALICE) as mem:
            mem.write("tea at four o'clock")  # written to the local copy ...
            raise RefusedInput("the operation fails after its write", "")  # ... then the operation fails
    assert team_store.scope_files(ALICE) == before  # rolled back: the database holds only what was acknowledged
    with team_store.session(ALICE, write=False) as mem:
        assert [e.text for e in mem.list()] == ["I drink coffee every morning"]  # the local copy was thrown away and fetched again


def test_push_then_export_gives_the_same_vault_byte_for_byte_and_push_is_idempotent(team_store, tmp_path, clock) -> None:
    from memdream.team import push_vault
    from memdream.team.store import local_files
    from memdream.team.transfer import export

    folder = tmp_path / "folder"
    for scope, texts in ((ALICE, ["I live in Hangzhou", "我喜欢喝龙井茶", "Never call me before 9"]), (BOB, ["Bob's dog is Rex"])):
        m = Memory(load_config(folder, scope.user, scope.agent, env={}), clock)
        m.vault.init()
        for t in texts:
            m.write(t)
        m.log("周会", "讨论了新的支付接口")
        m.recall("Hangzhou")  # leaves recall counts in the hits journal
        m.close()
    (folder / "scopes/main/alice/memory/recall/2026-06.md").open("ab").write(b"- \xff\xfe bytes typed by hand\n")  # not UTF-8: kept as bytes
    first = push_vault(team_store, folder)
    assert first.written == first.files > 8 and first.deleted == 0
    again = push_vault(team_store, folder)
    assert again.written == 0 and again.deleted == 0
    out = tmp_path / "exported"
    export(team_store, out)
    for scope in (ALICE, BOB):
        want = sorted(local_files(folder, scope))
        assert sorted(local_files(out, scope)) == want
        for rel in want:
            assert (out / rel).read_bytes() == (folder / rel).read_bytes(), rel
    opened = Memory(load_config(out, "alice", "main", env={}), clock)  # the export is a vault memdream opens
    assert "我喜欢喝龙井茶" in [e.text for e in opened.list()]
    opened.close()


def test_row_level_security_keeps_a_scope_to_itself(team_store) -> None:
    with team_store.session(ALICE) as mem:
        mem.write("alice's secret plan is a surprise party")
    with team_store.session(BOB) as mem:
        mem.write("bob likes hiking")
    with team_store.pool.connection() as conn:
        # A query that forgot its WHERE clause, in a transaction set for bob, sees bob only.
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (BOB.key,))
        assert {r[0] for r in conn.execute("SELECT scope FROM memdream_lines")} == {BOB.key}
        assert {r[0] for r in conn.execute("SELECT scope FROM memdream_files")} == {BOB.key}
        conn.execute("SELECT set_config('memdream.scope', '', false)")
        assert conn.execute("SELECT count(*) FROM memdream_lines").fetchone()[0] == 0  # no scope set: nothing
        conn.rollback()


def test_tokens_are_stored_hashed_and_revoked_at_once(team_store) -> None:
    from memdream.team import create_token, list_tokens, revoke_token, token_scope

    tok = create_token(team_store, ALICE, "feishu bot")
    assert token_scope(team_store, tok) == ALICE
    with team_store.pool.connection() as conn:
        stored = [r[0] for r in conn.execute("SELECT hash FROM memdream_tokens")]
        conn.rollback()
    assert tok not in stored and len(stored) == 1
    [info] = list_tokens(team_store)
    assert info.scope == ALICE and info.label == "feishu bot" and info.fingerprint == stored[0][:12]
    revoke_token(team_store, info.fingerprint)
    assert token_scope(team_store, tok) is None
    assert list_tokens(team_store) == [] and len(list_tokens(team_store, revoked=True)) == 1


def test_one_dreamer_per_scope_and_a_dead_holders_lease_is_taken_over(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.team import dreams

    with team_store.session(ALICE) as mem:
        mem.write("I live in Hangzhou")
    other = second_store(pg_url, tmp_path, clock)
    try:
        lease = dreams.claim(team_store, lease_s=0.5)
        assert lease is not None and lease.scope == ALICE
        assert dreams.claim(other) is None  # held: the other process does not take it
        # The holder dies without finishing: once the lease expires, the other process takes the job over.
        import time

        time.sleep(0.7)
        taken = dreams.run_one(other)
        assert taken is not None and taken.scope == ALICE and taken.holder == other.holder
        assert dreams.finish(team_store, lease, "late") is False  # the dead holder's lease is gone
        with other.pool.connection() as conn:
            runs, status = conn.execute("SELECT runs, last_status FROM memdream_dream_jobs WHERE scope = %s", (ALICE.key,)).fetchone()
            conn.rollback()
        assert runs == 1 and "light" in status
        with team_store.session(ALICE, write=False) as mem:  # the first process sees the run: its state is a file of the scope
            assert "light" not in mem.dreams_due()
        assert any(rel.startswith(".memdream/dream-") for rel in team_store.scope_files(ALICE))
    finally:
        other.close()


def test_a_newer_schema_is_refused(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.errors import VaultError
    from memdream.team.schema import LATEST

    with team_store.pool.connection() as conn:
        conn.execute("INSERT INTO memdream_schema (version, what) VALUES (%s, 'from the future')", (LATEST + 1,))
        conn.commit()
    with pytest.raises(VaultError, match="newer than this memdream"):
        second_store(pg_url, tmp_path, clock)


def test_the_cli_works_on_a_store_given_by_environment(pg_url, tmp_path) -> None:
    import subprocess
    import sys

    env = dict(os.environ, MEMDREAM_STORE=pg_url, MEMDREAM_VAULT=str(tmp_path / "none"))

    def md(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memdream.cli.main", *args], env=env, capture_output=True, text=True, timeout=120)

    assert md("remember", "我住在杭州西湖区", "--user", "alice").returncode == 0
    got = md("recall", "杭州", "--user", "alice")
    assert got.returncode == 0 and "我住在杭州西湖区" in got.stdout
    assert "nothing found" in md("recall", "杭州", "--user", "bob").stdout
    tok = md("token", "create", "--user", "alice", "--json")
    assert tok.returncode == 0 and '"user": "alice"' in tok.stdout
    assert md("doctor").returncode == 0
    out = tmp_path / "exp"
    assert md("export", "--to", str(out)).returncode == 0
    assert "我住在杭州西湖区" in (out / "scopes/main/alice/memory/recall").joinpath(os.listdir(out / "scopes/main/alice/memory/recall")[0]).read_text()
    bad = subprocess.run([sys.executable, "-m", "memdream.cli.main", "recall", "x", "--store", "mysql://nope"], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "not a PostgreSQL URL" in bad.stderr and "Traceback" not in bad.stderr


def _generated_vault(root: Path, clock, n: int = 1500) -> None:
    """A one-scope folder vault of `n` generated zh/en entries over several months, with
    subjects, pins, superseded and archived lines (typed into the files, then adopted)."""
    import random
    from datetime import timedelta

    from memdream.model.entry import Entry
    from memdream.store.format import render_line

    rng = random.Random(20)
    en = ["coffee", "tea", "Hangzhou", "Shanghai", "meeting", "deadline", "python", "rust", "dog", "cat", "gym", "flight", "doctor", "budget", "invoice"]
    zh = ["咖啡", "龙井茶", "杭州", "上海", "周会", "截止日期", "机械键盘", "莫干山", "小狗", "猫咪", "健身房", "航班", "医生", "预算", "支付接口"]
    types = ["fact", "preference", "context", "fact", "rule"]
    m = Memory(load_config(root, "me", "main", env={}), clock)
    m.vault.init()
    m.close()
    base = clock.now() - timedelta(days=200)
    by_month: dict[str, list[str]] = {}
    for i in range(n):
        when = base + timedelta(hours=3 * i)
        words = rng.sample(en, rng.randint(1, 5)) + rng.sample(zh, rng.randint(1, 4))
        rng.shuffle(words)
        text = " ".join(words[: len(words) // 2]) + f" {rng.randint(1, 999)}，" + "还有".join(words[len(words) // 2 :])
        e = Entry(
            text=text, id=f"g{i:05d}", type=rng.choice(types), subject=rng.choice(["", "", "", "city", "饮品"]),
            valid_from=when, valid_to=(when + timedelta(days=5)) if i % 11 == 0 else None, created_at=when,
            hits=rng.randint(0, 9), salience=round(rng.random(), 2), source="user",
        )
        by_month.setdefault(f"{when:%Y-%m}", []).append(render_line(e))
    rec = root / "scopes/main/me/memory/recall"
    rec.mkdir(parents=True, exist_ok=True)
    for month, lines in by_month.items():
        (rec / f"{month}.md").write_text(f"# Recall memories {month}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


QUERIES = [
    "coffee", "咖啡", "我住在杭州", "Shanghai meeting", "机械键盘 python", "budget invoice 预算", "小狗 dog", "航班 flight 123",
    "支付接口要注意什么", "what about the deadline", "莫干山", "龙井茶", "gym doctor", "截止日期 rust", "cat 猫咪 77", "tea",
    "tea tea coffee", "咖啡 咖啡 还有",  # a term said twice counts once
]


def test_the_databases_index_ranks_exactly_as_the_sqlite_index(team_store, tmp_path, clock) -> None:
    """Point 4: the same vault gives the same top 10 on both indexes, through the same scoring
    code (recall/search.py), for keyword queries in Chinese and English, now and as of a date.
    (Lines of varied length: where more than the 100 candidates recall scores tie exactly on
    BM25, the SQLite index keeps the earliest rows, the database the first by file and line.)"""
    from datetime import timedelta

    from memdream.index.db import Index
    from memdream.recall.search import recall
    from memdream.team import push_vault
    from memdream.team.fulltext import PgIndex

    folder = tmp_path / "gen"
    _generated_vault(folder, clock)
    m = Memory(load_config(folder, "me", "main", env={}), clock)
    m.sync()  # adopt and index the typed lines
    m.close()
    push_vault(team_store, folder)
    local = Index(m.vault, postings_min_entries=1)  # the exact path: every match scored
    local.keyword_candidates(ALICE, "warm up", 1)
    assert local.postings_ready()
    me = Scope("me", "main")
    compared = 0
    with team_store.pool.connection() as conn:
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (me.key,))
        pg = PgIndex(conn, me)
        assert pg.corpus_stats() == local.corpus_stats()
        for q in QUERIES:
            for as_of in (None, clock.now() - timedelta(days=100)):
                for rank_by in ("score", "relevance"):
                    a = recall(local, me, q, 10, clock.now(), as_of=as_of, rank_by=rank_by)
                    b = recall(pg, me, q, 10, clock.now(), as_of=as_of, rank_by=rank_by)
                    # The SQLite postings score in float32 (numpy), the database path in float64:
                    # the same top 10, each score equal within 1e-6, in the same order but for
                    # neighbours that close.
                    sa, sb = {h.entry.id: h.score for h in a}, {h.entry.id: h.score for h in b}
                    assert set(sa) == set(sb), (q, as_of, rank_by)
                    assert all(abs(sa[i] - sb[i]) < 1e-6 for i in sa), (q, as_of, rank_by)
                    rank = {h.entry.id: (h.score if rank_by == "score" else h.trace.relevance) for h in a}
                    for x, y in zip(a, b):  # position by position: the same memory, or one that ties with it
                        assert x.entry.id == y.entry.id or abs(rank[x.entry.id] - rank[y.entry.id]) < 1e-5, (q, as_of, rank_by)
                    compared += len(a)
        conn.rollback()
    local.close()
    assert compared > 400  # the queries found something to compare


def test_each_posting_carries_its_lines_scoring_columns_and_the_backfill_agrees(team_store, tmp_path, clock) -> None:
    """Recall scores from the postings alone (migration 6): each carries its term's frequency in
    the line, the line's token count, layer and validity, as the write path stores them; the
    migration's backfill of a database written before gives the same columns."""
    from collections import Counter

    from memdream.team import push_vault
    from memdream.team.schema import POSTINGS_BACKFILL

    folder = tmp_path / "gen"
    _generated_vault(folder, clock, n=400)
    m = Memory(load_config(folder, "me", "main", env={}), clock)
    m.sync()
    m.close()
    push_vault(team_store, folder)
    me = Scope("me", "main")
    cols = "SELECT term, path, pos, tf, ntok, layer, cur FROM memdream_postings"
    with team_store.pool.connection() as conn:
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (me.key,))
        lines = conn.execute("SELECT path, pos, tok, layer, vt FROM memdream_lines WHERE tok IS NOT NULL").fetchall()
        expect = sorted(
            (t, path, pos, n, len(tok.split()), layer, vt is None) for path, pos, tok, layer, vt in lines for t, n in Counter(tok.split()).items()
        )
        assert len(expect) > 2000 and any(e[3] > 1 for e in expect)  # some term said twice in a line
        assert {e[6] for e in expect} == {True, False}  # current lines and ended ones
        assert sorted(conn.execute(cols).fetchall()) == expect
        conn.execute("UPDATE memdream_postings SET tf = NULL, ntok = NULL, layer = NULL, cur = NULL")
        conn.execute(POSTINGS_BACKFILL)
        assert sorted(conn.execute(cols).fetchall()) == expect
        conn.rollback()


def test_migration_6_fills_the_postings_of_every_scope_of_a_database_written_before(team_store, clock) -> None:
    """A database at schema 5 (postings without their scoring columns) holding two tenants:
    migration 6 fills every scope's postings (it reads across the row-level policies, as the
    owner, inside its transaction only) and recall ranks from them afterwards."""
    from memdream.team.schema import LATEST, migrate

    with team_store.session(ALICE) as mem:
        for t in ["I live in Hangzhou", "我喜欢喝龙井茶", "my dog is Rex", "the tea shop opens at 9", "tea tea and more tea"]:
            mem.write(t)
    with team_store.session(BOB) as mem:
        for t in ["Bob drinks green tea", "我住在上海"]:
            mem.write(t)
    cols = "SELECT scope, term, path, pos, tf, ntok, layer, cur FROM memdream_postings ORDER BY 1, 2, 3, 4"
    with team_store.pool.connection() as conn:
        with conn.transaction():
            expect = {}
            for sc in (ALICE, BOB):
                conn.execute("SELECT set_config('memdream.scope', %s, true)", (sc.key,))
                expect[sc.key] = conn.execute(cols).fetchall()
        with conn.transaction():  # back to schema 5, data kept
            conn.execute("DROP INDEX memdream_postings_line")
            conn.execute("ALTER TABLE memdream_postings DROP CONSTRAINT memdream_postings_pkey, ADD PRIMARY KEY (scope, term, path, pos)")
            conn.execute("ALTER TABLE memdream_postings DROP COLUMN tf, DROP COLUMN ntok, DROP COLUMN layer, DROP COLUMN cur")
            conn.execute("DROP TABLE memdream_appends")  # migration 8's
            conn.execute("DELETE FROM memdream_schema WHERE version >= 6")
        assert migrate(conn) == list(range(6, LATEST + 1))
        with conn.transaction():
            for sc in (ALICE, BOB):
                conn.execute("SELECT set_config('memdream.scope', %s, true)", (sc.key,))
                got = conn.execute(cols).fetchall()
                assert got == expect[sc.key] and got and all(r[4] and r[5] and r[6] for r in got)
                assert sc != ALICE or any(r[1] == "tea" and r[4] == 3 for r in got)  # "tea tea and more tea"
            forced = conn.execute("SELECT relforcerowsecurity FROM pg_class WHERE relname IN ('memdream_postings', 'memdream_lines')").fetchall()
            assert forced == [(True,), (True,)]  # the policies hold the owner again
    with team_store.session(ALICE) as mem:
        assert [h.entry.text for h in mem.recall("tea", k=2)][0] == "tea tea and more tea"
    with team_store.session(BOB) as mem:
        assert [h.entry.text for h in mem.recall("tea", k=5)] == ["Bob drinks green tea"]


def _as_written_before(conn, scope: Scope, term: str, old: str) -> None:
    """Make the scope's stored tokens what an older tokenizer wrote: `term` was `old` (SQL only,
    the lines untouched), as before English irregular verbs became their verb (bought -> buy)."""
    conn.execute("SELECT set_config('memdream.scope', %s, true)", (scope.key,))
    conn.execute(
        "UPDATE memdream_lines SET tok = array_to_string(array(SELECT CASE WHEN w = %s THEN %s ELSE w END "
        "FROM unnest(string_to_array(tok, ' ')) AS w), ' ') WHERE scope = %s AND %s = ANY(string_to_array(tok, ' '))",
        (term, old, scope.key, term),
    )
    conn.execute("UPDATE memdream_postings SET term = %s WHERE scope = %s AND term = %s", (old, scope.key, term))
    conn.execute("UPDATE memdream_terms SET term = %s WHERE scope = %s AND term = %s", (old, scope.key, term))


def test_migration_7_derives_again_the_tokens_of_every_scope_written_before(team_store) -> None:
    """A database at schema 6, its tokens from before irregular verb forms became their verb
    (model/tokens.py): migration 7 derives every stale line of every scope again from the line
    itself (the lines unchanged), statistics and postings in step, and recall finds them."""
    from memdream.team import scope_handle
    from memdream.team.schema import LATEST, migrate

    with team_store.session(ALICE) as mem:
        for t in ["Bought a floor lamp at IKEA", "我喜欢喝龙井茶", "need to buy coffee filters"]:
            mem.write(t)
    with team_store.session(BOB) as mem:
        mem.write("Bob bought a bike in May")
    lines = "SELECT scope, path, pos, line FROM memdream_lines ORDER BY 1, 2, 3"
    with team_store.pool.connection() as conn:
        with conn.transaction():
            before = {}
            for sc in (ALICE, BOB):
                conn.execute("SELECT set_config('memdream.scope', %s, true)", (sc.key,))
                before[sc.key] = conn.execute(lines).fetchall()
        with conn.transaction():  # back to schema 6, the tokens as written then
            for sc in (ALICE, BOB):
                _as_written_before(conn, sc, "buy", "bought")
            conn.execute("DROP TABLE memdream_appends")  # migration 8's
            conn.execute("DELETE FROM memdream_schema WHERE version >= 7")
    assert team_store.recall(BOB, "buy", k=3) == []  # the database's index, as written before: no "buy" term
    alice = scope_handle(team_store, "alice", "main")
    assert [str(p) for p in alice.doctor()[3] if "do not match the line" in str(p)]  # doctor sees the stale lines
    with team_store.pool.connection() as conn:
        assert migrate(conn) == list(range(7, LATEST + 1))
        with conn.transaction():
            for sc in (ALICE, BOB):
                conn.execute("SELECT set_config('memdream.scope', %s, true)", (sc.key,))
                assert conn.execute(lines).fetchall() == before[sc.key]  # the truth untouched
                assert conn.execute("SELECT count(*) FROM memdream_postings WHERE term = 'bought'").fetchone()[0] == 0
    assert alice.doctor()[3] == []  # lines, postings and statistics agree again, in both scopes
    assert {h.entry.text for h in team_store.recall(ALICE, "buy", k=3)} == {"Bought a floor lamp at IKEA", "need to buy coffee filters"}
    assert [h.entry.text for h in team_store.recall(BOB, "buy", k=3)] == ["Bob bought a bike in May"]


def test_doctor_fix_derives_stale_lines_again_on_the_store(team_store) -> None:
    from memdream.team import scope_handle

    with team_store.session(ALICE) as mem:
        mem.write("We went to Kyoto in April")
    with team_store.pool.connection() as conn, conn.transaction():
        _as_written_before(conn, ALICE, "go", "went")
    assert team_store.recall(ALICE, "go to Kyoto", k=1)[0].entry.text == "We went to Kyoto in April"  # by Kyoto alone
    assert team_store.recall(ALICE, "go", k=1) == []
    alice = scope_handle(team_store, "alice", "main")
    found = [str(p) for p in alice.doctor()[3]]
    assert any("do not match the line" in f and "doctor --fix" in f for f in found), found
    assert alice.doctor(fix=True)[3] == [] and alice.doctor()[3] == []
    assert [h.entry.text for h in team_store.recall(ALICE, "go", k=1)] == ["We went to Kyoto in April"]


def test_a_postings_copy_follows_lines_doctor_derives_again(team_store, pg_url, tmp_path, clock) -> None:
    """`doctor --fix` derives stale lines again without changing them; it gives their files a
    new version, so a process's copy of the postings (built while they were stale) follows."""
    from memdream.team import scope_handle

    with team_store.session(ALICE) as mem:
        mem.write("We went to Kyoto in April")
        mem.write("我喜欢喝龙井茶")
    with team_store.pool.connection() as conn, conn.transaction():
        _as_written_before(conn, ALICE, "go", "went")
    store = _copying_store(pg_url, tmp_path, clock)
    try:
        assert store.postings_ready(ALICE, timeout=60)
        reader = scope_handle(store, "alice", "main")
        assert reader.recall("go") == []  # the copy holds the stale tokens
        assert scope_handle(team_store, "alice", "main").doctor(fix=True)[3] == []
        assert [h.entry.text for h in reader.recall("go")] == ["We went to Kyoto in April"]
        assert store.postings_status()["main/alice"]["served"] == 1  # the first found no term at all
    finally:
        store.close()


def test_common_terms_still_score_when_the_rarest_ones_choose_the_candidates(team_store, tmp_path, clock) -> None:
    """A query whose terms hold more than MATCH_CAP matches picks its candidates by the rarest
    ones; the others still add to each candidate's BM25, computed in the database from the
    postings: each score is model/scoring.bm25 over the line's tokens, best first."""
    from memdream.model.scoring import bm25, query_weights
    from memdream.model.tokens import query_tokens
    from memdream.team import push_vault
    from memdream.team.fulltext import MATCH_CAP, PgIndex

    folder = tmp_path / "gen"
    _generated_vault(folder, clock)
    m = Memory(load_config(folder, "me", "main", env={}), clock)
    m.sync()
    m.close()
    push_vault(team_store, folder)
    me = Scope("me", "main")
    queries = ["coffee tea Hangzhou Shanghai meeting deadline python rust dog cat", "咖啡 龙井茶 杭州 上海 周会 截止日期 机械键盘 莫干山 budget gym"]
    with team_store.pool.connection() as conn:
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (me.key,))
        pg = PgIndex(conn, me)
        n_docs, avgdl = pg.corpus_stats()
        for q in queries:
            terms = query_tokens(q)
            df = pg.document_frequency(terms)
            assert sum(df.values()) > MATCH_CAP  # the cap binds: some terms only score
            for ended in (0, 20):
                found = pg.keyword_candidates(me, q, 100, ended=ended)
                current = [s for row, s in found if row.vt is None]
                assert len(current) == 100 and current == sorted(current, reverse=True)
                for row, score in found:
                    exact = bm25([t for t in terms if df.get(t)], row.tok.split(), df, n_docs, avgdl, query_weights(terms))
                    assert abs(score - exact) < 1e-9
                assert any(len(set(row.tok.split()) & set(terms)) > 1 for row, _ in found)  # lines that several terms score
        conn.rollback()


def test_the_databases_statistics_follow_every_change(team_store, tmp_path, clock) -> None:
    """Writes, supersedes, forgets and a dream through the store keep the database's term
    statistics equal to a SQLite index built from the same files."""
    from memdream.team.fulltext import PgIndex

    with team_store.session(ALICE) as mem:
        ids = [mem.write(t).entry.id for t in ["I live in Hangzhou", "我喜欢喝龙井茶", "my dog is Rex", "周会在周三下午", "I work at Acme"]]
        mem.write("I moved to Shanghai", subject="location")
        mem.write("I live in Shenzhen now", subject="location")
        mem.forget(ids[2])
        mem.pin(ids[1])
        mem.dream(["light"])
        root = Path(mem.vault.root)
    fresh = tmp_path / "rebuilt"
    for rel, data in team_store.scope_files(ALICE).items():
        (fresh / rel).parent.mkdir(parents=True, exist_ok=True)
        (fresh / rel).write_bytes(data)
    rebuilt = Memory(load_config(fresh, ALICE.user, ALICE.agent, env={}), clock)
    rebuilt.vault.init()
    rebuilt.rebuild_index()
    with team_store.pool.connection() as conn:
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (ALICE.key,))
        pg = PgIndex(conn, ALICE)
        want = rebuilt.index.document_frequency([t for t, _ in rebuilt.index.terms_snapshot()])
        assert len(want) > 20 and pg.document_frequency(list(want)) == want
        assert pg.corpus_stats() == rebuilt.index.corpus_stats()
        assert conn.execute("SELECT count(*) FROM memdream_terms").fetchone()[0] == len(want)  # no term left behind at 0
        conn.rollback()
    rebuilt.close()
    assert root.exists()


def test_keyword_recall_on_the_store_needs_no_local_copy_and_counts_its_hits(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.team import scope_handle

    with team_store.session(ALICE) as mem:
        mem.write("我喜欢喝龙井茶")
        mem.write("I drink espresso after lunch")
    cold = second_store(pg_url, tmp_path, clock)  # a process that never saw the scope
    try:
        hits = scope_handle(cold, "alice", "main").recall("龙井茶")
        assert [h.entry.text for h in hits] == ["我喜欢喝龙井茶"]
        from memdream.team.store import local_files

        assert local_files(Path(cold.cache) / "main__alice", ALICE) == {}  # nothing was copied to answer it
    finally:
        cold.close()
    journal = team_store.scope_files(ALICE)[".memdream/hits/main__alice.jsonl"]
    assert journal.count(b"\n") == 1 and hits[0].entry.id.encode() in journal


def _copying_store(pg_url: str, tmp_path: Path, clock):  # type: ignore[no-untyped-def]
    """A process that keeps an in-process copy of every scope's postings (team/postings.py),
    whatever the scope's size (the default is for scopes of 50k lines and more)."""
    from memdream.team import open_store

    return open_store(pg_url, load_config(tmp_path / "cfg3", env={}), clock=clock, cache_dir=tmp_path, postings_min_entries=1)


def test_a_scopes_postings_copy_ranks_as_the_sqlite_index(team_store, pg_url, tmp_path, clock) -> None:
    """A large scope's keyword recall runs on an in-process copy of its postings: every match
    scored, as the SQLite index's postings score them, ties broken by file and line as the
    database breaks them. The same vault gives the same top 10 as the folder vault."""
    from memdream.team import push_vault, scope_handle

    folder = tmp_path / "gen"
    _generated_vault(folder, clock)
    m = Memory(load_config(folder, "me", "main", env={}), clock)
    m.sync()
    push_vault(team_store, folder)
    store = _copying_store(pg_url, tmp_path, clock)
    try:
        assert store.postings_ready(Scope("me", "main"), timeout=60)
        mem = scope_handle(store, "me", "main")
        m.recall("warm up", k=1)
        m.recall("warm up again", k=1)  # the folder's second search on: its own postings, every match scored
        compared = 0
        for q in QUERIES:
            for rank_by in ("score", "relevance"):
                a, b = m.recall(q, k=10, rank_by=rank_by), mem.recall(q, k=10, rank_by=rank_by)
                assert [h.entry.id for h in a] == [h.entry.id for h in b], (q, rank_by)
                assert all(abs(x.score - y.score) < 1e-6 for x, y in zip(a, b)), (q, rank_by)
                compared += len(a)
        assert compared > 200
        assert store.postings_status()["main/me"]["served"] == 2 * len(QUERIES)  # each answered from the copy
    finally:
        store.close()
        m.close()


def test_a_postings_copy_follows_what_other_processes_write(team_store, pg_url, tmp_path, clock) -> None:
    """The copy is a cache: each recall first brings it to the database's state (the files
    another process wrote since), so a memory written, changed or forgotten elsewhere is
    recalled as it now stands."""
    from memdream.team import scope_handle

    with team_store.session(ALICE) as mem:
        for i in range(40):
            mem.write(f"周{i % 7}下午和团队{i}开会 meeting number {i}")
    store = _copying_store(pg_url, tmp_path, clock)
    try:
        assert store.postings_ready(ALICE, timeout=60)
        reader, writer = scope_handle(store, "alice", "main"), scope_handle(team_store, "alice", "main")
        assert reader.recall("龙井茶") == [] and reader.recall("oolong") == []
        writer.write("我最喜欢喝龙井茶")
        eid = writer.write("I drink oolong every morning").entry.id
        assert [h.entry.text for h in reader.recall("龙井茶")] == ["我最喜欢喝龙井茶"]
        assert [h.entry.id for h in reader.recall("oolong")] == [eid]
        writer.forget(eid)
        assert reader.recall("oolong") == []
        writer.write("Lives in Hangzhou", subject="home")
        writer.write("Lives in Suzhou now", subject="home")  # supersedes the Hangzhou line
        assert [h.entry.text for h in reader.recall("lives")] == ["Lives in Suzhou now"]
        assert [h.entry.text for h in reader.recall("开会 meeting number 7")][:1] == ["周0下午和团队7开会 meeting number 7"]
        status = store.postings_status()["main/alice"]
        # every recall whose words the scope holds was answered from the copy (the first two match no term)
        assert status["served"] == 5 and status["lines"] == 40 + 4 and status["dropped"] >= 1
    finally:
        store.close()


def test_an_edit_made_against_a_stale_version_is_refused_across_processes(team_store, pg_url, tmp_path, clock) -> None:
    """Point 3: the hand-edit rule as optimistic concurrency. The web console's edit names the
    version it was made against; another process's change in between makes it stale: refused,
    nothing written (the console answers 409)."""
    from memdream.errors import ChangedOnDisk
    from memdream.team import scope_handle

    here = scope_handle(team_store, "alice", "main")
    out = here.write("I live in Hangzhou")
    eid = out.entry.id
    [(row_id, version)] = [(e.id, v) for e, v in here.versioned() if e.id == eid] or [(None, None)]
    assert row_id == eid
    other = second_store(pg_url, tmp_path, clock)
    try:
        scope_handle(other, "alice", "main").pin(eid)  # another process changes the line meanwhile
        with pytest.raises(ChangedOnDisk):
            with here.at_version(eid, version):
                here.update(eid, "I live in Suzhou", source="user")
        assert [e.text for e in here.list()] == ["I live in Hangzhou"]  # nothing was written
        fresh = here.versions([eid])[eid]
        assert fresh != version
        with here.at_version(eid, fresh):  # against the current version: accepted
            here.update(eid, "I live in Suzhou", source="user")
        assert [e.text for e in scope_handle(other, "alice", "main").list()] == ["I live in Suzhou"]
    finally:
        other.close()


def test_the_web_console_on_the_store_answers_409_to_an_edit_another_process_made_stale(team_store, pg_url, tmp_path, clock) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from memdream.team import scope_handle
    from memdream.web.app import create_app

    mem = scope_handle(team_store, "alice", "main")
    eid = mem.write("我喜欢靠窗的座位", type="preference").entry.id
    c = TestClient(create_app(mem, "tok-123456", port=8765), base_url="http://127.0.0.1:8765")
    html = c.get("/entries?token=tok-123456").text
    assert "我喜欢靠窗的座位" in html
    csrf = html.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    version = html.split(f'/entry/{eid}/pin"><input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="version" value="', 1)[1].split('"', 1)[0]
    other = second_store(pg_url, tmp_path, clock)
    try:
        scope_handle(other, "alice", "main").pin(eid)  # another server process changes the line
        r = c.post(f"/entry/{eid}/edit", data={"csrf": csrf, "version": version, "text": "我喜欢靠过道的座位"})
        assert r.status_code == 409 and "Nothing was overwritten" in r.text
        assert [e.text for e in scope_handle(other, "alice", "main").list()] == ["我喜欢靠窗的座位"]
    finally:
        other.close()


def test_hybrid_recall_on_the_store_ranks_as_on_the_folder_with_vectors_stored_once(pg_url, tmp_path, clock) -> None:
    """Point 4, vectors: with an embedder, the store keeps one vector per text in a real[]
    column (computed by the first process that recalls, then shared) and scores the query
    exactly, so hybrid recall gives the folder vault's top 10."""
    from memdream.embed.fake import HashEmbedder
    from memdream.team import open_store, push_vault, scope_handle

    folder = tmp_path / "gen"
    _generated_vault(folder, clock, 400)
    emb = HashEmbedder(128)
    m = Memory(load_config(folder, "me", "main", env={}), clock, emb)
    m.sync()
    m.embed_pending()
    stores = [open_store(pg_url, load_config(tmp_path / "c", env={}), clock=clock, embedder=HashEmbedder(128), cache_dir=tmp_path) for _ in range(2)]
    try:
        push_vault(stores[0], folder)
        assert scope_handle(stores[1], "me", "main").embed_pending() == len({e.text for e in m.list()})
        for n, q in enumerate(["我住在杭州", "coffee and tea", "小狗 dog", "支付接口要注意什么"]):
            want = [(h.entry.id, round(h.score, 6)) for h in m.recall(q, rank_by="relevance")]
            got = [(h.entry.id, round(h.score, 6)) for h in scope_handle(stores[n % 2], "me", "main").recall(q, rank_by="relevance")]
            assert len(want) == 10 and got == want, q
            assert all(h.trace.cosine is not None for h in scope_handle(stores[n % 2], "me", "main").recall(q, k=3)), q
        with stores[0].pool.connection() as conn:
            conn.execute("SELECT set_config('memdream.scope', 'main/me', false)")
            model, count = conn.execute("SELECT min(model), count(*) FROM memdream_vectors").fetchone()
            conn.rollback()
        assert model == emb.model_id and count == len({e.text for e in m.list()})  # each current text embedded once
    finally:
        m.close()
        for s in stores:
            s.close()


def test_doctor_on_the_store_checks_every_scope_and_the_databases_own_index(team_store) -> None:
    from memdream.team import scope_handle

    for scope in (ALICE, BOB):
        with team_store.session(scope) as mem:
            mem.write(f"{scope.user} drinks 乌龙茶 every day")
    alice = scope_handle(team_store, "alice", "main")
    assert alice.doctor()[3] == []
    with team_store.pool.connection() as conn:  # the statistics drift (a bug, or a hand-made change to the rows)
        conn.execute("SELECT set_config('memdream.scope', %s, false)", (BOB.key,))
        conn.execute("UPDATE memdream_terms SET df = df + 5 WHERE scope = %s", (BOB.key,))
        conn.commit()
    found = [str(p) for p in alice.doctor()[3]]
    assert len(found) == 1 and "main/bob: the full-text statistics disagree" in found[0]
    assert alice.doctor(fix=True)[3] == [] and alice.doctor()[3] == []


ENTRIES = 3_000


def test_push_of_a_big_vault_then_export_gives_it_back_byte_for_byte(pg_url, tmp_path, clock) -> None:
    """The acceptance point, through the real commands: `memdream push` of a vault, then
    `memdream export --store`, gives a byte-identical vault; pushing again writes nothing. The
    suite pushes 3,000 entries; bench/team_push.py runs the issue's 10,000 (docs/benchmarks.md)."""
    import json
    import subprocess
    import sys

    from memdream.team import scope_files_of

    folder = tmp_path / "big"
    _generated_vault(folder, clock, ENTRIES)
    env = dict(os.environ, MEMDREAM_VAULT=str(tmp_path / "settings"))
    env.pop("MEMDREAM_STORE", None)

    def md(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memdream.cli.main", *args], env=env, capture_output=True, text=True, timeout=300)

    first = md("push", str(folder), "--store", pg_url, "--json")
    assert first.returncode == 0, first.stderr
    moved = json.loads(first.stdout)
    assert moved["scopes"] == ["main/me"] and moved["written"] == moved["files"] >= 7
    again = json.loads(md("push", str(folder), "--store", pg_url, "--json").stdout)
    assert again["written"] == 0 and again["deleted"] == 0
    out = tmp_path / "back"
    exp = md("export", "--store", pg_url, "--to", str(out))
    assert exp.returncode == 0, exp.stderr
    me = Scope("me", "main")
    want, got = scope_files_of(folder, me), scope_files_of(out, me)
    assert sum(d.count(b"<!--m:") for d in want.values()) == ENTRIES
    assert got == want


def test_a_dream_on_the_store_writes_its_diary_and_ledger_and_undo_restores_every_byte(team_store, pg_url, tmp_path, clock) -> None:
    """Point 5: the ledger, the diary and undo work as on the vault, across processes."""
    from memdream.team import scope_handle

    here = scope_handle(team_store, "alice", "main")
    here.write("我在余杭区")
    here.write("我在西湖区")  # supersedes: the old line ends, to be archived by a later dream
    clock.advance(days=40)
    before = team_store.scope_files(ALICE)
    report = here.dream(["light"])
    assert report.phases[0].changes > 0
    after = team_store.scope_files(ALICE)
    diaries = [rel for rel in after if "/memory/dreams/" in rel and rel.endswith(".md")]
    assert diaries and "我在余杭区" in after[diaries[0]].decode("utf-8")
    assert any(rel.endswith("ledger.jsonl") for rel in after)
    other = second_store(pg_url, tmp_path, clock)  # another process undoes it
    try:
        assert scope_handle(other, "alice", "main").last_dream() is not None
        scope_handle(other, "alice", "main").undo()
    finally:
        other.close()
    restored = team_store.scope_files(ALICE)
    memory = [rel for rel in before if rel.endswith(".md") and "/dreams/" not in rel]
    assert memory and all(restored.get(rel) == before[rel] for rel in memory)  # every memory file as it was
    archived = [rel for rel in restored if rel.startswith("scopes/main/alice/memory/.archive/entries/")]
    assert all(b"<!--m:" not in restored[rel] for rel in archived)  # the dream's move to the archive is undone


def test_recall_counts_appended_by_another_process_survive_a_write_that_folds_the_journal(team_store, pg_url, tmp_path, clock) -> None:
    from memdream.team import scope_handle

    here = scope_handle(team_store, "alice", "main")
    here.write("我喜欢喝龙井茶")
    here.recall("龙井茶")
    with team_store.session(ALICE) as mem:  # a write session that rewrites the journal (folds the counts) ...
        other = second_store(pg_url, tmp_path, clock)
        try:
            scope_handle(other, "alice", "main").recall("龙井茶")  # ... while another process's recall appends to it
        finally:
            other.close()
        mem.flush_hits()
    journal = team_store.scope_files(ALICE)[".memdream/hits/main__alice.jsonl"]
    assert journal.count(b"\n") == 1  # the first count was folded into the file, the second one kept
    assert "hc=1" in team_store.scope_files(ALICE)["scopes/main/alice/MEMORY.md"].decode("utf-8")


def test_a_recalls_hit_counts_are_appended_as_rows_and_folded_by_a_write(team_store, clock) -> None:
    """Recall counts go to the scope's journal without the lock. Each append is a row of its own
    (migration 8), never a rewrite of the journal's stored bytes (which grew with every recall
    until a dream folded them); the file is its stored bytes then its appends in order, and a
    write that folds the journal stores it again without them."""
    from memdream.team import scope_handle

    path = ".memdream/hits/main__alice.jsonl"
    here = scope_handle(team_store, "alice", "main")
    here.write("我喜欢喝龙井茶")
    here.write("I drink espresso after lunch")
    for q in ("龙井茶", "espresso", "龙井茶"):
        assert here.recall(q)

    def stored() -> tuple[bytes, list[bytes]]:
        with team_store.pool.connection() as conn:
            conn.execute("SELECT set_config('memdream.scope', %s, false)", (ALICE.key,))
            row = conn.execute("SELECT data FROM memdream_files WHERE scope = %s AND path = %s", (ALICE.key, path)).fetchone()
            rows = conn.execute("SELECT data FROM memdream_appends WHERE scope = %s AND path = %s ORDER BY seq", (ALICE.key, path)).fetchall()
            conn.rollback()
        return (bytes(row[0]) if row else None), [bytes(r[0]) for r in rows]

    data, appends = stored()
    assert data == b"" and len(appends) == 3
    journal = team_store.scope_files(ALICE)[path]
    assert journal == b"".join(appends) and journal.count(b"\n") == 3
    with team_store.session(ALICE) as mem:
        mem.flush_hits()
    data, appends = stored()
    assert appends == [] and data is None and path not in team_store.scope_files(ALICE)  # folded: the journal removed with its rows
    assert "hc=2" in team_store.scope_files(ALICE)["scopes/main/alice/MEMORY.md"].decode("utf-8")  # 龙井茶's two counts, folded


def test_the_postings_copy_threshold_comes_from_the_environment(team_store, pg_url, tmp_path, clock, monkeypatch) -> None:
    """MEMDREAM_TEAM_POSTINGS_MIN sets the lines from which a process copies a scope's postings
    ("off": never); a value that is neither is refused with what to set instead."""
    from memdream.errors import ConfigError
    from memdream.team import open_store, scope_handle

    with team_store.session(ALICE) as mem:
        mem.write("我喜欢喝龙井茶")
    for value, served in (("1", 1), ("off", 0)):
        monkeypatch.setenv("MEMDREAM_TEAM_POSTINGS_MIN", value)
        store = open_store(pg_url, load_config(tmp_path / "cfg4", env={}), clock=clock, cache_dir=tmp_path)
        try:
            assert store.postings_ready(ALICE, timeout=60)
            assert [h.entry.text for h in scope_handle(store, "alice", "main").recall("龙井茶")] == ["我喜欢喝龙井茶"]
            assert store.postings_status()["main/alice"]["served"] == served, value
        finally:
            store.close()
    monkeypatch.setenv("MEMDREAM_TEAM_POSTINGS_MIN", "lots")
    with pytest.raises(ConfigError, match="MEMDREAM_TEAM_POSTINGS_MIN"):
        open_store(pg_url, load_config(tmp_path / "cfg4", env={}), clock=clock, cache_dir=tmp_path)
