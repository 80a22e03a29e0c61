"""SaTScan 10.3.2 as a test oracle: its batch binary run on data a test makes, its output read back,
and the same output stored so that the tests run where the binary is not built.

SaTScan's batch binary is built by ``bash benchmarks/peers/build_satscan.sh <snapshot of
github:scanstatistics/satscan>`` into /work/scratch/satscan (:data:`SATSCAN`). A test file that checks a
model against SaTScan defines ``run_satscan(binary)``: write the data and one parameter file per analysis
into a scratch folder (:func:`scratch_folder`, :func:`write_prm`), run the binary on each
(:func:`run_parameter_file`) and read its tables (:func:`read_dbf`) or report (:func:`report_locations`), as
``{analysis name: SaTScan's numbers}``. :func:`oracle` gives that output from the binary when it is
here, else from the file the test's ``__main__`` stored with :func:`store` (SaTScan's numbers as its
files print them, never typed by hand), else skips the test.

Imported as the tests import ``tests/naive_scan.py`` (``tests/`` on ``sys.path``)::

    from satscan_oracle import oracle, read_dbf, run_parameter_file, scratch_folder, stored, write_prm
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hphawkes_py as hp

#: SaTScan's batch binary, where benchmarks/peers/build_satscan.sh builds it
SATSCAN = Path("/work/scratch/satscan/SaTScan")
#: a test that needs the binary itself (no stored output stands in)
needs_satscan = pytest.mark.skipif(not SATSCAN.exists(),
                                   reason="SaTScan 10.3.2 is not built here (/work/scratch/satscan)")


def stored(name: str) -> Path:
    """The stored output of the SaTScan runs of one test file: ``satscan10_<name>.json`` in the
    package's data/scan/satscan_outputs."""
    return Path(hp.__file__).parent / "data" / "scan" / "satscan_outputs" / f"satscan10_{name}.json"


@contextlib.contextmanager
def scratch_folder(prefix: str):
    """A new temporary folder for SaTScan's input and output files, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_prm(path: Path, lines) -> Path:
    """A parameter file of the given ``[Section]`` and ``Key=value`` lines at ``path``."""
    path.write_text("\n".join(lines) + "\n")
    return path


def run_parameter_file(binary, prm, folder, timeout=600):
    """Run SaTScan ``binary`` on the parameter file ``prm`` in ``folder`` (its relative file names are
    read and written there); CalledProcessError when SaTScan fails."""
    subprocess.run([str(binary), str(prm)], cwd=folder, check=True, capture_output=True, timeout=timeout)


def read_dbf(path) -> list:
    """SaTScan's cluster information file (dBase: its numbers to 10 decimals), one dict per cluster."""
    import pyogrio

    meta, _, _, fields = pyogrio.raw.read(str(path), read_geometry=False)
    names = list(meta["fields"])
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in zip(names, row)} for row in zip(*fields)]


def report_locations(report: str) -> list:
    """The location ids of each cluster in SaTScan's text report, in its order."""
    out, cur = [], None
    for line in report.splitlines():
        s = line.strip()
        if "Location IDs included" in s:
            cur = s.split(":", 1)[1].strip()
            out.append(cur)
        elif out and cur is not None and s and ":" not in s:
            out[-1] += " " + s
        else:
            cur = None
    return [c.replace(",", " ").split() for c in out]


def oracle(fixture: Path, run_satscan):
    """SaTScan's output: ``run_satscan(SATSCAN)`` when the binary is here, else the ``"analyses"``
    stored in ``fixture``; the test is skipped when neither is here."""
    if SATSCAN.exists():
        return run_satscan(SATSCAN)
    if not fixture.exists():
        pytest.skip("neither SaTScan (/work/scratch/satscan) nor its stored output is here")
    return json.loads(fixture.read_text())["analyses"]


def store(fixture: Path, run_satscan, script: str):
    """The ``__main__`` of test file ``script``: ``python tests/<script> --satscan <binary>`` runs the
    binary (``run_satscan(binary)``) and stores its output, with the binary's version, in ``fixture``."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--satscan", required=True)
    args = ap.parse_args()
    version = subprocess.run([args.satscan, "--version"], capture_output=True, text=True).stdout.strip()
    fixture.write_text(json.dumps({"made_by": f"python tests/{script} --satscan " + args.satscan,
                                   "satscan": version, "analyses": run_satscan(args.satscan)}, indent=1) + "\n")
    print("wrote", fixture, file=sys.stderr)
