"""The purely temporal normal scan (``hp.scan.temporal_normal``; SaTScan's ModelType=5 with AnalysisType 2 or 6):
every interval's LLR against the normal formula on its observations (tests/naive_scan.py), the secondary
intervals apart from the most likely one, the CUDA kernel through the emulator, a planted rise recovered, bad
input. Against SaTScan 10.3.2 through run_prm: tests/test_scan_normal_space_time.py (the "temporal" analyses).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import normal_llr  # noqa: E402


def _series(seed=4, n=600, T=80, shift=2.5, weights=False):
    rng = np.random.default_rng(seed)
    day = rng.integers(0, T, n)
    x = (rng.normal(20.0, 3.0, n) + shift * ((day >= 30) & (day < 40))).round(4)
    return day, x, (rng.uniform(0.5, 2.0, n).round(3) if weights else None)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("direction, prospective", [("high", False), ("low", False), ("both", True)])
def test_clusters_are_the_best_intervals_by_the_naive_formula(weighted, direction, prospective):
    day, x, w = _series(weights=weighted, shift=-2.5 if direction == "low" else 2.5)
    T, max_t = 80, 15
    res = hp.scan.temporal_normal(day, x, weights=w, max_temporal=max_t, prospective=prospective, direction=direction,
                                  n_replicates=19, seed=1, backend="cpu", progress=False)
    best, where = 0.0, None
    for t2 in range(T - 1 if prospective else 0, T):
        for t1 in range(t2, max(-1, t2 - max_t), -1):
            v = normal_llr(x, w, (day >= t1) & (day <= t2), direction, res.min_cases)
            if v > best + 1e-9:
                best, where = v, (t1, t2)
    top = res.most_likely
    assert top.log_likelihood_ratio == pytest.approx(best, rel=1e-9)
    assert (top.start, top.end) == where
    inside = (day >= top.start) & (day <= top.end)
    assert top.cases == inside.sum() and top.mean_inside == pytest.approx(x[inside].mean(), rel=1e-12)
    if not prospective:
        # the secondary intervals lie wholly before or after the most likely one, a day or more apart
        for row in res.clusters.iloc[1:].itertuples():
            assert row.end < top.start - 1 or row.start > top.end + 1
            assert row.log_likelihood_ratio > 1.0


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_kernel_equals_the_cpu_engine(backend):
    day, x, w = _series(weights=True, shift=0.5)
    kw = dict(weights=w, max_temporal=10, direction="both", n_replicates=29, seed=2, progress=False)
    a = hp.scan.temporal_normal(day, x, backend="cpu", **kw)
    b = hp.scan.temporal_normal(day, x, backend=backend, **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)
    pd.testing.assert_frame_equal(a.clusters, b.clusters)


def test_a_planted_rise_is_recovered_with_dates():
    day, x, _ = _series(shift=3.0)
    dates = np.datetime64("2024-03-01") + day.astype("timedelta64[D]")
    res = hp.scan.temporal_normal(dates, x, n_replicates=99, seed=1, progress=False, backend="cpu")
    top = res.most_likely
    assert np.datetime64("2024-03-29") <= np.datetime64(top.start) <= np.datetime64("2024-04-02")
    assert np.datetime64("2024-04-07") <= np.datetime64(top.end) <= np.datetime64("2024-04-11")
    assert top.p_value == 0.01 and top.center == "All" and "purely temporal" in res.summary()


@pytest.mark.parametrize("kw, match", [
    (dict(values=np.ones(600)), "all equal"),
    (dict(max_temporal=0), "max_temporal"),
    (dict(max_temporal_percent=95.0), "90"),
    (dict(weights=np.zeros(600)), "positive"),
    (dict(day_of_week=1), "day_of_week"),
])
def test_bad_input_is_refused(kw, match):
    day, x, _ = _series()
    args = dict(values=x, n_replicates=9, progress=False)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        hp.scan.temporal_normal(day, **args)
