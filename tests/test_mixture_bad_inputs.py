"""Bad and extreme inputs at every public entry point of ``hphawkes_py.mixture`` (issue 18).

``CASES`` holds, per public callable, inputs that must be refused with an error naming the
argument; ``test_every_public_entry_point_is_walked`` fails when a new public function or method
appears without cases here."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import hphawkes_py.mixture as mx
from hphawkes_py.mixture import TDPGaussianMixture, relabel_draws

RNG = np.random.default_rng(0)
X = np.column_stack([RNG.normal(0, 1, 60), RNG.normal(5, 2, 60)])
DF = pd.DataFrame(X, columns=["a", "b"])


def _fit(method="bem", **kw):
    kw = {"n_iter": 5, "burn_in": 2, "progress": False, "backend": "cpu", "seed": 1, **kw}
    return TDPGaussianMixture(3, method=method, **kw).fit(DF)


@pytest.fixture(scope="module")
def gibbs():
    return _fit("gibbs")


@pytest.fixture(scope="module")
def bem():
    return _fit("bem")


# ----------------------------------------------------------------------------- the constructor
@pytest.mark.parametrize(
    "kw, exc, msg",
    [
        ({"relabel": "no"}, TypeError, "relabel"),
        ({"relabel": 1}, TypeError, "relabel"),
        ({"progress": "no"}, TypeError, "progress"),
        ({"progress": 0}, TypeError, "progress"),
        ({"n_components": True}, TypeError, "n_components"),
        ({"n_components": 2.5}, TypeError, "n_components"),
        ({"n_iter": 0}, ValueError, "n_iter"),
        ({"burn_in": -1}, ValueError, "burn_in"),
        ({"chains": 0}, ValueError, "chains"),
        ({"chains": 2, "method": "bem"}, ValueError, "chains"),
        ({"chains": 1.0}, TypeError, "chains"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"seed": True}, TypeError, "seed"),
        ({"threads": 0}, ValueError, "threads"),
        ({"init": "kmeans"}, ValueError, "init"),
        ({"init": None}, TypeError, "init"),
        ({"prune": 1.0}, ValueError, "prune"),
        ({"prune": -0.1}, ValueError, "prune"),
        ({"prune": True}, TypeError, "prune"),
        ({"merge_tol": 0.0}, ValueError, "merge_tol"),
        ({"max_predictive_draws": 0}, ValueError, "max_predictive_draws"),
        ({"min_cluster_weight": 1.0}, ValueError, "min_cluster_weight"),
        ({"min_cluster_weight": "1%"}, TypeError, "min_cluster_weight"),
        ({"tol": "small"}, TypeError, "tol"),
        ({"gamma0": np.inf}, ValueError, "gamma0"),
        ({"nu0": -1.0}, ValueError, "nu0"),
        ({"alpha_prior": (1.0, 0.0)}, ValueError, "alpha_prior"),
        ({"alpha_prior": "ab"}, ValueError, "alpha_prior"),
        ({"method": "vb"}, ValueError, "method"),
        ({"dtype": np.int32}, ValueError, "dtype"),
        ({"chunk_size": 0}, ValueError, "chunk_size"),
    ],
)
def test_constructor_refuses(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        TDPGaussianMixture(3, **kw)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        TDPGaussianMixture(3, backend="tpu", progress=False).fit(X)


# ----------------------------------------------------------------------------- fit
@pytest.mark.parametrize(
    "data, exc, msg",
    [
        (X[:, 0], ValueError, "2-dimensional.*reshape"),  # 1-D X is refused as scikit-learn does
        (np.where(np.arange(120).reshape(60, 2) == 33, np.nan, X), ValueError, "finite.*(16, 1)"),
        (np.column_stack([X, np.full(60, 3.0)]), ValueError, "constant"),
        (DF.assign(c=7.0), ValueError, r"constant.*\['c'\]"),
        (X[:1], ValueError, "at least 2 rows"),
        (np.array([["1", "x"], ["2", "3"]]), TypeError, "X must be an array of numbers"),
        (DF.assign(c="text"), TypeError, "X must be an array of numbers"),
        (np.zeros((0, 2)), ValueError, "at least 2 rows"),
        (None, TypeError, "X"),
    ],
)
def test_fit_refuses_bad_data(data, exc, msg):
    with pytest.raises(exc, match=msg):
        TDPGaussianMixture(3, n_iter=2, progress=False, backend="cpu").fit(data)


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"m0": [0.0]}, "m0"),
        ({"m0": [np.nan, 0.0]}, "m0"),
        ({"Phi0": np.eye(3)}, "Phi0"),
        ({"Phi0": [[1.0, 2.0], [2.0, 1.0]]}, "positive definite"),
        ({"init": np.zeros((2, 2))}, "init"),
        ({"init": np.full((3, 2), np.nan)}, "init"),
    ],
)
def test_fit_refuses_bad_priors_and_init(kw, msg):
    with pytest.raises(ValueError, match=msg):
        TDPGaussianMixture(3, n_iter=2, progress=False, backend="cpu", **kw).fit(X)


def test_ten_million_components_refused_before_allocation_with_the_memory_needed():
    m = TDPGaussianMixture(10**7, n_iter=1000, progress=False, backend="cpu")
    with pytest.raises(MemoryError, match=r"n_components=10000000 .* would need about [0-9.]+ GiB"):
        m.fit(X)
    assert not hasattr(m, "weights_")


def test_callers_array_is_not_aliased_or_frozen():
    A = X.copy()
    m = TDPGaussianMixture(3, method="bem", n_iter=3, progress=False, backend="cpu").fit(A)
    A[:] = 0.0  # the fitted model does not see the change
    assert A.flags.writeable
    assert np.all(np.isfinite(m.score_samples(X)))


# ----------------------------------------------------------------------------- prediction
@pytest.mark.parametrize("name", ["predict", "predict_proba", "predict_cluster", "score_samples", "score"])
@pytest.mark.parametrize("which", ["gibbs", "bem"])
def test_prediction_refuses_bad_rows(request, name, which):
    m = request.getfixturevalue(which)
    fn = getattr(m, name)
    with pytest.raises(ValueError, match="3 columns|2 columns"):
        fn(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="2-dimensional"):
        fn(np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        fn(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="another order"):
        fn(DF[["b", "a"]])
    with pytest.raises(ValueError, match="fitted on"):
        fn(DF.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="estimate"):
        fn(X, estimate="mean")
    if which == "bem":
        with pytest.raises(ValueError, match="predictive"):
            fn(X, estimate="predictive")
    # the right names in the right order, or a plain array, are accepted
    fn(DF)
    fn(X)


@pytest.mark.parametrize("which", ["gibbs", "bem"])
@pytest.mark.parametrize("x", [[1e200, 1e200], [-1e300, 1e300], [1e150, -3.0], [1e6, 1e6]])
def test_probabilities_far_from_the_data_are_finite(request, which, x):
    m = request.getfixturevalue(which)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = m.predict_proba([x])
        ls = m.score_samples([x])
    assert np.all(np.isfinite(P)) and P.sum() == pytest.approx(1.0)
    assert not np.isnan(ls).any() and ls[0] < -1e3
    assert m.predict([x]).shape == (1,)


def test_far_rows_agree_with_the_fast_path_where_both_apply(bem):
    # rows at |x| ~ 1e2 (fast path) and the direct path must give the same numbers
    mix = bem._mixture("plugin")
    Xs = np.array([[30.0, -40.0], [100.0, 5.0]])
    D, shift = mix.log_terms(Xs)
    D2, shift2 = mix._direct(Xs)
    np.testing.assert_allclose(D - shift[:, None], D2 - shift2[:, None], rtol=1e-9)


def test_unfitted_model_is_refused():
    m = TDPGaussianMixture(3, progress=False)
    for name in ("predict", "predict_proba", "predict_cluster", "score_samples", "score"):
        with pytest.raises(RuntimeError, match="not fitted"):
            getattr(m, name)(X)
    for name in ("to_frame", "summary", "to_dict", "diagnostics"):
        with pytest.raises(RuntimeError, match="not fitted"):
            getattr(m, name)()


@pytest.mark.parametrize("name", ["to_frame", "summary"])
def test_tables_refuse_bad_min_weight(bem, name):
    with pytest.raises(TypeError, match="min_weight"):
        getattr(bem, name)("0.1")
    with pytest.raises(ValueError, match="min_weight"):
        getattr(bem, name)(-1.0)


def test_relabel_draws_refuses_inconsistent_shapes():
    w = np.full((4, 3), 1 / 3)
    mu = np.zeros((4, 3, 2))
    S = np.broadcast_to(np.eye(2), (4, 3, 2, 2))
    with pytest.raises(ValueError, match="means"):
        relabel_draws(w, mu[:, :2], S)
    with pytest.raises(ValueError, match="covariances"):
        relabel_draws(w, mu, S[..., :1])
    with pytest.raises(ValueError, match="reference"):
        relabel_draws(w, mu, S, reference=7)
    with pytest.raises(ValueError, match="weights"):
        relabel_draws(np.full((4, 3), np.nan), mu, S)


# ----------------------------------------------------------------------------- the walk
def test_new_entry_points_refuse_bad_input():
    from hphawkes_py.mixture import (HDPGaussianMixture, binder_distance, plot_sample_proportions,
                                     variation_of_information)

    rng = np.random.default_rng(0)
    samples = [rng.normal(size=(40, 2)), rng.normal(1.0, 1.0, size=(40, 2))]
    m = HDPGaussianMixture(3, method="bem", n_iter=5, seed=0, progress=False, backend="cpu").fit(samples)
    with pytest.raises(ValueError, match="group"):
        m.predict_cluster(samples[0], group=5)
    with pytest.raises(TypeError, match="real|numbers"):
        m.score(np.array([["a", "b"]]), group=0)
    with pytest.raises(ValueError, match="same length|entries|events"):
        binder_distance([0, 0, 1], [0, 1])
    with pytest.raises(ValueError, match="same length|entries|events"):
        variation_of_information([0, 0, 1], [0, 1])
    with pytest.raises((TypeError, ValueError)):
        plot_sample_proportions("not a table")


CASES = {
    "TDPGaussianMixture.__init__": test_constructor_refuses,
    "TDPGaussianMixture.fit": test_fit_refuses_bad_data,
    "TDPGaussianMixture.predict": test_prediction_refuses_bad_rows,
    "TDPGaussianMixture.predict_proba": test_prediction_refuses_bad_rows,
    "TDPGaussianMixture.predict_cluster": test_prediction_refuses_bad_rows,
    "TDPGaussianMixture.score_samples": test_prediction_refuses_bad_rows,
    "TDPGaussianMixture.score": test_prediction_refuses_bad_rows,
    "TDPGaussianMixture.to_frame": test_tables_refuse_bad_min_weight,
    "TDPGaussianMixture.summary": test_tables_refuse_bad_min_weight,
    "TDPGaussianMixture.to_dict": test_unfitted_model_is_refused,  # no arguments
    "TDPGaussianMixture.diagnostics": test_unfitted_model_is_refused,  # no arguments
    "TDPGaussianMixture.plot": None,  # presentation: delegates to plot.plot_mixture
    "relabel_draws": test_relabel_draws_refuses_inconsistent_shapes,
    "HDPGaussianMixture.predict_cluster": test_new_entry_points_refuse_bad_input,
    "HDPGaussianMixture.score": test_new_entry_points_refuse_bad_input,
    "binder_distance": test_new_entry_points_refuse_bad_input,
    "variation_of_information": test_new_entry_points_refuse_bad_input,
    "plot_sample_proportions": test_new_entry_points_refuse_bad_input,
    "PointPartition.__init__": None,  # a result, built by point_partition (walked in test_mixture_partitions.py)
}


def test_every_public_entry_point_is_walked():
    found = set()
    for name in mx.__all__:
        obj = getattr(mx, name)
        if inspect.isclass(obj):
            found.add(f"{name}.__init__")
            for meth, _ in inspect.getmembers(obj, inspect.isfunction):
                if not meth.startswith("_"):
                    found.add(f"{name}.{meth}")
        else:
            found.add(name)
    missing = found - set(CASES) - _refused_in_their_own_files(found - set(CASES))
    assert not missing, f"public entry points without bad-input cases: {sorted(missing)}"


# The HDP mixture, the FCS reader and the partitions have their bad-input tests beside the rest of
# their tests: an entry point counts as walked there when a test function calls it inside pytest.raises.
_OWN_FILES = ("test_mixture_hdp.py", "test_mixture_fcs.py", "test_mixture_partitions.py", "test_mixture_cli_fcs.py",
              "test_mixture_hdp_summary.py", "test_mixture_similarity_gpu.py")


def _refused_in_their_own_files(names):
    import ast
    from pathlib import Path

    calls_in_raises = set()
    for f in _OWN_FILES:
        path = Path(__file__).with_name(f)
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.With) and any(
                    isinstance(i.context_expr, ast.Call) and getattr(i.context_expr.func, "attr", "") == "raises"
                    for i in node.items):
                for call in ast.walk(node):
                    if isinstance(call, ast.Call):
                        f_ = call.func
                        calls_in_raises.add(f_.attr if isinstance(f_, ast.Attribute) else getattr(f_, "id", None))
    covered = set()
    for name in names:
        cls, _, meth = name.partition(".")
        target = (cls if meth == "__init__" else meth) if meth else cls
        if target in calls_in_raises:
            covered.add(name)
    return covered
