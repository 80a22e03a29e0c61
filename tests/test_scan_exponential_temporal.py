"""The purely temporal exponential scan (``hp.scan.temporal_exponential``; SaTScan's ModelType=4 with AnalysisType
2 or 6): every interval's LLR against the Poisson formula on its deaths and calibrated times, the replicates'
maxima those of the space-time scan's purely temporal clusters, the CUDA engine through the emulator, a planted
interval recovered, bad input; SaTScan's sample ``FakeSpaceTimeExponential.prm`` run as purely temporal
analyses, through run_prm, against SaTScan 10.3.2 (tests/satscan_oracle.py).

``python tests/test_scan_exponential_temporal.py --satscan <binary>`` stores SaTScan's output.
"""
from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402
from naive_scan import xlogy_ratio  # noqa: E402
from satscan_oracle import edit_prm, oracle, read_clusters, run_each, store, stored  # noqa: E402

FIXTURE = stored("exponential_temporal")
SAMPLE = Path(hp.__file__).parent / "data" / "scan" / "satscan_sample_data"


def _patients(seed=2, n=600, T=100, ratio=6.0):
    rng = np.random.default_rng(seed)
    day = rng.integers(0, T, n)
    t = (rng.exponential(np.where((day >= 40) & (day < 50), 1.0, ratio)) + 0.001).round(3)
    return day, np.minimum(t, 8.0), t > 8.0


@pytest.mark.parametrize("direction, prospective", [("high", False), ("low", False), ("both", True)])
def test_clusters_are_the_best_intervals_by_the_formula(direction, prospective):
    day, t, cen = _patients(ratio=1 / 6.0 if direction == "low" else 6.0)
    res = hp.scan.temporal_exponential(day, t, cen, max_temporal=15, prospective=prospective, direction=direction,
                                       n_replicates=19, seed=1, backend="cpu", progress=False)
    dead = ~cen
    C = int(dead.sum())
    mu = t * C / t.sum()
    best, where = 0.0, None
    for t2 in range(99 if prospective else 0, 100):
        for t1 in range(t2, max(-1, t2 - 15), -1):
            inside = (day >= t1) & (day <= t2)
            c, e = dead[inside].sum(), mu[inside].sum()
            hi, lo = c > e and c >= 2, c < e
            if (direction in ("high", "both") and hi) or (direction in ("low", "both") and lo):
                v = float(xlogy_ratio(c, e) + xlogy_ratio(C - c, C - e))
                if v > best + 1e-9:
                    best, where = v, (t1, t2)
    top = res.most_likely
    assert top.log_likelihood_ratio == pytest.approx(best, rel=1e-9) and (top.start, top.end) == where
    inside = (day >= top.start) & (day <= top.end)
    assert top.cases == dead[inside].sum() and top.population == inside.sum()
    assert top.expected == pytest.approx(mu[inside].sum(), rel=1e-9)
    # the replicates' maxima are those of the space-time scan's purely temporal clusters
    st = hp.scan.space_time_exponential(np.zeros((len(day), 2)), t, day, cen, max_temporal=15,
                                        prospective=prospective, direction=direction, n_replicates=19, seed=1,
                                        backend="cpu", progress=False, purely_temporal=True)
    np.testing.assert_array_equal(res.null_llr, st.null_llr)
    for row in res.clusters.iloc[1:].itertuples():
        assert (row.end < top.start - 1 or row.start > top.end + 1) and row.log_likelihood_ratio > 1.0


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_the_cuda_engine_gives_the_cpu_engines_maxima(backend):
    day, t, cen = _patients(ratio=2.0)
    kw = dict(max_temporal=10, direction="low", n_replicates=5, seed=2, progress=False)
    a = hp.scan.temporal_exponential(day, t, cen, backend="cpu", **kw)
    b = hp.scan.temporal_exponential(day, t, cen, backend=backend, **kw)
    np.testing.assert_allclose(b.null_llr, a.null_llr, rtol=1e-12)
    assert a.clusters.log_likelihood_ratio.tolist() == b.clusters.log_likelihood_ratio.tolist()


@pytest.mark.parametrize("kw, match", [
    (dict(survival_times=-np.ones(600)), "positive"),
    (dict(max_temporal=0), "max_temporal"),
    (dict(max_temporal_percent=95.0), "90"),
    (dict(min_cases=1), "min_cases"),
])
def test_bad_input_is_refused(kw, match):
    day, t, cen = _patients()
    args = dict(survival_times=t, censored=cen, n_replicates=9, progress=False)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        hp.scan.temporal_exponential(day, **args)


# ---------------------------------------------------------------------------- SaTScan 10.3.2
#: name -> the edits of the sample parameter file
_ANALYSES = {"retrospective": {"AnalysisType=3": "AnalysisType=2"},
             "prospective": {"AnalysisType=3": "AnalysisType=6"}}


def _write_inputs(folder: Path) -> None:
    for name in ("FakeSpaceTimeExponential.prm", "SurvivalFake.cas", "SurvivalFake.geo"):
        shutil.copy(SAMPLE / name, folder / name)


def _prm(name: str, folder: Path) -> Path:
    return edit_prm(folder / "FakeSpaceTimeExponential.prm",
                    {**_ANALYSES[name], "ResultsFile=SurvivalFake.txt": f"ResultsFile={name}.txt",
                     "PValueReportType=0": "PValueReportType=1",
                     "MostLikelyClusterEachCentroidDBase=n": "MostLikelyClusterEachCentroidDBase=y"},
                    folder / f"{name}.prm")


def run_satscan(binary) -> dict:
    """SaTScan's cluster tables (``.col.dbf``) of the sample run as purely temporal analyses."""
    return run_each(binary, "hphawkes-exp-temporal-", _write_inputs, _ANALYSES, _prm, read_clusters)


@pytest.fixture(scope="module")
def satscan_output():
    return oracle(FIXTURE, run_satscan)


@pytest.mark.parametrize("name", list(_ANALYSES))
def test_run_prm_matches_satscan(name, satscan_output, tmp_path):
    _write_inputs(tmp_path)
    res = hp.scan.run_prm(_prm(name, tmp_path), seed=1, progress=False)
    assert res.model == "temporal_exponential" and res.purely_temporal
    rows = satscan_output[name]["rows"]
    cl = res.clusters
    assert len(cl) >= 1 and all(float(r["P_VALUE"]) >= 0.99 for r in rows[len(cl):])
    for k, r in enumerate(rows[:len(cl)]):
        row = cl.iloc[k]
        assert r["LOC_ID"] == "All", k
        when = tuple(np.datetime64("-".join(f"{int(v):02d}" for v in r[key].split("/"))) for key in
                     ("START_DATE", "END_DATE"))
        assert (np.datetime64(row.start, "D"), np.datetime64(row.end, "D")) == when, k
        assert row.cases == int(float(r["OBSERVED"])), k
        assert row.expected == pytest.approx(float(r["EXPECTED"]), abs=1e-6), k
        assert row.log_likelihood_ratio == pytest.approx(float(r["LLR"]), abs=1e-6), k
        p = float(r["P_VALUE"])
        assert abs(row.p_value - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-3) * 2 / 1000) + 2e-3, k


if __name__ == "__main__":  # write the stored SaTScan output (see tests/satscan_oracle.py)
    store(FIXTURE, run_satscan, "test_scan_exponential_temporal.py")
