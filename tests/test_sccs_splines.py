"""SCCS age / season / calendar-time splines: bases equal R's, the interval design, the spline
prior, an unpenalised fit against survival::clogit and a direct SciPy conditional-likelihood
optimisation, simulation recovery of a known age effect, season effect and IRR, bad input."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.sccs import SCCSData
from hphawkes_py.sccs.splines import age_bin_of, age_bin_start, bspline_basis, cyclic_basis

import naive_sccs as nv


# ------------------------------------------------------------------ bases vs R
def test_bspline_basis_equals_r_bs():
    # R 4.2.2: splines::bs(c(0,0.5,2.9,3,5,7.7,9.99,10), knots=c(3,4.5,8), Boundary.knots=c(0,10))
    r = np.array([
        [0, 0, 0, 0, 0, 0],
        [0.370884773662551, 0.0492541152263374, 0.00115740740740741, 0, 0, 0],
        [0.134736625514403, 0.639402263374485, 0.225824074074074, 0, 0, 0],
        [0.111111111111111, 0.638888888888889, 0.25, 0, 0, 0],
        [0, 0.192857142857143, 0.659090909090909, 0.146871310507674, 0.00118063754427391, 0],
        [0, 0.000192857142857143, 0.157048701298701, 0.533261393152302, 0.309497048406139, 0],
        [0, 0, 1.29870129870122e-08, 2.71977567886647e-05, 0.014897914256198, 0.985074875],
        [0, 0, 0, 0, 0, 1],
    ])
    B = bspline_basis([0, 0.5, 2.9, 3, 5, 7.7, 9.99, 10], [0, 3, 4.5, 8, 10])
    np.testing.assert_allclose(B, r, atol=1e-12)


def test_cyclic_basis_equals_mgcv_csplinedes():
    # R 4.2.2, mgcv 1.8-41: cSplineDes(c(0,0.5,3,6.5,10,11.9), c(0,2,5,7,9,12)); first column dropped
    r = np.array([
        [0.114285714285714, 0.660714285714286, 0.225, 0, 0],
        [0.0482142857142857, 0.598660714285714, 0.351339285714286, 0.00178571428571429, 0],
        [0, 0.0666666666666667, 0.580952380952381, 0.342857142857143, 0.00952380952380952],
        [0.0602678571428572, 0, 0.00178571428571429, 0.270982142857143, 0.666964285714286],
        [0.571428571428571, 0.344047619047619, 0.00833333333333333, 0, 0.0761904761904762],
        [0.132257142857143, 0.664491666666667, 0.203241666666667, 0, 9.52380952380942e-06],
    ])
    B = cyclic_basis([0, 0.5, 3, 6.5, 10, 11.9], [0, 2, 5, 7, 9, 12])
    np.testing.assert_allclose(B, r[:, 1:], atol=1e-12)
    # the full cyclic basis is a partition of unity, so the dropped column is 1 - the rest
    np.testing.assert_allclose(1.0 - B.sum(axis=1), r[:, 0], atol=1e-12)


def test_age_bins_are_months_of_age():
    a = np.arange(-400, 40000)
    k = age_bin_of(a)
    assert np.all(age_bin_start(k) <= a) and np.all(age_bin_start(k + 1) > a)
    assert age_bin_start(12) == 365 and age_bin_start(48) == 1461  # 12 months = a year, 4 years = 1461 days


# ------------------------------------------------------------------ design
def small_tables(seed=0, P=120, one_event=False):
    rng = np.random.default_rng(seed)
    birth = 3000 + rng.integers(0, 3000, P)
    start = birth + rng.integers(365 * 20, 365 * 40, P)
    end = start + rng.integers(200, 900, P)
    obs = pd.DataFrame(dict(person_id=np.arange(P), start=start, end=end, birth_day=birth))
    es = start + rng.integers(0, 150, P)
    eras = pd.DataFrame(dict(person_id=np.arange(P), start=es, end=es + rng.integers(10, 60, P), covariate_id=1))
    n = 1 if one_event else 2
    days = [start + rng.integers(0, end - start + 1) for _ in range(n)]
    oc = pd.DataFrame(dict(person_id=np.tile(np.arange(P), n), day=np.concatenate(days)))
    return obs, eras, oc


def test_spline_rows_carry_the_basis_of_their_month_bins():
    obs, eras, oc = small_tables()
    d = SCCSData.from_eras(obs, eras, oc, age_knots=4, season_knots=4, calendar_knots=3, merge=False)
    assert [t.name for t in d.splines] == ["age", "season", "calendar"]
    assert list(d.covariate_ids) == [1] + [f"age_{i}" for i in range(1, 6)] + ["season_1", "season_2", "season_3"] \
        + [f"calendar_{i}" for i in range(1, 5)]
    # person-time is kept: every person's rows sum to its observation length
    per = np.bincount(d.row_stratum, weights=d.time)
    np.testing.assert_array_equal(per, (obs["end"] - obs["start"] + 1).to_numpy()[np.isin(obs.person_id, d.stratum_ids)])
    # rebuild each row's first day from the ordered unmerged intervals and check its spline values
    X = nv.dense_design(d)
    ptr = d.stratum_ptr
    age, season, cal = d.splines
    obs_i = obs.set_index("person_id").loc[d.stratum_ids]
    first = np.empty(d.n_rows, dtype=np.int64)
    for s in range(d.n_strata):
        first[ptr[s]:ptr[s + 1]] = obs_i["start"].iloc[s] + np.concatenate([[0], np.cumsum(d.time[ptr[s]:ptr[s + 1]])[:-1]])
    bday = obs_i["birth_day"].to_numpy()[d.row_stratum]
    k = age_bin_of(first - bday)
    # within a row the month of age and the calendar month do not change
    last = first + d.time.astype(np.int64) - 1
    assert np.all(age_bin_of(last - bday) == k)
    m = (first.astype("datetime64[D]").astype("datetime64[M]")).astype(np.int64)
    assert np.all(last.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64) == m)
    x_age = np.clip((age_bin_start(k) + age_bin_start(k + 1) - 1) / 2.0, age.knots[0], age.knots[-1])
    np.testing.assert_allclose(X[:, 1:6], bspline_basis(x_age, age.knots), atol=1e-14)
    np.testing.assert_allclose(X[:, 6:9], cyclic_basis(np.mod(m, 12) + 0.5, season.knots), atol=1e-14)
    mid = (m.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
           + (m + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) - 1) / 2.0
    np.testing.assert_allclose(X[:, 9:], bspline_basis(np.clip(mid, cal.knots[0], cal.knots[-1]), cal.knots), atol=1e-14)
    # default knots: quantiles of the age at outcome, ends moved out to the observed ages
    a_out = (oc["day"] - obs.set_index("person_id").loc[oc.person_id, "birth_day"].to_numpy()).to_numpy()
    q = np.quantile(a_out, [0, 1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(age.knots[1:-1], q[1:-1])
    assert age.knots[0] == (obs.start - obs.birth_day).min() and age.knots[-1] == (obs.end - obs.birth_day).max()
    # merging rows of one exposure and bin pattern leaves the likelihood unchanged
    dm = SCCSData.from_eras(obs, eras, oc, age_knots=4, season_knots=4, calendar_knots=3)
    assert dm.n_rows < d.n_rows
    b = np.linspace(-0.5, 0.5, d.n_covariates)
    fm = hp.sccs.fit(dm, prior="normal", variance=1.0, backend="cpu", progress=False, tolerance=1e-12)
    f = hp.sccs.fit(d, prior="normal", variance=1.0, backend="cpu", progress=False, tolerance=1e-12)
    np.testing.assert_allclose(f.coefficients.to_numpy(), fm.coefficients.to_numpy(), atol=1e-7)
    Xm = nv.dense_design(dm)
    assert nv.loglik(X, d.y, d.time, d.row_stratum, b) == pytest.approx(
        nv.loglik(Xm, dm.y, dm.time, dm.row_stratum, b), rel=1e-12)


def test_explicit_knots_and_day_origin():
    obs, eras, oc = small_tables()
    ages = np.array([(obs.start - obs.birth_day).min(), 9000, 12000, (obs.end - obs.birth_day).max()])
    d = SCCSData.from_eras(obs, eras, oc, age_knots=ages, season_knots=[1.0, 4.0, 7.5, 10.0])
    np.testing.assert_array_equal(d.spline_term("age").knots, ages)
    np.testing.assert_array_equal(d.spline_term("season").knots, [1.0, 4.0, 7.5, 10.0, 13.0])
    assert len(d.spline_term("age").covariate_ids) == 5 and len(d.spline_term("season").covariate_ids) == 3
    # shifting the origin by whole years (1970 -> 1971, 365 days) and the days back gives the same months
    obs2, eras2, oc2 = obs.copy(), eras.copy(), oc.copy()
    for df, cols in ((obs2, ["start", "end", "birth_day"]), (eras2, ["start", "end"]), (oc2, ["day"])):
        df[cols] = df[cols] - 365
    d2 = SCCSData.from_eras(obs2, eras2, oc2, age_knots=ages, season_knots=[1.0, 4.0, 7.5, 10.0],
                            day_origin="1971-01-01")
    np.testing.assert_allclose(nv.dense_design(d2), nv.dense_design(d))


# ------------------------------------------------------------------ priors and reporting
def test_spline_coefficients_get_their_own_prior_and_are_reported_apart():
    obs, eras, oc = small_tables(1)
    d = SCCSData.from_eras(obs, eras, oc, age_knots=4, season_knots=4)
    f = hp.sccs.fit(d, prior="laplace", variance=0.3, spline_variance=2.0, backend="cpu", progress=False,
                    tolerance=1e-11)
    spec = f.context.spec
    sp = pd.Index(d.covariate_ids).get_indexer(d.spline_ids)
    assert np.all(spec.codes[sp] == 1) and np.all(spec.variances[sp] == 2.0) and not spec.default[sp].any()
    assert spec.codes[0] == 2 and spec.variances[0] == 0.3 and spec.default[0]
    # KKT of the Normal(0, 2) prior on the spline coefficients: gradient = b / 2
    X = nv.dense_design(d)
    b = f.coefficients.to_numpy()
    g = np.array([nv.gradient_hessian(X, d.y, d.time, d.row_stratum, b, j)[0] for j in sp])
    np.testing.assert_allclose(g, b[sp] / 2.0, atol=1e-6)
    # an explicit group prior wins over spline_prior; CV leaves the spline prior alone
    f2 = hp.sccs.fit(d, prior="normal", variance=1.0, priors=[(["age_1", "age_2"], "normal", 5.0)],
                     spline_prior="none", backend="cpu", progress=False)
    s2 = f2.context.spec
    assert list(s2.variances[sp[:2]]) == [5.0, 5.0] and np.all(s2.codes[sp[2:]] == 0)
    # results table: the exposure only; spline effects: one curve per term
    assert list(f.results_table().index) == [1]
    e = f.spline_effects(n=11)
    assert list(e.term.unique()) == ["age", "season"] and len(e) == 22
    age = e[e.term == "age"]
    term = d.spline_term("age")
    np.testing.assert_allclose(age.log_effect, term.basis(age.x) @ f.coefficients[list(term.covariate_ids)].to_numpy())
    C = f.covariance(list(term.covariate_ids)).to_numpy()
    B = term.basis(age.x)
    np.testing.assert_allclose(age.se, np.sqrt(np.diag(B @ C @ B.T)), rtol=1e-10)
    assert age.log_effect.iloc[0] == 0.0  # reference: the first knot
    with pytest.raises(ValueError, match="no 'calendar' spline term"):
        f.spline_effects("calendar")
    with pytest.raises(TypeError, match="term must be one of"):
        f.spline_effects(3)
    cv = hp.sccs.cross_validate(d, prior="normal", folds=3, grid=[0.1, 1.0], seed=1, backend="cpu", progress=False)
    assert np.all(cv.fit.context.spec.variances[sp] == 1.0)


# ------------------------------------------------------------------ unpenalised fit vs clogit / scipy
def conditional_mle_scipy(X, y, t, strata):
    """Direct maximisation of the conditional Poisson likelihood (vectorised, Newton-CG with
    the exact gradient and Hessian-vector products)."""
    from scipy.optimize import minimize

    starts = np.flatnonzero(np.r_[True, strata[1:] != strata[:-1]])
    n_s = np.add.reduceat(y, starts)
    idx = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, len(y)]))
    lt = np.log(t)

    def parts(b):
        eta = X @ b + lt
        m = np.maximum.reduceat(eta, starts)
        w = np.exp(eta - m[idx])
        p = w / np.add.reduceat(w, starts)[idx]
        return eta, m, w, p

    def f(b):
        eta, m, w, p = parts(b)
        ll = y @ eta - n_s @ (m + np.log(np.add.reduceat(w, starts)))
        g = X.T @ (y - n_s[idx] * p)
        return -ll, -g

    def hessp(b, v):
        _, _, _, p = parts(b)
        xv = X @ v
        mean = np.add.reduceat(p * xv, starts)
        return X.T @ (n_s[idx] * p * (xv - mean[idx]))

    res = minimize(f, np.zeros(X.shape[1]), jac=True, hessp=hessp, method="trust-krylov",
                   options={"gtol": 1e-10, "maxiter": 500})
    # trust-krylov may end on "bad approximation" at machine precision: judge by the gradient
    assert np.max(np.abs(f(res.x)[1])) < 1e-6, res.message
    return res.x


R_CLOGIT = """
d <- read.csv(commandArgs(TRUE)[1])
library(survival)
cols <- setdiff(names(d), c("stratum", "y", "time"))
f <- as.formula(paste("y ~", paste(cols, collapse = " + "), "+ strata(stratum) + offset(log(time))"))
m <- clogit(f, data = d, method = "exact", control = coxph.control(eps = 1e-12, iter.max = 100))
write.table(data.frame(coef = coef(m), se = sqrt(diag(vcov(m)))), commandArgs(TRUE)[2], sep = ",", col.names = FALSE)
"""


def test_unpenalised_spline_fit_equals_clogit_and_scipy(tmp_path):
    obs, eras, oc, _ = hp.sccs.simulate(n_cases=300, n_drugs=2, prevalence=0.5, fraction_positive=1.0,
                                        relative_risks=(2.0,), extra_events=0.0, observation_days=(300, 700),
                                        output="eras", seed=11)
    d = SCCSData.from_eras(obs, eras, oc, age_knots=3, season_knots=4)
    assert d.y.max() == 1  # one event per case: clogit's exact partial likelihood is the SCCS likelihood
    f = hp.sccs.fit(d, prior="none", spline_prior="none", tolerance=1e-12, backend="cpu", progress=False)
    X = nv.dense_design(d)
    ref = conditional_mle_scipy(X, d.y, d.time, d.row_stratum)
    np.testing.assert_allclose(f.coefficients.to_numpy(), ref, atol=2e-6)
    if shutil.which("Rscript") is None or subprocess.run(["Rscript", "-e", "library(survival)"],
                                                         capture_output=True).returncode != 0:
        pytest.skip("Rscript with survival is not installed: compared against the SciPy optimisation only")
    names = [f"c{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "time", d.time)
    df.insert(0, "y", d.y)
    df.insert(0, "stratum", d.row_stratum)
    df.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "fit.R").write_text(R_CLOGIT)
    subprocess.run(["Rscript", str(tmp_path / "fit.R"), str(tmp_path / "d.csv"), str(tmp_path / "out.csv")],
                   check=True, capture_output=True, timeout=300)
    r = pd.read_csv(tmp_path / "out.csv", header=None, index_col=0)
    np.testing.assert_allclose(f.coefficients.to_numpy(), r[1].to_numpy(), atol=1e-6)
    se = np.sqrt(np.diag(f.covariance().to_numpy()))
    np.testing.assert_allclose(se, r[2].to_numpy(), rtol=1e-5)


# ------------------------------------------------------------------ simulation recovery
def age_effect(a):
    return 0.8 * np.sin(np.asarray(a, dtype=float) / 600.0)


def season_effect(m):
    return 0.5 * np.cos(2 * np.pi * np.asarray(m, dtype=float) / 12.0)


@pytest.mark.slow
def test_simulation_recovers_age_season_and_irr():
    # children aged 0..7 years at the start, followed 1..3 years (as in vaccine SCCS studies)
    d, truth = hp.sccs.simulate(n_cases=4000, n_drugs=3, prevalence=0.3, fraction_positive=1.0,
                                relative_risks=(2.0,), observation_days=(365, 1000), age_at_start=(0, 2500),
                                age_effect=age_effect, season_effect=season_effect, seed=3)
    assert [t.name for t in d.splines] == ["age", "season"]
    f = hp.sccs.fit(d, prior="none", spline_prior="none", tolerance=1e-10, backend="cpu", progress=False)
    tab = f.results_table()
    assert list(tab.index) == [1, 2, 3]
    z = (tab["coefficient"] - truth.loc[tab.index]) / tab["se"]
    assert np.all(np.abs(z) < 3.5), z
    # effects are identified up to a constant: compare differences to a reference x, with the
    # standard error of each difference from the fit's covariance
    for name, fun, x, xr, tol in (("age", age_effect, np.linspace(200, 3200, 16), 1700.0, 0.3),
                                  ("season", season_effect, np.linspace(0.5, 11.5, 12), 6.5, 0.12)):
        term = d.spline_term(name)
        ids = list(term.covariate_ids)
        x = x[x != xr]
        B = term.basis(x) - term.basis([xr])
        est = B @ f.coefficients[ids].to_numpy()
        se = np.sqrt(np.einsum("ij,jk,ik->i", B, f.covariance(ids).to_numpy(), B))
        true = fun(x) - fun(xr)
        assert np.max(np.abs(est - true) / se) < 3.5, (name, np.c_[x, est, true, se])
        assert np.max(np.abs(est - true)) < tol, (name, np.c_[x, est, true, se])
        # the effect table agrees with the same curve
        e = f.spline_effects(name, n=7)
        np.testing.assert_allclose(e.log_effect, term.basis(e.x) @ f.coefficients[ids].to_numpy(), atol=1e-12)
    # season given as 12 monthly values builds the season term only
    d2, _ = hp.sccs.simulate(n_cases=300, n_drugs=2, season_effect=np.zeros(12), seed=4)
    assert [t.name for t in d2.splines] == ["season"]


# ------------------------------------------------------------------ bad input
def test_spline_bad_input():
    obs, eras, oc = small_tables()
    a0 = int((obs.start - obs.birth_day).min())
    bad = np.array([a0 + 10, 9000, 20000, 30000])
    first = obs.person_id[int(np.argmax((obs.start - obs.birth_day).to_numpy() < a0 + 10))]
    with pytest.raises(ValueError, match=rf"age_knots: ages under observation .* first person_id={first}\b"):
        SCCSData.from_eras(obs, eras, oc, age_knots=bad)
    with pytest.raises(ValueError, match="age_knots needs a birth_day column"):
        SCCSData.from_eras(obs.drop(columns="birth_day"), eras, oc, age_knots=5)
    with pytest.raises(TypeError, match="age_knots must be a number of knots"):
        SCCSData.from_eras(obs, eras, oc, age_knots=True)
    with pytest.raises(ValueError, match="age_knots must be at least 2"):
        SCCSData.from_eras(obs, eras, oc, age_knots=[1000, 500])
    with pytest.raises(ValueError, match="age_knots"):
        SCCSData.from_eras(obs, eras, oc, age_knots=1)
    with pytest.raises(ValueError, match=r"season_knots must be months of the year in \[0, 12\)"):
        SCCSData.from_eras(obs, eras, oc, season_knots=[0, 6, 12])
    with pytest.raises(ValueError, match="season_knots"):
        SCCSData.from_eras(obs, eras, oc, season_knots=2)
    with pytest.raises(ValueError, match="calendar_knots: observation days"):
        SCCSData.from_eras(obs, eras, oc, calendar_knots=[obs.start.min() + 1, obs.end.max()])
    with pytest.raises(ValueError, match="day_origin must be a calendar date"):
        SCCSData.from_eras(obs, eras, oc, season_knots=4, day_origin="not a date")
    eras2 = eras.assign(covariate_id="age_1")
    with pytest.raises(ValueError, match="clash with the spline covariate names"):
        SCCSData.from_eras(obs, eras2, oc, age_knots=3)
    d = SCCSData.from_eras(obs, eras, oc, age_knots=3)
    with pytest.raises(ValueError, match=r"priors\[0\] has covariate id\(s\) not in the data: \['age_9'\]"):
        hp.sccs.fit(d, priors=[(["age_9"], "normal", 1.0)], backend="cpu", progress=False)
    with pytest.raises(ValueError, match="spline variance"):
        hp.sccs.fit(d, spline_variance=-1.0, backend="cpu", progress=False)
    with pytest.raises(ValueError, match="spline prior"):
        hp.sccs.fit(d, spline_prior="cauchy", backend="cpu", progress=False)
    with pytest.raises(TypeError, match="age_effect must be a function"):
        hp.sccs.simulate(n_cases=10, n_drugs=1, age_effect=[1, 2])
    with pytest.raises(ValueError, match="season_effect"):
        hp.sccs.simulate(n_cases=10, n_drugs=1, season_effect=np.zeros(11))
    with pytest.raises(ValueError, match="output must be"):
        hp.sccs.simulate(n_cases=10, n_drugs=1, output="tables")
