"""The arrows point down: the layers of docs/architecture.md, read from the imports (ast).

Every import of a memdream module counts, at module level or inside a function (a lazy
import is still a dependency), under TYPE_CHECKING, and a module's name given to importlib. The test fails on an import cycle,
on a module importing from a layer above its own, and on a shell importing anything but the
facade, the pure bottom layer (errors, the clock seam, model types) and other shells.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "memdream"

# Lowest first. A module may import from its own layer and the ones below it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("pure", ("memdream.errors", "memdream.clock", "memdream.model")),
    ("store", ("memdream.store", "memdream.config")),
    ("index and edges", ("memdream.index", "memdream.embed", "memdream.llm", "memdream.importers")),
    ("recall and knowledge", ("memdream.recall", "memdream.knowledge")),
    ("core", ("memdream.core",)),
    ("engine", ("memdream.engine", "memdream.doctor")),
    ("dream", ("memdream.dream",)),
    ("facade", ("memdream.memory", "memdream")),
    ("team store", ("memdream.team",)),
    ("shells", ("memdream.cli", "memdream.mcp", "memdream.web", "memdream.chat", "memdream.demo", "memdream.__main__")),
]
SHELL = len(LAYERS) - 1
FACADE = ("memdream.memory", "memdream", "memdream.team")  # what a shell may call, besides the pure layer and other shells


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES and "." in node.value:
            targets = [node.value]  # a module named for importlib (a lazy import) is a dependency too
        else:
            continue
        for t in targets:
            if t == "memdream" or t.startswith("memdream."):
                r = _resolve(t)
                if r and r != name:
                    out.append((r, node.lineno))
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


def test_no_import_points_up() -> None:
    bad = [
        f"{MODULES[m].relative_to(SRC)}:{line} imports {t} ({LAYERS[layer_of(t)][0]} is above {LAYERS[layer_of(m)][0]})"
        for m, edges in GRAPH.items()
        for t, line in edges
        if layer_of(t) > layer_of(m)
    ]
    assert bad == []


def test_shells_call_the_facade_only() -> None:
    bad = [
        f"{MODULES[m].relative_to(SRC)}:{line} imports {t}"
        for m, edges in GRAPH.items()
        if layer_of(m) == SHELL
        for t, line in edges
        if not (t in FACADE or layer_of(t) in (0, SHELL))
    ]
    assert bad == []


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    assert _cycles() == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from memdream.memory import Memory\n", ["memdream.memory"]),
        ("from memdream.dream import ledger\n", ["memdream.dream.ledger"]),
        ("def f():\n    from memdream.index.db import Index\n", ["memdream.index.db"]),
        ("from memdream.model.entry import Entry, RECALL\n", ["memdream.model.entry", "memdream.model.entry"]),
        ("import importlib\nm = importlib.import_module('memdream.engine.write')\n", ["memdream.engine.write"]),
    ],
)
def test_the_reader_sees_every_kind_of_import(tmp_path: Path, source: str, expected: list[str]) -> None:
    """The checks above can fail: lazy imports and `from package import module` are read."""
    p = tmp_path / "probe.py"
    p.write_text(source, encoding="utf-8")
    assert [t for t, _ in _imports("memdream.probe", p)] == expected


def test_a_shell_reaching_under_the_facade_is_caught() -> None:
    """A shell importing the index is named by the shell rule (checked on a made-up edge)."""
    assert layer_of("memdream.cli.main") == SHELL and layer_of("memdream.index.db") not in (0, SHELL)
    assert layer_of("memdream.index.db") < layer_of("memdream.core") < layer_of("memdream.engine.write") < layer_of("memdream.dream.run") < layer_of("memdream.memory")



def _private_reaches(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each `x._name` where x is not self or cls: a reach into another
    object's private members."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                out.append((node.lineno, node.attr))
    return out


def test_no_dream_phase_or_engine_module_reaches_into_private_members() -> None:
    """Dream phases and the engine take the core and call what it offers, nothing private."""
    bad = [
        f"{path.relative_to(SRC)}:{line} .{attr}"
        for name, path in MODULES.items()
        if name.startswith(("memdream.dream", "memdream.engine"))
        for line, attr in _private_reaches(path)
    ]
    assert bad == []


def test_the_private_reach_check_sees_one(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f(mem):\n    mem._update(1)\n    self._ok = 1\n    return mem.__class__\n", encoding="utf-8")
    assert _private_reaches(probe) == [(2, "_update")]
