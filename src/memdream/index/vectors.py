"""Vectors for hybrid recall, keyed by (model fingerprint, text hash) (DESIGN section 7).

Nothing is embedded twice: a text already embedded by the same model is found by its hash,
and switching model embeds only what the new model lacks. Embedding never happens on the
write path: `embed_pending` catches up later (at recall, or `memdream index embed`).

Each process loads a scope's vectors once and then follows the index incrementally, as the
in-memory postings do (index/postings.py): a changed line is a new row (rowids only grow),
except a line a dream moved to another file, whose row changes in place and is logged in
`deleted` as a removed row is; so it reads the rows added since, the `deleted` log (rowid,
generation) and the rows it names that are still there, and the vectors embedded since (a
`vectors` counter in `meta`). A rebuild, or a cache older than the deleted log reaches, loads
again.

Search: below COARSE_MIN_VECTORS vectors (and in a process's first search, so a one-shot
command never builds codes it would use once), the exact float32 scan. Above, a coarse pass
over binary codes (one bit a dimension: the sign after the scope's mean vector is taken off,
compared by Hamming distance; 32x less memory to read than the float32 matrix) picks RERANK
candidates, re-ranked by their exact float32 cosine. Sparse vectors (a fifth or more of the
coordinates exactly zero, as hashed features give) are first turned by a fixed random
rotation: a zero coordinate's sign says nothing, and the rotation spreads each vector over
every bit (signs of random projections estimate the angle, the SimHash property); dense model
vectors keep their own coordinates, which measured better (USE, 10k facts: all of the exact
top 10 among the 400 candidates unrotated, 98.7% rotated). What dense relevance is measured
against (model/scoring.dense_relevance) stays close: the mean of the query's cosines over the
scope is exact (the query against the running sum of the vectors), their spread is measured
on a fixed sample of SPREAD_SAMPLE vectors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memdream.embed.embedder import Embedder
from memdream.index.db import Index, Row
from memdream.model.entry import RECALL, RESIDENT
from memdream.store.vault import Scope

if TYPE_CHECKING:
    import sqlite3

    import numpy as np

EMBED_BATCH = 32  # texts per embedder call
# Below this many vectors the exact scan is as fast as the coarse pass (a few hundred
# microseconds), and exact is exact.
COARSE_MIN_VECTORS = 4_000
# Codes carry one bit a dimension: below a few hundred bits the Hamming distance is too coarse
# to rank (64-d hashed vectors: 4 of the exact top 10 missed among 400 candidates of 5,000),
# and a scan of short vectors is cheap anyway (100k x 64 floats is 25 MB).
COARSE_MIN_DIM = 256
BLAS_MIN_ROWS = 20_000
RERANK = 400  # candidates of the coarse pass re-ranked by their exact cosine
SPREAD_SAMPLE = 4_096  # vectors the spread of the query's cosines is measured on (coarse pass only)
SPARSE_SHARE = 0.2  # vectors with this share of zero coordinates are rotated before the sign
_ROTATION_SEED = 20261201
_OWN_BUMPS_KEPT = 64


def store_vectors(db: "sqlite3.Connection", model: str, rows: list[tuple[str, bytes]]) -> int:
    """Insert (text hash, float32 bytes) vectors of `model` and bump the `vectors` counter in
    meta, so every process's loaded vectors notice them; returns the counter's new value."""
    db.executemany("INSERT OR REPLACE INTO vectors(model, hash, vec) VALUES (?, ?, ?)", [(model, h, v) for h, v in rows])
    db.execute("INSERT INTO meta(key, value) VALUES ('vectors', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")
    return db.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()[0]


def _least(values: "np.ndarray", k: int, rowids: "np.ndarray") -> "np.ndarray":
    """Places of the k least values, a tie at the edge going to the smaller rowid: the same
    rows whatever order the rows sit in (a row changed in place is read again after newer ones)."""
    import numpy as np

    return _up_to(values, np.partition(values, k - 1)[k - 1], k, rowids)


def _least_counted(values: "np.ndarray", k: int, rowids: "np.ndarray") -> "np.ndarray":
    """`_least` for small non-negative integers (Hamming distances): the edge read from their
    counts instead of a partition (half the time over 100k distances), the same places."""
    import numpy as np

    return _up_to(values, int(np.searchsorted(np.cumsum(np.bincount(values)), k)), k, rowids)  # the first value whose running count reaches k


def _up_to(values: "np.ndarray", edge, k: int, rowids: "np.ndarray") -> "np.ndarray":  # type: ignore[no-untyped-def]
    """Places of the values below `edge` (the k-th least value), then of those at it by rowid, k in all."""
    import numpy as np

    inside = np.flatnonzero(values < edge)
    tied = np.flatnonzero(values == edge)
    if len(inside) + len(tied) > k:
        tied = tied[np.argsort(rowids[tied], kind="stable")[: k - len(inside)]]
    return np.concatenate([inside, tied])


def _dot(mat: "np.ndarray", q: "np.ndarray") -> "np.ndarray":
    """mat @ q on this thread alone (numpy's einsum loop, no BLAS thread pool)."""
    import numpy as np

    return np.einsum("ij,j->i", mat, q)


@dataclass
class _Loaded:
    """One scope's current vectors in memory, and how far they have followed the index."""

    gen: int  # the index generation they reflect
    vgen: int  # the `vectors` counter they reflect
    hw: int  # every entry row up to this rowid has been seen
    dim: int
    n: int = 0  # rows used (alive or dead) of the arrays below
    rowids: "np.ndarray" = None  # type: ignore[assignment]  # int64 (cap,)
    mat: "np.ndarray" = None  # type: ignore[assignment]  # float32 (cap, dim)
    codes: "np.ndarray | None" = None  # uint64 (words, cap): sign bits, transposed; built on first coarse search
    rotate: bool = False  # the codes are of rotated vectors (sparse vectors)
    alive: "np.ndarray" = None  # type: ignore[assignment]  # bool (cap,)
    pos: dict[int, int] = field(default_factory=dict)  # alive rowid -> row
    missing: dict[str, list[int]] = field(default_factory=dict)  # text hash -> current rowids without a vector yet
    center: "np.ndarray" = None  # type: ignore[assignment]  # float32 (dim,): taken off before the sign
    total: "np.ndarray" = None  # type: ignore[assignment]  # float64 (dim,): sum of the alive vectors
    dead: int = 0
    sample: "tuple[np.ndarray, np.ndarray] | None" = None  # the spread's sample, as its second moments (dim, dim) and mean (dim,), float64
    sample_at: int = 0  # live count when the sample was drawn

    @property
    def live(self) -> int:
        return len(self.pos)


class VectorStore:
    def __init__(self, index: Index, embedder: Embedder) -> None:
        self.index = index
        self.embedder = embedder
        self._loaded: dict[str, _Loaded] = {}
        self._pending_checked: dict[str, int] = {}  # scope -> generation at which nothing was pending
        self._own: dict[int, tuple[int, dict[str, bytes]]] = {}  # counter before -> (after, vectors) of this process's inserts
        self.loads = 0  # full loads (read by tests: the incremental path must not reload)
        self.searches = 0
        self._rotations: dict[int, tuple] = {}
        self._lock = threading.RLock()  # the loaded arrays change in place: one search or catch-up at a time

    @property
    def model(self) -> str:
        return self.embedder.model_id

    def pending(self, scope: Scope, limit: int | None = None) -> list[tuple[str, str]]:
        """(text hash, text) of the scope's current entries that have no vector for this model.

        Read from the loaded state, which follows the index row by row and keeps what lacks a
        vector (`_Loaded.missing`): a scan of the scope for what has no vector took 1.8 s at
        100k entries, and it ran on the first recall after every write."""
        with self._lock:
            st = self._state(scope)
            todo = list(st.missing.items())[:limit] if limit is not None else list(st.missing.items())
        first = {rowids[0]: h for h, rowids in todo if rowids}
        texts: dict[str, str] = {}
        ids = list(first)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for rowid, text in self.index.db.execute(f"SELECT rowid, text FROM entries WHERE rowid IN ({','.join('?' * len(chunk))})", chunk):
                texts[first[rowid]] = text
        return [(h, texts[h]) for h, _ in todo if h in texts]

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

            rows = [(h, np.asarray(v, dtype=np.float32).tobytes()) for (h, _), v in zip(batch, vecs)]
            self.store(rows)
            done += len(batch)
            if progress is not None:
                progress(done, len(todo))
        if limit is None or len(todo) < limit:
            self._pending_checked[scope.key] = gen
        return done

    def store(self, rows: list[tuple[str, bytes]]) -> None:
        """Store (text hash, float32 bytes) vectors of this model; loaded scopes take them in
        from memory on their next search instead of reading them back."""
        with self.index.transaction() as db:
            before = (db.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone() or (0,))[0]
            after = store_vectors(db, self.model, rows)
        self._own[before] = (after, dict(rows))
        while len(self._own) > _OWN_BUMPS_KEPT:
            self._own.pop(next(iter(self._own)))

    def _stored(self, hashes: Iterable[str]) -> "dict[str, np.ndarray]":
        """The stored vectors of this model for these text hashes (the ones there are)."""
        import numpy as np

        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self.index.db.execute(f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})", (self.model, *wanted))
        return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}

    def vectors_of(self, texts: list[str]) -> "np.ndarray":
        """Document vectors of `texts` (rows in order): read where stored, the rest embedded in
        one batch and stored (keyed by text hash, so nothing is embedded twice)."""
        import numpy as np

        from memdream.index.rows import text_hash

        hashes = [text_hash(t) for t in texts]
        found = self._stored(hashes)
        todo = {h: t for h, t in zip(hashes, texts) if h not in found}
        if todo:
            vecs = self.embedder.embed(list(todo.values()), kind="document")
            new = {h: np.asarray(v, dtype=np.float32) for h, v in zip(todo, vecs)}
            self.store([(h, v.tobytes()) for h, v in new.items()])
            found.update(new)
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, 0), dtype=np.float32)

    # -- keeping up with the index
    def _meta(self) -> tuple[int, int, int]:
        meta = dict(self.index.db.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'epoch', 'vectors')"))
        return meta.get("generation", 0), meta.get("epoch", 0), meta.get("vectors", 0)

    def _state(self, scope: Scope) -> _Loaded:
        with self._lock:
            return self._caught_up(scope)

    def _caught_up(self, scope: Scope) -> _Loaded:
        gen, epoch, vgen = self._meta()
        st = self._loaded.get(scope.key)
        if st is None or epoch > st.gen or st.dim != self.embedder.dim:
            st = self._loaded[scope.key] = self._full_load(scope, gen, vgen)
            return st
        if gen != st.gen:
            self._follow_rows(st, scope, gen)
        if vgen != st.vgen:
            self._follow_vectors(st, vgen)
        if st.dead > max(1_000, st.live // 8):
            self._compact(st)
        return st

    def _full_load(self, scope: Scope, gen: int, vgen: int) -> _Loaded:
        import numpy as np

        self.loads += 1
        db = self.index.db
        hw = db.execute("SELECT max(rowid) FROM entries").fetchone()[0] or 0
        st = _Loaded(gen=gen, vgen=vgen, hw=hw, dim=self.embedder.dim)
        rows = db.execute(
            "SELECT e.rowid, e.thash, v.vec FROM entries e LEFT JOIN vectors v ON v.model = ? AND v.hash = e.thash"
            " WHERE e.scope = ? AND e.vt IS NULL AND e.layer IN (?, ?) AND e.rowid <= ?",
            (self.model, scope.key, RESIDENT, RECALL, hw),
        ).fetchall()
        have = [(r[0], r[2]) for r in rows if r[2] is not None]
        for rowid, h, vec in rows:
            if vec is None:
                st.missing.setdefault(h, []).append(rowid)
        dim = st.dim
        mat = np.frombuffer(b"".join(v for _, v in have), dtype=np.float32).reshape(len(have), dim) if have else np.zeros((0, dim), np.float32)
        self._reserve(st, len(have))
        self._put(st, np.array([r for r, _ in have], dtype=np.int64), mat)
        return st

    def _reserve(self, st: _Loaded, extra: int) -> None:
        import numpy as np

        need = st.n + extra
        cap = 0 if st.rowids is None else len(st.rowids)
        if need <= cap:
            return
        cap = max(need, cap + cap // 2, 1024)
        rowids, mat, alive = np.zeros(cap, np.int64), np.zeros((cap, st.dim), np.float32), np.zeros(cap, bool)
        if st.rowids is not None:
            rowids[: st.n], mat[: st.n], alive[: st.n] = st.rowids[: st.n], st.mat[: st.n], st.alive[: st.n]
            if st.codes is not None:
                codes = np.zeros((st.codes.shape[0], cap), np.uint64)
                codes[:, : st.n] = st.codes[:, : st.n]
                st.codes = codes
        else:
            st.total = np.zeros(st.dim, np.float64)
        st.rowids, st.mat, st.alive = rowids, mat, alive

    def _rotation(self, dim: int) -> tuple:
        """A fixed random rotation of dim coordinates (padded to a multiple of 32): a random
        permutation and signs, then random orthogonal matrices on the two axes of a
        (dim/32 x 32) grid (a Kronecker product: dim x (dim/32 + 32) operations a vector)."""
        cached = self._rotations.get(dim)
        if cached is None:
            import numpy as np

            rng = np.random.default_rng(_ROTATION_SEED)
            m = -(-dim // 32)
            perm, sign = rng.permutation(32 * m), rng.choice(np.array([-1.0, 1.0], np.float32), 32 * m)
            qa = np.linalg.qr(rng.standard_normal((m, m)))[0].astype(np.float32)
            qb = np.linalg.qr(rng.standard_normal((32, 32)))[0].astype(np.float32)
            cached = self._rotations[dim] = (m, perm, sign, qa, qb)
        return cached

    def _code(self, st: _Loaded, vecs: "np.ndarray") -> "np.ndarray":
        """Sign bits of (vecs - center), rotated for sparse vectors, 64 a word: (len(vecs), words) uint64."""
        import numpy as np

        x = vecs - st.center
        if st.rotate:
            m, perm, sign, qa, qb = self._rotation(st.dim)
            if x.shape[1] != 32 * m:
                x = np.concatenate([x, np.zeros((len(x), 32 * m - x.shape[1]), np.float32)], axis=1)
            y = np.matmul((x[:, perm] * sign).reshape(len(x), m, 32), qb)
            x = np.matmul(np.swapaxes(y, 1, 2), qa).reshape(len(x), 32 * m)
        bits = np.packbits(x > 0, axis=1)
        words = -(-bits.shape[1] // 8)
        if bits.shape[1] != words * 8:
            bits = np.concatenate([bits, np.zeros((len(vecs), words * 8 - bits.shape[1]), np.uint8)], axis=1)
        return bits.view(np.uint64)

    def _ensure_codes(self, st: _Loaded) -> "np.ndarray":
        """The codes of every row, built once: the center is the mean of the vectors alive then."""
        import numpy as np

        if st.codes is None:
            alive = st.mat[: st.n][st.alive[: st.n]]
            st.center = (st.total / max(1, st.live)).astype(np.float32)
            probe = alive[np.linspace(0, len(alive) - 1, min(512, len(alive))).astype(np.int64)]
            st.rotate = bool(probe.size) and float(np.mean(probe == 0)) >= SPARSE_SHARE
            first = self._code(st, st.mat[:1])
            codes = np.zeros((first.shape[1], len(st.rowids)), np.uint64)
            for a in range(0, st.n, 8192):
                codes[:, a : min(st.n, a + 8192)] = self._code(st, st.mat[a : min(st.n, a + 8192)]).T
            st.codes = codes
        return st.codes

    def _put(self, st: _Loaded, rowids: "np.ndarray", vecs: "np.ndarray") -> None:
        import numpy as np

        k = len(rowids)
        if not k:
            return
        self._reserve(st, k)
        a, b = st.n, st.n + k
        st.rowids[a:b], st.mat[a:b], st.alive[a:b] = rowids, vecs, True
        if st.codes is not None:
            st.codes[:, a:b] = self._code(st, vecs).T
        st.total += vecs.sum(axis=0, dtype=np.float64)
        for i, r in enumerate(rowids.tolist()):
            st.pos[r] = a + i
        st.n = b

    def _follow_rows(self, st: _Loaded, scope: Scope, gen: int) -> None:
        import numpy as np

        db = self.index.db
        gone = [r for (r,) in db.execute("SELECT rowid FROM deleted WHERE gen > ?", (st.gen,))]
        # The slots of the rows gone, by their vector: a line rewritten with the same text (a
        # recall count folded into it) comes back as a new row with the same vector and takes
        # its slot again. Marking the slot dead and adding the row anew left 1,787 dead slots
        # after 200 recalls at 100k, and compacting them rebuilds the whole scope's codes.
        freed: dict[bytes, list[int]] = {}
        if gone:
            gone_set = set(gone)
            for r in gone:
                p = st.pos.pop(r, None)
                if p is not None:
                    freed.setdefault(st.mat[p].tobytes(), []).append(p)
            if st.missing:
                for h in list(st.missing):
                    left = [r for r in st.missing[h] if r not in gone_set]
                    if left:
                        st.missing[h] = left
                    else:
                        del st.missing[h]
        hw = db.execute("SELECT max(rowid) FROM entries").fetchone()[0] or 0
        # Rows the log names that are still there changed in place (a line a dream moved to
        # another file, index/sync.py apply_updates): taken in again if current.
        again = sorted(r for r in gone if r <= st.hw)
        rows = []
        for i in range(0, len(again), 500):
            chunk = again[i : i + 500]
            rows += db.execute(
                "SELECT e.rowid, e.thash, v.vec FROM entries e LEFT JOIN vectors v ON v.model = ? AND v.hash = e.thash"
                f" WHERE e.rowid IN ({','.join('?' * len(chunk))}) AND e.scope = ? AND e.vt IS NULL AND e.layer IN (?, ?)",
                (self.model, *chunk, scope.key, RESIDENT, RECALL),
            ).fetchall()
        if hw > st.hw:
            rows += db.execute(
                "SELECT e.rowid, e.thash, v.vec FROM entries e LEFT JOIN vectors v ON v.model = ? AND v.hash = e.thash"
                " WHERE e.rowid > ? AND e.rowid <= ? AND e.scope = ? AND e.vt IS NULL AND e.layer IN (?, ?)",
                (self.model, st.hw, hw, scope.key, RESIDENT, RECALL),
            ).fetchall()
        if rows:
            have = []
            for rowid, h, vec in rows:
                if vec is None:
                    st.missing.setdefault(h, []).append(rowid)
                elif rowid not in st.pos:
                    slots = freed.get(vec)
                    if slots:  # the same vector as a row just gone: its slot, alive as it was
                        p = slots.pop()
                        st.pos[rowid] = p
                        st.rowids[p] = rowid
                    else:
                        have.append((rowid, vec))
            if have:
                self._put(st, np.array([r for r, _ in have], np.int64), np.frombuffer(b"".join(v for _, v in have), np.float32).reshape(len(have), st.dim))
        for slots in freed.values():  # gone for good
            for p in slots:
                st.alive[p] = False
                st.total -= st.mat[p]
                st.dead += 1
        st.hw = max(st.hw, hw)
        st.gen = gen

    def _follow_vectors(self, st: _Loaded, vgen: int) -> None:
        """Take in vectors embedded since for rows that had none: from this process's own
        inserts when they account for every change of the counter, else from the table."""
        import numpy as np

        if st.missing:
            found: dict[str, bytes] = {}
            v, chain = st.vgen, True
            while v != vgen:
                step = self._own.get(v)
                if step is None:
                    chain = False
                    break
                v, vecs = step
                found.update((h, b) for h, b in vecs.items() if h in st.missing)
            if not chain:
                found = {}
                hashes = list(st.missing)
                for i in range(0, len(hashes), 500):
                    chunk = hashes[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    found.update(self.index.db.execute(f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})", (self.model, *chunk)))
            taken = sorted((r, b) for h, b in found.items() for r in st.missing.pop(h, []) if r not in st.pos)
            rowids, blobs = [r for r, _ in taken], [b for _, b in taken]  # in rowid order, as a full load puts them
            if rowids:
                self._put(st, np.array(rowids, np.int64), np.frombuffer(b"".join(blobs), np.float32).reshape(len(rowids), st.dim))
        st.vgen = vgen

    def _compact(self, st: _Loaded) -> None:
        """Drop dead rows; the codes are built again (their center from the vectors now alive)."""
        import numpy as np

        keep = np.flatnonzero(st.alive[: st.n])
        rowids, mat = st.rowids[keep].copy(), st.mat[keep].copy()
        st.rowids = st.mat = st.codes = st.alive = None  # type: ignore[assignment]
        st.n, st.dead, st.pos, st.sample = 0, 0, {}, None
        self._reserve(st, len(rowids))
        self._put(st, rowids, mat)

    def _spread_sample(self, st: _Loaded) -> "tuple[np.ndarray, np.ndarray]":
        """A fixed sample of the alive vectors (evenly spaced rows), drawn again when the scope
        has grown or shrunk by a quarter since, kept as its second moments and mean: the spread
        of a query's cosines over the sample, sqrt(mean((x . q - m)^2)) = sqrt(q S q - 2 m (x_mean . q)
        + m^2), is then a product of the query with a dim x dim matrix, not with every sampled
        vector (0.02 against 0.26 ms at 4,096 x 384)."""
        import numpy as np

        if st.sample is None or abs(st.live - st.sample_at) * 4 > st.sample_at:
            alive = np.flatnonzero(st.alive[: st.n])
            pick = alive[np.linspace(0, len(alive) - 1, min(SPREAD_SAMPLE, len(alive))).astype(np.int64)]
            x = st.mat[pick].astype(np.float64)
            st.sample, st.sample_at = ((x.T @ x) / len(x), x.mean(axis=0)), st.live
        return st.sample

    def matrix(self, scope: Scope) -> tuple[list[int], "np.ndarray"]:
        """(rowids, vectors) of the scope's current entries with a vector, up to date: a copy
        (the dream phases read the matrix whole)."""
        with self._lock:
            st = self._state(scope)
            if st.dead:
                self._compact(st)
            return st.rowids[: st.n].tolist(), st.mat[: st.n].copy()

    def query_vector(self, query: str) -> "np.ndarray":
        return self.embedder.embed([query], kind="query")[0]

    def nearest(self, scope: Scope, qvec: "np.ndarray", n: int) -> list[tuple[int, float]]:
        """(rowid, cosine) of the `n` nearest current entries of the scope."""
        return self.search(scope, qvec, n)[0]

    def search(self, scope: Scope, qvec: "np.ndarray", n: int) -> tuple[list[tuple[int, float]], float, float, int]:
        """The `n` nearest current entries as (rowid, cosine), and the mean and standard deviation
        of the query's cosine over all the scope's current entries, and their number (what dense
        relevance is measured against: scoring.dense_relevance)."""
        with self._lock:
            return self._search(scope, qvec, n)

    def _search(self, scope: Scope, qvec: "np.ndarray", n: int) -> tuple[list[tuple[int, float]], float, float, int]:
        import numpy as np

        st = self._state(scope)
        live = st.live
        if not live or n <= 0:
            return [], 0.0, 0.0, live
        q = np.asarray(qvec, dtype=np.float32)
        self.searches += 1
        if live < COARSE_MIN_VECTORS or st.dim < COARSE_MIN_DIM or (self.searches == 1 and st.codes is None):  # the exact scan
            # einsum below BLAS_MIN_ROWS, not BLAS: OpenBLAS's threads made a 4k x 384 product
            # 50x slower with the other core busy, and one thread scans this many in a
            # millisecond or two. Larger scans (a process's first search, short vectors, or the
            # coarse pass turned off: the baseline bench/recall_latency.py measures) use BLAS.
            sims = _dot(st.mat[: st.n], q) if st.n < BLAS_MIN_ROWS else st.mat[: st.n] @ q
            if st.dead:
                sims = np.where(st.alive[: st.n], sims, -np.inf)
            live_sims = sims[st.alive[: st.n]] if st.dead else sims
            mean, std = float(live_sims.mean()), float(live_sims.std())
            cand = np.arange(st.n)
            csims = sims
        else:  # the coarse pass over the codes, then the exact cosine of its best RERANK
            codes = self._ensure_codes(st)
            qcode = self._code(st, q[None, :])[0]
            dist = np.bitwise_count(codes[0, : st.n] ^ qcode[0]).astype(np.uint16)
            for w in range(1, len(qcode)):
                dist += np.bitwise_count(codes[w, : st.n] ^ qcode[w])
            if st.dead:
                dist[~st.alive[: st.n]] = np.iinfo(np.uint16).max
            r = min(max(RERANK, n), live)
            cand = _least_counted(dist, r, st.rowids[: st.n]) if r < st.n else np.flatnonzero(st.alive[: st.n])
            csims = _dot(st.mat[cand], q)
            mean = float(st.total @ q) / live
            moments, center = self._spread_sample(st)
            q64 = q.astype(np.float64)
            std = float(np.sqrt(max(0.0, float(q64 @ moments @ q64) - 2.0 * mean * float(center @ q64) + mean * mean)))
        k = min(n, len(cand))
        top = _least(-csims, k, st.rowids[cand]) if k < len(cand) else np.arange(len(cand))
        near = sorted(((int(st.rowids[cand[i]]), float(csims[i])) for i in top if np.isfinite(csims[i])), key=lambda x: (-x[1], x[0]))
        return near, mean, std, live

    def cosines(self, scope: Scope, qvec: "np.ndarray", rows: list[Row]) -> dict[int, float]:
        """Cosine of each candidate row with the query (0 for rows without a vector yet)."""
        import numpy as np

        if not rows:
            return {}
        out: dict[int, float] = {}
        with self._lock:
            st = self._state(scope)
            pos = st.pos
            inside = [(r.rowid, pos[r.rowid]) for r in rows if r.rowid in pos]
            if inside:
                sims = _dot(st.mat[[i for _, i in inside]], np.asarray(qvec, dtype=np.float32))
                out = {rid: float(v) for (rid, _), v in zip(inside, sims)}
        rows = [r for r in rows if r.rowid not in out]  # archived or ended rows (as-of): from the table
        if not rows:
            return out
        marks = ",".join("?" * len(rows))
        hashes = dict(self.index.db.execute(f"SELECT rowid, thash FROM entries WHERE rowid IN ({marks})", [r.rowid for r in rows]))
        found = self._stored(hashes.values())
        for rowid, h in hashes.items():
            if h in found:
                out[rowid] = float(found[h] @ qvec)
        return out
