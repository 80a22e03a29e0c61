"""Every public name of every method documents itself, numpydoc style, with an example that runs.

The public names are each method's ``__all__`` (what the API reference lists). For each callable:
the docstring parses as numpydoc; a function with parameters has a Parameters section naming them
all, a function that returns something has a Returns (or Yields) section, and everything has an
Examples section whose doctest is run here (quick sizes; the examples are part of the test suite).
"""
from __future__ import annotations

import doctest
import importlib
import inspect

import numpy as np
import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

METHODS = ("hawkes", "hawkes.etas", "hawkes.multitype", "kde", "sccs", "scan", "mixture")
TOP_LEVEL = ("backends", "info")


def _public():
    out = []
    for m in METHODS:
        mod = importlib.import_module(f"hphawkes_py.{m}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                out.append((f"{m}.{name}", obj))
    top = importlib.import_module("hphawkes_py")
    out += [(name, getattr(top, name)) for name in TOP_LEVEL]
    top_ds = importlib.import_module("hphawkes_py.datasets")
    out += [(f"datasets.{n}", getattr(top_ds, n)) for n in top_ds.__all__ if inspect.isfunction(getattr(top_ds, n))]
    return out


PUBLIC = _public()
IDS = [name for name, _ in PUBLIC]


def _is_exception(obj):
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def _documented_parameters(doc):
    names = set()
    for p in list(doc["Parameters"]) + list(doc["Other Parameters"]):
        for n in p.name.split(","):
            names.add(n.strip().lstrip("*"))
    return names


def _signature_parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return set()
    return {p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _returns_something(obj):
    if inspect.isclass(obj):
        return False
    ann = inspect.signature(obj).return_annotation
    return ann not in (None, "None")


@pytest.mark.parametrize("name, obj", PUBLIC, ids=IDS)
def test_public_name_has_a_numpydoc_docstring(name, obj):
    text = inspect.getdoc(obj)
    assert text, f"{name} has no docstring"
    doc = (numpydoc_docscrape.ClassDoc(obj) if inspect.isclass(obj) else numpydoc_docscrape.FunctionDoc(obj))
    assert doc["Summary"], f"{name}: no one-line summary"
    if _is_exception(obj):
        return
    missing = _signature_parameters(obj) - _documented_parameters(doc)
    assert not missing, f"{name}: parameters without an entry in 'Parameters': {sorted(missing)}"
    if _returns_something(obj):
        assert doc["Returns"] or doc["Yields"], f"{name}: no 'Returns' section"
    assert doc["Examples"], f"{name}: no 'Examples' section"


@pytest.mark.parametrize("name, obj", [(n, o) for n, o in PUBLIC if not _is_exception(o)],
                         ids=[n for n, o in PUBLIC if not _is_exception(o)])
def test_public_name_examples_run(name, obj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    finder = doctest.DocTestFinder(recurse=False)
    globs = {"np": np, "hp": importlib.import_module("hphawkes_py")}
    tests = [t for t in finder.find(obj, name, globs=globs) if t.examples]
    assert tests, f"{name}: no doctest examples (>>> lines) in its docstring"
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed (see above)"
