"""Issue 16 §2: posterior-predictive prediction, initialisation, several chains with label-invariant
diagnostics, BEM pruning, clusters by modal merging, and the GPU engine for any number of columns."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.special import logsumexp

from hphawkes_py.mixture import TDPGaussianMixture
from hphawkes_py.mixture.engine import make_engine
from hphawkes_py.mixture.clusters import modal_clusters
from hphawkes_py.mixture.initial_values import kmeans_plusplus

import naive_mixture as nv
from engines import CUDA_ENGINES

RNG = np.random.default_rng(21)
BLOBS = np.vstack([RNG.normal([0, 0], 0.5, (80, 2)), RNG.normal([5, 1], 0.5, (60, 2)), RNG.normal([1, 6], 0.5, (60, 2))])


@pytest.fixture(scope="module")
def gibbs():
    return TDPGaussianMixture(6, n_iter=30, burn_in=20, thin=3, seed=4, progress=False, backend="cpu").fit(BLOBS)


# ----------------------------------------------------------------------------- prediction
def test_score_samples_is_the_posterior_predictive_over_the_stored_draws(gibbs):
    d = gibbs.draws_
    S = d["weights"].shape[0]
    Xn = np.vstack([BLOBS[::7], [[2.5, 3.0], [-3.0, 9.0]]])
    per_draw = np.stack([nv.log_component_densities(Xn, d["weights"][s], d["means"][s], d["covariances"][s])
                         for s in range(S)])  # (S, n, k)
    ref = logsumexp(per_draw, axis=(0, 2)) - np.log(S)
    np.testing.assert_allclose(gibbs.score_samples(Xn), ref, rtol=1e-9, atol=1e-9)
    # probabilities: E_s[w_sj N_sj(x)] / E_s[f_s(x)]
    A = logsumexp(per_draw, axis=0)
    P = np.exp(A - logsumexp(A, axis=1, keepdims=True))
    np.testing.assert_allclose(gibbs.predict_proba(Xn), P, atol=1e-10)
    np.testing.assert_array_equal(gibbs.predict(Xn), P.argmax(1))
    # the plug-in of the point estimates stays available and is a different density
    plug = nv.loglik(nv.log_component_densities(Xn, gibbs.weights_, gibbs.means_, gibbs.covariances_))
    np.testing.assert_allclose(gibbs.score_samples(Xn, estimate="plugin"), plug, rtol=1e-9)
    assert np.abs(plug - ref).max() > 1e-3
    # at most max_predictive_draws evenly spaced draws
    sub = TDPGaussianMixture(6, n_iter=30, burn_in=20, thin=3, seed=4, progress=False, backend="cpu",
                             max_predictive_draws=4).fit(BLOBS)
    idx = np.array([0, 3, 6, 9])
    np.testing.assert_allclose(sub.score_samples(Xn), logsumexp(per_draw[idx], axis=(0, 2)) - np.log(4), rtol=1e-9)


# ----------------------------------------------------------------------------- initialisation
def test_kmeans_plusplus_puts_one_centre_in_each_separated_blob():
    Xs = (BLOBS - BLOBS.mean(0)) / BLOBS.std(0, ddof=1)
    truth = np.repeat([0, 1, 2], [80, 60, 60])
    for seed in range(5):
        C = kmeans_plusplus(Xs, 3, np.random.default_rng(seed))
        d = ((Xs[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
        # every blob is exactly one k-means cluster
        assert sorted(len(set(d[truth == b])) for b in range(3)) == [1, 1, 1]
        assert len(set(d)) == 3


def test_kmeans_plusplus_seeding_draws_rows_with_probability_d2():
    """The compiled seeding against a NumPy reference given the same first row and uniforms, and
    the D^2 law itself: the second centre's row frequencies against d2 / sum(d2) (chi-square)."""
    from scipy.stats import chisquare

    from hphawkes_py.mixture.initial_values import _seed_kernel

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (300, 3)), rng.normal(6, 0.5, (100, 3)), np.zeros((5, 3))])
    k = 12
    u = rng.random(k - 1)
    got = np.empty((k, 3))
    _seed_kernel()(X, 7, u, got)
    ref = [X[7]]
    d2 = ((X - X[7]) ** 2).sum(1)
    for j in range(1, k):
        cdf = np.cumsum(d2)
        i = int(np.searchsorted(cdf, u[j - 1] * cdf[-1], side="right"))
        ref.append(X[i])
        d2 = np.minimum(d2, ((X - X[i]) ** 2).sum(1))
    np.testing.assert_array_equal(got, np.array(ref))
    # the second centre's law: 20,000 draws over 6 rows
    Y = np.array([[0.0], [1.0], [2.0], [4.0], [4.0], [0.0]])
    d2 = (Y[:, 0] - Y[0, 0]) ** 2
    c = np.empty((2, 1))
    hits = np.zeros(len(Y))
    for v in rng.random(20_000):
        _seed_kernel()(Y, 0, np.array([v]), c)
        hits[np.flatnonzero(Y[:, 0] == c[1, 0])[0]] += 1
    # rows 3 and 4 coincide: their mass lands on the first of them; rows 0 and 5 have d2 = 0
    probs = d2 / d2.sum()
    probs[3] += probs[4]
    probs[4] = 0.0
    assert hits[0] == hits[4] == hits[5] == 0
    assert chisquare(hits[1:4], probs[1:4] * hits.sum()).pvalue > 1e-3
    # every d2 zero (all rows equal): uniform rows, no failure
    _seed_kernel()(np.ones((4, 2)), 0, np.array([0.99, 0.3]), np.empty((3, 2)))


def test_user_given_initial_means_are_used():
    two = BLOBS[:140]  # blobs at (0, 0) and (5, 1)
    for init in ([[0.0, 0.0], [5.0, 1.0]], [[5.0, 1.0], [0.0, 0.0]]):
        m = TDPGaussianMixture(2, method="bem", n_iter=30, init=np.array(init), progress=False, backend="cpu").fit(two)
        np.testing.assert_allclose(m.means_, init, atol=0.3)
    r = TDPGaussianMixture(3, method="bem", n_iter=5, init="random", seed=1, progress=False, backend="cpu").fit(BLOBS)
    k = TDPGaussianMixture(3, method="bem", n_iter=5, seed=1, progress=False, backend="cpu").fit(BLOBS)
    assert not np.allclose(r.means_, k.means_)


# ----------------------------------------------------------------------------- chains
def test_chains_on_an_executor_match_serial_chains_and_report_label_invariant_rhat():
    kw = dict(n_iter=40, burn_in=10, chains=3, seed=8, progress=False, backend="cpu")
    a = TDPGaussianMixture(5, **kw).fit(BLOBS)
    with ThreadPoolExecutor(2) as ex:
        b = TDPGaussianMixture(5, executor=ex, **kw).fit(BLOBS)
    np.testing.assert_array_equal(a.draws_["means"], b.draws_["means"])
    assert a.draws_["weights"].shape == (120, 5) and a.loglik_trace_.shape == (3, 50)
    assert a.chain_traces_["occupied"].shape == (3, 40)
    # the chains differ (own seeds), but label-invariant quantities agree across them
    assert not np.array_equal(a.chain_traces_["loglik"][0], a.chain_traces_["loglik"][1])
    diag = a.diagnostics()
    assert list(diag.index) == ["loglik", "occupied", "alpha"]
    assert list(diag.columns) == ["mean", "r_hat", "ess_bulk", "ess_tail"]
    assert np.isfinite(diag.loc["loglik", "r_hat"]) and diag.loc["loglik", "r_hat"] < 1.1
    text = a.summary()
    assert "r_hat" in text and "3 chain(s)" in text


def test_chains_on_a_process_pool_after_an_engine_ran_in_this_process():
    from concurrent.futures import ProcessPoolExecutor

    kw = dict(n_iter=8, burn_in=2, chains=2, seed=3, progress=False, backend="cpu")
    a = TDPGaussianMixture(4, **kw).fit(BLOBS)  # CPU engines ran here first (issue 18: fork + OpenMP)
    with ProcessPoolExecutor(2) as ex:
        b = TDPGaussianMixture(4, executor=ex, **kw).fit(BLOBS)
    np.testing.assert_array_equal(a.draws_["means"], b.draws_["means"])


def test_summary_warns_when_rhat_exceeds_1_01(gibbs):
    import copy

    m = copy.copy(gibbs)
    m.chain_traces_ = {k: v.copy() for k, v in gibbs.chain_traces_.items()}
    m.chain_traces_["alpha"] = np.concatenate([m.chain_traces_["alpha"], m.chain_traces_["alpha"] + 50.0])
    for key in ("loglik", "occupied"):
        m.chain_traces_[key] = np.concatenate([m.chain_traces_[key]] * 2)
    with pytest.warns(RuntimeWarning, match=r"R-hat > 1.01 for \['alpha'\]"):
        m.summary()


# ----------------------------------------------------------------------------- BEM pruning
def test_bem_prunes_components_below_the_threshold_and_reports_the_number_kept():
    m = TDPGaussianMixture(12, method="bem", n_iter=200, prune=0.02, seed=3, progress=False, backend="cpu").fit(BLOBS)
    kept = m.n_components_kept_
    assert 3 <= kept < 12
    assert int((m.weights_ > 0).sum()) == kept and np.all(m.weights_[m.weights_ > 0] >= 0.02)
    assert m.to_dict()["n_components_kept"] == kept
    assert f"{kept} components kept" in m.summary()
    full = TDPGaussianMixture(12, method="bem", n_iter=200, seed=3, progress=False, backend="cpu").fit(BLOBS)
    assert full.n_components_kept_ == 12 and np.all(full.weights_ > 0)
    # pruning leaves the density of the data essentially unchanged
    assert abs(m.score(BLOBS) - full.score(BLOBS)) < 0.05


# ----------------------------------------------------------------------------- modal merging
def test_modal_clusters_merge_components_of_one_mode_only():
    eye = np.broadcast_to(np.eye(1), (4, 1, 1)).copy()
    # 0 and 1 (sd 1) make one unimodal bump; 8 is far; 12.5 is a separate small mode
    w = np.array([0.3, 0.3, 0.3, 0.1])
    mu = np.array([[0.0], [1.0], [8.0], [12.5]])
    cc, modes = modal_clusters(w, mu, eye)
    np.testing.assert_array_equal(cc, [0, 0, 1, 2])
    assert modes.shape == (3, 1) and abs(modes[0, 0] - 0.5) < 1e-6
    # two components 4 sd apart are two modes
    cc2, _ = modal_clusters(np.array([0.5, 0.5]), np.array([[0.0], [4.0]]), eye[:2])
    assert len(set(cc2)) == 2
    # zero-weight components belong to no cluster
    cc3, _ = modal_clusters(np.array([0.5, 0.0, 0.5]), np.array([[0.0], [2.0], [1.0]]), eye[:3])
    assert cc3[1] == -1 and cc3[0] == cc3[2] == 0


def test_fit_merges_components_into_the_true_clusters(gibbs):
    assert gibbs.n_clusters_ == 3
    truth = np.repeat([0, 1, 2], [80, 60, 60])
    # the clusters are the blobs (up to numbering)
    pairs = set(zip(truth.tolist(), gibbs.cluster_labels_.tolist()))
    assert len(pairs) == 3
    np.testing.assert_allclose(np.sort(gibbs.cluster_weights_), np.sort([80, 60, 60]) / 200, atol=0.03)
    np.testing.assert_array_equal(gibbs.predict_cluster(BLOBS), gibbs.cluster_labels_)


# ----------------------------------------------------------------------------- GPU engine, any p
@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("p", [40, 110])  # beyond the old p <= 32 limit; 110 no longer fits in shared memory
def test_cuda_engine_supports_any_number_of_columns(backend, p):
    rng = np.random.default_rng(p)
    n, k = 37, 3
    X = rng.normal(size=(n, p))
    w = np.array([0.5, 0.3, 0.2])
    mu = rng.normal(scale=0.3, size=(k, p))
    A = rng.normal(scale=0.2, size=(k, p, p))
    S = A @ np.swapaxes(A, 1, 2) + np.eye(p)
    from hphawkes_py.mixture import _math as M

    L, U, logdet = M.chol_factors(S)
    eng = make_engine(X, backend=backend, chunk_size=16)
    eng.set_components(np.log(w), mu, U, logdet)
    if p == 110:
        assert not eng._staged
    ref = nv.log_component_densities(X, w, mu, S)
    np.testing.assert_allclose(eng.component_log_density(X), ref, rtol=1e-10, atol=1e-8)
    u = rng.random(n)
    np.testing.assert_array_equal(eng.sample_labels(u), nv.sample_labels(ref, u))
    cpu = make_engine(X, backend="cpu")
    cpu.set_components(np.log(w), mu, U, logdet)
    cpu.sample_labels(u)
    np.testing.assert_allclose(eng.label_stats(), cpu.label_stats(), rtol=1e-10, atol=1e-9)


# ----------------------------------------------------------------------------- CPU float32
def test_cpu_engine_in_float32_within_single_precision():
    rng = np.random.default_rng(9)
    n, p, k = 300, 4, 7
    X = rng.normal(size=(n, p)) * 1.3
    w = rng.dirichlet(np.ones(k))
    mu = rng.normal(scale=1.5, size=(k, p))
    A = rng.normal(scale=0.4, size=(k, p, p))
    S = A @ np.swapaxes(A, 1, 2) + 0.2 * np.eye(p)
    from hphawkes_py.mixture import _math as M

    L, U, logdet = M.chol_factors(S)
    eng = make_engine(X, backend="cpu", dtype=np.float32, chunk_size=64)
    eng.set_components(np.log(w), mu, U, logdet)
    assert eng.W.dtype == np.float32
    ref = nv.log_component_densities(X, w, mu, S)
    err = np.abs(eng.component_log_density(X) - ref) / np.maximum(1.0, np.abs(ref))
    assert 1e-12 < err.max() < 1e-4  # really single precision, and within it
    u = rng.random(n)
    z = eng.sample_labels(u)
    assert np.mean(z == nv.sample_labels(ref, u)) >= 0.99
    assert eng.loglik == pytest.approx(nv.loglik(ref).sum(), rel=1e-5)
    ll, T = eng.responsibilities_stats()
    R = np.exp(ref - nv.loglik(ref)[:, None])
    np.testing.assert_allclose(T[:, 0], R.sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(eng.log_density(X), nv.loglik(ref), rtol=1e-5)
    m = TDPGaussianMixture(4, n_iter=5, burn_in=2, seed=1, dtype=np.float32, progress=False, backend="cpu").fit(BLOBS)
    assert np.isfinite(m.loglik_trace_).all()
