"""The discrete Poisson space-time scan adjusted for the day of the week (SaTScan's
AdjustForWeeklyTrends): :func:`~hphawkes_py.scan.time_trend.weekly_expectations` against a literal
construction of SaTScan's weekday populations, and expected= per cell; against SaTScan itself (NYCfever
with a population file, alone and after an estimated trend): test_scan_satscan_samples.py."""
from __future__ import annotations


import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan.time_trend import weekly_expectations



def _satscan_weekly_reference(M, day_cases, weekday):
    """SaTScan's construction written out: weekday populations at the starts of days 0..T (day t's
    expectation at t and t + 1), alpha weights of those moments, risks per weekday, the risk-weighted
    population integrated over each day (trapezoid)."""
    M = M.astype(np.float32).astype(np.float64)
    L, T = M.shape
    P = np.zeros((7, L, T + 1))
    for t in range(T):
        for n in (t, t + 1):
            P[weekday[t] % 7, :, n] += M[:, t]
    alpha = np.array([0.5] + [1.0] * (T - 1) + [0.5]) / T
    risk = np.zeros(7)
    for w in range(7):
        pbar = sum(alpha[n] * P[w, :, n].sum() for n in range(T + 1))
        cases = sum(day_cases[t] for t in range(T) if weekday[t] % 7 == w)
        risk[w] = cases / pbar if pbar > 0 else 0.0
    m = np.einsum("w,wzn->zn", risk, P)
    mu = np.zeros((L, T))
    for t in range(T):
        mu[:, t] = 0.5 * (m[:, t] + m[:, t + 1]) * 1.0 / T
    return mu


@pytest.mark.parametrize("T", [9, 24, 40])
def test_weekly_expectations_against_the_construction(T):
    rng = np.random.default_rng(T)
    L = 6
    M = rng.uniform(0.5, 2.0, size=(L, T)) * np.exp(0.02 * np.arange(T))[None, :]
    day_cases = rng.integers(0, 9, T)
    M *= day_cases.sum() / M.sum()
    weekday = 19000 + np.arange(T)
    mu = weekly_expectations(M, day_cases, weekday)
    np.testing.assert_allclose(mu, _satscan_weekly_reference(M, day_cases, weekday), rtol=1e-12)
    assert mu.sum() == pytest.approx(day_cases.sum(), rel=1e-6)  # single-precision populations


def test_poisson_weekly_with_expected_per_cell_equals_population():
    """expected= constant in time adjusted for the weekday gives the population scan's adjusted clusters."""
    rng = np.random.default_rng(5)
    L, T = 12, 21
    xy = rng.uniform(0, 10, (L, 2))
    loc, day = np.indices((L, T)).reshape(2, -1)
    cases = rng.poisson(0.3 + 0.8 * (day % 7 == 2))
    P = rng.integers(100, 400, L).astype(float)
    kw = dict(max_temporal=5, n_replicates=19, seed=3, progress=False, backend="cpu", day_of_week=True,
              location_ids=loc)
    a = hp.scan.space_time(xy[loc], cases, day, population=P[loc], **kw)
    b = hp.scan.space_time(xy[loc], cases, day, population=P[loc], expected=P[loc] / 7.0, **kw)
    assert len(a.clusters) == len(b.clusters) > 0
    assert [list(r) for r in a.clusters.location_ids] == [list(r) for r in b.clusters.location_ids]
    np.testing.assert_allclose(b.clusters.log_likelihood_ratio, a.clusters.log_likelihood_ratio, rtol=1e-9)
    np.testing.assert_allclose(b.clusters.expected, a.clusters.expected, rtol=1e-9)


def test_poisson_weekly_refusals():
    kw = dict(coords=[[0, 0], [1, 1], [2, 2]], cases=[1, 2, 1], times=[0, 1, 2], population=[5, 5, 5],
              n_replicates=9, progress=False, backend="cpu")
    with pytest.raises(ValueError, match="day_of_week adjusts the discrete Poisson model"):
        hp.scan.space_time(**kw, day_of_week=True, time_trend="nonparametric")
    with pytest.raises(ValueError, match="day_of_week adjusts the discrete Poisson model"):
        hp.scan.space_time(**kw, day_of_week=True, spatial_adjustment="stratified")
    with pytest.raises(TypeError, match="day_of_week must be True or False"):
        hp.scan.space_time(**kw, day_of_week=1)
