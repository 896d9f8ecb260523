"""A dream's moves keep their rows (issue 21, point 3): a line that leaves one file for another
with the same id, text and subject has its row updated in place (index/sync.py apply_updates)
instead of a row deleted and another inserted with its full-text entry and term counts.

What must hold: the index is still what a rebuild from the files makes (rows, full text, term
counts, totals), and the caches of a process that loaded them before the moves (the in-process
postings, the loaded vectors) answer as a fresh load does, without reloading.
"""

from __future__ import annotations

from pathlib import Path

from test_light_bulk import NOW, _vault

from memdream.clock import FrozenClock
from memdream.config import load_config
from memdream.embed.fake import HashEmbedder
from memdream.index import vectors as V
from memdream.index.db import Index
from memdream.memory import Memory
from memdream.model.entry import Entry
from memdream.store.format import Document, Line, render_line

QUERIES = ["tennis Lyon", "绿茶 杭州", "sourdough Osaka", "咖啡 成都", "green tea", "friend 12", "朋友 上海 钢琴"]


def _rows(mem: Memory) -> dict[str, tuple[int, str, str]]:
    """id -> (rowid, path, layer) of the scope's entries."""
    return {i: (r, p, layer) for i, r, p, layer in mem.index.db.execute("SELECT id, rowid, path, layer FROM entries WHERE id != ''")}


def _index_state(mem: Memory) -> tuple:
    ix = mem.index
    return ix.snapshot(), ix.fts_snapshot(), ix.terms_snapshot()


def _found(ix: Index, mem: Memory) -> list:
    return [[(r.rowid, r.layer, r.vt is None, round(s, 4)) for r, s in ix.keyword_candidates(mem.scope, q, 30)] for q in QUERIES]


def test_a_dream_moves_rows_in_place_and_the_index_is_still_its_rebuild(tmp_path: Path) -> None:
    mem = _vault(tmp_path / "vault", 800)
    emb = HashEmbedder(dim=64)
    seen = Memory(load_config(mem.vault.root, "me", "main", env={}), FrozenClock(NOW), emb)  # a process that loaded its caches before
    try:
        warm = Index(mem.vault, postings_min_entries=1)
        warm.keyword_candidates(mem.scope, "tennis", 1)
        assert warm.postings_ready()
        seen.embed_pending()
        vs = seen.vectors
        assert vs is not None
        vs.search(mem.scope, vs.query_vector("Lyon"), 5)
        before = _rows(mem)

        report = mem.dream(["light"], force=False)
        light = report.phases[0]
        assert light.status == "applied", light.failed
        after = _rows(mem)
        moved = {i for i in before if i in after and before[i][1:] != after[i][1:]}
        assert len(moved) == light.changes > 50
        assert {after[i][2] for i in moved} == {"archive", "resident", "recall"}  # archived, promoted and demoted lines
        assert all(after[i][0] == before[i][0] for i in moved)  # each kept its row

        # Caches loaded before the moves follow them (the rows are logged) and answer as a fresh load.
        fresh = Index(mem.vault, postings_min_entries=1)
        fresh.keyword_candidates(mem.scope, "tennis", 1)
        assert fresh.postings_ready()
        assert _found(warm, mem) == _found(fresh, mem)
        assert warm._postings is not None and fresh._postings is not None  # both answered from their postings
        assert any(layer == "resident" for hits in _found(warm, mem) for _, layer, _, _ in hits)
        other = V.VectorStore(seen.index, emb)
        for q in QUERIES:
            qv = vs.query_vector(q)
            a, b = vs.search(mem.scope, qv, 10), other.search(mem.scope, qv, 10)
            assert a[0] == b[0] and a[3] == b[3]
        assert vs.loads == 1  # followed, not reloaded
        warm.close()
        fresh.close()

        # The index is what a rebuild from the files makes.
        state = _index_state(mem)
        mem.index.rebuild(mem.vault.scopes())
        assert _index_state(mem) == state
    finally:
        seen.close()
        mem.close()


def test_updates_indexed_together_equal_a_rebuild(tmp_path: Path) -> None:
    """Index.apply_updates on what a dream's moves never make but the method must take: a line
    that comes into a file and leaves it again in the same changes, a line new to the vault, a
    file edited by hand before its update (indexed whole), and the same file updated twice."""
    mem = _vault(tmp_path / "vault", 300)
    core = mem.core
    try:
        files = sorted(p for p in mem.vault.recall_dir(mem.scope).glob("*.md"))
        a, b, c = files[0], files[1], files[2]
        leaving = next(r for r in mem.index.entries(mem.scope, ("recall",), True) if r.path == mem.vault.relpath(b))
        mover = leaving.entry()
        fresh = Entry(text="A line new to the vault: the tram to Porto leaves at 7", id="zz0001", type="fact", created_at=NOW)
        passing = Entry(text="这一行来了又走", id="zz0002", type="fact", created_at=NOW)
        c.write_text(c.read_text(encoding="utf-8") + "- 手写的一行：周六去爬山\n", encoding="utf-8")  # by hand, not synced

        def add_to_a(doc: Document) -> None:
            doc.lines.append(Line(leaving.line, mover))
            doc.append_entry(fresh)
            doc.append_entry(passing)

        def drop_from_b(doc: Document) -> None:
            doc.lines[:] = [ln for ln in doc.lines if ln.raw != leaving.line]

        def drop_passing(doc: Document) -> None:
            doc.remove(doc.find(passing.id))

        def touch_c(doc: Document) -> None:
            doc.append_entry(Entry(text="写进被手改过的文件", id="zz0003", type="fact", created_at=NOW))

        done = []
        for path, change in ((a, add_to_a), (b, drop_from_b), (a, drop_passing), (c, touch_c)):
            done.append((path, core.update(path, change, index=False)))
        core.index_updates(done)
        rows = _rows(mem)
        assert rows[mover.id][0] == leaving.rowid and rows[mover.id][1] == mem.vault.relpath(a)  # moved in place
        assert "zz0002" not in rows and {"zz0001", "zz0003"} <= set(rows)
        assert render_line(passing) not in {line for _, _, line in mem.index.snapshot()}
        state = _index_state(mem)
        mem.index.rebuild(mem.vault.scopes())
        assert _index_state(mem) == state
    finally:
        mem.close()
