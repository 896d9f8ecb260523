"""Every SQL statement lives in index/ behind a named function (issue 18, point 4), or, for
the team server's PostgreSQL store, in team/ (issue 20).

The index is an interface a store other than SQLite (PostgreSQL, for the team server) will
implement: the rest of memdream asks it named questions (`Index.entry_ids(scope)`,
`Index.unadopted_paths(scope)`, ...) and never speaks SQL. This test reads every module under
src/memdream with `ast` and names, by file and line, every place outside src/memdream/index/
that runs a statement (`.execute`, `.executemany`, `.executescript`), holds a SQL statement or
fragment as a string, or uses the index's private query helpers (`_rows`, `_ROW`, `_COLS`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memdream"
INDEX = SRC / "index"
TEAM = SRC / "team"  # the PostgreSQL store: its schema, rows, tokens and dream leases

EXECUTE = {"execute", "executemany", "executescript"}
PRIVATE = {"_rows", "_ROW", "_COLS"}  # the index's own helpers for building row queries
# A statement (SELECT ... / INSERT INTO ...) or a clause glued onto one (" WHERE ...",
# " AND e.vt IS NULL"): SQL keywords are upper case in this code base, prose is not.
SQL = re.compile(
    r"^\s*(?:(?:SELECT|INSERT|UPDATE|DELETE|CREATE|REPLACE|PRAGMA|DROP|ALTER|WITH)\s+\S"
    r"|(?:WHERE|AND|OR|FROM|JOIN|ORDER BY|GROUP BY|LIMIT)\s+\S+\s*(?:=|!=|<|>|IN\b|IS\b|LIKE\b|ON\b|BY\b|\?|\w+\.\w+))"
)


def _text(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's with {} where its expressions are."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)  # type: ignore[misc]
    return None


def offenders(source: str, name: str) -> list[str]:
    """'name:line: what' for every SQL use in `source`."""
    tree = ast.parse(source, name)
    inside_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }  # fmt: skip
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append(f"{name}:{node.lineno}: calls .{node.func.attr}()")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            found.append(f"{name}:{node.lineno}: uses the index's private {node.attr}")
        elif id(node) not in inside_fstring and id(node) not in docstrings:
            text = _text(node)
            if text is not None and SQL.match(text):
                found.append(f"{name}:{node.lineno}: SQL text {text.strip()[:60]!r}")
    return sorted(set(found), key=lambda s: (s.split(":")[0], int(s.split(":")[1])))


def _modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def test_the_check_finds_sql_where_it_is() -> None:
    """The detector is not blind: it finds the statements of index/ and each kind of use."""
    inside = [o for p in _modules(INDEX) for o in offenders(p.read_text(encoding="utf-8"), str(p.relative_to(SRC)))]
    assert any("index/db.py" in o and ".execute()" in o for o in inside)
    assert any("index/sync.py" in o and ".executemany()" in o for o in inside)
    sample = '''
def f(index, db, scope, rowids, ids):
    marks = ",".join("?" * len(rowids))
    db.execute(f"SELECT tok FROM entries_fts WHERE rowid IN ({marks})", rowids)
    db.executescript("CREATE TABLE t(x)")
    index._rows(index._ROW + " WHERE e.scope = ? AND e.vt IS NULL", (scope,))
    sql = "DELETE FROM files WHERE path = ?"
    where = " AND e.rowid > ?"
    prose = "Delete the line from the files for good (asks first)."
    kind = "UPDATE"
    prompt = 'Reply with JSON only: {"decision": "ADD" | "UPDATE"}'
'''
    got = offenders(sample, "sample.py")
    assert [o.split(": ", 1)[0] for o in got] == [
        "sample.py:4", "sample.py:4", "sample.py:5", "sample.py:5",
        "sample.py:6", "sample.py:6", "sample.py:6", "sample.py:7", "sample.py:8",
    ], got  # fmt: skip
    assert not any("prose" in o or "'UPDATE'" in o or "Reply" in o for o in got)


def test_no_sql_outside_the_index() -> None:
    found = [
        o
        for p in _modules(SRC)
        if INDEX not in p.parents and TEAM not in p.parents
        for o in offenders(p.read_text(encoding="utf-8"), str(p.relative_to(SRC)))
    ]
    assert not found, "SQL outside src/memdream/index/ and team/ (add a named Index query and call it):\n" + "\n".join(found)
