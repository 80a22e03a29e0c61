"""Circle centres given as such (``centres=`` of the spatial and space-time scans; SaTScan's grid file,
UseGridFile with GridFile): the circles are centred on those points instead of the locations. Against
SaTScan 10.3.2 run on the same data (tests/satscan_oracle.py) through run_prm: the purely spatial discrete
Poisson and Bernoulli models and the space-time permutation and discrete Poisson models, centred on a
grid of 5 x 5 points and a few more between the locations; clusters (their centres, radii, locations,
cases, expected cases and LLRs to 1e-6) and p-values (within the binomial error). The windows themselves
against SaTScan's rule written out (each centre's locations by distance, ties by coordinates, cut at the
size limit)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.windows import build_windows
from naive_scan import circle_prefixes
from satscan_oracle import assert_clusters_match, edit_prm, oracle, read_clusters, run_each, store, stored
from test_scan_purely_spatial import _write_inputs as _write_data
from test_scan_time_trend import space_time_prm

FIXTURE = stored("grid_file")
#: analysis -> (ModelType, AnalysisType, the data file line)
_ANALYSES = {
    "poisson spatial": ("0", "1", ["PopulationFile=t.pop"]),
    "bernoulli spatial": ("1", "1", ["ControlFile=t.ctl"]),
    "space-time permutation": ("2", "3", []),
    "poisson space-time": ("0", "3", ["PopulationFile=t.pop"]),
}


def _grid():
    """A 5 x 5 grid of points 1.25 apart over the 6 x 6 grid of locations (offset so that no point is at one
    distance from two locations), and three points between locations."""
    g = np.arange(5) * 1.25 + 0.03
    gx, gy = np.meshgrid(g, g + 0.011)
    return np.r_[np.c_[gx.ravel(), gy.ravel()], [[2.47, 3.52], [0.61, 4.38], [4.93, 0.57]]]


def _write_inputs(folder: Path):
    _write_data(folder)
    (folder / "t.grd").write_text("".join(f"{x:.4f} {y:.4f}\n" for x, y in _grid()))


def _prm(name, folder: Path) -> Path:
    model, atype, data = _ANALYSES[name]
    prm = space_time_prm(folder, name.replace(" ", "_").replace("-", "_"), model, atype, data, [], max_days=7)
    return edit_prm(prm, {"CoordinatesFile=t.geo": "CoordinatesFile=t.geo\nUseGridFile=y\nGridFile=t.grd"})


def run_satscan(binary) -> dict:
    """SaTScan's clusters (:func:`satscan_oracle.read_clusters`) of every analysis of _ANALYSES."""
    return run_each(binary, "hphawkes-grid-file-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_with_a_grid_file_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False, backend="cpu")
    theirs = satscan_output[name]
    assert res.n_centres == len(_grid())
    assert_clusters_match(res.clusters, theirs["rows"], theirs["ids"])
    for k, row in enumerate(theirs["rows"][:len(res.clusters)]):  # centred on grid points, as SaTScan's
        if float(row["P_VALUE"]) >= 0.99:
            continue  # the same window about two points (a single location) may be listed from either
        cl = res.clusters.iloc[k]
        assert (cl.x, cl.y) == pytest.approx((float(row["X"]), float(row["Y"])), abs=1e-9)
        assert cl.radius == pytest.approx(float(row["RADIUS"]), abs=1e-9)


def test_windows_about_given_centres_against_the_rule():
    rng = np.random.default_rng(8)
    xy = np.array([(k % 10, k // 10) for k in rng.permutation(100)[:80]], dtype=float)  # distance ties
    centres = np.r_[rng.uniform(0, 10, (30, 2)), [[4.5, 4.5], [3.0, 3.0]]]
    pop = rng.integers(1, 30, 80)
    res = hp.scan.poisson(xy, rng.poisson(0.1 * pop), pop, centres=centres, n_replicates=9, seed=1,
                          progress=False, backend="cpu")
    assert res.n_centres == len(centres)
    offsets, neighbors, _, _ = build_windows(centres, xy, pop, 0.3 * pop.sum())
    for i, c in enumerate(centres):
        ref = circle_prefixes(((xy - c) ** 2).sum(axis=1), xy, pop, 0.3 * pop.sum())
        assert [frozenset(m.tolist()) for m in ref] == \
            [frozenset(neighbors[offsets[i]:j + 1].tolist()) for j in range(offsets[i], offsets[i + 1])]


def test_cli_scan_takes_centres_and_a_circle_population(tmp_path, capsys):
    import pandas as pd

    from hphawkes_py.cli import main

    rng = np.random.default_rng(4)
    xy = rng.uniform(0, 10, (50, 2))
    pop = rng.integers(50, 200, 50)
    cases = rng.poisson(0.05 * pop)
    circle = rng.uniform(1, 9, 50)
    pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "cases": cases, "pop": pop, "cp": circle}).to_csv(
        tmp_path / "d.csv", index=False)
    grid = np.array([[2.0, 2.0], [5.0, 5.0], [8.0, 3.0], [3.0, 8.0]])
    pd.DataFrame({"x": grid[:, 0], "y": grid[:, 1]}).to_csv(tmp_path / "g.csv", index=False)
    out = tmp_path / "c.csv"
    rc = main(["scan", str(tmp_path / "d.csv"), "--model", "poisson", "--population", "pop", "--centres",
               str(tmp_path / "g.csv"), "--circle-population", "cp", "--max-circle-population", "0.2",
               "--replicates", "9", "--seed", "1", "--backend", "cpu", "-o", str(out), "--png", "", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    ours = pd.read_csv(out)
    ref = hp.scan.poisson(xy, cases, pop, centres=grid, circle_population=circle, max_circle_population=0.2,
                          n_replicates=9, seed=1, progress=False, backend="cpu")
    np.testing.assert_allclose(ours.log_likelihood_ratio, ref.clusters.log_likelihood_ratio, rtol=1e-12)
    assert set(zip(ours.x, ours.y)) <= set(map(tuple, grid))
    free = hp.scan.poisson(xy, cases, pop, centres=grid, n_replicates=9, seed=1, progress=False, backend="cpu")
    assert ref.n_windows < free.n_windows


def test_centres_refusals(tmp_path):
    kw = dict(n_replicates=9, progress=False, backend="cpu")
    xy = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="centres must have shape"):
        hp.scan.poisson(xy, [1, 2, 1], [5, 5, 5], centres=[[1.0, 2.0, 3.0]], **kw)
    with pytest.raises(ValueError, match="centres .* or grid_cell"):
        hp.scan.bernoulli(xy, [1, 2, 1], [5, 5, 5], centres=[[1.0, 2.0]], grid_cell=0.5, **kw)
    with pytest.raises(ValueError, match="not a latitude"):
        hp.scan.space_time_permutation(xy, [1, 2, 1], [0, 1, 2], centres=[[95.0, 2.0]], distance="great_circle", **kw)
    with pytest.raises(ValueError, match="centres .* finite|finite"):
        hp.scan.space_time(xy, [1, 2, 1], [0, 1, 2], population=[5, 5, 5], centres=[[np.nan, 1.0]], **kw)
    _write_inputs(tmp_path)
    (tmp_path / "bad.grd").write_text("1.0 2.0\nx 3\n")
    prm = edit_prm(_prm("poisson spatial", tmp_path), {"GridFile=t.grd": "GridFile=bad.grd"})
    with pytest.raises(ValueError, match=r"bad.grd:2: field 1 \(coordinate\): 'x' is not a number"):
        hp.scan.run_prm(prm, **kw)


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_grid_file.py")
