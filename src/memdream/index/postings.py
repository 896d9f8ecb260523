"""An in-process copy of the keyword index, for BM25 over all query terms in about a
millisecond at 100k entries (FTS5 must score every match of every term in SQL).

It is a cache of the SQLite index, never a source of truth: it loads the entries' tokens
once, then catches up on each use from rows added since (rowids only grow) and from the
`deleted` log (rowid, generation) of rows removed or changed in place (those still there are
read again). A rebuild, or a cache too old for the log, reloads.
Long-lived processes (an MCP server, a chat, a benchmark) use it; a one-shot command
never pays for the load (see Index.keyword_candidates).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
import sqlite3
from typing import TYPE_CHECKING, Protocol

from memdream.model.scoring import BM25_B, BM25_K1

if TYPE_CHECKING:
    import numpy as np


class Source(Protocol):
    """What the postings read: the index's connection (an `Index`, which builds them)."""

    db: sqlite3.Connection

_LAYER_CODES = {"resident": 1, "recall": 2, "archive": 3}


class Postings:
    def __init__(self, index: Source) -> None:
        self.index = index
        self.gen = -1
        self.epoch = -1
        self.max_rowid = 0
        self.rowids = array("q")
        self.scope = array("i")
        self.layer = array("b")
        self.current = array("b")
        self.dl = array("i")
        self.alive = bytearray()
        self.pos: dict[int, int] = {}
        # term -> (doc positions, term frequencies); a term in one doc: position << 8 | frequency
        self.terms: dict[str, tuple[array, array] | int] = {}
        self.scopes: dict[str, int] = {}
        self._np_cache: dict[str, tuple[int, "np.ndarray", "np.ndarray"]] = {}

    # -- keeping up with SQLite
    def refresh(self, reload: bool = True) -> bool:
        """Catch up with the index; False (and nothing read) when only a full load would (the
        index was rebuilt, or its deleted log no longer reaches back) and `reload` is off."""
        db = self.index.db
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'epoch')"))
        gen, epoch = meta.get("generation", 0), meta.get("epoch", 0)
        if gen == self.gen:
            return True
        if epoch > self.gen:  # rebuilt, or the deleted log no longer reaches back to us
            if self.gen >= 0 and not reload:
                return False
            self.__init__(self.index)  # type: ignore[misc]
        if self.gen >= 0:
            logged = [rid for (rid,) in db.execute("SELECT rowid FROM deleted WHERE gen > ?", (self.gen,))]
            for rid in logged:
                p = self.pos.pop(rid, None)
                if p is not None:
                    self.alive[p] = 0
            # A row the log names that is still there was changed in place (a line a dream
            # moved to another file, index/sync.py apply_updates): read it again.
            again = sorted(r for r in logged if r <= self.max_rowid)
            for i in range(0, len(again), 500):
                chunk = again[i : i + 500]
                self._add(
                    db.execute(
                        "SELECT e.rowid, e.scope, e.layer, e.vt IS NULL, f.tok FROM entries e JOIN entries_fts f ON f.rowid = e.rowid"
                        f" WHERE e.rowid IN ({','.join('?' * len(chunk))}) ORDER BY e.rowid",
                        chunk,
                    )
                )
        # The rows added since: entries first, each row's tokens looked up by rowid (CROSS JOIN
        # keeps that order; SQLite's own choice scanned the whole full-text table, 39 ms at
        # 100k entries on the first recall after every write). A first load reads every row,
        # where the scan is the faster way round.
        join = "CROSS JOIN" if self.max_rowid else "JOIN"
        self._add(
            db.execute(
                f"SELECT e.rowid, e.scope, e.layer, e.vt IS NULL, f.tok FROM entries e {join} entries_fts f ON f.rowid = e.rowid"
                " WHERE e.rowid > ? ORDER BY e.rowid",
                (self.max_rowid,),
            )
        )
        self.gen, self.epoch = gen, epoch
        return True

    def _add(self, rows) -> None:  # type: ignore[no-untyped-def]
        self._append_rows(rows, self.pos)

    def _append_rows(self, rows, pos: dict[int, int] | None = None) -> None:  # type: ignore[no-untyped-def]
        """Add rows (rowid, scope, layer, current, tokens) and their postings, each at the next
        position (slot); with `pos`, record each rowid's position there and follow the highest
        rowid (a row read again, changed in place, gets a new position). One loop with its
        lookups held locally: the first load of 100k rows runs it 100k times."""
        rowids, scope_col, layer_col, current_col, dl, alive = self.rowids, self.scope, self.layer, self.current, self.dl, self.alive
        scopes, terms, codes = self.scopes, self.terms, _LAYER_CODES
        p = len(rowids)
        top = self.max_rowid
        for rowid, scope, layer, current, tok in rows:
            rowids.append(rowid)
            sid = scopes.get(scope)
            if sid is None:
                sid = scopes[scope] = len(scopes)
            scope_col.append(sid)
            layer_col.append(codes.get(layer, 0))
            current_col.append(1 if current else 0)
            words = tok.split()
            dl.append(len(words))
            alive.append(1)
            for w, c in (Counter(words).items() if len(words) != len(set(words)) else ((w, 1) for w in words)):
                entry = terms.get(w)
                if entry is None:  # a term in one row (most numbers and names): an int, not two arrays
                    terms[w] = p << 8 | (c if c < 255 else 255)
                elif entry.__class__ is int:
                    terms[w] = (array("i", [entry >> 8, p]), array("B", [entry & 255, c if c < 255 else 255]))
                else:
                    entry[0].append(p)
                    entry[1].append(c if c < 255 else 255)
            if pos is not None:
                pos[rowid] = p
                if rowid > top:
                    top = rowid
            p += 1
        if pos is not None:
            self.max_rowid = top

    # -- querying
    def _term_arrays(self, term: str) -> tuple["np.ndarray", "np.ndarray"] | None:
        import numpy as np

        entry = self.terms.get(term)
        if entry is None:
            return None
        if isinstance(entry, int):
            return np.array([entry >> 8], dtype=np.int32), np.array([entry & 255], dtype=np.float32)
        cached = self._np_cache.get(term)
        if cached is not None and cached[0] == len(entry[0]):
            return cached[1], cached[2]
        pos = np.frombuffer(entry[0], dtype=np.int32).copy()
        tf = np.frombuffer(entry[1], dtype=np.uint8).astype(np.float32)
        self._np_cache[term] = (len(entry[0]), pos, tf)
        return pos, tf

    def top(
        self, scope_key: str, terms: list[str], df: dict[str, int], n_docs: int, avgdl: float, layers: tuple[str, ...], limit: int,
        weights: dict[str, float] | None = None, ended: int = 0,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """(rowid, BM25) of the best `limit` current entries of the scope for `terms`, and of
        the best `ended` entries no longer valid (scored in the same pass)."""
        import numpy as np

        sid = self.scopes.get(scope_key)
        if sid is None or not terms or n_docs <= 0:
            return [], []
        ndocs = len(self.rowids)
        dl = np.frombuffer(self.dl, dtype=np.int32)
        at: list[np.ndarray] = []
        part: list[np.ndarray] = []
        for t in dict.fromkeys(terms):
            arrs = self._term_arrays(t)
            if arrs is None:
                continue
            pos, tf = arrs
            n = df.get(t, len(pos))
            idf = (weights or {}).get(t, 1.0) * math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
            norm = BM25_K1 * (1 - BM25_B + BM25_B * dl[pos] / (avgdl or 1.0))
            at.append(pos)
            part.append(idf * tf * (BM25_K1 + 1) / (tf + norm))
        if not at:
            return [], []
        # Every term's part summed per doc in one pass (a doc no term holds sums to 0): adding
        # each term's part into a score array, and marking the docs found in a mask beside it,
        # wrote to random places of two arrays as long as the scope once per posting, which was
        # most of a search at 100k entries and more (1.69 -> 1.2 ms a query at 100k, the same hits).
        scores = np.bincount(np.concatenate(at), weights=np.concatenate(part), minlength=ndocs)
        hit = np.flatnonzero(scores > 0)
        if hit.size == 0:
            return [], []
        ok = (
            (np.frombuffer(self.alive, dtype=np.uint8)[hit] == 1)
            & (np.frombuffer(self.scope, dtype=np.int32)[hit] == sid)
            & np.isin(np.frombuffer(self.layer, dtype=np.int8)[hit], [_LAYER_CODES[x] for x in layers])
        )
        hit = hit[ok]
        current = np.frombuffer(self.current, dtype=np.int8)[hit] == 1

        def best(h: "np.ndarray", n: int) -> list[tuple[int, float]]:
            """The best n of positions h by score, ties by `_tie_keys` (whatever the positions'
            order: a row read again after a change in place sits after newer ones)."""
            if n <= 0 or h.size == 0:
                return []
            s = scores[h]
            if h.size > n:
                last = -np.partition(-s, n - 1)[n - 1]  # the n-th best score
                above, tied = h[s > last], h[s == last]
                keys = self._tie_keys(tied)
                if tied.size > n - above.size:  # of those tied with the n-th, the first by key
                    pick = np.argpartition(keys, n - above.size - 1)[: n - above.size]
                    tied, keys = tied[pick], keys[pick]
                order = np.concatenate([above[np.lexsort((self._tie_keys(above), -scores[above]))], tied[np.argsort(keys, kind="stable")]])
            else:
                order = h[np.lexsort((self._tie_keys(h), -s))]
            return [(int(self.rowids[i]), float(scores[i])) for i in order]

        return best(hit[current], limit), best(hit[~current], ended)

    def _tie_keys(self, h: "np.ndarray") -> "np.ndarray":
        """What orders positions h among equal scores: their rowids."""
        import numpy as np

        return np.frombuffer(self.rowids, dtype=np.int64)[h]
