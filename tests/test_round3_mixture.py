"""Mixture inputs that were silently misread (issue 34): dates and other non-real data, ``prune``
with the Gibbs sampler, column names at prediction, and a prior scale too small for float64."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from hphawkes_py.cli import main
import hphawkes_py as hp
from hphawkes_py.mixture import TDPGaussianMixture

RNG = np.random.default_rng(3)
X = np.column_stack([RNG.normal(0, 1, 40), RNG.normal(50, 10, 40)])
DF = pd.DataFrame(X, columns=["eruptions", "waiting"])


def _bem(**kw):
    kw = {"n_iter": 5, "progress": False, "backend": "cpu", "seed": 1, **kw}
    return TDPGaussianMixture(3, method="bem", **kw)


@pytest.fixture(scope="module")
def fit_array():
    return _bem().fit(X)


@pytest.fixture(scope="module")
def fit_frame():
    return _bem().fit(DF)


DATES = np.array([["2020-01-01", "2020-03-01"], ["2020-01-02", "2020-02-01"]], dtype="datetime64[D]")


@pytest.mark.parametrize("method", ["predict", "predict_proba", "predict_cluster", "score_samples", "score"])
@pytest.mark.parametrize("bad,match", [
    (DATES, "datetime64"),
    (np.array([[1, 2]], dtype="timedelta64[s]"), "timedelta64"),
    (np.array([[1 + 1j, 2.0]]), "complex"),
    (np.array([["1", "2"]]), "dtype <U1"),
    (np.array([[1.0, "2"]], dtype=object), "str '2'"),
    (pd.DataFrame({"eruptions": [1.0, 2.0], "waiting": pd.to_datetime(["2020-01-01", "2020-01-02"])}),
     "column 'waiting'"),
])
def test_non_real_data_are_refused_at_prediction(fit_array, method, bad, match):
    with pytest.raises(TypeError, match=match):
        getattr(fit_array, method)(bad)


def test_non_real_data_are_refused_at_fit_and_in_init():
    with pytest.raises(TypeError, match="X must be an array of numbers.*datetime64"):
        _bem().fit(np.concatenate([DATES, DATES + 5, DATES + 9]))
    with pytest.raises(TypeError, match="column 'when'"):
        _bem().fit(pd.DataFrame({"x": X[:, 0], "when": pd.date_range("2020-01-01", periods=len(X))}))
    with pytest.raises(TypeError, match="init must be an array of numbers"):
        _bem(init=np.array([["0", "1"]] * 3)).fit(X)
    # booleans and integers are real numbers
    assert _bem().fit(X.round().astype(np.int64)).predict(np.array([[True, False]])).shape == (1,)


def test_prune_with_gibbs_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"prune=0\.05 applies to method='bem' only; method='gibbs'"):
        TDPGaussianMixture(4, prune=0.05)
    assert TDPGaussianMixture(4, method="bem", prune=0.05).prune == 0.05


def test_cli_prune_with_gibbs_is_refused(tmp_path, capsys):
    csv = tmp_path / "x.csv"
    DF.to_csv(csv, index=False)
    rc = main(["mixture", str(csv), "-k", "3", "--prune", "0.1", "--n-iter", "5", "--out", str(tmp_path / "o"),
               "--quiet"])
    err = capsys.readouterr().err
    assert rc != 0 and "--prune 0.1 applies to --method bem only" in err
    assert not (tmp_path / "o").exists()


def test_swapped_named_columns_are_refused_after_a_named_fit(fit_frame):
    swapped = DF[["waiting", "eruptions"]]
    for method in ("predict", "predict_cluster", "score_samples"):
        with pytest.raises(ValueError, match=r"another order: \['waiting', 'eruptions'\]"):
            getattr(fit_frame, method)(swapped)
    with pytest.raises(ValueError, match=r"another order"):
        fit_frame.plot(swapped)
    np.testing.assert_array_equal(fit_frame.predict(DF[["eruptions", "waiting"]]), fit_frame.predict(X))


def test_named_columns_after_an_array_fit_warn_that_they_are_used_by_position(fit_array):
    swapped = DF[["waiting", "eruptions"]]
    with pytest.warns(UserWarning, match=r"X has feature names \['waiting', 'eruptions'\], but this "
                                         r"TDPGaussianMixture was fitted without feature names"):
        got = fit_array.predict_cluster(swapped)
    np.testing.assert_array_equal(got, fit_array.predict_cluster(swapped.to_numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_array.predict(X)  # a plain array: positional, as fitted, without a word


@pytest.mark.parametrize("method", ["gibbs", "bem"])
@pytest.mark.parametrize("nu0", [1e-300, 1e-20])
def test_a_vanishing_nu0_is_refused_before_the_fit(method, nu0):
    m = TDPGaussianMixture(8, method=method, nu0=nu0, n_iter=3, burn_in=1, progress=False, backend="cpu", seed=0)
    with pytest.raises(ValueError, match=rf"nu0={nu0:g} is too small.*Phi0 = nu0 \* I"):
        m.fit(X)
    assert not hasattr(m, "weights_")


def test_a_vanishing_Phi0_is_refused_and_a_small_nu0_still_fits():
    with pytest.raises(ValueError, match="Phi0 has smallest eigenvalue 1e-30"):
        _bem(Phi0=np.diag([1.0, 1e-30])).fit(X)
    m = _bem(nu0=1e-8).fit(X)
    assert np.isfinite(m.score(X))
    # with Phi0 given, nu0 enters only the degrees of freedom nu0 + p + 1
    assert np.isfinite(_bem(nu0=1e-300, Phi0=np.eye(2)).fit(X).score(X))


def test_frame_from_r_refuses_duplicate_column_names():
    from hphawkes_py.interop.rfriendly import frame_from_r

    with pytest.raises(ValueError, match=r"distinct, got 'a' more than once in \['a', 'b', 'a'\]"):
        frame_from_r({"a": np.ones(2), "b": np.zeros(2)}, ["a", "b", "a"])
    df = frame_from_r({"a": np.ones(2), "b": np.zeros(2)}, ["b", "a"])
    assert list(df.columns) == ["b", "a"] and df["a"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("factor", [1e-300, 1e-200, 1e150])
def test_a_varying_column_at_any_magnitude_is_not_constant(factor):
    # X.std() squares the deviations: at 1e-300 they underflow to 0 and the column looked constant
    X = hp.datasets.load_faithful()[["eruptions", "waiting"]].to_numpy(float)
    opts = dict(n_components=8, n_iter=30, burn_in=15, seed=3, progress=False)
    ref = hp.mixture.TDPGaussianMixture(**opts).fit(X).predict(X)
    scaled = X.copy()
    scaled[:, 0] *= factor
    got = hp.mixture.TDPGaussianMixture(**opts).fit(scaled).predict(scaled)
    assert np.array_equal(got, ref)


def test_a_truly_constant_column_is_still_refused():
    X = hp.datasets.load_faithful()[["eruptions", "waiting"]].to_numpy(float)
    X[:, 0] = 1e-300
    with pytest.raises(ValueError, match="constant"):
        hp.mixture.TDPGaussianMixture(n_components=4, n_iter=4, burn_in=2, progress=False).fit(X)
