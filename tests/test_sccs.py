"""Tests of hp.sccs: data building, CCD engines vs the NumPy reference, MAP vs scipy,
the oxford conditional MLE, bootstrap weights, CV, simulation recovery, bad input, CLI."""
from __future__ import annotations

import concurrent.futures as cf
import math

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py import datasets
from hphawkes_py.sccs import SCCSData
from hphawkes_py._backend import resolve_backend
from hphawkes_py.sccs.engine import make_engine as _make_engine


def make_engine(data, *, backend, **kw):
    return _make_engine(data, backend=resolve_backend(backend), **kw)

import naive_sccs as nv

OX_COEF = {"exgr1": 2.48797465298, "agegr2": -1.49057569650}
OX_LOGLIK = -10.0882772097


def oxford_long():
    ox = datasets.load_oxford()
    out = pd.DataFrame({"stratum_id": ox.indiv, "row_id": np.arange(len(ox)), "y": ox.event, "time": ox.interval})
    rows = []
    for i, r in ox.iterrows():
        if r.exgr == 1:
            rows.append((i, "exgr1"))
        if r.agegr == 2:
            rows.append((i, "agegr2"))
    return out, pd.DataFrame(rows, columns=["row_id", "covariate_id"])


def random_problem(seed, n_strata=25, rows=(2, 6), J=6, binary=False, density=0.4, ymax=3):
    rng = np.random.default_rng(seed)
    out, cov = [], []
    rid = 0
    for s in range(n_strata):
        k = rng.integers(rows[0], rows[1] + 1)
        y = rng.integers(0, ymax + 1, size=k)
        if y.sum() == 0:
            y[rng.integers(k)] = 1
        for i in range(k):
            out.append((s + 100, rid, y[i], rng.uniform(0.5, 30.0)))
            for j in range(J):
                if rng.random() < density:
                    cov.append((rid, f"c{j}", 1.0 if binary else rng.normal(0.5, 1.0)))
            rid += 1
    return SCCSData.from_long(
        pd.DataFrame(out, columns=["stratum_id", "row_id", "y", "time"]),
        pd.DataFrame(cov, columns=["row_id", "covariate_id", "value"]),
    )


def dense(data):
    return nv.dense_design(data), data.y, data.time, data.row_stratum


from engines import CUDA_ENGINES, ENGINES as BACKENDS  # noqa: E402


# ---------------------------------------------------------------- oxford (published MLE)
@pytest.mark.parametrize("backend", BACKENDS)
def test_oxford_conditional_mle(backend):
    out, cov = oxford_long()
    data = SCCSData.from_long(out, cov)
    f = hp.sccs.fit(data, prior="none", tolerance=1e-14, backend=backend)
    assert f.converged and f.backend == backend
    for k, v in OX_COEF.items():
        assert abs(f.coefficients[k] - v) < 1e-6
    assert abs(f.log_likelihood - OX_LOGLIK) < 1e-6
    assert f.log_prior == 0.0


def test_oxford_from_raw_eras_matches_published():
    """from_eras on the raw Oxford records (observation 366..730, risk window exday+15..+35,
    age group 2 from day 548) rebuilds the design and gives the same MLE."""
    raw = pd.read_csv(datasets.path("sccs/oxford_raw.tsv"), sep="\t")
    obs = pd.DataFrame({"person_id": raw.indiv, "start": raw.start + 1, "end": raw.end})
    eras = pd.concat([
        pd.DataFrame({"person_id": raw.indiv, "start": raw.exday + 15, "end": raw.exday + 35, "covariate_id": "exgr1"}),
        pd.DataFrame({"person_id": raw.indiv, "start": 548, "end": 730, "covariate_id": "agegr2"}),
    ])
    outc = pd.DataFrame({"person_id": raw.indiv, "day": raw.eventday})
    data = SCCSData.from_eras(obs, eras, outc)
    assert data.n_strata == 10 and int(data.n_events.sum()) == 10
    np.testing.assert_allclose(np.bincount(data.row_stratum, weights=data.time), 365.0)
    f = hp.sccs.fit(data, prior="none", tolerance=1e-14, backend="cpu")
    for k, v in OX_COEF.items():
        assert abs(f.coefficients[k] - v) < 1e-6
    # without merging: one row per interval between cut points, exactly oxford.csv's 38 rows;
    # the log-likelihood (sum y_i log p_i) depends on that partition, so compare it here
    d2 = SCCSData.from_eras(obs, eras, outc, merge=False)
    assert d2.n_rows == 38 and data.n_rows < 38
    f2 = hp.sccs.fit(d2, prior="none", tolerance=1e-14, backend="cpu")
    np.testing.assert_allclose(f2.coefficients.to_numpy(), f.coefficients.to_numpy(), atol=1e-6)
    assert abs(f2.log_likelihood - OX_LOGLIK) < 1e-6
    # the same through per-covariate risk windows on the raw vaccination day
    eras_raw = pd.concat([
        pd.DataFrame({"person_id": raw.indiv, "start": raw.exday, "end": raw.exday, "covariate_id": "exgr1"}),
        pd.DataFrame({"person_id": raw.indiv, "start": 548, "end": 730, "covariate_id": "agegr2"}),
    ])
    d3 = SCCSData.from_eras(obs, eras_raw, outc, risk_windows={"exgr1": (15, 35)}, merge=False)
    np.testing.assert_array_equal(d3.time, d2.time)
    np.testing.assert_array_equal(d3.row_idx, d2.row_idx)
    with pytest.raises(ValueError, match="risk_windows"):
        SCCSData.from_eras(obs, eras_raw, outc, risk_windows={"nope": (1, 2)})


# ---------------------------------------------------------------- engines vs NumPy reference
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("binary", [False, True])
def test_engine_hot_steps_match_reference(backend, binary):
    data = random_problem(1, binary=binary, n_strata=15)
    X, y, t, st = dense(data)
    rng = np.random.default_rng(2)
    w = rng.integers(0, 3, size=data.n_strata).astype(float)
    beta = rng.normal(0, 0.3, size=data.n_covariates)
    eng = make_engine(data, backend=backend, weights=w)
    eng.set_beta(beta)
    assert eng.log_likelihood(beta) == pytest.approx(nv.loglik(X, y, t, st, beta, w), rel=1e-11)
    for j in range(data.n_covariates):
        g, h = eng.gradient_hessian(j)
        gr, hr = nv.gradient_hessian(X, y, t, st, beta, j, w)
        assert g == pytest.approx(gr, rel=1e-10, abs=1e-10)
        assert h == pytest.approx(hr, rel=1e-10, abs=1e-10)
    # sparse incremental updates keep gradient and likelihood exact
    for j, d in [(0, 0.3), (2, -0.7), (0, 0.1), (4, 1.2)]:
        eng.update(j, d)
        beta[j] += d
        gr, hr = nv.gradient_hessian(X, y, t, st, beta, 1, w)
        g, h = eng.gradient_hessian(1)
        assert g == pytest.approx(gr, rel=1e-10, abs=1e-10) and h == pytest.approx(hr, rel=1e-10, abs=1e-10)
    assert eng.log_likelihood(beta) == pytest.approx(nv.loglik(X, y, t, st, beta, w), rel=1e-11)
    np.testing.assert_allclose(eng.stratum_log_likelihood(beta), nv.stratum_loglik(X, y, t, st, beta), rtol=1e-11)


# ---------------------------------------------------------------- CCD optimum vs scipy
@pytest.mark.parametrize("seed", [3, 4])
def test_normal_map_matches_scipy(seed):
    data = random_problem(seed)
    X, y, t, st = dense(data)
    ref = nv.map_scipy(X, y, t, st, "normal", 0.5)
    f = hp.sccs.fit(data, prior="normal", variance=0.5, tolerance=1e-13, backend="cpu")
    np.testing.assert_allclose(f.coefficients.to_numpy(), ref, atol=2e-6)
    lp_ref = nv.loglik(X, y, t, st, ref) + nv.log_prior(ref, "normal", 0.5)
    assert f.log_posterior >= lp_ref - 1e-9
    assert f.log_prior == pytest.approx(nv.log_prior(f.coefficients.to_numpy(), "normal", 0.5), rel=1e-12)


@pytest.mark.parametrize("seed,variance", [(5, 0.05), (6, 0.2), (7, 1.0)])
def test_laplace_map_matches_scipy_with_exact_zeros(seed, variance):
    data = random_problem(seed, J=8)
    X, y, t, st = dense(data)
    ref = nv.map_scipy(X, y, t, st, "laplace", variance)
    f = hp.sccs.fit(data, prior="laplace", variance=variance, tolerance=1e-13, backend="cpu")
    b = f.coefficients.to_numpy()
    lp = lambda v: nv.loglik(X, y, t, st, v) + nv.log_prior(v, "laplace", variance)
    # CCD's objective is at least as good as the direct optimiser's
    assert lp(b) >= lp(ref) - 1e-9
    assert f.log_posterior == pytest.approx(lp(b), rel=1e-12)
    # zero pattern: exact zeros in CCD, bound-constrained zeros in scipy
    assert 0 < (b == 0).sum() < len(b) or variance == 1.0
    np.testing.assert_array_equal(b == 0, np.abs(ref) < 1e-7)
    np.testing.assert_allclose(b, ref, atol=1e-5)
    # KKT conditions at the CCD solution
    lam = math.sqrt(2 / variance)
    for j in range(len(b)):
        g = nv.gradient_hessian(X, y, t, st, b, j)[0]
        if b[j] == 0:
            assert abs(g) <= lam + 1e-6
        else:
            assert g == pytest.approx(lam * np.sign(b[j]), abs=1e-5)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_laplace_cpu_and_cuda_engine_agree(backend):
    data = random_problem(8, J=8, binary=True)
    fc = hp.sccs.fit(data, prior="laplace", variance=0.3, tolerance=1e-12, backend="cpu")
    fe = hp.sccs.fit(data, prior="laplace", variance=0.3, tolerance=1e-12, backend=backend)
    np.testing.assert_allclose(fe.coefficients.to_numpy(), fc.coefficients.to_numpy(), atol=1e-9)
    np.testing.assert_array_equal(fe.coefficients.to_numpy() == 0, fc.coefficients.to_numpy() == 0)
    assert fe.log_likelihood == pytest.approx(fc.log_likelihood, rel=1e-11)
    assert fe.iterations == fc.iterations


def test_exclude_removes_prior():
    data = random_problem(9, J=5)
    f = hp.sccs.fit(data, prior="laplace", variance=1e-6, exclude=["c2"], tolerance=1e-12, backend="cpu")
    b = f.coefficients
    assert (b.drop("c2") == 0).all() and b["c2"] != 0
    # the excluded coordinate is the conditional MLE given the others at zero
    X, y, t, st = dense(data)
    assert abs(nv.gradient_hessian(X, y, t, st, b.to_numpy(), 2)[0]) < 1e-6
    assert f.log_prior == pytest.approx(4 * math.log(math.sqrt(2 / 1e-6) / 2))


# ---------------------------------------------------------------- bootstrap weights == duplication
@pytest.mark.parametrize("backend", BACKENDS)
def test_stratum_weights_equal_duplication(backend):
    out, cov = oxford_long()
    w = np.array([2, 1, 0, 3, 1, 1, 0, 1, 2, 1], dtype=float)
    strata = np.sort(out.stratum_id.unique())
    dup_out, dup_cov = [], []
    for k, s in enumerate(strata):
        for c in range(int(w[k])):
            o = out[out.stratum_id == s].copy()
            cc = cov[cov.row_id.isin(o.row_id)].copy()
            o["stratum_id"] = f"{s}_{c}"
            o["row_id"] = o.row_id.astype(str) + f"_{c}"
            cc["row_id"] = cc.row_id.astype(str) + f"_{c}"
            dup_out.append(o)
            dup_cov.append(cc)
    dup = SCCSData.from_long(pd.concat(dup_out), pd.concat(dup_cov))
    base = SCCSData.from_long(out, cov)
    fw = hp.sccs.fit(base, prior="normal", variance=2.0, weights=w, tolerance=1e-14, backend=backend)
    fd = hp.sccs.fit(dup, prior="normal", variance=2.0, tolerance=1e-14, backend="cpu")
    np.testing.assert_allclose(fw.coefficients.to_numpy(), fd.coefficients.to_numpy(), atol=1e-7)
    assert fw.log_likelihood == pytest.approx(fd.log_likelihood, rel=1e-9)


def test_bootstrap_executor_independent_and_summary():
    data, truth = hp.sccs.simulate(n_cases=400, n_drugs=5, prevalence=0.3, seed=11)
    b1 = hp.sccs.bootstrap(data, prior="laplace", variance=0.5, replicates=12, seed=3, backend="cpu")
    with cf.ThreadPoolExecutor(2) as ex:
        b2 = hp.sccs.bootstrap(data, prior="laplace", variance=0.5, replicates=12, seed=3, executor=ex, backend="cpu")
    pd.testing.assert_frame_equal(b1.samples, b2.samples)
    s = b1.summary()
    assert list(s.columns) == ["estimate", "lower", "upper", "p_nonzero"]
    assert (s.lower <= s.upper).all() and ((s.p_nonzero >= 0) & (s.p_nonzero <= 1)).all()
    assert b1.samples.shape == (12, 5)
    # the replicates really differ (resampling happened) and stay near the estimate
    assert b1.samples.std().max() > 0
    np.testing.assert_array_less(np.abs(b1.samples.median() - s.estimate), 0.5)


# ---------------------------------------------------------------- simulation and CV
def test_simulation_recovers_relative_risks():
    data, truth = hp.sccs.simulate(n_cases=20000, n_drugs=8, prevalence=0.4, fraction_positive=0.5,
                                   relative_risks=(2.0, 4.0), seed=21)
    assert data.dropped["persons_without_outcomes"] == 0
    f = hp.sccs.fit(data, prior="none", tolerance=1e-10, backend="cpu")
    err = f.coefficients - truth
    # standard errors here are about 0.05 (0.08-0.12 measured at 6000 cases): max error < 4 SE
    assert np.abs(err).max() < 0.2 and np.abs(err).mean() < 0.07
    assert ((truth > 0) == (f.coefficients > 0.3)).all()


def test_cross_validation_picks_sensible_variance():
    null, _ = hp.sccs.simulate(n_cases=600, n_drugs=10, prevalence=0.2, fraction_positive=0.0, seed=5)
    strong, _ = hp.sccs.simulate(n_cases=600, n_drugs=10, prevalence=0.3, fraction_positive=0.5,
                                 relative_risks=(4.0,), seed=6)
    grid = [1e-3, 1e-2, 1e-1, 1.0, 10.0]
    cv0 = hp.sccs.cross_validate(null, prior="laplace", folds=5, grid=grid, seed=1, backend="cpu")
    cv1 = hp.sccs.cross_validate(strong, prior="laplace", folds=5, grid=grid, seed=1, backend="cpu")
    assert cv0.variance <= 1e-2 < cv1.variance
    assert list(cv1.scores.columns) == ["variance", "mean", "se", "total"]
    assert (cv1.scores.se > 0).all()
    assert cv1.fit.variance == cv1.variance
    assert cv1.fit.coefficients.abs().max() > 0.5
    with cf.ThreadPoolExecutor(2) as ex:
        cv1b = hp.sccs.cross_validate(strong, prior="laplace", folds=5, grid=grid, seed=1, executor=ex, backend="cpu")
    np.testing.assert_array_equal(cv1b.fold_scores, cv1.fold_scores)


# ---------------------------------------------------------------- building data
def test_from_eras_hand_example():
    obs = pd.DataFrame({"person_id": [1, 2, 3], "start": [0, 0, 0], "end": [99, 49, 9]})
    eras = pd.DataFrame({
        "person_id": [1, 1, 1, 2, 2],
        "start": [10, 15, 60, 45, 200],
        "end": [19, 24, 69, 80, 210],
        "covariate_id": ["a", "b", "a", "a", "b"],
    })
    outc = pd.DataFrame({"person_id": [1, 1, 2, 2], "day": [12, 65, 46, 500]})
    d = SCCSData.from_eras(obs, eras, outc)
    assert d.dropped == {"eras_outside_observation": 1, "outcomes_outside_observation": 1,
                         "persons_without_outcomes": 1}
    o, c = d.to_long()
    pat = c.groupby("row_id").covariate_id.apply(lambda s: ",".join(sorted(s)))
    o["pattern"] = o.row_id.map(pat).fillna("")
    got = {(r.stratum_id, r.pattern): (r.time, r.y) for r in o.itertuples()}
    # person 1: none 0-9,25-59,70-99 (75 d); a 10-14,60-69 (15 d, events at 12 and 65); a,b 15-19; b 20-24
    assert got == {(1, ""): (75, 0), (1, "a"): (15, 2), (1, "a,b"): (5, 0), (1, "b"): (5, 0),
                   (2, ""): (45, 0), (2, "a"): (5, 1)}


def test_from_long_handles_and_records_no_event_strata():
    out, cov = oxford_long()
    extra = pd.DataFrame({"stratum_id": [99, 99], "row_id": [100, 101], "y": [0, 0], "time": [5.0, 6.0]})
    o2 = pd.concat([out, extra])
    c2 = pd.concat([cov, pd.DataFrame({"row_id": [100], "covariate_id": ["exgr1"]})])
    d = SCCSData.from_long(o2, c2)
    assert d.n_strata == 10 and d.dropped["strata_without_events"] == 1
    assert d.dropped["rows_in_strata_without_events"] == 2
    assert "strata_without_events=1" in repr(d)
    assert SCCSData.from_long(o2, c2, strata_without_events="keep").n_strata == 11
    with pytest.raises(ValueError, match="no events"):
        SCCSData.from_long(o2, c2, strata_without_events="raise")


def test_uppercase_ohdsi_columns_and_cpr_smoke():
    outc, cov = datasets.load_cpr_test()
    outc = outc.copy()
    with pytest.raises(ValueError, match="time must be finite and > 0"):
        SCCSData.from_long(outc, cov)
    outc.loc[outc.TIME == 0, "TIME"] = 1  # as Cyclops' test-cprViaSql.R does
    d = SCCSData.from_long(outc, cov)
    assert d.values is not None and d.n_covariates == cov.COVARIATE_ID.nunique()
    f = hp.sccs.fit(d, prior="laplace", variance=0.1, backend="cpu")
    assert f.converged and np.isfinite(f.log_likelihood) and (f.coefficients != 0).sum() < d.n_covariates


# ---------------------------------------------------------------- bad input
def test_bad_input_errors():
    out, cov = oxford_long()
    data = SCCSData.from_long(out, cov)
    bad = out.copy(); bad.loc[0, "y"] = -1
    with pytest.raises(ValueError, match="non-negative integer"):
        SCCSData.from_long(bad, cov)
    bad = out.copy(); bad["y"] = bad["y"].astype(float); bad.loc[0, "y"] = 0.5
    with pytest.raises(ValueError, match="non-negative integer"):
        SCCSData.from_long(bad, cov)
    bad = out.copy(); bad["time"] = bad["time"].astype(float); bad.loc[3, "time"] = 0.0
    with pytest.raises(ValueError, match="time must be finite and > 0"):
        SCCSData.from_long(bad, cov)
    with pytest.raises(ValueError, match="duplicate"):
        SCCSData.from_long(out, pd.concat([cov, cov.iloc[:1]]))
    with pytest.raises(ValueError, match="not in outcomes"):
        SCCSData.from_long(out, pd.concat([cov, pd.DataFrame({"row_id": [999], "covariate_id": ["x"]})]))
    with pytest.raises(ValueError, match="row_id must be unique"):
        SCCSData.from_long(pd.concat([out, out.iloc[:1]]), cov)
    with pytest.raises(ValueError, match="missing"):
        SCCSData.from_long(out.drop(columns="time"), cov)
    bad = out.copy(); bad["stratum_id"] = bad["stratum_id"].astype(float); bad.loc[0, "stratum_id"] = np.nan
    with pytest.raises(ValueError, match="stratum_id"):
        SCCSData.from_long(bad, cov)
    with pytest.raises(ValueError, match="exclude"):
        hp.sccs.fit(data, exclude=["nope"], backend="cpu")
    for v in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="variance"):
            hp.sccs.fit(data, prior="normal", variance=v, backend="cpu")
    with pytest.raises(ValueError, match="prior"):
        hp.sccs.fit(data, prior="cauchy", backend="cpu")
    with pytest.raises(ValueError, match="weights"):
        hp.sccs.fit(data, weights=np.ones(3), backend="cpu")
    with pytest.raises(TypeError, match="SCCSData"):
        hp.sccs.fit(out, backend="cpu")
    with pytest.raises(ValueError, match="folds"):
        hp.sccs.cross_validate(data, folds=11, backend="cpu")
    with pytest.raises(ValueError, match="grid"):
        hp.sccs.cross_validate(data, folds=2, grid=[0.1, -1], backend="cpu")


def test_non_convergence_is_reported():
    out, cov = oxford_long()
    f = hp.sccs.fit(SCCSData.from_long(out, cov), prior="none", tolerance=1e-15, max_iterations=2, backend="cpu")
    assert not f.converged and f.iterations == 2


# ---------------------------------------------------------------- CLI
def test_cli_fit_cv_bootstrap(tmp_path):
    from hphawkes_py.cli import main

    out, cov = oxford_long()
    out.to_csv(tmp_path / "o.csv", index=False)
    cov.to_csv(tmp_path / "c.csv", index=False)
    rc = main(["sccs", "fit", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--prior", "none",
               "--tolerance", "1e-14", "--backend", "cpu", "--output", str(tmp_path / "coef.csv")])
    assert rc == 0
    res = pd.read_csv(tmp_path / "coef.csv").set_index("covariate_id")
    assert abs(res.loc["exgr1", "coefficient"] - OX_COEF["exgr1"]) < 1e-6
    rc = main(["sccs", "fit", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--prior", "none",
               "--tolerance", "1e-12", "--results", "profile", "--backend", "cpu", "--quiet",
               "--output", str(tmp_path / "res.csv")])
    assert rc == 0
    res = pd.read_csv(tmp_path / "res.csv").set_index("covariate_id")
    # survival::clogit profile interval of exgr1 (see test_sccs_inference.py)
    assert abs(np.log(res.loc["exgr1", "irr_lower"]) - 1.10779448) < 1e-6
    assert res.loc["exgr1", "exposed_cases"] == 9
    rc = main(["sccs", "bootstrap", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--prior", "normal",
               "--variance", "1", "--replicates", "5", "--seed", "1", "--backend", "cpu",
               "--output", str(tmp_path / "boot.csv")])
    assert rc == 0
    assert set(pd.read_csv(tmp_path / "boot.csv").columns) >= {"covariate_id", "estimate", "lower", "upper", "p_nonzero"}
    rc = main(["sccs", "cv", str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--folds", "2", "--grid", "0.1,1",
               "--seed", "1", "--backend", "cpu", "--output", str(tmp_path / "cv.csv")])
    assert rc == 0
    assert len(pd.read_csv(tmp_path / "cv.csv")) == 2


def test_from_eras_bad_input():
    obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [99, 49]})
    eras = pd.DataFrame({"person_id": [1], "start": [10], "end": [19], "covariate_id": ["a"]})
    outc = pd.DataFrame({"person_id": [1], "day": [12]})
    with pytest.raises(ValueError, match="without an observation period"):
        SCCSData.from_eras(obs, eras.assign(person_id=[7]), outc)
    with pytest.raises(ValueError, match="without an observation period"):
        SCCSData.from_eras(obs, eras, outc.assign(person_id=[7]))
    with pytest.raises(ValueError, match="end < start"):
        SCCSData.from_eras(obs.assign(end=[99, -5]), eras, outc)
    with pytest.raises(ValueError, match="one row per person"):
        SCCSData.from_eras(pd.concat([obs, obs.iloc[:1]]), eras, outc)
    with pytest.raises(ValueError, match="integer days"):
        SCCSData.from_eras(obs, eras, outc.assign(day=[12.5]))
    with pytest.raises(ValueError, match="no person has an outcome"):
        SCCSData.from_eras(obs, eras, outc.assign(day=[500]))


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_float32(backend):
    """Single precision kernels: relative error of G/H/loglik bounded by a few thousand float32 ulps
    (sums over a few dozen terms and ratios of such sums: ~1e-5 is ~100 eps)."""
    data = random_problem(12, n_strata=12)
    X, y, t, st = dense(data)
    beta = np.random.default_rng(3).normal(0, 0.3, size=data.n_covariates)
    eng = make_engine(data, backend=backend, dtype=np.float32)
    eng.set_beta(beta)
    assert eng.log_likelihood() == pytest.approx(nv.loglik(X, y, t, st, beta), rel=1e-5)
    for j in range(data.n_covariates):
        g, h = eng.gradient_hessian(j)
        gr, hr = nv.gradient_hessian(X, y, t, st, beta, j)
        assert g == pytest.approx(gr, rel=1e-4, abs=1e-4) and h == pytest.approx(hr, rel=1e-4, abs=1e-4)


def test_reproduce_oxford_cli(capsys):
    from hphawkes_py.cli import main

    assert main(["reproduce", "sccs-oxford", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "2.48797465298" in out and "bootstrap" in out
