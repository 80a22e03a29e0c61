"""hp.sccs.cross_validate(grid="auto"): Cyclops-style unimodal search of the prior variance."""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.sccs.resampling import AUTO_FACTOR, _auto_next


def test_auto_search_brackets_then_goes_to_the_parabola_maximum():
    # a score with its maximum at variance 0.3 (parabola in log variance)
    def score(v):
        return -1000.0 - 5.0 * (math.log(v) - math.log(0.3)) ** 2

    tried = {}
    v, go, steps = 1.0, True, []
    while go and len(steps) < 20:
        steps.append(v)
        tried[v] = (score(v), 1.0)
        go, v = _auto_next(tried)
    # the first step goes towards smaller variances (the safer side numerically)
    assert steps[:2] == [1.0, 1.0 / AUTO_FACTOR]
    # exact parabola: the fitted maximum is the true one
    assert v == pytest.approx(0.3, rel=1e-9)
    assert len(steps) <= 5
    # a maximum at the edge extends the bracket by the factor
    go, nxt = _auto_next({1.0: (-5.0, 1.0), 0.1: (-4.0, 1.0), 0.01: (-3.0, 1.0)})
    assert go and nxt == pytest.approx(0.001)
    go, nxt = _auto_next({1.0: (-5.0, 1.0), 0.1: (-6.0, 1.0)})
    assert go and nxt == 10.0


def test_auto_cv_chooses_near_the_grid_best_with_fewer_fits_and_equal_on_an_executor():
    data, _ = hp.sccs.simulate(n_cases=6000, n_drugs=60, seed=3)
    grid = hp.sccs.cross_validate(data, folds=4, grid=list(np.geomspace(0.01, 10, 13)), seed=1, backend="cpu",
                                  progress=False)
    auto = hp.sccs.cross_validate(data, folds=4, grid="auto", seed=1, backend="cpu", progress=False)
    assert len(auto.grid) < len(grid.grid)
    assert auto.fold_scores.shape == (4, len(auto.grid))
    np.testing.assert_allclose(auto.scores["mean"], auto.fold_scores.mean(axis=0))
    assert auto.variance == auto.grid[int(np.argmax(auto.scores["mean"]))]
    # the chosen variance scores within one standard error of the fine grid's best
    best = grid.scores["mean"].max()
    at = np.interp(math.log(auto.variance), np.log(grid.grid), grid.scores["mean"])
    assert at >= best - grid.scores["se"].max()
    with ThreadPoolExecutor(2) as ex:
        par = hp.sccs.cross_validate(data, folds=4, grid="auto", seed=1, backend="cpu", progress=False, executor=ex)
    np.testing.assert_allclose(par.grid, auto.grid)
    np.testing.assert_allclose(par.fold_scores, auto.fold_scores, rtol=1e-6)
    assert par.variance == auto.variance
    with pytest.raises(ValueError, match="grid must be a list of variances or 'auto'"):
        hp.sccs.cross_validate(data, folds=4, grid="fine", backend="cpu", progress=False)


def test_cli_cv_auto_grid(tmp_path, capsys):
    from hphawkes_py.cli import main

    data, _ = hp.sccs.simulate(n_cases=1500, n_drugs=10, seed=2)
    out, cov = data.to_long()
    out.to_csv(tmp_path / "o.csv", index=False)
    cov.to_csv(tmp_path / "c.csv", index=False)
    rc = main(["sccs", "cv", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--grid", "auto", "--folds", "3",
               "--seed", "1", "--backend", "cpu", "--quiet", "--output", str(tmp_path / "cv.csv")])
    assert rc == 0
    ref = hp.sccs.cross_validate(hp.sccs.SCCSData.from_long(out, cov), folds=3, grid="auto", seed=1, backend="cpu",
                                 progress=False)
    got = pd.read_csv(tmp_path / "cv.csv")
    assert got["variance"].iloc[0] == pytest.approx(ref.variance, rel=1e-12)
    np.testing.assert_allclose(got["coefficient"], ref.fit.coefficients.to_numpy(), atol=1e-10)
    rc = main(["sccs", "cv", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--grid", "0.1,x", "--backend", "cpu",
               "--quiet", "--output", str(tmp_path / "cv2.csv")])
    assert rc != 0
    assert "--grid must be 'auto' or comma-separated variances" in capsys.readouterr().err
