"""The database's own full-text index: the same tokens, statistics and BM25 as the SQLite index.

Each entry line of a memory file carries, beside its verbatim text, the columns recall scores
with, made by the same pure function the SQLite index uses (index/rows.py: memdream's
Chinese-aware tokens, validity, type, hits, salience), and its tokens as a tsvector of
literal lexemes (never re-parsed by a text-search configuration) under a GIN index. Each
scope keeps its document frequencies and totals, updated in the write's transaction.

`PgIndex` answers the three questions `recall.search.recall` asks of an index (candidates
with BM25, document frequencies, corpus statistics) from these rows, so recall on the
database runs the same scoring code as on a folder vault, and the same vault gives the same
ranking on both (tests/test_team.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from memdream.index.db import MAX_QUERY_TERMS, Row
from memdream.index.rows import entry_tokens, item, prepared_row
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT
from memdream.model.scoring import BM25_B, BM25_K1, idf, query_weights
from memdream.model.tokens import query_terms
from memdream.store.format import Line
from memdream.store.vault import Scope

LEXEME_MAX = 2000  # bytes; PostgreSQL refuses a lexeme over 2047 (such a token is left out of the tsvector only)
POSITION_MAX = 16383  # PostgreSQL's largest position in a tsvector
MATCH_CAP = 2000  # entries a query's matching terms may hold before its commoner terms only score, not match
POSITIONS_MAX = 256  # and the most positions it keeps per lexeme: BM25 sees tf <= 256


def row_id(path: str, pos: int) -> int:
    """A stable id for a stored line (recall keys candidates by rowid: the keyword and the dense
    side must give one line the same id)."""
    import hashlib

    return (int.from_bytes(hashlib.blake2b(path.encode("utf-8"), digest_size=5).digest(), "big") << 22) | (pos & 0x3FFFFF)


def layer_of(rel: str) -> str:
    if rel.endswith("/MEMORY.md"):
        return RESIDENT
    return ARCHIVE if "/memory/.archive/entries/" in rel else RECALL


def line_columns(rel: str, raw: str) -> tuple[Any, ...]:
    """(entry_id, subject, type, valid_to, layer, etype, vf, vt, ca, la, hits, salience, tok,
    thash) for one line of a memory file; all None for a line that is not an entry."""
    ln = Line(raw)
    if not ln.is_entry or ln.entry is None:
        return (None,) * 14
    layer = layer_of(rel)
    lh, line, e = item(raw, ln.entry, layer)
    p = prepared_row(lh, line, e, entry_tokens(e))
    # p: lh, raw, id, type, subject, sup, text, vf, vt, ca, la, hits, pinned, salience, ntok, thash, tok
    return (
        e.id or None, e.subject or None, e.type or None, e.valid_to.isoformat() if e.valid_to else None,
        layer, p[3], p[7], p[8], p[9], p[10], p[11], p[13], p[16], p[15],
    )  # fmt: skip


def tsv_literal(tok: str | None) -> str | None:
    """A tsvector in its literal form: each token quoted (never re-parsed by a text-search
    configuration) with its positions, so a term's frequency in the line is known to SQL."""
    if tok is None:
        return None
    where: dict[str, list[str]] = {}
    for n, t in enumerate(tok.split(), 1):
        if len(t) > LEXEME_MAX // 4 and len(t.encode("utf-8")) > LEXEME_MAX:
            continue
        ps = where.get(t)
        if ps is None:
            where[t] = [str(min(n, POSITION_MAX))]
        elif len(ps) < POSITIONS_MAX:
            ps.append(str(min(n, POSITION_MAX)))
    return " ".join(f"{quote(t)}:{','.join(ps)}" for t, ps in where.items())


def quote(t: str) -> str:
    if "'" in t or "\\" in t:
        t = t.replace("\\", "\\\\").replace("'", "''")
    return f"'{t}'"


def counts(toks: Iterable[str | None]) -> tuple[Counter[str], int, int]:
    """(term -> entries holding it, entries, tokens) of some entry rows' tokens."""
    df: Counter[str] = Counter()
    n = total = 0
    for tok in toks:
        if tok is None:
            continue
        words = tok.split()
        df.update(set(words))
        n += 1
        total += len(words)
    return df, n, total


def negated(df: Counter[str]) -> Counter[str]:
    return Counter({t: -n for t, n in df.items()})


def apply_counts(conn: Any, scope: Scope, df: Counter[str], entries: int, tokens: int) -> None:
    """Add (or, with negative numbers, take away) entry rows to the scope's statistics."""
    df = Counter({t: n for t, n in df.items() if n})
    if df:
        terms, ns = zip(*sorted(df.items()))
        conn.execute(
            "INSERT INTO memdream_terms (scope, term, df) SELECT %s, t, n FROM unnest(%s::text[], %s::integer[]) AS x(t, n) "
            "ON CONFLICT (scope, term) DO UPDATE SET df = memdream_terms.df + EXCLUDED.df",
            (scope.key, list(terms), list(ns)),
        )
        if any(n < 0 for n in ns):
            conn.execute("DELETE FROM memdream_terms WHERE scope = %s AND term = ANY(%s) AND df <= 0", (scope.key, [t for t, n in df.items() if n < 0]))
    if entries or tokens:
        conn.execute(
            "INSERT INTO memdream_scope_stats (scope, entries, tokens) VALUES (%s, %s, %s) "
            "ON CONFLICT (scope) DO UPDATE SET entries = memdream_scope_stats.entries + EXCLUDED.entries, tokens = memdream_scope_stats.tokens + EXCLUDED.tokens",
            (scope.key, entries, tokens),
        )


def delete_lines(conn: Any, scope: Scope, rel: str, positions: list[int]) -> None:
    """Remove these stored lines of one file, their postings, and their share of the scope's
    statistics."""
    if not positions:
        return
    conn.execute("DELETE FROM memdream_postings WHERE scope = %s AND path = %s AND pos = ANY(%s)", (scope.key, rel, positions))
    gone = conn.execute("DELETE FROM memdream_lines WHERE scope = %s AND path = %s AND pos = ANY(%s) RETURNING tok", (scope.key, rel, positions)).fetchall()
    df, n, total = counts(t for (t,) in gone)
    apply_counts(conn, scope, negated(df), -n, -total)


def insert_lines(conn: Any, scope: Scope, rel: str, lines: list[tuple[int, str]]) -> None:
    """Store these (position, line) of one file with the columns derived from each line, its
    postings, and its share of the scope's statistics (no stored line may be at a position)."""
    if not lines:
        return
    rows = [(pos, line, *line_columns(rel, line)) for pos, line in lines]
    cols = list(zip(*rows))
    words = [t.split() if t is not None else None for t in cols[14]]  # each line's tokens
    conn.execute(
        "INSERT INTO memdream_lines (scope, path, pos, line, entry_id, subject, type, valid_to, layer, etype, vf, vt, ca, la, hits, salience, tok, thash, ntok, tsv) "
        "SELECT %s, %s, pos, line, eid, subj, typ, vto, lay, ety, vf, vt, ca, la, hits, sal, tok, th, "
        "ntok, lex::tsvector "
        "FROM unnest(%s::integer[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
        "%s::float8[], %s::float8[], %s::float8[], %s::float8[], %s::integer[], %s::float8[], %s::text[], %s::text[], %s::integer[], %s::text[]) "
        "AS x(pos, line, eid, subj, typ, vto, lay, ety, vf, vt, ca, la, hits, sal, tok, th, ntok, lex)",
        (scope.key, rel, *[list(c) for c in cols], [len(w) if w is not None else None for w in words], [tsv_literal(t) for t in cols[14]]),
    )
    df, n, total = counts(cols[14])
    apply_counts(conn, scope, df, n, total)
    # One posting per (term, line), with the term's frequency there and the line's length,
    # layer and validity: what recall scores and filters its matches with.
    post = [
        (t, pos, tf, len(ws), layer, vt is None)
        for pos, ws, layer, vt in zip(cols[0], words, cols[6], cols[9])
        if ws is not None
        for t, tf in Counter(ws).items()
    ]
    if post:
        conn.execute(
            "INSERT INTO memdream_postings (scope, term, path, pos, tf, ntok, layer, cur) SELECT %s, t, %s, p, tf, n, lay, cur "
            "FROM unnest(%s::text[], %s::integer[], %s::integer[], %s::integer[], %s::text[], %s::boolean[]) AS x(t, p, tf, n, lay, cur)",
            (scope.key, rel, *[list(c) for c in zip(*post)]),
        )


def stale_lines(conn: Any, scope: Scope) -> tuple[list[tuple[str, int, str]], list[str | None]]:
    """(path, position, line) of the scope's stored lines whose derived columns are not what
    this memdream derives from the line (an older tokenizer wrote them), and every stored
    line's tokens as read (for a count, without reading the lines twice). The caller has set
    the scope for row-level security."""
    rows = conn.execute("SELECT path, pos, line, tok FROM memdream_lines WHERE scope = %s ORDER BY path, pos", (scope.key,)).fetchall()
    return [(path, pos, line) for path, pos, line, tok in rows if line_columns(path, line)[12] != tok], [tok for *_, tok in rows]


def rederive(conn: Any, scope: Scope, stale: list[tuple[str, int, str]]) -> None:
    """Derive these lines' columns, postings and statistics again from the lines themselves
    (the lines, the truth, are not changed)."""
    by_path: dict[str, list[tuple[int, str]]] = {}
    for path, pos, line in stale:
        by_path.setdefault(path, []).append((pos, line))
    for path, lines in sorted(by_path.items()):
        delete_lines(conn, scope, path, [pos for pos, _ in lines])
        insert_lines(conn, scope, path, lines)
    if by_path:  # a new version for the scope and these files: a process's copy of them follows (team/postings.py)
        version = conn.execute("UPDATE memdream_scopes SET version = version + 1 WHERE scope = %s RETURNING version", (scope.key,)).fetchone()
        if version is not None:
            conn.execute("UPDATE memdream_files SET version = %s WHERE scope = %s AND path = ANY(%s)", (version[0], scope.key, sorted(by_path)))


def rederive_all(conn: Any) -> None:
    """Every scope's stale lines derived again (a schema migration, when memdream's tokens
    change), scope by scope under its row-level security setting."""
    for (key,) in conn.execute("SELECT scope FROM memdream_scopes ORDER BY scope").fetchall():
        scope = Scope.from_key(key)
        conn.execute("SELECT set_config('memdream.scope', %s, true)", (key,))
        rederive(conn, scope, stale_lines(conn, scope)[0])
    conn.execute("SELECT set_config('memdream.scope', '', true)")


class PgIndex:
    """The index questions recall asks, answered from one scope's rows in the database. One
    index per snapshot (a recall's REPEATABLE READ transaction): the statistics it has read
    are kept for its life."""

    def __init__(self, conn: Any, scope: Scope, postings: "tuple[Any, int] | None" = None) -> None:
        self.conn = conn
        self.scope = scope
        # (the scope's in-process postings, the version they were brought to in this
        # connection's snapshot): team/postings.py, for a large scope's keyword candidates
        self.postings = postings
        self._df: dict[str, int] = {}  # term -> its document frequency, as read (0: in no line)
        self._stats: tuple[int, float] | None = None
        self.thash: dict[int, str] = {}  # row id -> text hash, of the rows handed out (for the dense side)
        self.tok: dict[int, str] = {}  # row id -> indexed tokens, of the rows handed out
        self.where: dict[int, tuple[str, int]] = {}  # row id -> (path, position), of the rows handed out

    def _hand_out(self, path: str, pos: int, layer: str, line: str, etype: str, vf: Any, vt: Any, ca: Any, la: Any, hits: int, sal: float, tok: str, th: str) -> Row:
        row = Row(row_id(path, pos), path, self.scope.key, layer, line, etype, vf, vt, ca, la, hits, sal, tok)
        self.thash[row.rowid] = th
        self.tok[row.rowid] = tok
        self.where[row.rowid] = (path, pos)
        return row

    def document_frequency(self, terms: list[str]) -> dict[str, int]:
        ask = [t for t in dict.fromkeys(terms) if t not in self._df]
        if ask:  # each term read once per index (one snapshot: see the class)
            self._df.update(dict.fromkeys(ask, 0))
            rows = self.conn.execute("SELECT term, df FROM memdream_terms WHERE scope = %s AND term = ANY(%s)", (self.scope.key, ask)).fetchall()
            self._df.update(rows)
        return {t: self._df[t] for t in terms if self._df[t] > 0}

    def query_terms(self, text: str) -> list[str]:
        """A recall query's terms, its Chinese segmented by the words the scope holds, as the
        SQLite index does (model/tokens.py, query_terms)."""
        return query_terms(text, lambda pieces: self.document_frequency(pieces).keys())

    def corpus_stats(self) -> tuple[int, float]:
        if self._stats is None:
            row = self.conn.execute("SELECT entries, tokens FROM memdream_scope_stats WHERE scope = %s", (self.scope.key,)).fetchone()
            n, tokens = row if row else (0, 0)
            self._stats = n, (tokens / n if n else 0.0)
        return self._stats

    def keyword_candidates(
        self,
        scope: Scope,
        query: str,
        limit: int,
        layers: tuple[str, ...] = (RESIDENT, RECALL),
        current_only: bool = True,
        postings: bool = True,
        ended: int = 0,
        terms: list[str] | None = None,
    ) -> list[tuple[Row, float]]:
        """The best `limit` entry lines holding any of the query's terms, with memdream's BM25
        over all of them (exactly, like the SQLite index's postings); then (with `current_only`
        and `ended` > 0) the best `ended` lines no longer valid, scored in the same pass.
        `terms`: the query's terms when the caller has cut it already (`query_terms`)."""
        if scope != self.scope:
            raise ValueError("a PgIndex answers for its own scope only")
        terms = self.query_terms(query) if terms is None else terms
        df = self.document_frequency(terms)
        present = [t for t in terms if df.get(t)]
        if not present or limit <= 0:
            return []
        n_docs, avgdl = self.corpus_stats()
        weights = query_weights(terms)
        if self.postings is not None and current_only and postings:
            copy, version = self.postings
            with copy.lock:  # every match of every term scored, as the SQLite index's postings do
                if copy.version == version:  # not moved on by another recall since this one's snapshot
                    top, gone = copy.top(scope.key, present, df, n_docs, avgdl, layers, limit, weights, ended)
                    copy.served += 1
                    found = [(score, *copy.place(rid)) for rid, score in top + gone]
                    return self._rows_at(found)
        # The candidates: the entries holding the query's rarest terms, as many of them as keep
        # the matches under MATCH_CAP (the rarest one always): like the SQLite index's one-shot
        # path, the cost of a query is bounded by short posting lists whatever the scope's size,
        # and BM25 is dominated by rare terms anyway. Below the cap (every query of a small
        # scope) that is every entry holding any term, as the SQLite postings score. Each is
        # scored in the database with memdream's BM25 over all the query's terms, from the
        # postings alone (each carries its term's frequency in the line and the line's length),
        # and only the best `limit` (and `ended`) lines are read.
        # (Matched through the postings' btree: under row-level security only leakproof
        # operators may use an index, and text equality is one, the tsvector match is not.)
        use: list[str] = []
        total = 0
        for t in sorted(present, key=lambda t: df[t]):
            if use and (total + df[t] > MATCH_CAP or len(use) >= MAX_QUERY_TERMS):
                break
            use.append(t)
            total += df[t]
        w = weights or {}
        terms_once = list(dict.fromkeys(present))  # a term said twice in the query counts once, as in bm25()
        factor = [w.get(t, 1.0) * idf(df[t], n_docs) for t in terms_once]  # as model/scoring.bm25 weighs a term
        split = current_only and ended > 0
        only_current = " AND cur" if current_only and not split else ""
        sql = (
            "WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(term, wi)), "
            "c AS (SELECT DISTINCT path, pos, ntok, cur FROM memdream_postings "
            "WHERE scope = %s AND term = ANY(%s) AND layer = ANY(%s)" + only_current + "), "
            "s AS MATERIALIZED (SELECT c.path, c.pos, c.cur, "
            "sum(q.wi * p.tf * %s / (p.tf + %s * (1 - %s + %s * c.ntok / %s))) AS s "
            "FROM c JOIN memdream_postings p ON p.scope = %s AND p.term = ANY(%s) AND p.path = c.path AND p.pos = c.pos "
            "JOIN q ON q.term = p.term GROUP BY c.path, c.pos, c.cur) "
            '(SELECT s, path, pos FROM s WHERE %s OR cur ORDER BY s DESC, path COLLATE "C", pos LIMIT %s) UNION ALL '
            '(SELECT s, path, pos FROM s WHERE %s AND NOT cur ORDER BY s DESC, path COLLATE "C", pos LIMIT %s)'
        )
        args = (
            terms_once, factor, scope.key, use, list(layers), BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, avgdl or 1.0, scope.key, terms_once,
            not current_only, limit, split, ended if split else 0,
        )  # fmt: skip
        return self._rows_at([(float(sc), path, pos) for sc, path, pos in self.conn.execute(sql, args)])

    def _rows_at(self, best: list[tuple[float, str, int]]) -> list[tuple[Row, float]]:
        """(row, score) for each (score, file, position), in order: one read of their lines."""
        if not best:
            return []
        scope = self.scope
        rows = {
            (path, pos): (layer, line, etype, vf, vt, ca, la, hits, sal, tok, th)
            for path, pos, layer, line, etype, vf, vt, ca, la, hits, sal, tok, th in self.conn.execute(
                "SELECT l.path, l.pos, l.layer, l.line, l.etype, l.vf, l.vt, l.ca, l.la, l.hits, l.salience, l.tok, l.thash "
                "FROM memdream_lines l JOIN unnest(%s::text[], %s::integer[]) AS k(path, pos) ON l.path = k.path AND l.pos = k.pos WHERE l.scope = %s",
                ([p for _, p, _ in best], [n for _, _, n in best], scope.key),
            )
        }
        return [(self._hand_out(path, pos, *rows[(path, pos)]), score) for score, path, pos in best if (path, pos) in rows]

    def rows_by_hash(self, thashes: list[str], layers: tuple[str, ...]) -> list[tuple[Row, str]]:
        """The current entry lines holding these texts (the dense side's nearest), with their hash."""
        if not thashes:
            return []
        sql = (
            "SELECT pos, path, layer, line, etype, vf, vt, ca, la, hits, salience, tok, thash FROM memdream_lines "
            "WHERE scope = %s AND thash = ANY(%s) AND layer = ANY(%s) AND vt IS NULL"
        )
        out = []
        for pos, path, layer, line, etype, vf, vt, ca, la, hits, sal, tok, th in self.conn.execute(sql, (self.scope.key, thashes, list(layers))):
            out.append((self._hand_out(path, pos, layer, line, etype, vf, vt, ca, la, hits, sal, tok, th), th))
        return out

    # One round trip for all the rows, each a range of the (scope, ca, entry_id) index: the row's
    # creation time is a bound of the scan (a join to the row itself only filtered, so each
    # lookup read the scope's lines from its oldest on: 2.8 ms a row at 30k lines).
    _AFTER = (
        "SELECT k.i, l.path, l.pos, l.layer, l.line, l.etype, l.vf, l.vt, l.ca, l.la, l.hits, l.salience, l.tok, l.thash "
        "FROM unnest(%s::float8[]) WITH ORDINALITY AS k(ca, i) CROSS JOIN LATERAL ("
        "SELECT * FROM memdream_lines l WHERE l.scope = %s AND l.layer = ANY(%s) AND l.entry_id IS NOT NULL "
        'AND l.ca > k.ca AND l.ca <= k.ca + %s ORDER BY l.ca, l.entry_id COLLATE "C" LIMIT %s) l '
        'ORDER BY k.i, l.ca, l.entry_id COLLATE "C"'
    )

    def said_after(self, scope: Scope, rows: list[Row], layers: tuple[str, ...], gap: float, n: int = 1) -> dict[int, list[Row]]:
        """For each of `rows` (rows this index handed out), the `n` entry lines created next
        after it: the SQLite index's `said_after`, with ids compared byte by byte as SQLite does."""
        if scope != self.scope:
            raise ValueError("a PgIndex answers for its own scope only")
        asked = [row for row in rows if row.ca is not None and row.rowid in self.where]
        if not asked:
            return {}
        out: dict[int, list[Row]] = {}
        found = self.conn.execute(self._AFTER, ([row.ca for row in asked], scope.key, list(layers), gap, n)).fetchall()
        for i, *r in found:
            out.setdefault(asked[i - 1].rowid, []).append(self._hand_out(*r))
        return out

    def created_between(self, scope: Scope, layers: tuple[str, ...], start: float, end: float, limit: int) -> tuple[int, list[Row]]:
        """The SQLite index's `created_between`: how many entry lines were created in [start, end),
        and the first `limit` by creation time, then id."""
        if scope != self.scope:
            raise ValueError("a PgIndex answers for its own scope only")
        where = " FROM memdream_lines WHERE scope = %s AND layer = ANY(%s) AND entry_id IS NOT NULL AND ca >= %s AND ca < %s"
        args = (scope.key, list(layers), start, end)
        n = self.conn.execute("SELECT count(*)" + where, args).fetchone()[0]
        if not n:
            return 0, []
        sql = "SELECT path, pos, layer, line, etype, vf, vt, ca, la, hits, salience, tok, thash" + where + ' ORDER BY ca, entry_id COLLATE "C" LIMIT %s'
        return n, [self._hand_out(*r) for r in self.conn.execute(sql, (*args, limit)).fetchall()]

    def superseding_at(self, scope: Scope, times: list[float], layers: tuple[str, ...]) -> list[Row]:
        """The entry lines of `layers` whose validity starts at one of `times` (see
        Index.superseding_at; the caller checks each superseded something)."""
        if not times:
            return []
        sql = (
            "SELECT pos, path, layer, line, etype, vf, vt, ca, la, hits, salience, tok, thash FROM memdream_lines "
            "WHERE scope = %s AND vf = ANY(%s) AND layer = ANY(%s)"
        )
        out = []
        for pos, path, layer, line, etype, vf, vt, ca, la, hits, sal, tok, th in self.conn.execute(sql, (self.scope.key, list(times), list(layers))):
            out.append(self._hand_out(path, pos, layer, line, etype, vf, vt, ca, la, hits, sal, tok, th))
        return out

    def tokens_of(self, rowids: list[int]) -> dict[int, str]:
        """The indexed tokens of rows handed out (recall scores the dense side's nearest with them)."""
        return {r: self.tok[r] for r in rowids if r in self.tok}
