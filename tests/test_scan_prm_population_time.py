"""run_prm's discrete Poisson space-time analyses with populations over time and covariates: SaTScan's
own New Mexico brain cancer sample (NewMexicoSpaceTimePoisson.prm: case times in years, three census
years, age and sex covariates) on the CUDA engine, and the expectations against a day-by-day integration
of the interpolated populations; the sample against SaTScan itself is in test_scan_satscan_samples.py."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import _prm_space_time as pst

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402

SAMPLE = hp.datasets.path("scan/satscan_sample_data")

@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_new_mexico_sample_on_the_cuda_engine(backend, tmp_path):
    for f in ("nm.cas", "nm.geo", "nm.pop", "NewMexicoSpaceTimePoisson.prm"):
        shutil.copy(SAMPLE / f, tmp_path / f)
    prm = tmp_path / "NewMexicoSpaceTimePoisson.prm"
    prm.write_text(prm.read_text().replace("MonteCarloReps=999", "MonteCarloReps=99"))
    cpu = hp.scan.run_prm(prm, seed=3, progress=False, backend="cpu")
    dev = hp.scan.run_prm(prm, seed=3, progress=False, backend=backend)
    np.testing.assert_allclose(dev.null_llr, cpu.null_llr, rtol=1e-12)
    np.testing.assert_allclose(dev.clusters.log_likelihood_ratio, cpu.clusters.log_likelihood_ratio, rtol=1e-12)


def _daily_expected(P, years, C_c, starts):
    """The expectations by brute force: every location's and category's population on every day
    (np.interp between July 1 of the census years, constant outside), risks from the average over the
    study period, summed day by day over each interval."""
    days = np.array([pst.census_day(y) for y in years], dtype=float)
    s = starts.astype(np.int64)
    grid = np.arange(s[0], s[-1])
    # population on day d is the value at the start of the day, its integral over the day the mean of
    # the day's two ends (linear within the day)
    daily = np.stack([[0.5 * (np.interp(grid, days, P[z, c]) + np.interp(grid + 1, days, P[z, c]))
                       for c in range(P.shape[1])] for z in range(P.shape[0])])  # (L, K, days)
    D = len(grid)
    pbar = daily.sum(axis=(0, 2)) / D
    risk = C_c / pbar
    per_day = np.einsum("zkd,k->zd", daily, risk) / D
    return np.stack([per_day[:, a - s[0]:b - s[0]].sum(axis=1) for a, b in zip(s[:-1], s[1:])], axis=1)


def test_dated_expected_against_daily_integration(tmp_path):
    """Census years before, within and after the study period (interpolation and constant extrapolation),
    two covariate categories, intervals of unequal lengths (months)."""
    rng = np.random.default_rng(4)
    keys = ["a", "b", "c"]
    years = [1995, 1999, 2004]
    P = rng.integers(100, 5000, size=(3, 2, 3)).astype(float)
    lines = [f"{k} {y} {P[z, c, t]:g} {c + 1}" for z, k in enumerate(keys) for c in range(2) for t, y in
             enumerate(years)]
    (tmp_path / "x.pop").write_text("\n".join(lines) + "\n")
    case_keys, counts, cats = ["a", "b", "c", "a"], np.array([5, 7, 2, 4]), [("1",), ("2",), ("2",), ("1",)]
    starts = np.array(["1997-02-01", "1997-03-01", "1998-01-01", "2001-06-01", "2005-12-01"], dtype="datetime64[D]")
    mu, avg = pst.dated_expected(tmp_path / "x.pop", keys, case_keys, counts, cats, starts, "x.geo")
    C_c = np.array([9.0, 9.0])
    ref = _daily_expected(P, years, C_c, starts)
    np.testing.assert_allclose(mu, ref, rtol=1e-10)
    assert mu.sum() == pytest.approx(counts.sum(), rel=1e-12)
    s = starts.astype(np.int64)
    for z in range(3):
        daily = sum(np.interp(np.arange(s[0], s[-1]) + 0.5, [pst.census_day(y) for y in years], P[z, c])
                    for c in range(2))
        assert avg[z] == pytest.approx(daily.mean(), rel=1e-10)


def test_dated_expected_refusals(tmp_path):
    (tmp_path / "x.pop").write_text("a 1990 100\na 1995 120\nb 1990 50\n")
    starts = np.array(["1991-01-01", "1992-01-01", "1993-01-01"], dtype="datetime64[D]")
    with pytest.raises(ValueError, match="location 'b' has no population for census year 1995"):
        pst.dated_expected(tmp_path / "x.pop", ["a", "b"], ["a"], np.array([3]), [()], starts, "x.geo")
    (tmp_path / "y.pop").write_text("a 1990 100 1\nb 1990 50 1\n")
    with pytest.raises(ValueError, match="covariate category 2 of location 'b'.s cases has no population"):
        pst.dated_expected(tmp_path / "y.pop", ["a", "b"], ["b"], np.array([3]), [("2",)], starts, "x.geo")
    with pytest.raises(ValueError, match="not in the coordinates file"):
        pst.dated_expected(tmp_path / "y.pop", ["a"], ["a"], np.array([3]), [("1",)], starts, "x.geo")


def test_case_dates_by_precision(tmp_path):
    (tmp_path / "c.cas").write_text("a 2 1977\nb 1 1978/03\nc 4 1979/05/06\n")
    ids, counts, dates, cats = pst.read_case_dates(tmp_path / "c.cas", precision="1")
    assert list(dates.astype(str)) == ["1977-01-01", "1978-03-01", "1979-05-06"]
    with pytest.raises(ValueError, match=r"c.cas:1: field 3 \(date\) '1977' is not a month YYYY/MM"):
        pst.read_case_dates(tmp_path / "c.cas", precision="2")
    (tmp_path / "d.cas").write_text("a 2 1977 1 2\n")
    with pytest.raises(ValueError, match="covariates .* are not supported"):
        pst.read_case_dates(tmp_path / "d.cas", precision="1")
    assert pst.read_case_dates(tmp_path / "d.cas", precision="1", covariates=True)[3] == [("1", "2")]

