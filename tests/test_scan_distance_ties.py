"""Locations at exactly the same distance from a centre (the nodes of a grid), against SaTScan 10.3.2 run
on the same parameter files (tests/satscan_oracle.py).

SaTScan sorts a centre's locations by distance, equal distances by their coordinates (the lesser first,
``CompareIdentifierDistance``), and ends a window after every location: a circle centred on a node
takes its four nearest neighbours one at a time. The data put a raised rate at a node and two of its
four neighbours, the two with the lesser coordinates, so the most likely cluster is a window that
exists only under that rule. ``hp.scan.run_prm`` on SaTScan's own parameter files (purely spatial
Poisson and Bernoulli, circles and ellipses; space-time permutation) gives SaTScan's clusters: the
locations in SaTScan's order, cases, expected cases and LLRs to 1e-6, p-values within the binomial
error."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from satscan_oracle import assert_clusters_match, oracle, read_dbf, report_locations, run_each, store, stored, \
    write_prm

FIXTURE = stored("distance_ties")
SIDE = 8
#: the raised-rate node (3, 3) and its neighbours with the lesser coordinates, (2, 3) and (3, 2)
HOT = (3 * SIDE + 3, 2 * SIDE + 3, 3 * SIDE + 2)
#: analysis -> the lines of its [Analysis] and [Spatial Window] sections beyond the common ones
_ANALYSES = {
    "poisson circle": ["AnalysisType=1", "ModelType=0"],
    "bernoulli circle": ["AnalysisType=1", "ModelType=1"],
    "poisson ellipse": ["AnalysisType=1", "ModelType=0", "SpatialWindowShapeType=1", "NonCompactnessPenalty=0",
                        "EllipseShapes=2", "EllipseAngles=4"],
    "space-time permutation": ["AnalysisType=3", "ModelType=2"],
}


def _data():
    """An 8 x 8 grid of locations 1 km apart (index = 8 x + y, coordinates (x, y)), 500-1,500 persons
    each, cases at 2 % and at 6 % at the three HOT locations; 30 days, the HOT cases on days 10-14."""
    rng = np.random.default_rng(7)
    gx, gy = np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij")
    xy = np.c_[gx.ravel(), gy.ravel()].astype(float)
    pop = rng.integers(500, 1501, size=SIDE * SIDE)
    rate = np.full(SIDE * SIDE, 0.02)
    rate[list(HOT)] = 0.06
    cases = rng.binomial(pop, rate)
    day = [np.where(np.isin(i, HOT), rng.integers(10, 15, size=k), rng.integers(0, 30, size=k))
           for i, k in enumerate(cases)]
    return xy, pop, cases, day


def _write_inputs(folder: Path):
    xy, pop, cases, day = _data()
    ids = [f"G{i:02d}" for i in range(len(xy))]
    (folder / "g.geo").write_text("".join(f"{k} {x:.0f} {y:.0f}\n" for k, (x, y) in zip(ids, xy)))
    (folder / "g.pop").write_text("".join(f"{k} 2024 {p}\n" for k, p in zip(ids, pop)))
    (folder / "g.ctl").write_text("".join(f"{k} {p - c}\n" for k, p, c in zip(ids, pop, cases)))
    (folder / "g.cas").write_text("".join(f"{k} {c}\n" for k, c in zip(ids, cases) if c))
    dated = ((ids[i], d) for i, days in enumerate(day) for d in np.unique(days).tolist()
             for _ in range(int((days == d).sum())))
    (folder / "g.dated.cas").write_text("".join(f"{k} 1 2024/1/{d + 1}\n" for k, d in dated))


def _prm(name, folder: Path) -> Path:
    extra = _ANALYSES[name]
    space_time = "ModelType=2" in extra
    lines = ["[Input]", "CaseFile=" + ("g.dated.cas" if space_time else "g.cas"), "CoordinatesFile=g.geo",
             "CoordinatesType=0", "StartDate=2024/1/1", "EndDate=2024/1/30",
             "PrecisionCaseTimes=" + ("3" if space_time else "0")]
    if "ModelType=0" in extra:
        lines.append("PopulationFile=g.pop")
    if "ModelType=1" in extra:
        lines.append("ControlFile=g.ctl")
    lines += ["[Analysis]", *[e for e in extra if e.split("=")[0] in ("AnalysisType", "ModelType")], "ScanAreas=1"]
    if space_time:
        lines += ["TimeAggregationUnits=3", "TimeAggregationLength=1"]
    stem = name.replace(" ", "_").replace("-", "_")
    lines += ["[Output]", f"ResultsFile={stem}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n", "MostLikelyClusterEachCentroidDBase=y",
              "LaunchMapViewer=n",
              "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50",
              *[e for e in extra if e.split("=")[0] not in ("AnalysisType", "ModelType")],
              "[Inference]", "MonteCarloReps=999", "PValueReportType=1",
              "[Clusters Reported]", "CriteriaForReportingSecondaryClusters=0",
              "[Run Options]", "NumberParallelProcesses=1"]
    if space_time:
        lines.insert(lines.index("[Inference]"), "[Temporal Window]")
        lines.insert(lines.index("[Inference]"), "MaxTemporalSize=7")
        lines.insert(lines.index("[Inference]"), "MaxTemporalSizeInterpretation=1")
    return write_prm(folder / f"{stem}.prm", lines)


def run_satscan(binary) -> dict:
    """SaTScan's cluster table (.col.dbf) and the clusters' location ids (report, SaTScan's order) of
    every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-ties-", _write_inputs, _ANALYSES, _prm,
                    lambda prm: {"rows": read_dbf(prm.with_suffix(".col.dbf")),
                                 "ids": report_locations(prm.with_suffix(".txt").read_text())})


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


def _ours(name, folder: Path):
    _write_inputs(folder)
    return hp.scan.run_prm(_prm(name, folder), seed=1, progress=False, backend="cpu")


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_distance_ties_as_satscan(name, satscan_output, tmp_path):
    theirs = satscan_output[name]
    assert_clusters_match(_ours(name, tmp_path).clusters, theirs["rows"], theirs["ids"])


def test_the_most_likely_cluster_takes_part_of_a_tie(satscan_output):
    """The data make the rule matter: SaTScan's most likely circle is the HOT node with two of its four
    equidistant neighbours (the lesser coordinates first), a window with whole tie groups only never
    is it."""
    assert satscan_output["poisson circle"]["ids"][0] == [f"G{i:02d}" for i in HOT]
    assert satscan_output["bernoulli circle"]["ids"][0] == [f"G{i:02d}" for i in HOT]


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_distance_ties.py")
