"""The package's skeleton (issue 17): no import cycles, methods independent of the CLI and the
data loaders, the same engine layout and entry-point conventions for every method."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path


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


#: functions whose lazy imports are dispatch, not a hidden dependency: a factory choosing the engine
#: module at call time (``make_engine`` imports ``cpu``/``gpu``, which import ``engine``), the device
#: registry, and a package's ``__getattr__`` loading a namespace on first use
DISPATCH = {"make_engine", "make_space_time_engine", "get_device", "_device_class", "__getattr__"}


def _top_level_imports(name: str, path: Path, known: set, lazy: bool = False) -> set:
    """Package modules imported at module level; with ``lazy``, also those imported inside functions
    (except in the dispatch functions of :data:`DISPATCH`)."""
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
                for h in node.handlers:
                    body(h.body)
                body(node.orelse)
                body(node.finalbody)
            elif lazy and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name not in DISPATCH:
                    body([n for child in node.body for n in ast.walk(child)
                          if isinstance(n, (ast.Import, ast.ImportFrom))])
            elif lazy and isinstance(node, ast.ClassDef):
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


def import_graph(lazy: bool = False) -> dict:
    mods = _modules()
    known = set(mods)
    return {n: _top_level_imports(n, p, known, lazy) for n, p in mods.items()}


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


def test_no_import_cycles_through_lazy_imports():
    """An import inside a function that closes a cycle is a cycle all the same (the two modules
    cannot be understood or changed apart); only the dispatch functions in DISPATCH may import late."""
    cycles = find_cycles(import_graph(lazy=True))
    assert not cycles, "import cycles (lazy imports included): " + "; ".join(" -> ".join(c) for c in cycles)


def test_lazy_import_walk_sees_imports_inside_functions(tmp_path, monkeypatch):
    pkg = tmp_path / "hphawkes_py"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    return b\n")
    (pkg / "b.py").write_text("from . import a\n")
    known = {"hphawkes_py", "hphawkes_py.a", "hphawkes_py.b"}
    assert _top_level_imports("hphawkes_py.a", pkg / "a.py", known) == set()
    assert _top_level_imports("hphawkes_py.a", pkg / "a.py", known, lazy=True) == {"hphawkes_py.b"}


def test_no_module_is_shadowed_by_a_function():
    """``hp.hawkes.mcmc`` must be one thing: a package never exports a function or class under the
    name of one of its own modules (the module then cannot be reached as an attribute)."""
    bad = []
    for m in METHODS + ("interop", "gpu", "cli"):
        pkg = importlib.import_module(f"hphawkes_py.{m}")
        for f in (PKG / m).glob("*.py"):
            stem = f.stem
            if stem == "__init__":
                continue
            obj = getattr(pkg, stem, None)
            if obj is not None and not inspect.ismodule(obj):
                bad.append(f"hphawkes_py.{m}.{stem} is a {type(obj).__name__}, shadowing the module {m}/{f.name}")
    assert not bad, "\n".join(bad)


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


def _public_callables():
    for m in METHODS:
        mod = importlib.import_module(f"hphawkes_py.{m}")
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                yield f"{m}.{name}", obj.__init__
                for meth_name, meth in inspect.getmembers(obj, inspect.isfunction):
                    if not meth_name.startswith("_"):
                        yield f"{m}.{name}.{meth_name}", meth
            elif callable(obj):
                yield f"{m}.{name}", obj


# the one meaning of each shared argument: its default on every public entry point
CONVENTIONS = {"backend": "auto", "threads": None, "seed": None, "executor": None, "progress": True}


def test_shared_arguments_have_the_same_defaults_everywhere():
    import numpy as np

    bad = []
    seen = {k: 0 for k in CONVENTIONS}
    for name, fn in _public_callables():
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for arg, default in CONVENTIONS.items():
            if arg in params:
                seen[arg] += 1
                got = params[arg].default
                if got is inspect.Parameter.empty:  # a result container's record of what ran
                    continue
                if got != default:
                    bad.append(f"{name}({arg}={got!r}) but the convention is {default!r}")
        if "dtype" in params and params["dtype"].default not in (np.float64, None, inspect.Parameter.empty):
            bad.append(f"{name}(dtype={params['dtype'].default!r})")
    assert seen["backend"] >= 5 and seen["seed"] >= 3  # the walk really found the entry points
    assert not bad, "\n".join(bad)


def test_every_method_has_the_same_engine_files():
    for m in METHODS:
        for f in ("model.py", "engine.py", "cpu.py", "gpu.py", "plot.py"):
            assert (PKG / m / f).is_file(), f"{m}/{f} missing"
        cpu, gpu = (PKG / m / "cpu.py").read_text(), (PKG / m / "gpu.py").read_text()
        assert "class CpuEngine" in cpu and "class GpuEngine" in gpu, m
        assert "from .cpu import" not in gpu and "from . import cpu" not in gpu, f"{m}/gpu.py imports cpu.py"
        assert "from .gpu import" not in cpu, f"{m}/cpu.py imports gpu.py"


def test_every_module_imports():
    """Each module of the package imports on its own (the fast tier, which leaves out the emulator
    runs of the GPU engines, still loads every module this way)."""
    failed = []
    for name in sorted(_modules()):
        if name.endswith("__main__"):
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # pragma: no cover - the message is the point
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failed, "\n".join(failed)
