"""Full-text search expressions for SQLite FTS5 over pre-tokenized text (DESIGN section 7).

FTS5 indexes a column of space-separated tokens made by `memdream.model.tokens` with its
plain ``unicode61`` tokenizer (and Porter stemming for English words).
"""

from __future__ import annotations

from memdream.model.tokens import query_tokens, tokens


def index_text(text: str) -> str:
    return " ".join(tokens(text))


def match_expression(text: str, limit: int = 64) -> str | None:
    """An FTS5 MATCH string that ORs the query's tokens, or None if it has none."""
    toks = query_tokens(text)[:limit]
    if not toks:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)
