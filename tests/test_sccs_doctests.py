"""Every example in the sccs package's docstrings runs (methods and module docstrings included).

``tests/test_docstrings.py`` runs the examples of the public names themselves; this file also
runs those of their methods (``SCCSData.from_eras``, ``SCCSData.from_long`` ...) and modules.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import hphawkes_py as hp

MODULES = ["hphawkes_py.sccs"] + sorted(m.name for m in pkgutil.iter_modules(hp.sccs.__path__, "hphawkes_py.sccs."))


@pytest.mark.parametrize("name", MODULES)
def test_examples_in_module_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    # the finder keeps to the objects defined in this module (re-exported names run where they live)
    for test in finder.find(module, name, globs={"np": np, "hp": hp}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see above)"


def test_the_examples_are_found():
    finder = doctest.DocTestFinder()
    data_tests = [t for t in finder.find(importlib.import_module("hphawkes_py.sccs.data")) if t.examples]
    assert {"hphawkes_py.sccs.data.SCCSData.from_eras", "hphawkes_py.sccs.data.SCCSData.from_long"} <= {
        t.name for t in data_tests}
