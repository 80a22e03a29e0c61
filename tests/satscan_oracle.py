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
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
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


def edit_prm(prm, edits: dict, dest=None) -> Path:
    """The parameter file ``prm`` with each text ``old`` of ``edits`` (which must be in it) replaced by its
    ``new`` one, written to ``dest`` (default: over ``prm``); returns the written path."""
    text = Path(prm).read_text()
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    out = Path(dest if dest is not None else prm)
    out.write_text(text)
    return out


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


def report_summary(report: str) -> str:
    """SaTScan's analysis summary at the top of its report (the lines from the one after "Program run
    on" to the next rule), joined."""
    head = report.split("Program run on", 1)[1].split("_____", 1)[0]
    return " ".join(line.strip() for line in head.splitlines()[1:] if line.strip())


def read_clusters(prm) -> dict:
    """What SaTScan wrote for the parameter file ``prm`` (its outputs share its stem): the cluster table
    (``.col.dbf``, :func:`read_dbf`), the clusters' location ids and the analysis summary of its report."""
    report = Path(prm).with_suffix(".txt").read_text()
    return {"rows": read_dbf(Path(prm).with_suffix(".col.dbf")), "ids": report_locations(report),
            "summary": report_summary(report)}


def run_each(binary, prefix: str, write_inputs, names, make_prm, read) -> dict:
    """``{name: read(prm)}``: in one scratch folder (``prefix``) holding the data ``write_inputs(folder)``
    writes, SaTScan ``binary`` run on the parameter file ``make_prm(name, folder)`` of every analysis
    ``name``, its output read back by ``read(prm)`` (the parameter file's path: its outputs share its stem)."""
    out = {}
    with scratch_folder(prefix) as folder:
        write_inputs(folder)
        for name in names:
            prm = make_prm(name, folder)
            run_parameter_file(binary, prm, folder)
            out[name] = read(prm)
    return out


def assert_clusters_match(clusters, rows, ids=None, n_replicates=999):
    """Our cluster table against SaTScan's cluster rows (``read_dbf``) and, when given, the location ids
    of its report: the time frame (space-time and temporal tables), locations in SaTScan's order, cases,
    expected cases and LLR (SaTScan's ``TEST_STAT`` where it writes no LLR) to 1e-6, and Monte Carlo
    p-values within 4 binomial standard errors of two independent estimates. SaTScan's last rows with p
    near 1 may be absent here, and ours beyond its near 1 too."""
    assert all(float(r["P_VALUE"]) >= 0.99 for r in rows[len(clusters):])
    assert (clusters.p_value.iloc[len(rows):] >= 0.99).all()
    for k, r in enumerate(rows[:len(clusters)]):
        row = clusters.iloc[k]
        if ids is not None:
            assert [str(v) for v in row.location_ids] == ids[k], k
        if "start" in clusters.columns:
            when = tuple(np.datetime64("-".join(f"{int(x):02d}" for x in r[key].split("/")))
                         for key in ("START_DATE", "END_DATE"))
            assert (np.datetime64(row.start, "D"), np.datetime64(row.end, "D")) == when, k
        assert row.cases == int(r["OBSERVED"]), k
        assert row.expected == pytest.approx(float(r["EXPECTED"]), abs=1e-6), k
        llr = float(r["LLR"] if "LLR" in r else r["TEST_STAT"])
        assert row.log_likelihood_ratio == pytest.approx(llr, abs=1e-6), k
        p = float(r["P_VALUE"])
        se = math.sqrt(max(p * (1 - p), 1e-3) * 2 / (n_replicates + 1))
        assert abs(row.p_value - p) <= 4 * se + 2 / (n_replicates + 1), (k, row.p_value, p)


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
