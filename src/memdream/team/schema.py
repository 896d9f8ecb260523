"""The database schema, as append-only numbered migrations (like the SQLite index's).

Every table is keyed by scope first, so a distributed PostgreSQL (Citus) can shard by
scope (docs/team-server.md). Row-level security keyed by the per-transaction setting
`memdream.scope` is the second wall between scopes: a query that forgot its WHERE still
sees one scope only (none when the setting is unset). The policies apply to the owner too
(FORCE); a superuser bypasses
them, so the server should connect as an ordinary role.
"""

from __future__ import annotations

from typing import Any

#: (version, what, SQL to run or a function of the connection that runs it)
MIGRATIONS: list[tuple[int, str, Any]] = [
    (
        1,
        "scopes, files, lines, tokens, dream leases",
        """
        CREATE TABLE memdream_scopes (
            scope text PRIMARY KEY,
            version bigint NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        -- Every file of a scope: a memory file's content is its lines (kind 'm'); any other
        -- file, and a memory file that is not valid UTF-8 text, is kept as bytes (kind 'b').
        CREATE TABLE memdream_files (
            scope text NOT NULL,
            path text NOT NULL,
            version bigint NOT NULL,
            kind char(1) NOT NULL CHECK (kind IN ('m', 'b')),
            final_newline boolean NOT NULL DEFAULT true,
            data bytea,
            PRIMARY KEY (scope, path)
        );
        -- The lines of the memory files, verbatim, with the parsed columns queries need.
        CREATE TABLE memdream_lines (
            scope text NOT NULL,
            path text NOT NULL,
            pos integer NOT NULL,
            line text NOT NULL,
            entry_id text,
            subject text,
            type text,
            valid_to text,
            PRIMARY KEY (scope, path, pos)
        );
        CREATE INDEX memdream_lines_entry ON memdream_lines (scope, entry_id) WHERE entry_id IS NOT NULL;
        CREATE INDEX memdream_lines_subject ON memdream_lines (scope, subject) WHERE subject IS NOT NULL;
        CREATE TABLE memdream_tokens (
            scope text NOT NULL,
            hash text NOT NULL UNIQUE,
            label text NOT NULL DEFAULT '',
            created_at timestamptz NOT NULL DEFAULT now(),
            revoked_at timestamptz,
            PRIMARY KEY (scope, hash)
        );
        CREATE TABLE memdream_dream_jobs (
            scope text PRIMARY KEY,
            due_at timestamptz NOT NULL DEFAULT now(),
            holder text,
            lease_until timestamptz,
            runs bigint NOT NULL DEFAULT 0,
            last_status text NOT NULL DEFAULT ''
        );
        ALTER TABLE memdream_files ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_files FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_files
            USING (scope = current_setting('memdream.scope', true));
        ALTER TABLE memdream_lines ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_lines FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_lines
            USING (scope = current_setting('memdream.scope', true));
        """,
    ),
]

MIGRATIONS.append(
    (
        2,
        "the database's own full-text index: memdream's tokens per entry line, term statistics per scope",
        """
        -- The columns recall scores with (index/rows.py makes them, as for the SQLite index) and
        -- the line's tokens (memdream's Chinese-aware tokenizer) as a tsvector of literal lexemes
        -- with their positions (a term's frequency in the line, for BM25).
        ALTER TABLE memdream_lines
            ADD COLUMN layer text, ADD COLUMN etype text, ADD COLUMN vf double precision, ADD COLUMN vt double precision,
            ADD COLUMN ca double precision, ADD COLUMN la double precision, ADD COLUMN hits integer, ADD COLUMN salience double precision,
            ADD COLUMN tok text, ADD COLUMN ntok integer, ADD COLUMN tsv tsvector, ADD COLUMN thash text;
        CREATE INDEX memdream_lines_tsv ON memdream_lines USING gin (tsv);
        -- BM25's statistics, per scope (a tenant's words never shift another tenant's scores).
        CREATE TABLE memdream_terms (
            scope text NOT NULL,
            term text NOT NULL,
            df integer NOT NULL,
            PRIMARY KEY (scope, term)
        );
        -- The same tokens as postings, one row per (term, entry line), under a btree: what recall
        -- matches with. Row-level security lets a query use an index only through leakproof
        -- operators, and text equality is one while the tsvector match (@@) is not: under the
        -- policies below, a GIN search of the tsvector is a scan of every line of every scope.
        CREATE TABLE memdream_postings (
            scope text NOT NULL,
            term text NOT NULL,
            path text NOT NULL,
            pos integer NOT NULL,
            PRIMARY KEY (scope, term, path, pos)
        );
        ALTER TABLE memdream_postings ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_postings FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_postings USING (scope = current_setting('memdream.scope', true));
        CREATE TABLE memdream_scope_stats (
            scope text PRIMARY KEY,
            entries bigint NOT NULL DEFAULT 0,
            tokens bigint NOT NULL DEFAULT 0
        );
        ALTER TABLE memdream_terms ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_terms FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_terms
            USING (scope = current_setting('memdream.scope', true));
        ALTER TABLE memdream_scope_stats ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_scope_stats FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_scope_stats
            USING (scope = current_setting('memdream.scope', true));
        """,
    )
)

MIGRATIONS.append(
    (
        3,
        "embeddings per scope, model and text",
        """
        -- Derived like the index (rebuildable from the lines): one vector per distinct text of
        -- a scope and embedding model, shared by every process instead of each embedding again.
        -- A real[] column, scored exactly over recall's candidates (pgvector is not required).
        CREATE TABLE memdream_vectors (
            scope text NOT NULL,
            model text NOT NULL,
            thash text NOT NULL,
            vec real[] NOT NULL,
            PRIMARY KEY (scope, model, thash)
        );
        ALTER TABLE memdream_vectors ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_vectors FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_vectors USING (scope = current_setting('memdream.scope', true));
        CREATE INDEX memdream_lines_thash ON memdream_lines (scope, thash) WHERE thash IS NOT NULL;
        """,
    )
)

MIGRATIONS.append(
    (
        4,
        "entry lines by creation time within a scope",
        """
        -- Recall reads what was said right after a match (the lines created next) and on a day
        -- the query names.
        CREATE INDEX memdream_lines_ca ON memdream_lines (scope, ca, entry_id COLLATE "C") WHERE ca IS NOT NULL;
        """,
    )
)

MIGRATIONS.append(
    (
        5,
        "entry lines by start of validity within a scope",
        """
        -- Recall follows a superseded match to the line that replaced it: the line whose validity
        -- starts when the match's ended (a supersede writes both with one time). Without this
        -- index that lookup read every line of the scope.
        CREATE INDEX memdream_lines_vf ON memdream_lines (scope, vf) WHERE vf IS NOT NULL;
        """,
    )
)

#: migration 6's backfill of the postings' scoring columns from their lines (also run by a test
#: against what the write path stores)
POSTINGS_BACKFILL = """
        UPDATE memdream_postings p SET
            tf = (SELECT count(*) FROM unnest(string_to_array(l.tok, ' ')) AS w(t) WHERE w.t = p.term),
            ntok = l.ntok, layer = l.layer, cur = l.vt IS NULL
        FROM memdream_lines l WHERE l.scope = p.scope AND l.path = p.path AND l.pos = p.pos
"""

MIGRATIONS.append(
    (
        6,
        "BM25 from the postings alone",
        """
        -- Each posting carries what BM25 needs of its line (the term's frequency in it, the
        -- line's length) and what recall filters on (layer, still valid), so a query scores and
        -- ranks its matches in the database from one covering index, and reads only the best
        -- lines. Lines are never changed in place (a changed line is a new row, its postings
        -- new ones), so these copies cannot go stale.
        ALTER TABLE memdream_postings ADD COLUMN tf integer, ADD COLUMN ntok integer, ADD COLUMN layer text, ADD COLUMN cur boolean;
        -- The backfill reads every scope: the owner, which this runs as, is not held to the
        -- policies while they are not forced (inside this transaction only).
        ALTER TABLE memdream_postings NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE memdream_lines NO FORCE ROW LEVEL SECURITY;
        """
        + POSTINGS_BACKFILL
        + """;
        ALTER TABLE memdream_postings FORCE ROW LEVEL SECURITY;
        ALTER TABLE memdream_lines FORCE ROW LEVEL SECURITY;
        -- The primary key's index carries them (one index, not two): a query's matches and their
        -- scores come from an index-only scan.
        ALTER TABLE memdream_postings DROP CONSTRAINT memdream_postings_pkey,
            ADD PRIMARY KEY (scope, term, path, pos) INCLUDE (tf, ntok, layer, cur);
        -- A changed or removed line's postings are deleted by its position: without this index
        -- that delete read every posting of the scope (28 ms at 30k lines, for each rewrite).
        CREATE INDEX memdream_postings_line ON memdream_postings (scope, path, pos);
        """,
    )
)



def _tokens_again(conn: Any) -> None:
    from memdream.team.fulltext import rederive_all

    rederive_all(conn)


# The tokens changed (English irregular verb forms became their verb's term, contractions are
# undone; model/tokens.py): every stored line whose derived columns differ is derived again from
# the line itself, with its postings and its scope's statistics. The lines are not changed.
MIGRATIONS.append((7, "lines derived again with English irregular verbs as their verb and contractions undone", _tokens_again))

MIGRATIONS.append(
    (
        8,
        "appends to a state file as rows of their own",
        """
        -- A recall appends its hit counts to the scope's journal without the scope's lock. The
        -- journal's bytes were extended in place (data || tail), which rewrote all of them on
        -- every recall: 3-6 ms at 300 KB, growing until a dream folded the journal. Each
        -- append is now a row; the file is its stored bytes followed by its appends in order,
        -- and storing the file again (a write that folds the journal) removes them.
        CREATE TABLE memdream_appends (
            scope text NOT NULL,
            path text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            data bytea NOT NULL,
            PRIMARY KEY (scope, path, seq)
        );
        ALTER TABLE memdream_appends ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memdream_appends FORCE ROW LEVEL SECURITY;
        CREATE POLICY memdream_scope_wall ON memdream_appends USING (scope = current_setting('memdream.scope', true));
        """,
    )
)

LATEST = MIGRATIONS[-1][0]


def migrate(conn: Any) -> list[int]:
    """Apply the migrations this database lacks, each in its own transaction, under an
    advisory lock (two processes starting at once do not both migrate); returns the versions
    applied. A database newer than this memdream is refused."""
    from memdream.errors import VaultError

    applied: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('memdream:migrate'))")
        conn.execute("CREATE TABLE IF NOT EXISTS memdream_schema (version integer PRIMARY KEY, what text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        have = {r[0] for r in conn.execute("SELECT version FROM memdream_schema").fetchall()}
        if have and max(have) > LATEST:
            raise VaultError(
                f"the database's memdream schema is version {max(have)}, newer than this memdream knows ({LATEST})",
                "upgrade memdream on this machine (pip install -U memdream) before serving this database",
            )
        for version, what, sql in MIGRATIONS:
            if version in have:
                continue
            if callable(sql):
                sql(conn)
            else:
                conn.execute(sql)
            conn.execute("INSERT INTO memdream_schema (version, what) VALUES (%s, %s)", (version, what))
            applied.append(version)
    return applied
