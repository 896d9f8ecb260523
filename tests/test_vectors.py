"""Vector search (index/vectors.py): the coarse pass over binary codes finds what the exact
float32 scan finds, and a process's loaded vectors follow the index (new, deleted and newly
embedded entries) without reading every vector again."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from memdream.config import load_config
from memdream.embed.fake import HashEmbedder
from memdream.index import vectors as V
from memdream.memory import Memory
from memdream.model.entry import Entry
from memdream.store.format import render_line

PEOPLE = ["Alice", "Bob", "Carol", "Dave", "小王", "李雷", "韩梅梅", "张伟"]
THINGS = ["green tea", "espresso", "chess", "sailing", "乌龙茶", "围棋", "火锅", "书法"]
PLACES = ["Berlin", "Lisbon", "Osaka", "杭州", "北京", "深圳"]


def _texts(n: int) -> list[str]:
    rng = random.Random(3)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        p, t, pl, k = rng.choice(PEOPLE), rng.choice(THINGS), rng.choice(PLACES), rng.randint(1, 99999)
        s = rng.choice([f"{p} likes {t} in {pl}, order {k}", f"{p}在{pl}喜欢{t}，编号 {k}", f"Met {p} about {t}, ticket {k}", f"{p}推荐了{t}，第 {k} 版"])
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _vault_with(vault, clock, n: int, embedder) -> Memory:  # type: ignore[no-untyped-def]
    """A real vault whose recall files hold `n` entries (written as the writer lays them out)."""
    m = Memory(load_config(vault, "me", "main", env={}), clock, embedder)
    m.vault.init()
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    lines: dict = {}
    for i, t in enumerate(_texts(n)):
        when = start + timedelta(minutes=i)
        path = m.vault.recall_file_for(m.scope, when, i // 1000 + 1)
        lines.setdefault(path, []).append(render_line(Entry(text=t, id=f"t{i:06d}", type="fact", valid_from=when, created_at=when)))
    for path, ls in lines.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Recall\n\n" + "\n".join(ls) + "\n", encoding="utf-8")
    m.sync()
    return m


def _exact(m: Memory, qvec: np.ndarray, n: int) -> tuple[list[int], np.ndarray]:
    """The exact answer from the tables: every current entry's cosine, best first."""
    rows = m.index.db.execute(
        "SELECT e.rowid, v.vec FROM entries e JOIN vectors v ON v.model = ? AND v.hash = e.thash WHERE e.scope = ? AND e.vt IS NULL",
        (m.embedder.model_id, m.scope.key),
    ).fetchall()
    mat = np.stack([np.frombuffer(v, np.float32) for _, v in rows])
    sims = mat @ qvec
    order = np.argsort(-sims, kind="stable")[:n]
    return [rows[i][0] for i in order], sims


@pytest.mark.parametrize("dim", [64, 384])
def test_coarse_pass_finds_the_exact_nearest(vault, clock, dim: int) -> None:
    n = V.COARSE_MIN_VECTORS + 1_000  # large enough that the coarse pass is what runs
    m = _vault_with(vault, clock, n, HashEmbedder(dim=dim))
    assert m.embed_pending() == n
    vs = m.vectors
    assert vs is not None
    queries = ["Alice green tea Berlin", "小王 乌龙茶 杭州", "chess ticket", "韩梅梅推荐了书法", "Dave sailing Osaka order 42", "北京 火锅"]
    for q in queries:
        qvec = vs.query_vector(q)
        near, mean, std, count = vs.search(m.scope, qvec, 10)
        want, sims = _exact(m, qvec, 10)
        assert count == n
        # The same ten, in the same order, with the exact cosines (ties aside: compare cosines).
        assert [c for _, c in near] == pytest.approx(sorted(sims, reverse=True)[:10], abs=1e-5)
        assert {r for r, _ in near} == set(want) or [round(c, 5) for _, c in near] == [round(float(sims[i]), 5) for i in np.argsort(-sims)[:10]]
        assert mean == pytest.approx(float(sims.mean()), abs=1e-5)  # exact: the running sum
        assert std == pytest.approx(float(sims.std()), rel=0.05)  # measured on a sample of SPREAD_SAMPLE
    # Recall itself ranks the same with the coarse pass as with the exact scan.
    for q in queries:
        coarse = [h.entry.id for h in m.recall(q, k=10, rank_by="relevance")]
        saved = V.COARSE_MIN_VECTORS
        V.COARSE_MIN_VECTORS = n + 1  # the exact scan, for comparison
        try:
            exact = [h.entry.id for h in m.recall(q, k=10, rank_by="relevance")]
        finally:
            V.COARSE_MIN_VECTORS = saved
        assert coarse[:5] == exact[:5] and len(set(coarse) & set(exact)) >= 9
    m.close()


def test_loaded_vectors_follow_new_deleted_and_embedded_entries(vault, clock) -> None:
    emb = HashEmbedder(dim=64)
    m = _vault_with(vault, clock, 300, emb)
    m.embed_pending()
    vs = m.vectors
    assert vs is not None
    first = vs.search(m.scope, vs.query_vector("Alice"), 5)
    assert first[3] == 300 and vs.loads == 1
    # A new memory (remember embeds it to look for restatements) is found without a reload.
    e = m.remember("My cat is called Mochi and she hates the vacuum")
    q = vs.query_vector("My cat is called Mochi and she hates the vacuum")
    near, _, _, count = vs.search(m.scope, q, 1)
    assert count == 301 and near[0][1] == pytest.approx(1.0, abs=1e-5)
    assert m.index.rows([near[0][0]])[0].entry().id == e.id
    # Chinese too, and a forgotten memory leaves the search.
    zh = m.remember("我对花生过敏，千万别给我推荐花生酱")
    qz = vs.query_vector("我对花生过敏，千万别给我推荐花生酱")
    assert m.index.rows([vs.search(m.scope, qz, 1)[0][0][0]])[0].entry().id == zh.id
    m.forget(zh.id, hard=True)
    near, _, _, count = vs.search(m.scope, qz, 3)
    assert count == 301 and all(m.index.rows([r])[0].entry().id != zh.id for r, _ in near)
    # Another process writes an entry without an embedder, then a third embeds it: the vector
    # is picked up from the table (its counter moved), again without a reload.
    plain = Memory(load_config(vault, "me", "main", env={}), clock)
    other = plain.remember("周五下午三点在西湖区开组会")
    plain.close()
    qo = vs.query_vector("周五下午三点在西湖区开组会")
    assert all(m.index.rows([r])[0].entry().id != other.id for r, _ in vs.search(m.scope, qo, 3)[0])  # no vector yet
    third = Memory(load_config(vault, "me", "main", env={}), clock, HashEmbedder(dim=64))
    assert third.embed_pending() == 1
    third.close()
    near, _, _, count = vs.search(m.scope, qo, 1)
    assert count == 302 and m.index.rows([near[0][0]])[0].entry().id == other.id
    assert vs.loads == 1
    # What the loaded copy holds is what a fresh load reads.
    fresh = V.VectorStore(m.index, emb)
    for query in ("Alice", "花生", "组会", "Mochi"):
        qv = vs.query_vector(query)
        a, b = vs.search(m.scope, qv, 10), fresh.search(m.scope, qv, 10)
        assert a[0] == b[0] and a[3] == b[3] and a[1] == pytest.approx(b[1]) and a[2] == pytest.approx(b[2])
    # A rebuild of the index cannot be followed row by row: the next search loads again.
    m.index.rebuild(m.vault.scopes())
    assert vs.search(m.scope, q, 1)[3] == 302 and vs.loads == 2
    m.close()


def test_what_lacks_a_vector_is_read_from_the_loaded_state(vault, clock) -> None:
    """What is waiting for a vector comes from the rows the loaded state has followed (not a
    scan of the scope, which ran on the first recall after every write): new lines of another
    process, once per text, without the ones forgotten before they were embedded."""
    emb = HashEmbedder(dim=64)
    m = _vault_with(vault, clock, 300, emb)
    assert m.embed_pending() == 300
    vs = m.vectors
    assert vs is not None and vs.pending(m.scope) == []
    plain = Memory(load_config(vault, "me", "main", env={}), clock)  # a process without an embedder
    kept = plain.remember("我每周三晚上去游泳")
    gone = plain.remember("The spare key is under the blue flower pot")
    plain.forget(gone.id, hard=True)
    plain.close()
    m.sync()
    waiting = vs.pending(m.scope)
    assert [t for _, t in waiting] == [kept.text] and vs.loads == 1
    assert vs.pending(m.scope, limit=0) == []
    assert m.embed_pending() == 1 and vs.pending(m.scope) == [] and vs.loads == 1
    hits = m.recall("周三游泳", k=3)
    assert hits and hits[0].entry.id == kept.id and hits[0].trace.cosine is not None
    m.close()


def test_many_deletions_compact_and_stay_exact(vault, clock) -> None:
    emb = HashEmbedder(dim=64)
    m = _vault_with(vault, clock, 2_400, emb)
    m.embed_pending()
    vs = m.vectors
    assert vs is not None
    vs.search(m.scope, vs.query_vector("x"), 1)
    # A hand edit deletes three lines of four from the two full files (the index follows on sync).
    files = sorted(m.vault.recall_dir(m.scope).rglob("*.md"))
    kept = 0
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        entries = [ln for ln in lines if ln.startswith("- ")]
        if len(entries) == 1_000:
            entries = entries[::4]
        kept += len(entries)
        path.write_text("# Recall\n\n" + "\n".join(entries) + "\n", encoding="utf-8")
    m.sync()
    qv = vs.query_vector("Carol chess Lisbon")
    near, mean, _, count = vs.search(m.scope, qv, 10)
    want, sims = _exact(m, qv, 10)
    assert count == kept == 900 and [r for r, _ in near] == want
    assert mean == pytest.approx(float(sims.mean()), abs=1e-5)
    assert vs.loads == 1 and vs._loaded[m.scope.key].dead == 0  # compacted in place
    m.close()


def test_a_line_rewritten_with_the_same_text_keeps_its_slot(vault, clock) -> None:
    """Folding recall counts into the files rewrites lines (hc=, la=) whose text stays: the
    index gives them new rows, and the loaded vectors give each its old slot back instead of
    marking it dead and adding it anew (which grew dead slots until the whole scope's codes
    were rebuilt). What the process holds is still what a fresh load reads."""
    emb = HashEmbedder(dim=64)
    m = _vault_with(vault, clock, 300, emb)
    m.embed_pending()
    vs = m.vectors
    assert vs is not None
    m.hit_flush_after = 1  # every recall folds its counts into the files at once
    before = m.index.db.execute("SELECT max(rowid) FROM entries").fetchone()[0]
    for q in ("Alice green tea", "小王 乌龙茶 杭州", "chess ticket"):
        assert m.recall(q, k=5)
    assert m.index.db.execute("SELECT max(rowid) FROM entries").fetchone()[0] > before  # the lines were rewritten
    assert any(e.hits for e in m.list())
    vs.search(m.scope, vs.query_vector("x"), 1)  # follow the index
    st = vs._loaded[m.scope.key]
    assert st.dead == 0 and st.live == 300 and st.n == 300 and vs.loads == 1
    fresh = V.VectorStore(m.index, emb)
    for query in ("Alice", "乌龙茶", "chess"):
        qv = vs.query_vector(query)
        a, b = vs.search(m.scope, qv, 10), fresh.search(m.scope, qv, 10)
        assert a[0] == b[0] and a[3] == b[3] and a[1] == pytest.approx(b[1]) and a[2] == pytest.approx(b[2])
    # A line forgotten loses its slot for good: one dead slot, one memory fewer.
    m.forget(m.list()[0].id, hard=True)
    vs.search(m.scope, vs.query_vector("x"), 1)
    assert st.dead == 1 and st.live == 299
    m.close()
