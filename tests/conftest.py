"""Test tiers.

Markers (registered in pyproject.toml) sort the suite into tiers, so that a developer can run a fast
subset while the full suite (``bash scripts/test.sh``, CI) runs everything:

* ``slow``     -- long statistical checks (simulation recovery, calibration), marked in the test files;
* ``emulator`` -- CUDA kernels run on the CPU emulator (every test parametrised with the ``emulator``
  engine, and the emulator's and nvcc's own tests): set here from the parameters;
* ``oracle``   -- published answers and peer outputs (SaTScan's tables, the papers' numbers);
* ``r``        -- tests that start R (rpy2 or Rscript).

``bash scripts/test.sh --fast`` runs ``-m "not slow and not emulator and not oracle and not r"``
on two workers; the emulator tests that check the emulator itself stay in the fast tier so that every
module is still imported and run.
"""
from __future__ import annotations

import pytest

#: the emulator's and the compiler's own tests (kept whole in the fast tier except nvcc's builds)
EMULATOR_FILES = {"test_nvcc.py"}
#: files whose every test checks a published answer or a peer's output
ORACLE_FILES = {"test_scan_satscan10.py", "test_reproduce.py"}
#: words in a test's name that mark it as a published-answer check
ORACLE_WORDS = ("published", "paper", "satscan", "zhang2017", "holbrook", "reproduce")
#: words in a test's name (or its file's) that mark it as starting R
R_WORDS = ("rpy2", "coda", "rscript", "_in_r", "r_session")


def _params(item):
    spec = getattr(item, "callspec", None)
    return list(spec.params.values()) if spec is not None else []


def pytest_collection_modifyitems(config, items):
    for item in items:
        fname = item.path.name
        name = item.name.lower()
        if fname in EMULATOR_FILES or any(isinstance(v, str) and v == "emulator" for v in _params(item)):
            item.add_marker(pytest.mark.emulator)
        if fname in ORACLE_FILES or any(w in name for w in ORACLE_WORDS):
            item.add_marker(pytest.mark.oracle)
        if any(w in name for w in R_WORDS):
            item.add_marker(pytest.mark.r)
