"""SCCS, issue 34 (nothing silently wrong, round 3): missing covariate ids, separation at the default
tolerance, all-zero weights, interval levels, the singular-Hessian message under a Laplace prior,
``spline_variance=None`` and ``hphawkes reproduce sccs-oxford --out``."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main
from hphawkes_py.cli.sccs import OXFORD_REFERENCE, oxford_long
from hphawkes_py.sccs import SCCSData
from hphawkes_py.sccs.plot import plot_irr

from engines import ENGINES


def small_eras():
    return hp.sccs.simulate(n_cases=40, n_drugs=2, prevalence=0.5, output="eras", seed=1)[:3]


# ---------------------------------------------------------------------------- missing ids
@pytest.mark.parametrize("ids", ["numeric", "strings"])
def test_from_eras_refuses_a_missing_covariate_id(ids):
    obs, eras, outcomes = small_eras()
    eras = eras.copy()
    cov = eras["covariate_id"].astype(object) if ids == "numeric" else "drug" + eras["covariate_id"].astype(str)
    eras["covariate_id"] = cov.astype(object)
    eras.loc[eras.index[3], "covariate_id"] = np.nan if ids == "numeric" else None
    with pytest.raises(ValueError, match=r"eras\.covariate_id has 1 missing value\(s\).*first at row 3"):
        SCCSData.from_eras(obs, eras, outcomes)


def test_from_eras_refuses_a_missing_person_id():
    obs, eras, outcomes = small_eras()
    outcomes = outcomes.copy()
    outcomes["person_id"] = outcomes["person_id"].astype(float)
    outcomes.loc[outcomes.index[2], "person_id"] = np.nan
    with pytest.raises(ValueError, match=r"outcomes\.person_id has 1 missing value\(s\).*first at row 2"):
        SCCSData.from_eras(obs, eras, outcomes)


def test_from_long_names_the_column_with_a_missing_covariate_id():
    out, cov = oxford_long()
    cov = cov.copy()
    cov.loc[5, "covariate_id"] = None
    with pytest.raises(ValueError, match=r"covariates\.covariate_id has 1 missing value\(s\).*first at row 5"):
        SCCSData.from_long(out, cov)


# ---------------------------------------------------------------------------- separation
def rare_exposure_data():
    """300 simulated cases plus a covariate (id 99) on a 2-day interval without events in a case
    with ~3,000 days of observation: its MLE is -infinity, but the likelihood is so flat that the
    relative rule stops near b = -4 (IRR 0.018) at the default tolerance."""
    data, _ = hp.sccs.simulate(n_cases=300, n_drugs=2, prevalence=0.5, seed=1)
    out, cov = data.to_long()
    out = pd.concat([out, pd.DataFrame({"stratum_id": [3], "row_id": [10**6], "y": [0.0], "time": [2.0]})],
                    ignore_index=True)
    cov = pd.concat([cov, pd.DataFrame({"row_id": [10**6], "covariate_id": [99], "value": [1.0]})],
                    ignore_index=True)
    return SCCSData.from_long(out, cov)


@pytest.mark.parametrize("backend", ENGINES)
def test_separation_is_found_at_the_default_tolerance(backend):
    data = rare_exposure_data()
    with pytest.warns(hp.sccs.MLEWarning, match=r"covariate\(s\) \[99\] \(99 -> -inf\)"):
        f = hp.sccs.fit(data, prior="none", backend=backend, progress=False)
    assert f.infinite == (99,) and not f.converged
    assert abs(f.coefficients[99]) < 5  # where the loose rule stopped: the fit alone could not tell
    with pytest.warns(hp.sccs.MLEWarning, match=r"\[99\] have no finite maximum-likelihood estimate"):
        t = f.results_table()
    assert t.loc[99, "coefficient"] == -math.inf and t.loc[99, "irr"] == 0.0
    assert np.isnan(t.loc[99, ["se", "irr_lower", "irr_upper", "p"]].to_numpy(float)).all()
    # the other rows are untouched and finite
    assert np.isfinite(t.loc[[1, 2], ["coefficient", "se", "irr_lower", "irr_upper", "p"]].to_numpy(float)).all()
    with pytest.warns(hp.sccs.MLEWarning):
        w = f.confint(method="wald")
    assert np.isnan(w.loc[99].to_numpy(float)).all() and np.isfinite(w.loc[[1, 2]].to_numpy(float)).all()


def test_separation_under_a_prior_is_not_flagged_but_exclude_is():
    data = rare_exposure_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = hp.sccs.fit(data, prior="normal", variance=1.0, backend="cpu", progress=False)
    assert g.infinite == () and g.converged
    with pytest.warns(hp.sccs.MLEWarning, match=r"\[99\]"):
        h = hp.sccs.fit(data, prior="normal", variance=1.0, exclude=[99], backend="cpu", progress=False)
    assert h.infinite == (99,)


def test_separation_profile_interval_is_open_towards_infinity():
    data = rare_exposure_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hp.sccs.MLEWarning)
        f = hp.sccs.fit(data, prior="none", backend="cpu", progress=False)
        t = f.results_table(99, method="profile")
    assert t.loc[99, "coefficient"] == -math.inf and t.loc[99, "irr_lower"] == 0.0
    # two days without events say little: the upper end is far above 1 and b = 0 is not rejected
    assert t.loc[99, "irr_upper"] > 100 and t.loc[99, "p"] > 0.5


def _naive_directions(X, y, stratum, w):
    """Per column: -1 if in every stratum with weight > 0 and events the event rows sit at the
    stratum's minimum of x_j and some such stratum varies; +1 likewise at the maximum; else 0."""
    out = []
    for j in range(X.shape[1]):
        down = up = True
        varies = False
        for s in np.unique(stratum):
            rows = stratum == s
            if w[s] <= 0 or y[rows].sum() == 0:
                continue
            x, ev = X[rows, j], y[rows] > 0
            varies |= x.max() > x.min()
            down &= bool(np.all(x[ev] == x.min()))
            up &= bool(np.all(x[ev] == x.max()))
        out.append(-1 if varies and down else (1 if varies and up else 0))
    return np.array(out)


def test_separation_directions_match_a_brute_force_check():
    from hphawkes_py.sccs.ccd import separation_directions

    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(60):
        n_strata, per = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        rows = n_strata * per
        stratum = np.repeat(np.arange(n_strata), per)
        y = rng.binomial(1, 0.4, rows).astype(float)
        X = rng.choice([0.0, 0.0, 1.0, -1.0, 2.0], size=(rows, 4))
        out = pd.DataFrame({"stratum_id": stratum, "row_id": np.arange(rows), "y": y,
                            "time": rng.uniform(1, 10, rows)})
        r, c = np.nonzero(X)
        cov = pd.DataFrame({"row_id": r, "covariate_id": c, "value": X[r, c]})
        cov = pd.concat([cov, pd.DataFrame({"row_id": [0] * 4, "covariate_id": range(4), "value": 0.0})])
        if y.sum() == 0:
            continue
        data = SCCSData.from_long(out, cov, strata_without_events="keep")
        w = rng.choice([0.0, 1.0, 2.0], size=n_strata)
        for weights in (None, w):
            got = separation_directions(data, weights)
            ref = _naive_directions(X, y, stratum, np.ones(n_strata) if weights is None else weights)
            np.testing.assert_array_equal(got, ref, err_msg=f"trial {trial}")
            seen.update(ref.tolist())
    assert seen == {-1, 0, 1}


def rare_in_resamples_data():
    """60 cases; 'rare' is exposed in 12 of them, 2 with the event in the exposed time. The full
    data give a finite MLE; a resample without those 2 cases separates 'rare' (-inf)."""
    rng = np.random.default_rng(0)
    out, cov, rid = [], [], 0
    for s in range(60):
        out.append((s, rid, 0 if s < 2 else 1, 300.0))
        out.append((s, rid + 1, 1 if s < 2 else 0, 30.0))
        out.append((s, rid + 2, int(rng.random() < 0.3), 100.0))
        if s < 12:
            cov.append((rid + 1, "rare"))
        cov += [(r, "other") for r in (rid + 1, rid + 2) if rng.random() < 0.5]
        rid += 3
    return SCCSData.from_long(pd.DataFrame(out, columns=["stratum_id", "row_id", "y", "time"]),
                              pd.DataFrame(cov, columns=["row_id", "covariate_id"]))


def test_bootstrap_replicates_with_an_infinite_mle_are_infinite():
    from hphawkes_py._parallel import spawn_seeds

    data = rare_in_resamples_data()
    with pytest.warns(hp.sccs.MLEWarning, match=r"\{'rare': 7\} of 40"):
        b = hp.sccs.bootstrap(data, prior="none", replicates=40, seed=3, backend="cpu", progress=False)
    assert b.fit.infinite == () and np.isfinite(b.fit.coefficients).all()
    # which resamples separate 'rare': those without the 2 cases with an exposed event but with
    # some of the other 10 exposed cases (the weights as bootstrap draws them)
    expect = []
    for seq in spawn_seeds(3, 40):
        w = np.bincount(np.random.default_rng(seq).integers(0, 60, size=60), minlength=60)
        expect.append(w[:2].sum() == 0 and w[2:12].sum() > 0)
    np.testing.assert_array_equal(b.samples["rare"].to_numpy() == -np.inf, np.array(expect))
    assert np.isfinite(b.samples["other"]).all()
    s = b.summary()
    assert s.loc["rare", "lower"] == -np.inf  # 7 of 40 replicates are -inf: beyond the 2.5% tail
    assert s.loc["rare", "upper"] == pytest.approx(b.samples["rare"].quantile(0.975), abs=1e-12)
    # columns without infinite replicates: pandas' quantiles, to the bit
    a = (1.0 - 0.95) / 2.0
    finite = b.samples[["other"]]
    assert s.loc["other", "lower"] == finite.quantile(a)["other"]
    assert s.loc["other", "upper"] == finite.quantile(1.0 - a)["other"]


def test_bootstrap_quantile_with_infinite_replicates():
    from hphawkes_py.sccs.results import _quantile

    x = pd.DataFrame({"a": [-np.inf, -np.inf, 1, 2, 3, 4, 5, 6, 7, 8], "b": [1, 2, 3, 4, 5, 6, 7, 8, 9, np.inf],
                      "c": np.linspace(-1, 1, 10)})
    assert _quantile(x, 0.025)["a"] == -np.inf and _quantile(x, 0.1)["a"] == -np.inf
    assert _quantile(x, 0.5)["a"] == 3.5 and _quantile(x, 0.975)["a"] == pytest.approx(7.775, abs=1e-12)
    assert _quantile(x, 0.975)["b"] == np.inf and _quantile(x, 0.025)["b"] == pytest.approx(1.225, abs=1e-12)
    for q in (0.025, 0.5, 0.975):
        assert _quantile(x, q)["c"] == x[["c"]].quantile(q)["c"]


# ---------------------------------------------------------------------------- weights
@pytest.mark.parametrize("bad, match", [
    ("zeros", r"weights are all zero"),
    ("no_event_strata", r"weights are zero on every stratum with events"),
    ("negative", r"weights must be non-negative.*weights\[1\] = -1\.0"),
    ("nan", r"weights"),
])
def test_fit_refuses_weights_that_leave_nothing_to_fit(bad, match):
    out = pd.DataFrame({"stratum_id": [1, 1, 2, 2, 3, 3], "row_id": range(6), "y": [1, 0, 0, 1, 0, 0],
                        "time": [10.0, 20.0, 15.0, 15.0, 5.0, 5.0]})
    cov = pd.DataFrame({"row_id": [0, 3, 4], "covariate_id": ["a", "a", "a"]})
    data = SCCSData.from_long(out, cov, strata_without_events="keep")
    w = {"zeros": np.zeros(3), "no_event_strata": np.array([0.0, 0.0, 1.0]), "negative": np.array([1.0, -1.0, 1.0]),
         "nan": np.array([1.0, np.nan, 1.0])}[bad]
    with pytest.raises(ValueError, match=match):
        hp.sccs.fit(data, weights=w, backend="cpu", progress=False)


# ---------------------------------------------------------------------------- level
@pytest.fixture(scope="module")
def boot():
    data = SCCSData.from_long(*oxford_long())
    return hp.sccs.bootstrap(data, prior="normal", variance=1.0, replicates=5, seed=1, backend="cpu", progress=False)


@pytest.mark.parametrize("level", [0, 0.0, 1, 1.0, 2, -0.5, float("nan")])
def test_bootstrap_summary_refuses_a_level_outside_0_1(boot, level):
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        boot.summary(level=level)


def test_bootstrap_summary_level_still_works(boot):
    s = boot.summary(level=0.5)
    np.testing.assert_allclose(s["lower"], boot.samples.quantile(0.25))
    np.testing.assert_allclose(s["upper"], boot.samples.quantile(0.75))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_every_level_argument_is_checked(level):
    data = SCCSData.from_long(*oxford_long())
    f = hp.sccs.fit(data, prior="normal", backend="cpu", progress=False)
    for call in (lambda: f.results_table(level=level), lambda: f.confint(level=level, method="wald"),
                 lambda: plot_irr(f, level=level)):
        with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
            call()


def test_cli_refuses_a_bad_level_before_any_work(tmp_path, capsys):
    out, cov = oxford_long()
    out.to_csv(tmp_path / "o.csv", index=False)
    cov.to_csv(tmp_path / "c.csv", index=False)
    for cmd in (["bootstrap"], ["fit", "--results", "wald"]):
        rc = main(["sccs", *cmd, str(tmp_path / "o.csv"), str(tmp_path / "c.csv"), "--level", "2", "--quiet",
                   "--backend", "cpu"])
        err = capsys.readouterr().err
        assert rc == 2 and "--level must be in (0, 1), got 2.0" in err and "SCCSData" not in err


# ---------------------------------------------------------------------------- singular Hessian
def data_with_an_empty_covariate():
    out, cov = oxford_long()
    cov = cov.assign(value=1.0)
    cov = pd.concat([cov, pd.DataFrame({"row_id": [0], "covariate_id": ["empty"], "value": [0.0]})],
                    ignore_index=True)
    return SCCSData.from_long(out, cov)


def test_singular_hessian_message_fits_the_laplace_prior():
    data = data_with_an_empty_covariate()
    f = hp.sccs.fit(data, backend="cpu", progress=False)  # the default Laplace prior
    assert f.prior == "laplace"
    with pytest.raises(ValueError) as e:
        f.covariance()
    msg = str(e.value)
    assert "['empty']" in msg and "Laplace prior adds no curvature" in msg and "prior='normal'" in msg
    assert "no prior" not in msg


def test_singular_hessian_message_fits_no_prior():
    data = data_with_an_empty_covariate()
    f = hp.sccs.fit(data, prior="none", backend="cpu", progress=False)
    with pytest.raises(ValueError, match=r"\['empty'\] carry no information.*have no prior.*Normal prior"):
        f.results_table()
    # a Normal prior makes it invertible: the empty covariate's variance is the prior's
    g = hp.sccs.fit(data, prior="normal", variance=2.0, backend="cpu", progress=False)
    assert g.covariance().loc["empty", "empty"] == pytest.approx(2.0, rel=1e-12)


# ---------------------------------------------------------------------------- spline_variance=None
@pytest.fixture(scope="module")
def spline_data():
    obs, eras, outcomes, _ = hp.sccs.simulate(n_cases=150, n_drugs=2, prevalence=0.5, output="eras", seed=4)
    return SCCSData.from_eras(obs, eras, outcomes, age_knots=4, season_knots=4)


def test_spline_variance_none_is_a_flat_spline_prior(spline_data):
    kw = dict(prior="normal", variance=1.0, backend="cpu", progress=False)
    f = hp.sccs.fit(spline_data, spline_variance=None, **kw)
    g = hp.sccs.fit(spline_data, spline_prior="none", **kw)
    h = hp.sccs.fit(spline_data, **kw)
    np.testing.assert_array_equal(f.coefficients.to_numpy(), g.coefficients.to_numpy())
    assert f.spline_prior == "none" and math.isnan(f.spline_variance)
    assert not np.array_equal(f.coefficients.to_numpy(), h.coefficients.to_numpy())
    cv = hp.sccs.cross_validate(spline_data, prior="normal", folds=2, grid=[0.5], spline_variance=None, seed=1,
                                backend="cpu", progress=False)
    assert cv.fit.spline_prior == "none"
    with pytest.raises(ValueError, match="spline prior must be one of"):
        hp.sccs.fit(spline_data, spline_prior="flat", spline_variance=None, **kw)


# ---------------------------------------------------------------------------- reproduce --out
def test_reproduce_sccs_oxford_writes_out_atomically(tmp_path, monkeypatch, capsys):
    from hphawkes_py.sccs import resampling

    real = resampling.bootstrap
    monkeypatch.setattr(resampling, "bootstrap", lambda *a, **k: real(*a, **{**k, "replicates": 5}))
    out = tmp_path / "ox"
    assert main(["reproduce", "sccs-oxford", "--backend", "cpu", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["bootstrap.csv", "comparison.csv", "fits.csv", "irr.png",
                                                     "results.csv", "summary.json"]
    comp = pd.read_csv(out / "comparison.csv").set_index("quantity")
    for k in ("exgr1", "agegr2", "log_likelihood"):
        assert comp.loc[k, "hphawkes"] == pytest.approx(OXFORD_REFERENCE[k], abs=1e-6)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["matches_reference"] is True and summary["mle"]["prior"] == "none"
    res = pd.read_csv(out / "results.csv").set_index("covariate_id")
    assert res.loc["exgr1", "irr_lower"] == pytest.approx(math.exp(1.10779448), rel=1e-6)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left
    capsys.readouterr()
    # an existing non-empty folder is refused before any work, and left as it was
    before = (out / "comparison.csv").read_bytes()
    assert main(["reproduce", "sccs-oxford", "--backend", "cpu", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (out / "comparison.csv").read_bytes() == before


def test_missing_outcome_day_is_refused_without_a_numpy_warning():
    # np.round(NaN) warned "invalid value encountered in rint", which leaked to R's stderr
    obs = pd.DataFrame({"person_id": [1, 2], "start": [0, 0], "end": [365, 365]})
    eras = pd.DataFrame({"person_id": [1, 2], "start": [10, 20], "end": [40, 50], "covariate_id": [7, 7]})
    outcomes = pd.DataFrame({"person_id": [1, 2], "day": [30.0, np.nan]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="integer days.*nan"):
            hp.sccs.SCCSData.from_eras(obs, eras, outcomes)
