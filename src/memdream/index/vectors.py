"""Vectors for hybrid recall, keyed by (model fingerprint, text hash) (DESIGN section 7).

Nothing is embedded twice: a text already embedded by the same model is found by its hash,
and switching model embeds only what the new model lacks. Embedding never happens on the
write path: `embed_pending` catches up later (at recall, or `memdream index embed`).

Search is exact: brute-force cosine over the scope's current vectors with numpy, held in
memory per process and reloaded when the index's generation changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memdream.embed.embedder import Embedder
from memdream.index.db import Index, Row
from memdream.model.entry import RECALL, RESIDENT
from memdream.store.vault import Scope

if TYPE_CHECKING:
    import numpy as np

EMBED_BATCH = 32  # texts per embedder call


class VectorStore:
    def __init__(self, index: Index, embedder: Embedder) -> None:
        self.index = index
        self.embedder = embedder
        self._matrix: dict[str, tuple[int, list[int], "np.ndarray"]] = {}  # scope -> (generation, rowids, vectors)
        self._pending_checked: dict[str, int] = {}  # scope -> generation at which nothing was pending
        self._positions: dict[str, dict[int, int]] = {}  # scope -> rowid -> row of the matrix

    @property
    def model(self) -> str:
        return self.embedder.model_id

    def pending(self, scope: Scope, limit: int | None = None) -> list[tuple[str, str]]:
        """(text hash, text) of the scope's current entries that have no vector for this model."""
        sql = (
            "SELECT DISTINCT e.thash, e.text FROM entries e WHERE e.scope = ? AND e.vt IS NULL AND e.layer IN (?, ?)"
            " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = e.thash)"
        )
        args: tuple = (scope.key, RESIDENT, RECALL, self.model)
        if limit is not None:
            sql += " LIMIT ?"
            args += (limit,)
        return list(self.index.db.execute(sql, args))

    def embed_pending(self, scope: Scope, limit: int | None = None, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed what is missing (at most `limit` texts); returns how many were embedded."""
        gen = self.index.generation()
        if self._pending_checked.get(scope.key) == gen:
            return 0
        todo = self.pending(scope, limit)
        done = 0
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            vecs = self.embedder.embed([t for _, t in batch], kind="document")
            import numpy as np

            rows = [(self.model, h, np.asarray(v, dtype=np.float32).tobytes()) for (h, _), v in zip(batch, vecs)]
            with self.index.transaction() as db:
                db.executemany("INSERT OR REPLACE INTO vectors(model, hash, vec) VALUES (?, ?, ?)", rows)
            done += len(batch)
            if progress is not None:
                progress(done, len(todo))
        if limit is None or len(todo) < limit:
            self._pending_checked[scope.key] = gen
        return done

    def _load(self, scope: Scope) -> tuple[list[int], "np.ndarray"]:
        import numpy as np

        gen = self.index.generation()
        cached = self._matrix.get(scope.key)
        if cached is not None and cached[0] == gen:
            return cached[1], cached[2]
        rows = self.index.db.execute(
            "SELECT e.rowid, v.vec FROM entries e JOIN vectors v ON v.model = ? AND v.hash = e.thash"
            " WHERE e.scope = ? AND e.vt IS NULL AND e.layer IN (?, ?)",
            (self.model, scope.key, RESIDENT, RECALL),
        ).fetchall()
        rowids = [r[0] for r in rows]
        dim = self.embedder.dim
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim) if rows else np.zeros((0, dim), np.float32)
        self._matrix[scope.key] = (gen, rowids, mat)
        self._positions.pop(scope.key, None)
        return rowids, mat

    def query_vector(self, query: str) -> "np.ndarray":
        return self.embedder.embed([query], kind="query")[0]

    def nearest(self, scope: Scope, qvec: "np.ndarray", n: int) -> list[tuple[int, float]]:
        """(rowid, cosine) of the `n` nearest current entries of the scope."""
        return self.search(scope, qvec, n)[0]

    def search(self, scope: Scope, qvec: "np.ndarray", n: int) -> tuple[list[tuple[int, float]], float, float, int]:
        """The `n` nearest current entries as (rowid, cosine), and the mean and standard deviation
        of the query's cosine over all the scope's current entries, and their number (what dense relevance is
        measured against: scoring.dense_relevance), from one matrix product."""
        import numpy as np

        rowids, mat = self._load(scope)
        if not rowids:
            return [], 0.0, 0.0, 0
        sims = mat @ qvec.astype(np.float32)
        n = min(n, len(rowids))
        top = np.argpartition(-sims, n - 1)[:n] if n < len(rowids) else np.arange(len(rowids))
        near = sorted(((rowids[i], float(sims[i])) for i in top), key=lambda x: -x[1])
        return near, float(sims.mean()), float(sims.std()), len(rowids)

    def cosines(self, scope: Scope, qvec: "np.ndarray", rows: list[Row]) -> dict[int, float]:
        """Cosine of each candidate row with the query (0 for rows without a vector yet)."""
        import numpy as np

        if not rows:
            return {}
        rowids, mat = self._load(scope)
        pos = self._positions.get(scope.key)
        if pos is None or len(pos) != len(rowids):
            pos = self._positions[scope.key] = {r: i for i, r in enumerate(rowids)}
        out: dict[int, float] = {}
        inside = [(r.rowid, pos[r.rowid]) for r in rows if r.rowid in pos]
        if inside:
            sims = mat[[i for _, i in inside]] @ qvec.astype(np.float32)
            out = {rid: float(v) for (rid, _), v in zip(inside, sims)}
        rows = [r for r in rows if r.rowid not in out]  # archived or ended rows (as-of): from the table
        if not rows:
            return out
        marks = ",".join("?" * len(rows))
        hashes = dict(self.index.db.execute(f"SELECT rowid, thash FROM entries WHERE rowid IN ({marks})", [r.rowid for r in rows]))
        wanted = sorted(set(hashes.values()))
        marks = ",".join("?" * len(wanted))
        found = {
            h: np.frombuffer(v, dtype=np.float32)
            for h, v in self.index.db.execute(f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})", (self.model, *wanted))
        }
        for rowid, h in hashes.items():
            if h in found:
                out[rowid] = float(found[h] @ qvec)
        return out
