"""The package's skeleton (issue 17): no import cycles, methods independent of the CLI and the
data loaders, the same engine layout and entry-point conventions for every method."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import hphawkes_py

PKG = Path(hphawkes_py.__file__).resolve().parent
METHODS = ("hawkes", "kde", "sccs", "scan", "mixture")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _top_level_imports(name: str, path: Path, known: set) -> set:
    """Package modules imported at module level (imports inside functions are deliberate lazy ones)."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    out = set()

    def resolve(mod, level):
        if level == 0:
            return mod
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([mod] if mod else []))

    def body(nodes):
        for node in nodes:
            if isinstance(node, ast.If):  # if TYPE_CHECKING: ... is not executed
                test = ast.unparse(node.test)
                if "TYPE_CHECKING" not in test:
                    body(node.body)
                    body(node.orelse)
            elif isinstance(node, ast.Try):
                body(node.body)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("hphawkes_py"):
                        out.add(a.name)
            elif isinstance(node, ast.ImportFrom):
                target = resolve(node.module, node.level)
                if not target.startswith("hphawkes_py"):
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.add(sub if sub in known else target)

    body(tree.body)
    return {m for m in out if m in known and m != name}


def import_graph() -> dict:
    mods = _modules()
    known = set(mods)
    return {n: _top_level_imports(n, p, known) for n, p in mods.items()}


def find_cycles(graph: dict) -> list:
    WHITE, GREY, BLACK = 0, 1, 2
    color = {n: WHITE for n in graph}
    cycles = []

    def visit(n, stack):
        color[n] = GREY
        stack.append(n)
        for m in sorted(graph[n]):
            # a submodule importing its own package (__init__) is how packages work, not a cycle
            if m == n.rsplit(".", 1)[0]:
                continue
            if color[m] == GREY:
                cycles.append(stack[stack.index(m):] + [m])
            elif color[m] == WHITE:
                visit(m, stack)
        stack.pop()
        color[n] = BLACK

    for n in sorted(graph):
        if color[n] == WHITE:
            visit(n, [])
    return cycles


def test_cycle_finder_finds_cycles():
    g = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p"}, "p": {"p.d"}}
    assert find_cycles(g) == [["p.a", "p.b", "p.c", "p.a"]]


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_methods_never_import_the_cli_or_the_data_loaders():
    graph = import_graph()
    mods = _modules()
    for n, p in mods.items():
        if n.split(".")[1:2] and n.split(".")[1] in METHODS:
            text = p.read_text()
            assert "hphawkes_py.cli" not in text and "from ..cli" not in text and "from ...cli" not in text, n
            assert "datasets" not in {m.rsplit(".", 1)[-1] for m in graph[n]}, n
            assert "from .. import datasets" not in text and "from ..datasets" not in text, n


def test_gpu_layer_does_not_import_the_backend_resolver():
    graph = import_graph()
    for n, deps in graph.items():
        if n.startswith("hphawkes_py.gpu"):
            assert "hphawkes_py._backend" not in deps, n
