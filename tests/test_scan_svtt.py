"""hp.scan.svtt: spatial variation in temporal trends (Poisson) against a naive maximum-likelihood fit of
the log-linear trends, a planted trend, its input checks, and SaTScan 10.3.2 itself.

The SaTScan oracle (test_svtt_matches_satscan): SaTScan 10.3.2 run on the data made here (_satscan_data)
through tests/satscan_oracle.py, its cluster information file (.col.dbf) and the location ids of its
report read back; where the binary is not built, the same output stored by

    .venv/bin/python tests/test_scan_svtt.py --satscan /work/scratch/satscan/SaTScan

in hphawkes_py/data/scan/satscan_outputs/satscan10_svtt.json.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from hphawkes_py.scan.cpu_temporal import (TREND_CONVERGED, TREND_NEG_INF, TREND_POS_INF, TREND_UNDEFINED, fit_trend,
                                           svtt_llr)
from hphawkes_py.scan.svtt_model import svtt

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from satscan_oracle import (oracle, read_dbf, report_locations, run_parameter_file, scratch_folder,  # noqa: E402
                            store, stored, write_prm)

FIXTURE = stored("svtt")


def _naive_fit(c, m):
    """(alpha, beta) maximising sum c_t (log m_t + a + b t) - m_t exp(a + b t) (alpha profiled out)."""
    t = np.arange(len(c))

    def neg(b):
        a = math.log(c.sum() / (m * np.exp(b * t)).sum())
        return -((c * (np.log(m) + a + b * t)).sum() - (m * np.exp(a + b * t)).sum())

    b = minimize_scalar(neg, bounds=(-5, 5), method="bounded", options={"xatol": 1e-12}).x
    return math.log(c.sum() / (m * np.exp(b * t)).sum()), b


def _loglik(c, m, a, b):
    t = np.arange(len(c))
    return (c * (np.log(m) + a + b * t)).sum() - (m * np.exp(a + b * t)).sum()


def test_trend_fit_is_the_maximum_likelihood_estimate():
    rng = np.random.default_rng(1)
    for k in range(5):
        m = rng.uniform(5, 20, 8)
        c = rng.poisson(m * np.exp(0.1 * (k - 2) * np.arange(8))).astype(float)
        st, a, b = fit_trend(c, m)
        na, nb = _naive_fit(c, m)
        assert st == TREND_CONVERGED
        assert b == pytest.approx(nb, abs=2e-5)  # Newton stops when beta moves < 1e-5 (SaTScan's rule)
        assert a == pytest.approx(math.log(c.sum() / (m * np.exp(b * np.arange(8))).sum()), rel=1e-14)
    m = np.ones(5)
    assert fit_trend(np.array([1.0, 0, 0, 0, 0]), m)[0] == TREND_UNDEFINED
    assert fit_trend(np.array([3.0, 0, 0, 0, 0]), m)[0] == TREND_NEG_INF
    assert fit_trend(np.array([0, 0, 0, 0, 4.0]), m)[0] == TREND_POS_INF


def test_window_llr_matches_naive_formula():
    rng = np.random.default_rng(2)
    T = 9
    m_all = rng.uniform(50, 80, T)
    m_in = m_all * 0.3
    c_in = rng.poisson(m_in * 1.15 ** np.arange(T)).astype(float)
    c_all = c_in + rng.poisson(m_all - m_in).astype(float)
    _, _, bg = fit_trend(c_all, m_all)
    out = np.zeros(5)
    svtt_llr(c_in, m_in, c_all, m_all, bg, True, False, out)
    ref = 0.0
    for c, m in ((c_in, m_in), (c_all - c_in, m_all - m_in)):
        st, a, b = fit_trend(c, m)
        ag = math.log(c.sum() / (m * np.exp(bg * np.arange(T))).sum())
        ref += _loglik(c, m, a, b) - _loglik(c, m, ag, bg)
    assert out[0] == pytest.approx(ref, rel=1e-12)
    assert out[0] > 0 and out[2] > bg
    # the inside trend is steeper: not a window of interest for "low"
    svtt_llr(c_in, m_in, c_all, m_all, bg, False, True, out)
    assert out[0] == 0.0


def _data(seed=3, L=30, T=10, growth=1.3):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, (L, 2)).round(3)
    xy[:5] = [1.0, 1.0] + 0.2 * np.arange(5)[:, None]
    cases = np.zeros((L, T), dtype=int)
    for t in range(T):
        cases[:, t] = rng.poisson(np.where(np.arange(L) < 5, growth ** t, 1.0) * 8)
    return xy, cases


def _run(xy, cases, backend="cpu", **kw):
    L, T = cases.shape
    return svtt(np.repeat(xy, T, axis=0), np.tile(np.arange(T), L), cases.ravel(), np.full(L * T, 1000),
                location_ids=np.repeat([f"L{i}" for i in range(L)], T), seed=1, backend=backend, progress=False, **kw)


def test_planted_trend_recovered_and_threads():
    xy, cases = _data(seed=5)
    res = _run(xy, cases, n_replicates=99)
    top = res.most_likely
    assert set(top.location_ids) == {f"L{i}" for i in range(5)}
    assert 20 < top.inside_trend < 40 and abs(top.outside_trend) < 3 and top.p_value == 0.01
    again = _run(xy, cases, n_replicates=99, threads=1)
    assert np.array_equal(res.null_llr, again.null_llr)
    flat = _run(*_data(seed=6, growth=1.0), n_replicates=99)
    assert flat.most_likely is None or flat.most_likely.p_value > 0.05


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_monte_carlo(backend):
    xy, cases = _data(seed=9)
    a = _run(xy, cases, n_replicates=30, direction="both")
    b = _run(xy, cases, n_replicates=30, direction="both", backend=backend)
    assert b.backend == backend and a.clusters.equals(b.clusters)
    if backend == "emulator":  # the host's exp and log: the CPU engine's maxima bit for bit
        assert np.array_equal(a.null_llr, b.null_llr)
    else:  # a GPU's exp and log may differ in the last bits
        assert np.allclose(a.null_llr, b.null_llr, rtol=1e-9, atol=1e-9)


def test_dates_give_percent_per_year():
    # 12 locations, 70 days in weekly units (counted back from the last day), dates
    rng = np.random.default_rng(8)
    L, D = 12, 70
    xy = rng.uniform(0, 5, (L, 2))
    day = np.arange(D)
    counts = rng.poisson(3.0 * 1.01 ** day[None, :], (L, D))
    dates = np.datetime64("2021-03-01") + day
    res = svtt(np.repeat(xy, D, axis=0), np.tile(dates, L), counts.ravel(), np.full(L * D, 500), time_aggregation=7,
               n_replicates=19, seed=1, backend="cpu", progress=False)
    weekly = counts.sum(axis=0).reshape(10, 7).sum(axis=1).astype(float)
    st, _, beta = fit_trend(weekly, np.full(10, weekly.sum() / 10))
    assert res.n_units == 10 and st == TREND_CONVERGED
    assert res.global_trend == pytest.approx(100 * (math.exp(beta * 365.25 / 7) - 1), rel=1e-12)
    assert 1000 < res.global_trend < 20000  # 1 % a day is 3,680 % a year


def test_refusals():
    xy, cases = _data()
    L, T = cases.shape
    args = (np.repeat(xy, T, axis=0), np.tile(np.arange(T), L), cases.ravel(), np.full(L * T, 1000))
    ok = dict(n_replicates=9, backend="cpu", progress=False)
    with pytest.raises(ValueError, match="direction"):
        svtt(*args, direction="up", **ok)
    with pytest.raises(ValueError, match="backend"):
        svtt(*args, n_replicates=9, backend="tpu", progress=False)
    with pytest.raises(ValueError, match="same length"):
        svtt(args[0], args[1], args[2][:-1], args[3], **ok)
    with pytest.raises(ValueError, match="one value per row"):
        svtt(*args[:3], args[3][:-1], **ok)
    with pytest.raises(ValueError, match="non-negative"):
        svtt(*args[:3], -args[3], **ok)
    pop = args[3].astype(float).copy()
    pop[1] = 5
    with pytest.raises(ValueError, match="same on every row"):
        svtt(*args[:3], pop, **ok)
    with pytest.raises(ValueError, match="time_aggregation"):
        svtt(*args, time_aggregation=0, **ok)
    with pytest.raises(ValueError, match="at least 3"):
        svtt(*args, time_aggregation=5, **ok)
    with pytest.raises(ValueError, match="max_population"):
        svtt(*args, max_population=0.9, **ok)
    with pytest.raises(ValueError, match="at least 4 cases"):
        svtt(args[0], args[1], np.zeros(L * T, dtype=int), args[3], **ok)
    only_last = np.where(args[1] == T - 1, 1, 0)
    with pytest.raises(ValueError, match="global time trend"):
        svtt(args[0], args[1], only_last, args[3], **ok)


# ---------------------------------------------------------------------------- SaTScan 10.3.2
_ANALYSES = {"high": "1", "low": "2", "both": "3"}


def _satscan_data():
    """30 locations over 10 generic time units; cases grow 30 % a unit around (1, 1), fall 10 % a unit at
    locations 10-12 (moved near (8, 8)), flat elsewhere."""
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 10, (30, 2)).round(3)
    xy[:5] = [1.0, 1.0] + 0.2 * np.arange(5)[:, None]
    xy[10:13] = [8.0, 8.0] + 0.3 * np.arange(3)[:, None]
    g = np.ones(30)
    g[:5] = 1.3
    g[10:13] = 0.9
    cases = np.stack([rng.poisson(8 * g ** t) for t in range(10)], axis=1)
    return xy, cases


def run_satscan(binary) -> dict:
    xy, cases = _satscan_data()
    with scratch_folder("hphawkes-svtt-") as folder:
        (folder / "s.geo").write_text("".join(f"L{i} {a} {b}\n" for i, (a, b) in enumerate(xy)))
        (folder / "s.pop").write_text("".join(f"L{i} 0 1000\n" for i in range(len(xy))))
        (folder / "s.cas").write_text("".join(f"L{i} {cases[i, t]} {t}\n" for i in range(len(xy)) for t in range(10)
                                              if cases[i, t]))
        out = {}
        for name, areas in _ANALYSES.items():
            prm = write_prm(folder / f"{name}.prm", [
                "[Input]", "CaseFile=s.cas", "PopulationFile=s.pop", "CoordinatesFile=s.geo", "PrecisionCaseTimes=4",
                "StartDate=0", "EndDate=9", "CoordinatesType=0",
                "[Analysis]", "AnalysisType=5", "ModelType=0", f"ScanAreas={areas}", "TimeAggregationUnits=4",
                "TimeAggregationLength=1",
                "[Output]", f"ResultsFile={name}.txt", "OutputGoogleEarthKML=n", "OutputShapefiles=n",
                "MostLikelyClusterEachCentroidDBase=y", "LaunchMapViewer=n",
                "[Spatial Window]", "MaxSpatialSizeInPopulationAtRisk=50",
                "[Space and Time Adjustments]", "TimeTrendType=0",
                "[Inference]", "MonteCarloReps=999", "[Run Options]", "NumberParallelProcesses=1"])
            run_parameter_file(binary, prm, folder)
            rows = read_dbf(folder / f"{name}.col.dbf")
            out[name] = {"rows": [{k: v for k, v in r.items() if isinstance(v, str) or not math.isnan(v)}
                                  for r in rows],
                         "locations": report_locations((folder / f"{name}.txt").read_text())}
    return out


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_svtt_matches_satscan(name, satscan_output):
    xy, cases = _satscan_data()
    res = _run(xy, cases, n_replicates=999, direction=name)
    sat = satscan_output[name]
    rows = sat["rows"]
    assert len(res.clusters) == len(rows), res.clusters
    for k, (ours, theirs) in enumerate(zip(res.clusters.itertuples(), rows)):
        assert ours.location_ids == sat["locations"][k]
        assert ours.cases == int(theirs["OBSERVED"])
        assert ours.expected == pytest.approx(theirs["EXPECTED"], abs=1e-9)
        assert ours.relative_risk == pytest.approx(theirs["REL_RISK"], abs=1e-9)
        assert ours.log_likelihood_ratio == pytest.approx(theirs["LLR"], abs=1e-9)
        assert ours.inside_trend == pytest.approx(theirs["IN_TREND"], abs=1e-9)
        assert ours.outside_trend == pytest.approx(theirs["OUT_TREND"], abs=1e-9)
        p = float(theirs["P_VALUE"])
        se = math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000)
        assert abs(ours.p_value - p) <= 4 * se + 2e-3


if __name__ == "__main__":  # write the stored SaTScan output (see the module notes)
    store(FIXTURE, run_satscan, "test_scan_svtt.py")
