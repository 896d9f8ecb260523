"""Embeddings on the team server: stored once in the database, scored exactly in the process.

A scope's vectors live in `memdream_vectors` (a `real[]` per scope, model and text hash):
derived like the index, computed once by whichever process recalls first, then shared by
every process. A recall with an embedder embeds what is pending (at most EMBED_AT_RECALL
texts, as on a folder vault), then scores the query against every current entry's vector:
the exact cosine, so the nearest entries, and the mean and spread dense relevance is
measured against, are those a folder vault computes. A process keeps the vectors it fetched
(by text hash: a vector never changes), so each is read from the database once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdream.model.entry import RECALL, RESIDENT
from memdream.model.scoring import DEFAULT_COSINE_WEIGHT, dense_weight
from memdream.recall.search import CANDIDATES, Dense
from memdream.store.format import parse_line
from memdream.store.vault import Scope

if TYPE_CHECKING:
    from memdream.embed.embedder import Embedder
    from memdream.team.fulltext import PgIndex

EMBED_AT_RECALL = 256  # as engine/recall.py: a recall embeds at most this many new texts first
EMBED_BATCH = 64


def cosine_weight(embedder: "Embedder", query: str) -> float:
    latin = getattr(embedder, "cosine_weight", DEFAULT_COSINE_WEIGHT)
    return dense_weight(query, latin, getattr(embedder, "cosine_weight_cjk", latin))


class PgVectors:
    """One process's handle on the database's embeddings of one model."""

    def __init__(self, embedder: "Embedder") -> None:
        self.embedder = embedder
        self.model = embedder.model_id
        self._vec: dict[str, Any] = {}  # text hash -> float32 vector (vectors never change)

    def embed_pending(self, conn: Any, scope: Scope, limit: int = EMBED_AT_RECALL) -> int:
        """Embed the scope's current texts that have no vector for this model; returns how many."""
        import numpy as np

        todo = conn.execute(
            "SELECT DISTINCT ON (l.thash) l.thash, l.line, l.layer FROM memdream_lines l "
            "WHERE l.scope = %s AND l.thash IS NOT NULL AND l.vt IS NULL AND l.layer = ANY(%s) "
            "AND NOT EXISTS (SELECT 1 FROM memdream_vectors v WHERE v.scope = l.scope AND v.model = %s AND v.thash = l.thash) LIMIT %s",
            (scope.key, [RESIDENT, RECALL], self.model, limit),
        ).fetchall()
        done = 0
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            vecs = self.embedder.embed([parse_line(line, layer).text for _, line, layer in batch], kind="document")
            rows = [(scope.key, self.model, th, np.asarray(v, dtype=np.float32).tolist()) for (th, _, _), v in zip(batch, vecs)]
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memdream_vectors (scope, model, thash, vec) VALUES (%s, %s, %s, %s::real[]) ON CONFLICT DO NOTHING", rows
                )
            done += len(batch)
        return done

    def dense(self, conn: Any, index: "PgIndex", scope: Scope, query: str, layers: tuple[str, ...]) -> Dense | None:
        """The dense side of one recall over the scope's current entries (None when none has a vector)."""
        import numpy as np

        current = [r[0] for r in conn.execute(
            "SELECT DISTINCT thash FROM memdream_lines WHERE scope = %s AND thash IS NOT NULL AND vt IS NULL AND layer = ANY(%s)",
            (scope.key, [RESIDENT, RECALL]),
        )]  # fmt: skip
        missing = [th for th in current if th not in self._vec]
        for i in range(0, len(missing), 5000):
            for th, vec in conn.execute(
                "SELECT thash, vec FROM memdream_vectors WHERE scope = %s AND model = %s AND thash = ANY(%s)", (scope.key, self.model, missing[i : i + 5000])
            ):
                self._vec[th] = np.asarray(vec, dtype=np.float32)
        have = [th for th in current if th in self._vec]
        if not have:
            return None
        mat = np.stack([self._vec[th] for th in have])
        q = np.asarray(self.embedder.embed([query], kind="query")[0], dtype=np.float32)
        sims = mat @ q
        sim_of = dict(zip(have, sims.tolist()))
        k = min(CANDIDATES, len(have))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(have) else np.arange(len(have))
        nearest = index.rows_by_hash([have[i] for i in top], layers)

        def cosines(rows: list) -> dict[int, float]:  # type: ignore[type-arg]
            return {r.rowid: sim_of.get(index.thash.get(r.rowid, ""), 0.0) for r in rows}

        return Dense(cosines, [row for row, _ in nearest], float(sims.mean()), float(sims.std()), len(have))
