"""Full-text search expressions for SQLite FTS5 over pre-tokenized text (DESIGN section 7).

FTS5 indexes a column of space-separated tokens made by `memdream.model.tokens` with its
plain ``unicode61`` tokenizer, so the index's terms are exactly our tokens; the ``terms``
table keeps each term's document frequency, updated with every row.
"""

from __future__ import annotations

from memdream.model.tokens import tokens


def index_text(text: str) -> str:
    return " ".join(tokens(text, unigrams=True))


def match_expression(terms: list[str], op: str = "OR") -> str | None:
    """An FTS5 MATCH string joining `terms` with OR (any) or AND (all), or None if there are none."""
    if not terms:
        return None
    return f" {op} ".join('"' + t.replace('"', '""') + '"' for t in terms)
