"""SaTScan's criteria for reporting secondary clusters (``secondary=`` of hp.scan.bernoulli and hp.scan.poisson,
CriteriaForReportingSecondaryClusters 1-5; :mod:`hphawkes_py.scan.secondary`) against SaTScan 10.3.2 run on
the same data (tests/satscan_oracle.py) through run_prm: the upstate New York leukaemia sample (discrete
Poisson, 281 tracts) under every criterion, the North Humberside sample (Bernoulli) under two and NYCfever
(space-time permutation) retrospective and prospective. The lists
of clusters (locations, cases, expected cases and LLRs to 1e-6, p-values within the binomial error) are
SaTScan's. The criteria themselves against their definitions written out on the listed clusters."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.secondary import CRITERIA
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored

FIXTURE = stored("secondary")
SAMPLES = hp.datasets.path("scan/satscan_sample_data")
#: analysis -> (sample parameter file, criterion, AnalysisType or None to keep the sample's)
_ANALYSES = {**{f"ny {c}": ("ny_leukemia_poisson.prm", c, None) for c in range(1, 6)},
             "humberside 2": ("NHumbersideSpatialBernoulli.prm", 2, None),
             "humberside 4": ("NHumbersideSpatialBernoulli.prm", 4, None),
             # the space-time permutation model: retrospective (clusters apart in time never conflict) and prospective
             "nyc retrospective 2": ("NYCfever.prm", 2, 3), "nyc retrospective 5": ("NYCfever.prm", 5, 3),
             "nyc prospective 1": ("NYCfever.prm", 1, 4)}


def _write_inputs(folder: Path):
    for f in SAMPLES.iterdir():
        if f.suffix in (".cas", ".ctl", ".geo", ".pop"):
            shutil.copy(f, folder / f.name)


def _prm(name, folder: Path) -> Path:
    """The sample's parameter file with the criterion, all 999 replicates' p-values, the cluster table as dBase, no
    maps, and the hierarchical clusters alone (SaTScan's Gini clusters, which the New York sample also reports,
    are ranked with no geographical overlap whatever the criterion): each setting's line replaced, or added to
    [Output] where the sample has none."""
    sample, criterion, analysis = _ANALYSES[name]
    stem = name.replace(" ", "_")
    text = (SAMPLES / sample).read_text()
    if analysis is not None:
        text = re.sub(r"^AnalysisType=.*$", f"AnalysisType={analysis}", text, flags=re.M)
    for key, value in (("CriteriaForReportingSecondaryClusters", criterion), ("MonteCarloReps", 999),
                       ("PValueReportType", 1), ("ResultsFile", f"{stem}.txt"), ("MostLikelyClusterEachCentroidDBase", "y"),
                       ("LaunchMapViewer", "n"), ("OutputGoogleEarthKML", "n"), ("OutputShapefiles", "n"),
                       ("OutputCartesianGraph", "n"), ("ReportHierarchicalClusters", "y"), ("ReportGiniClusters", "n")):
        text, n = re.subn(rf"^{key}=.*$", f"{key}={value}", text, flags=re.M)
        if n == 0:
            text = text.replace("[Output]\n", f"[Output]\n{key}={value}\n", 1)
    path = folder / f"{stem}.prm"
    path.write_text(text)
    return path


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-secondary-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_secondary_criteria_match_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])
    assert len(res.clusters) >= min(len(theirs["rows"]), 3)


def _inside(a, b):
    """Whether cluster a's centre lies in cluster b's circle (single precision, as SaTScan)."""
    d = np.float32(np.hypot(a.x - b.x, a.y - b.y))
    return d <= np.float32(b.radius)


@pytest.mark.parametrize("criterion", list(CRITERIA)[1:])
def test_listed_clusters_meet_their_criterion(criterion):
    ny = hp.datasets.load_ny_leukemia()
    res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny["cases_floor"], ny["population"], n_replicates=49, seed=1,
                          progress=False, backend="cpu", secondary=criterion)
    cl = list(res.clusters.itertuples(index=False))
    assert len(cl) >= 3
    for k, a in enumerate(cl):
        for b in cl[:k]:  # b more likely than a
            a_in_b, b_in_a = _inside(a, b), _inside(b, a)
            bad = {"no-centres-in-others": a_in_b or b_in_a, "no-centres-in-more-likely": a_in_b,
                   "no-centres-in-less-likely": b_in_a, "no-pairs-of-centres": a_in_b and b_in_a,
                   "no-restrictions": False}[criterion]
            assert not bad, (criterion, k)
    if criterion == "no-restrictions":  # every centre's best window, down to p = 1
        assert len(cl) > 100 and len({c.center for c in cl}) == len(cl)


def test_secondary_refusals(tmp_path):
    g = hp.datasets.load_grave()
    args = (g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"])
    with pytest.raises(ValueError, match="secondary must be one of"):
        hp.scan.bernoulli(*args, secondary="no-centres", n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="is for circular windows"):
        hp.scan.poisson(*args[:2], np.ones(len(g)), window="ellipse", secondary="no-pairs-of-centres",
                        n_replicates=9, progress=False, backend="cpu")
    _write_inputs(tmp_path)
    prm = edit_prm(_prm("ny 1", tmp_path), {"SpatialWindowShapeType=0": "SpatialWindowShapeType=1"})
    with pytest.raises(ValueError, match="must be 0 or 5 with elliptic windows"):
        hp.scan.run_prm(prm, n_replicates=9, progress=False, backend="cpu")


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_secondary.py")
