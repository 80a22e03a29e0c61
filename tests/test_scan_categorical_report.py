"""The reports of the ordinal and multinomial scans as SaTScan 10.3.2 writes them: the category lines of
each cluster block of the text report (``CCluster::DisplayClusterDataOrdinal``: Total cases, Category,
Number of cases, Expected cases, Observed / expected, Relative risk, Percent cases in area), the columns
of the cluster (.col) and location (.gis) tables for these models, no NaN anywhere, and the .rr table
refused as SaTScan refuses it.

The oracle is SaTScan's own report of the same data (tests/test_scan_ordinal.py's satscan_data): the
stored report fields in hphawkes_py/data/scan/satscan_outputs/satscan10_categorical.json, compared as
text to SaTScan's printed digits, and, when the binary is built here (/work/scratch/satscan), a live
run whose report blocks and .col rows are compared line by line.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hphawkes_py.scan import outputs
from hphawkes_py.scan._report_format import category_report_lines
from hphawkes_py.scan.multinomial_model import multinomial
from hphawkes_py.scan.ordinal_model import ordinal

sys.path.insert(0, str(Path(__file__).parent))
from satscan_oracle import SATSCAN, needs_satscan, run_parameter_file, scratch_folder  # noqa: E402
from test_scan_ordinal import (ANALYSES, DIRECTIONS, FIXTURE, _prm, read_report, satscan_data,  # noqa: E402
                               write_satscan_files)

CATEGORY_KEYS = ("Total cases", "Category", "Number of cases", "Expected cases", "Observed / expected",
                 "Relative risk", "Percent cases in area")


def our_result(name, n_replicates=999):
    """hp.scan's analysis ``name`` of ANALYSES on satscan_data (categories as SaTScan reads them)."""
    model, areas, size = ANALYSES[name]
    xy, loc, cat = satscan_data()
    ids = np.array([f"L{g}" for g in loc])
    kw = dict(location_ids=ids, max_population=int(size) / 100, n_replicates=n_replicates, seed=1,
              progress=False, backend="cpu")
    if model == "3":
        return ordinal(xy[loc], cat, direction=DIRECTIONS[areas], **kw)
    return multinomial(xy[loc], np.array([f"grade{c}" for c in cat]), **kw)


@pytest.fixture(scope="module")
def results():
    return {name: our_result(name) for name in ANALYSES}


@pytest.mark.parametrize("name", list(ANALYSES))
def test_report_category_lines_are_satscans_text(name, results):
    """Every field of every cluster block, as text, equals SaTScan's printed field (the p-value, a
    Monte Carlo estimate, aside)."""
    stored = json.loads(FIXTURE.read_text())["analyses"][name]
    ours = read_report(outputs.report_text(results[name]))
    assert len(ours) == len(stored) >= 2
    for a, b in zip(ours, stored):
        for key in ("Location IDs included", "Coordinates / radius", "Span", *CATEGORY_KEYS, "Log likelihood ratio"):
            assert a[key] == b[key], (name, key)
        assert set(a) == set(b)  # the same lines: no Expected cases / Observed / expected of the whole cluster


def test_report_has_no_nan_and_pools_categories(results):
    res = results["ordinal both 20"]
    txt = outputs.report_text(res, study_period=("2000/1/1", "2000/12/31"))
    assert "nan" not in txt.lower() and "infinity" not in txt
    block = txt[txt.index("2.Location IDs included"):].split("\n\n")[0].splitlines()
    labels = [ln.split(":")[0] for ln in block]
    i = labels.index("  Total cases...........")
    assert labels[i:i + 7] == ["  " + k.ljust(22, ".") for k in CATEGORY_KEYS]
    # the ordinal model pools categories 3 and 4 against the order: one bracket, one group of numbers
    assert "  Category..............: [1], [2], [3, 4]" in block
    assert "  Number of cases.......: 13, 20, 47" in block


def test_category_lines_by_numpy_reference():
    """The printed numbers from the cluster's counts by the definitions: expected = W C_k / C,
    relative risk (o / e) / ((C_k - o) / (C_k - e)) (infinity when every case of the group is inside),
    percent 100 o / W; labels as SaTScan prints them (whole numbers without a point, text as given)."""
    tot = np.array([10.0, 6.0, 4.0])
    o = np.array([5, 0, 4])  # every case of the third category inside
    W, C = o.sum(), tot.sum()
    e = W * tot / C
    rr = [(o[k] / e[k]) / ((tot[k] - o[k]) / (tot[k] - e[k])) if o[k] < tot[k] else math.inf for k in range(3)]
    row = pd.Series({"cases": int(W), "categories": [(1.0,), (2.5,), ("high",)],
                     "observed_by_category": o.tolist(), "expected_by_category": e.tolist(),
                     "ode_by_category": (o / e).tolist(), "relative_risk_by_category": rr,
                     "percent_by_category": (100 * o / W).tolist()})
    lines = dict(category_report_lines(row))
    assert list(lines) == list(CATEGORY_KEYS)
    assert lines["Total cases"] == "9"
    assert lines["Category"] == "[1], [2.5], [high]"
    assert lines["Number of cases"] == "5, 0, 4"
    assert lines["Expected cases"] == f"{e[0]:.2f}, {e[1]:.2f}, {e[2]:.2f}" == "4.50, 2.70, 1.80"
    assert lines["Observed / expected"] == "1.11, 0, 2.22"
    assert lines["Relative risk"] == f"{rr[0]:.2f}, 0, infinity"
    assert lines["Percent cases in area"] == "55.6, 0, 44.4"


@pytest.mark.parametrize("name", ["ordinal both 20", "multinomial 20"])
def test_tables_have_satscans_columns_and_no_nan(name, results, tmp_path):
    res = results[name]
    col = outputs.cluster_table(res)
    assert list(col.columns) == ["CLUSTER", "LOC_ID", "X", "Y", "RADIUS", "SPAN", "START_DATE", "END_DATE",
                                 "NUMBER_LOC", "LLR", "P_VALUE", "GINI_CLUST"]
    gis = outputs.location_table(res)
    assert list(gis.columns) == ["LOC_ID", "CLUSTER", "P_VALUE", "LOC_X", "LOC_Y", "GINI_CLUST"]
    for df in (col, gis):
        num = df.select_dtypes("number")
        assert num.shape[1] >= 4 and np.isfinite(num.to_numpy(float)).all()
    assert gis.groupby("CLUSTER").size().tolist() == res.clusters.n_locations.tolist()
    with pytest.raises(ValueError, match=r"risk table \(.rr\) is not defined for the (ordinal|multinomial) model"):
        outputs.risk_table(res)
    written = outputs.write_satscan(res, tmp_path / "cat.txt")
    assert [p.name for p in written] == ["cat.txt", "cat.col.csv", "cat.gis.csv", "cat.llr.csv"]
    assert "nan" not in (tmp_path / "cat.col.csv").read_text().lower()
    with pytest.raises(ValueError, match="is not defined for the"):
        outputs.write_satscan(res, tmp_path / "cat.txt", tables=("rr",))


# ---------------------------------------------------------------------------- the live binary
def _live(names):
    with scratch_folder("hphawkes-categorical-report-") as folder:
        write_satscan_files(folder)
        out = {}
        for name in names:
            prm = _prm(name, folder)
            asked = "CensusAreasReportedClustersASCII=y\nMostLikelyClusterEachCentroidASCII=y"
            prm.write_text(prm.read_text().replace("CensusAreasReportedClustersASCII=n", asked))
            run_parameter_file(SATSCAN, prm, folder, timeout=300)
            stem = folder / name.replace(" ", "_")
            out[name] = {ext: Path(f"{stem}{ext}").read_text() for ext in (".txt", ".col.txt", ".gis.txt")}
    return out


def _blocks(report):
    body = report.split("CLUSTERS DETECTED", 1)[1].split("_____", 1)[0]
    return [b.splitlines() for b in body.strip("\n").split("\n\n")]


@pytest.mark.slow
@needs_satscan
def test_report_blocks_and_col_rows_equal_a_live_satscan_run(results):
    live = _live(["ordinal both 20", "multinomial 20"])
    for name, files in live.items():
        res = results[name]
        theirs = _blocks(files[".txt"])
        ours = _blocks(outputs.report_text(res))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):  # line for line: labels, dots, wrapping, digits (p-value aside)
            assert [ln for ln in a if "P-value" not in ln] == [ln for ln in b if "P-value" not in ln]
        col = outputs.cluster_table(res, study_period=("2000/1/1", "2000/12/31"))
        rows = [ln.split() for ln in files[".col.txt"].splitlines()]
        assert len(rows) == len(col)
        for r, (_, c) in zip(rows, col.iterrows()):
            assert len(r) == len(col.columns)  # SaTScan writes these models' .col with the same columns
            assert r[1] == c.LOC_ID and r[6:8] == [c.START_DATE, c.END_DATE] and int(r[8]) == c.NUMBER_LOC
            np.testing.assert_allclose([float(v) for v in r[2:6]], [c.X, c.Y, c.RADIUS, c.SPAN], atol=5e-3)
            assert float(r[9]) == pytest.approx(c.LLR, abs=5e-7)
        gis = outputs.location_table(res)
        grows = [ln.split() for ln in files[".gis.txt"].splitlines()]
        assert [(r[0], int(r[1])) for r in grows] == list(zip(gis.LOC_ID, gis.CLUSTER))
        assert all(len(r) == len(gis.columns) for r in grows)
