"""The max circle size file (``circle_population=``, ``max_circle_population=`` of the spatial and space-time
scans; SaTScan's UseMaxCirclePopulationFileOption with MaxCirclePopulationFile and
MaxSpatialSizeInMaxCirclePopulationFile): a second limit on the circles, on top of the population at risk
and the distance. Against SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py) through run_prm:
the space-time permutation model (the usual use: its circles are otherwise sized by cases), the discrete
Poisson and Bernoulli space-time models, and the purely spatial Bernoulli and Poisson models, with circles
held to 8-20 % of a population that is not the model's own; clusters, LLRs (to 1e-6) and p-values (within
the binomial error). The windows themselves against SaTScan's rule written out (every circle stops before the
first location that would take either sum past its limit)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.windows import build_windows
from naive_scan import circle_prefixes
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_purely_spatial import _data, _ids, _write_inputs as _write_data
from test_scan_time_trend import space_time_prm

FIXTURE = stored("max_circle")
#: analysis -> (ModelType, AnalysisType, the data file line, percent of the max circle file's population)
_ANALYSES = {
    "space-time permutation": ("2", "3", [], "8"),
    "poisson space-time": ("0", "3", ["PopulationFile=t.pop"], "12"),
    "bernoulli space-time": ("1", "3", ["ControlFile=t.ctl"], "12"),
    "bernoulli spatial": ("1", "1", ["ControlFile=t.ctl"], "20"),
    "poisson spatial": ("0", "1", ["PopulationFile=t.pop"], "20"),
}


def _circle_population():
    """The max circle size file's population of the 36 locations: unrelated to the data's (ten times as large
    in the grid's left half)."""
    rng = np.random.default_rng(77)
    xy = _data()[0]
    return np.round(rng.uniform(100, 1000, 36) * np.where(xy[:, 0] < 2.5, 10.0, 1.0), 1)


def _write_inputs(folder: Path):
    _write_data(folder)
    (folder / "t.max").write_text("".join(f"{k} {p}\n" for k, p in zip(_ids(), _circle_population())))


def _prm(name, folder: Path) -> Path:
    model, atype, data, pct = _ANALYSES[name]
    stem = name.replace(" ", "_").replace("-", "_")
    prm = space_time_prm(folder, stem, model, atype, data, [], max_days=7)
    return edit_prm(prm, {"[Spatial Window]": "\n".join([
        "[Spatial Window]", "UseMaxCirclePopulationFileOption=y", "MaxCirclePopulationFile=t.max",
        f"MaxSpatialSizeInMaxCirclePopulationFile={pct}"])})


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-max-circle-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_with_a_max_circle_size_file_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])
    # the file limits the circles: without it the analysis finds larger ones
    plain = _prm(name, tmp_path)
    plain.write_text(plain.read_text().replace("UseMaxCirclePopulationFileOption=y", "UseMaxCirclePopulationFileOption=n"))
    free = hp.scan.run_prm(plain, n_replicates=9, seed=1, progress=False, backend="cpu")
    assert free.n_windows > 1.5 * res.n_windows


@pytest.mark.parametrize("ties", [False, True])
def test_windows_with_a_max_circle_population_against_the_rule(ties):
    rng = np.random.default_rng(3 + ties)
    L = 120
    xy = rng.integers(0, 12, (L, 2)).astype(float) if ties else rng.uniform(0, 12, (L, 2))
    pop = rng.integers(1, 40, L)
    circle = rng.uniform(0, 50, L) * np.where(xy[:, 1] < 6, 5, 1)
    offsets, neighbors, npop, boundary = build_windows(xy, xy, pop, 0.4 * pop.sum(), circle=circle,
                                                       circle_limit=0.1 * circle.sum())
    both = np.zeros(L, dtype=int)
    for i in range(L):
        d2 = ((xy - xy[i]) ** 2).sum(axis=1)
        by_pop = circle_prefixes(d2, xy, pop, 0.4 * pop.sum())
        by_circle = circle_prefixes(d2, xy, circle, 0.1 * circle.sum())
        k = min(len(by_pop), len(by_circle))
        both[i] = k
        assert [frozenset(m.tolist()) for m in by_pop[:k]] == \
            [frozenset(neighbors[offsets[i]:j + 1].tolist()) for j in range(offsets[i], offsets[i + 1])]
        assert k < len(by_pop) or k == len(by_circle)
    assert (both < np.array([len(circle_prefixes(((xy - xy[i]) ** 2).sum(axis=1), xy, pop, 0.4 * pop.sum()))
                             for i in range(L)])).sum() > L // 2  # the second limit binds for most centres


def test_a_max_circle_size_file_limits_the_circles_of_a_surveillance_alone():
    """Adjusted for earlier analyses the population at risk limits no circle (max_population None, as SaTScan):
    a max circle size file may then stand for the distance limit."""
    xy, pop, c, ctl = _data()
    L, T = c.shape
    rl, rd = np.indices((L, T)).reshape(2, -1)
    kw = dict(prospective=True, max_population=None, surveillance_start=50, max_temporal=5, n_replicates=9, seed=1,
              progress=False, backend="cpu")
    res = hp.scan.space_time(xy[rl], c.ravel(), rd, population=pop[rl], circle_population=_circle_population()[rl],
                             max_circle_population=0.1, **kw)
    wide = hp.scan.space_time(xy[rl], c.ravel(), rd, population=pop[rl], circle_population=_circle_population()[rl],
                              max_circle_population=0.4, **kw)
    assert res.max_population is None and 0 < res.n_windows < wide.n_windows
    with pytest.raises(ValueError, match="needs max_distance or circle_population"):
        hp.scan.space_time(xy[rl], c.ravel(), rd, population=pop[rl], **kw)


def test_max_circle_refusals(tmp_path):
    kw = dict(n_replicates=9, progress=False, backend="cpu")
    xy = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="circle_population must have one value per row"):
        hp.scan.poisson(xy, [1, 2, 1], [5, 5, 5], circle_population=[1, 2], **kw)
    with pytest.raises(ValueError, match="max_circle_population must be in"):
        hp.scan.bernoulli(xy, [1, 2, 1], [5, 5, 5], circle_population=[1, 2, 3], max_circle_population=0.7, **kw)
    with pytest.raises(ValueError, match="circle_population must be non-negative"):
        hp.scan.space_time_permutation(xy, [1, 2, 1], [0, 1, 2], circle_population=[1, -2, 3], **kw)
    with pytest.raises(ValueError, match="circle_population must be the same on every row"):
        hp.scan.space_time(np.r_[xy, xy[:1]], [1, 2, 1, 1], [0, 1, 2, 3], population=[5, 5, 5, 5],
                           circle_population=[1, 2, 3, 4], **kw)
    _write_inputs(tmp_path)
    (tmp_path / "bad.max").write_text("L01 300\nL99 20\n")
    prm = edit_prm(_prm("poisson spatial", tmp_path), {"MaxCirclePopulationFile=t.max": "MaxCirclePopulationFile=bad.max"})
    with pytest.raises(ValueError, match="bad.max:2: location id 'L99'"):
        hp.scan.run_prm(prm, **kw)
    prm = edit_prm(_prm("poisson spatial", tmp_path), {"MaxSpatialSizeInMaxCirclePopulationFile=20":
                                                       "MaxSpatialSizeInMaxCirclePopulationFile=60"})
    with pytest.raises(ValueError, match="MaxSpatialSizeInMaxCirclePopulationFile='60'"):
        hp.scan.run_prm(prm, **kw)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_max_circle.py")
