"""hp.sccs inference: Hessian covariance, Wald and profile-likelihood intervals against R
(survival::clogit) and independent scipy computations, the gradient convergence rule, and the
per-exposure results table."""
from __future__ import annotations

import math

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py import datasets
from hphawkes_py.cli.sccs import oxford_long
from hphawkes_py.sccs import SCCSData
from hphawkes_py.sccs.engine import information_matrix, make_engine

import naive_sccs as nv
from engines import ENGINES

# survival::clogit 3.5-3 on R 4.2.2 (Debian), oxford.csv, event ~ ex + ag + strata(indiv) + offset(log interval):
# Wald standard errors and p-values from summary(); likelihood-ratio p-values from nested fits; profile
# intervals by uniroot (tol 1e-12) on the clogit log-likelihood with the coefficient as an offset,
# at loglik_max - qchisq(0.95, 1) / 2.
R_SE = {"exgr1": 0.7084879181, "agegr2": 1.1182396145}
R_WALD_P = {"exgr1": 0.0004453031958, "agegr2": 0.1825428705731}
R_LR_P = {"exgr1": 0.0006922542733, "agegr2": 0.1333868895}
R_PROFILE_95 = {"exgr1": (1.10779448, 3.98682022), "agegr2": (-4.46369889, 0.42083978)}


@pytest.fixture(scope="module")
def oxford():
    return SCCSData.from_long(*oxford_long())


def dense(data):
    return nv.dense_design(data), data.y, data.time, data.row_stratum


@pytest.mark.parametrize("backend", ENGINES)
def test_oxford_profile_and_wald_intervals_match_clogit(oxford, backend):
    f = hp.sccs.fit(oxford, prior="none", tolerance=1e-12, backend=backend, progress=False)
    prof = f.confint(["exgr1", "agegr2"], level=0.95, method="profile")
    assert list(prof.columns) == ["lower", "upper"] and list(prof.index) == ["exgr1", "agegr2"]
    for k, (lo, hi) in R_PROFILE_95.items():
        assert prof.loc[k, "lower"] == pytest.approx(lo, abs=2e-7)
        assert prof.loc[k, "upper"] == pytest.approx(hi, abs=2e-7)
    wald = f.confint(method="wald")
    z = 1.959963984540054
    for k, se in R_SE.items():
        b = f.coefficients[k]
        assert wald.loc[k, "lower"] == pytest.approx(b - z * se, abs=1e-8)
        assert wald.loc[k, "upper"] == pytest.approx(b + z * se, abs=1e-8)
    cov = f.covariance()
    np.testing.assert_allclose(np.sqrt(np.diag(cov.loc[list(R_SE), list(R_SE)])), list(R_SE.values()), rtol=1e-9)


def test_oxford_results_table(oxford):
    f = hp.sccs.fit(oxford, prior="none", tolerance=1e-12, backend="cpu", progress=False)
    t = f.results_table()
    tp = f.results_table(method="profile")
    ox = datasets.load_oxford()
    for k, col in (("exgr1", "exgr"), ("agegr2", "agegr")):
        lvl = 1 if col == "exgr" else 2
        exposed = ox[ox[col] == lvl]
        assert t.loc[k, "p"] == pytest.approx(R_WALD_P[k], rel=1e-8)
        assert tp.loc[k, "p"] == pytest.approx(R_LR_P[k], rel=1e-7)
        assert t.loc[k, "se"] == pytest.approx(R_SE[k], rel=1e-9)
        assert t.loc[k, "irr"] == pytest.approx(math.exp(f.coefficients[k]), rel=1e-14)
        assert math.log(tp.loc[k, "irr_lower"]) == pytest.approx(R_PROFILE_95[k][0], abs=2e-7)
        assert math.log(tp.loc[k, "irr_upper"]) == pytest.approx(R_PROFILE_95[k][1], abs=2e-7)
        assert t.loc[k, "cases"] == 10
        assert t.loc[k, "exposed_cases"] == exposed.indiv.nunique()
        assert t.loc[k, "exposed_time"] == exposed.interval.sum()
        assert t.loc[k, "exposed_events"] == exposed.event.sum()


@pytest.mark.parametrize("weighted", [False, True])
def test_information_matrix_matches_reference(weighted):
    from test_sccs import random_problem

    data = random_problem(31, J=5)
    X, y, t, st = dense(data)
    rng = np.random.default_rng(1)
    beta = rng.normal(0, 0.4, data.n_covariates)
    w = rng.integers(0, 3, data.n_strata).astype(float) if weighted else None
    ref = nv.information(X, y, t, st, beta, w)
    np.testing.assert_allclose(information_matrix(data, beta, w), ref, rtol=1e-11, atol=1e-11)
    sub = [3, 1]
    np.testing.assert_allclose(information_matrix(data, beta, w, columns=sub), ref[np.ix_(sub, sub)], rtol=1e-11)
    # its diagonal is the engines' coordinate curvature
    eng = make_engine(data, backend="cpu", weights=w)
    eng.set_beta(beta)
    np.testing.assert_allclose([eng.gradient_hessian(j)[1] for j in range(data.n_covariates)], np.diag(ref),
                               rtol=1e-11)


def test_normal_prior_profile_matches_scipy_profile(oxford):
    """Profile of the log posterior with a Normal(0, 1) prior against scipy: the other
    coefficient maximised by minimize_scalar for each value, ends by brentq."""
    from scipy.optimize import minimize_scalar

    f = hp.sccs.fit(oxford, prior="normal", variance=1.0, tolerance=1e-12, backend="cpu", progress=False)
    X, y, t, st = dense(oxford)
    lp = lambda b: nv.loglik(X, y, t, st, b) + nv.log_prior(b, "normal", 1.0)
    j = list(oxford.covariate_ids).index("exgr1")
    k = 1 - j

    def prof(x):
        def neg(v):
            b = np.zeros(2)
            b[j], b[k] = x, v
            return -lp(b)
        return -minimize_scalar(neg, bracket=(-3, 3), tol=1e-12).fun

    ends = nv.profile_bounds(prof, f.coefficients["exgr1"], 1.920729410347062, 0.5)
    ci = f.confint("exgr1", level=0.95)
    assert ci.loc["exgr1", "lower"] == pytest.approx(ends[0], abs=1e-6)
    assert ci.loc["exgr1", "upper"] == pytest.approx(ends[1], abs=1e-6)
    # a 90% interval is inside the 95% one
    ci90 = f.confint("exgr1", level=0.90)
    assert ci.loc["exgr1", "lower"] < ci90.loc["exgr1", "lower"] < ci90.loc["exgr1", "upper"] < ci.loc["exgr1", "upper"]


def test_gradient_rule_fixes_flat_laplace_optimum(oxford):
    """Oxford, Laplace prior of variance 0.5, tolerance 1e-10: the relative-change rule stops
    with exgr1 off in the 6th digit; the gradient rule (the default at this tolerance) matches
    an independent optimum (scipy root of the KKT equations on the reference gradient)."""
    from scipy.optimize import root

    X, y, t, st = dense(oxford)
    lam = math.sqrt(2 / 0.5)
    start = nv.map_scipy(X, y, t, st, "laplace", 0.5)
    sign = np.sign(start)
    assert np.all(sign != 0)

    def kkt(b):
        return [nv.gradient_hessian(X, y, t, st, b, j)[0] - lam * sign[j] for j in range(len(b))]

    def jac(b):
        return -nv.information(X, y, t, st, b)

    ref = root(kkt, start, jac=jac, tol=1e-14).x
    assert np.max(np.abs(kkt(ref))) < 1e-12
    j = list(oxford.covariate_ids).index("exgr1")
    rel = hp.sccs.fit(oxford, prior="laplace", variance=0.5, tolerance=1e-10, convergence="relative",
                      backend="cpu", progress=False)
    assert rel.stopped_by == "relative" and rel.convergence == "relative"
    assert abs(rel.coefficients.iloc[j] - ref[j]) > 1e-6  # the problem issue 13 describes
    auto = hp.sccs.fit(oxford, prior="laplace", variance=0.5, tolerance=1e-10, backend="cpu", progress=False)
    assert auto.convergence == "gradient" and auto.stopped_by == "gradient" and auto.converged
    assert auto.kkt < 1e-10 * (abs(auto.log_posterior) + 1)
    np.testing.assert_allclose(auto.coefficients.to_numpy(), ref, atol=1e-9)
    # the default tolerance keeps Cyclops' relative rule
    assert hp.sccs.fit(oxford, backend="cpu", progress=False).convergence == "relative"
    short = hp.sccs.fit(oxford, prior="none", tolerance=1e-13, max_iterations=2, backend="cpu", progress=False)
    assert short.stopped_by == "max_iterations" and not short.converged


def test_laplace_zero_coefficient_profile_contains_zero():
    data, truth = hp.sccs.simulate(n_cases=500, n_drugs=4, prevalence=0.3, fraction_positive=0.25,
                                   relative_risks=(3.0,), seed=4)
    f = hp.sccs.fit(data, prior="laplace", variance=0.05, backend="cpu", progress=False)
    zero = f.coefficients[f.coefficients == 0].index
    pos = f.coefficients[f.coefficients > 0.5].index
    assert len(zero) and len(pos)
    ci = f.confint(list(zero) + list(pos))
    assert (ci.loc[zero, "lower"] < 0).all() and (ci.loc[zero, "upper"] > 0).all()
    assert (ci.loc[pos, "lower"] > 0).all()
    assert (ci.loc[pos, "lower"] < f.coefficients[pos]).all() and (ci.loc[pos, "upper"] > f.coefficients[pos]).all()


def test_infinite_mle_has_an_open_profile_interval():
    from test_sccs_badinput import separated_problem

    with pytest.warns(hp.sccs.MLEWarning):
        f = hp.sccs.fit(separated_problem(), prior="none", backend="cpu", progress=False)
    ci = f.confint("drug")
    assert ci.loc["drug", "upper"] == math.inf and np.isfinite(ci.loc["drug", "lower"])


def test_confint_bad_input(oxford):
    f = hp.sccs.fit(oxford, prior="none", backend="cpu", progress=False)
    with pytest.raises(ValueError, match="level"):
        f.confint(level=1.0)
    with pytest.raises(TypeError, match="level"):
        f.confint(level="0.95")
    with pytest.raises(ValueError, match="method"):
        f.confint(method="score")
    with pytest.raises(ValueError, match=r"covariates has id\(s\) not in the fit: \['nope'\]"):
        f.confint(["exgr1", "nope"])
    with pytest.raises(ValueError, match="method"):
        f.results_table(method="bayes")


def test_float32_fit_profile_is_close_and_finishes(oxford):
    f = hp.sccs.fit(oxford, prior="none", tolerance=1e-5, backend="cpu", progress=False, dtype=np.float32)
    ci = f.confint("exgr1")
    assert ci.loc["exgr1", "lower"] == pytest.approx(R_PROFILE_95["exgr1"][0], abs=1e-3)
    assert ci.loc["exgr1", "upper"] == pytest.approx(R_PROFILE_95["exgr1"][1], abs=1e-3)
