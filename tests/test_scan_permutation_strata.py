"""The space-time permutation scan with strata (case covariates, the day of the week): expectations
against their formula by enumeration, the stratified permutation null keeping every stratum's margins,
run_prm with AdjustForWeeklyTrends on the CUDA engine, and its refusals (against SaTScan itself:
test_scan_satscan_samples.py)."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.scan import null_draws
from hphawkes_py.scan.permutation_strata import permutation_strata

sys.path.insert(0, str(Path(__file__).parent))
from engines import CUDA_ENGINES  # noqa: E402

SAT = hp.datasets.satscan_sample_path


def _rows(seed=0, L=9, T=16, n=120):
    rng = np.random.default_rng(seed)
    gid = rng.integers(0, L, n)
    day = rng.integers(0, T, n)
    c = rng.integers(1, 4, n)
    cov = rng.integers(0, 3, n)
    return c, gid, day, cov, L, T


@pytest.mark.parametrize("covariates, day_of_week", [(True, False), (False, True), (True, True)])
def test_stratified_expectations_by_enumeration(covariates, day_of_week):
    c, gid, day, cov, L, T = _rows()
    abs_day = day + 19000  # a day number: only days mod 7 matter
    mu, loc_q, day_q, bounds = permutation_strata(c, gid, day, abs_day, L, T, cov if covariates else None,
                                                  day_of_week)
    stratum = (cov if covariates else np.zeros_like(cov)) * 7 + (abs_day % 7 if day_of_week else 0)
    ref = np.zeros((L, T))
    for z in range(L):
        for t in range(T):
            for s in np.unique(stratum):
                m = stratum == s
                Cs = c[m].sum()
                ref[z, t] += c[m & (gid == z)].sum() * c[m & (day == t)].sum() / Cs
    np.testing.assert_allclose(mu, ref, rtol=1e-12)
    assert mu.sum() == pytest.approx(c.sum())
    # the cases one by one, stratum by stratum
    assert len(loc_q) == c.sum() and bounds[-1] == c.sum() and len(bounds) == len(np.unique(stratum)) + 1
    # every block of cases is one stratum's cases, cell by cell
    blocks, strata = [], []
    for b in range(len(bounds) - 1):
        got = np.zeros((L, T), dtype=np.int64)
        np.add.at(got, (loc_q[bounds[b]:bounds[b + 1]], day_q[bounds[b]:bounds[b + 1]]), 1)
        blocks.append(got.tobytes())
    for v in np.unique(stratum):
        want = np.zeros((L, T), dtype=np.int64)
        m = stratum == v
        np.add.at(want, (gid[m], day[m]), c[m])
        strata.append(want.tobytes())
    assert sorted(blocks) == sorted(strata)


def test_stratified_permutation_keeps_every_stratum_margins():
    c, gid, day, cov, L, T = _rows(1)
    mu, loc_q, day_q, bounds = permutation_strata(c, gid, day, day, L, T, cov, True)
    seeds = np.arange(1, 41, dtype=np.uint32)
    M = null_draws.permute_days(loc_q, day_q, L, T, seeds, bounds)
    assert M.shape == (L, T, 40)
    # every stratum keeps its days: the total per day and per location of every replicate is the data's
    np.testing.assert_array_equal(M.sum(axis=1), np.repeat(np.bincount(loc_q, minlength=L)[:, None], 40, axis=1))
    np.testing.assert_array_equal(M.sum(axis=0), np.repeat(np.bincount(day_q, minlength=T)[:, None], 40, axis=1))
    # weekday strata: a replicate's cases on each weekday at each location are the data's
    for w in range(7):
        on = (np.arange(T) % 7) == w
        data = np.zeros(L, dtype=np.int64)
        np.add.at(data, loc_q[on[day_q]], 1)
        np.testing.assert_array_equal(M[:, on, :].sum(axis=1), np.repeat(data[:, None], 40, axis=1))
    # and the permutation is not the identity
    obs = np.zeros((L, T), dtype=np.int64)
    np.add.at(obs, (loc_q, day_q), 1)
    assert any((M[:, :, r] != obs).any() for r in range(40))


def test_one_stratum_permutes_as_before():
    """bounds = [0, C] is the unstratified permutation: the same draws."""
    c, gid, day, cov, L, T = _rows(2)
    loc_q = np.repeat(gid, c)
    day_q = np.repeat(day, c)
    seeds = np.arange(7, 17, dtype=np.uint32)
    a = null_draws.permute_days(loc_q, day_q, L, T, seeds)
    b = null_draws.permute_days(loc_q, day_q, L, T, seeds, np.array([0, len(loc_q)]))
    np.testing.assert_array_equal(a, b)


def _nyc(tmp_path, weekly="y", covariates=False, reps=199):
    for f in ("NYCfever.cas", "NYCfever.geo"):
        shutil.copy(SAT(f), tmp_path / f)
    text = SAT("NYCfever.prm").read_text().replace("AnalysisType=4", "AnalysisType=3")
    text = text.replace("AdjustForWeeklyTrends=n", f"AdjustForWeeklyTrends={weekly}")
    text = text.replace("MonteCarloReps=999", f"MonteCarloReps={reps}")
    if covariates:
        rng = np.random.default_rng(3)
        lines = [ln.rstrip() + f" {rng.integers(1, 3)} {'ab'[rng.integers(0, 2)]}"
                 for ln in SAT("NYCfever.cas").read_text().split("\n") if ln.strip()]
        (tmp_path / "cov.cas").write_text("\n".join(lines) + "\n")
        text = text.replace("CaseFile=NYCfever.cas", "CaseFile=cov.cas")
    (tmp_path / "a.prm").write_text(text)
    return tmp_path / "a.prm"


def test_weekly_adjustment_in_the_report(tmp_path):
    res = hp.scan.run_prm(_nyc(tmp_path, reps=9), seed=1, progress=False, backend="cpu")
    assert res.day_of_week and res.model == "space_time_permutation"
    assert "adjusting for weekly trends nonparametrically." in hp.scan.outputs.report_text(res).splitlines()[1:3]


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_weekly_adjustment_on_the_cuda_engine(tmp_path, backend):
    prm = _nyc(tmp_path, reps=19)
    cpu = hp.scan.run_prm(prm, seed=2, progress=False, backend="cpu")
    dev = hp.scan.run_prm(prm, seed=2, progress=False, backend=backend)
    np.testing.assert_allclose(dev.null_llr, cpu.null_llr, rtol=1e-12)
    np.testing.assert_allclose(dev.clusters.log_likelihood_ratio, cpu.clusters.log_likelihood_ratio, rtol=1e-12)


def test_weekly_adjustment_refusals(tmp_path):
    prm = _nyc(tmp_path)
    text = prm.read_text()
    prm.write_text(text.replace("TimeAggregationLength=1", "TimeAggregationLength=2"))
    with pytest.raises(ValueError, match="AdjustForWeeklyTrends.*needs a time aggregation of 1 day"):
        hp.scan.run_prm(prm, progress=False, backend="cpu")
    with pytest.raises(TypeError, match="day_of_week must be True or False"):
        hp.scan.space_time_permutation([[0, 0], [1, 1]], [1, 2], [0, 1], day_of_week="yes", n_replicates=9)
