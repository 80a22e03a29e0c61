"""TDP Gaussian mixture: hot steps on CPU and emulator vs a NumPy/SciPy reference, conjugate
updates vs textbook formulas, and input validation."""
from __future__ import annotations


import numpy as np
import pytest

from hphawkes_py.mixture import TDPGaussianMixture, relabel_draws
from hphawkes_py.mixture import _math as M
from hphawkes_py.mixture.engine import make_engine

import naive_mixture as nv


from engines import CUDA_ENGINES, ENGINES  # noqa: E402


def _random_mixture(rng, k, p, zero_weight=True):
    w = rng.dirichlet(np.ones(k))
    if zero_weight and k > 2:
        w[1] = 0.0  # a component with log weight -inf must get probability 0
        w /= w.sum()
    means = rng.normal(scale=1.5, size=(k, p))
    A = rng.normal(scale=0.4, size=(k, p, p))
    covs = A @ np.swapaxes(A, 1, 2) + 0.2 * np.eye(p)
    return w, means, covs


def _problem(seed=0, n=300, p=3, k=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * 1.3
    w, mu, S = _random_mixture(rng, k, p)
    return rng, X, w, mu, S


def _engine(X, w, mu, S, backend, dtype=np.float64):
    eng = make_engine(X, backend=backend, dtype=dtype, chunk_size=128)
    L, U, logdet = M.chol_factors(S)
    with np.errstate(divide="ignore"):
        eng.set_components(np.log(w), mu, U, logdet)
    return eng


# ----------------------------------------------------------------------------- hot steps
@pytest.mark.parametrize("backend", ENGINES)
def test_log_densities_match_scipy(backend):
    rng, X, w, mu, S = _problem(0)
    eng = _engine(X, w, mu, S, backend)
    D = eng.component_log_density(X)
    ref = nv.log_component_densities(X, w, mu, S)
    assert np.all(np.isneginf(D[:, 1])) and np.all(np.isneginf(ref[:, 1]))
    fin = np.isfinite(ref)
    np.testing.assert_allclose(D[fin], ref[fin], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(eng.log_density(X), nv.loglik(ref), rtol=1e-10)


@pytest.mark.parametrize("backend", ENGINES)
def test_label_draws_match_reference_for_same_uniforms(backend):
    rng, X, w, mu, S = _problem(1, n=400, k=5)
    # put the components near the data so many points have several plausible labels
    mu = X[rng.choice(len(X), 5, replace=False)]
    S = np.broadcast_to(np.eye(3) * 1.5, (5, 3, 3)).copy()
    eng = _engine(X, w, mu, S, backend)
    u = rng.random(len(X))
    z = eng.sample_labels(u)
    ref = nv.log_component_densities(X, w, mu, S)
    zr = nv.sample_labels(ref, u)
    np.testing.assert_array_equal(z, zr)
    assert len(np.unique(z)) >= 3  # the draw is not degenerate
    assert not np.any(z == 1)  # zero-weight component never drawn
    assert eng.loglik == pytest.approx(nv.loglik(ref).sum(), rel=1e-11)
    # sufficient statistics of the drawn labels
    N, S1, S2 = M.unpack_stats(eng.label_stats(), 3)
    Nr, S1r, S2r = nv.component_stats(X, nv.onehot(zr, 5))
    np.testing.assert_array_equal(N, Nr)
    np.testing.assert_allclose(S1, S1r, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(S2, S2r, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("backend", ENGINES)
def test_responsibility_statistics_match_reference(backend):
    rng, X, w, mu, S = _problem(2, n=350, k=4)
    eng = _engine(X, w, mu, S, backend)
    ll, T = eng.responsibilities_stats()
    ref = nv.log_component_densities(X, w, mu, S)
    R = nv.responsibilities(ref)
    N, S1, S2 = M.unpack_stats(T, 3)
    Nr, S1r, S2r = nv.component_stats(X, R)
    assert ll == pytest.approx(nv.loglik(ref).sum(), rel=1e-11)
    np.testing.assert_allclose(N, Nr, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S1, S1r, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S2, S2r, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_float32_within_single_precision(backend):
    rng, X, w, mu, S = _problem(3, n=200, k=5)
    eng = _engine(X, w, mu, S, backend, dtype=np.float32)
    ref = nv.log_component_densities(X, w, mu, S)
    D = eng.component_log_density(X)
    fin = np.isfinite(ref)
    # inputs rounded to float32 (rel 6e-8) and ~p^2 = 9 accumulated float32 roundings in the
    # quadratic form, whose size is |d| ~ up to 50: absolute error ~ 50 * 20 * 6e-8 < 1e-4
    err = np.abs(D[fin] - ref[fin]) / np.maximum(1.0, np.abs(ref[fin]))
    assert err.max() < 1e-4
    assert err.max() > 1e-12  # it really ran in single precision
    u = rng.random(len(X))
    z = eng.sample_labels(u)
    zr = nv.sample_labels(ref, u)
    # labels may differ only where u_i falls within float32 rounding of a cumulative boundary
    assert np.mean(z == zr) >= 0.99


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cpu_and_cuda_engine_give_identical_gibbs_chain(backend):
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(5, 1, (60, 2))])
    fits = [
        TDPGaussianMixture(4, n_iter=5, burn_in=2, seed=11, progress=False, backend=b).fit(X)
        for b in ("cpu", backend)
    ]
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    np.testing.assert_allclose(fits[0].draws_["means"], fits[1].draws_["means"], rtol=1e-9, atol=1e-9)
    assert fits[1].backend_ == backend


# ----------------------------------------------------------------------------- conjugate updates
def test_gibbs_mu_draw_matches_textbook_conditional():
    rng = np.random.default_rng(7)
    p, K = 3, 20000  # K copies of one component: a Monte Carlo sample in one vectorised call
    X = rng.normal(size=(15, p)) + 2.0
    N = np.full(K, 15.0)
    S1 = np.tile(X.sum(0), (K, 1))
    S2 = np.tile(X.T @ X, (K, 1, 1))
    Sigma = np.array([[1.0, 0.3, 0.0], [0.3, 0.5, 0.1], [0.0, 0.1, 0.8]])
    L = np.tile(np.linalg.cholesky(Sigma), (K, 1, 1))
    m0 = np.array([0.5, -0.5, 0.0])
    mu, _ = M.gibbs_mu_sigma(rng, N, S1, S2, L, m0, 10.0, 1.0, np.eye(p))
    mref, cref = nv.niw_conditional_mu(N[:1], S1[:1], Sigma[None], m0, 10.0)
    se = np.sqrt(np.diag(cref[0]) / K)
    assert np.all(np.abs(mu.mean(0) - mref[0]) < 4 * se)
    np.testing.assert_allclose(np.cov(mu.T), cref[0], rtol=0.05, atol=0.05 * cref[0].max())


@pytest.mark.parametrize("p", [1, 3, 14])
def test_batched_cholesky_and_bartlett_match_lapack(p):
    from hphawkes_py.mixture import _linalg

    rng = np.random.default_rng(p)
    k = 37
    A = rng.normal(size=(k, p, p))
    S = A @ np.swapaxes(A, 1, 2) + 0.1 * np.eye(p)
    L, U, logdet = _linalg.chol_factors(S)
    Lr, Ur, ldr = nv.chol_factors(S)
    np.testing.assert_allclose(L, Lr, rtol=1e-12, atol=1e-12 * np.abs(Lr).max())
    np.testing.assert_allclose(U, Ur, rtol=1e-10, atol=1e-11 * np.abs(Ur).max())
    np.testing.assert_allclose(logdet, ldr, rtol=1e-12, atol=1e-11)
    assert np.all(np.triu(U, 1) == 0.0) and np.all(np.triu(L, 1) == 0.0)
    # leading batch shapes pass through
    L2, _, ld2 = _linalg.chol_factors(S[:36].reshape(6, 6, p, p))
    np.testing.assert_array_equal(L2.reshape(36, p, p), L[:36])
    assert ld2.shape == (6, 6)
    adiag = np.sqrt(rng.chisquare(p + 3.0 - np.arange(p), size=(k, p)))
    alow = rng.normal(size=(k, p * (p - 1) // 2))
    out = _linalg.inv_wishart_bartlett(S, adiag, alow)
    ref = nv.inv_wishart_bartlett(S, adiag, alow)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())
    assert np.array_equal(out, np.swapaxes(out, 1, 2))


@pytest.mark.parametrize("phi0_per_component", [False, True])
def test_inverse_wishart_scale_equals_the_numpy_expression_bitwise(phi0_per_component):
    """The Numba inverse-Wishart scale of the Gibbs step equals, bit for bit, the NumPy expression
    it replaces (scatter about mu plus the prior terms, Phi0 for empty components, symmetrised),
    with Phi0 shared or per component."""
    from hphawkes_py.mixture import _linalg

    rng = np.random.default_rng(11)
    k, p, gamma0 = 23, 5, 0.7
    N = rng.integers(0, 40, size=k).astype(float)
    N[:4] = 0.0
    S1 = rng.normal(size=(k, p)) * N[:, None]
    A = rng.normal(size=(k, p, p))
    S2 = A @ np.swapaxes(A, 1, 2) * N[:, None, None] + 0.01 * rng.normal(size=(k, p, p))  # not symmetric
    mu, m0 = rng.normal(size=(k, p)), rng.normal(size=p)
    B = rng.normal(size=(k, p, p)) if phi0_per_component else rng.normal(size=(p, p))
    Phi0 = B @ np.swapaxes(B, -1, -2) + np.eye(p)
    dm = mu - m0[None, :]
    ref = M.scatter_about(N, S1, S2, mu) + np.einsum("ja,jb->jab", dm, dm) / gamma0 + Phi0
    ref[N == 0] = Phi0 if Phi0.ndim == 2 else Phi0[N == 0]
    ref = 0.5 * (ref + np.swapaxes(ref, 1, 2))
    np.testing.assert_array_equal(_linalg.iw_posterior_scale(N, S1, S2, mu, m0, gamma0, Phi0), ref)


def test_batched_cholesky_names_the_matrix_that_is_not_positive_definite():
    from hphawkes_py.mixture import _linalg

    S = np.tile(np.eye(3), (2, 4, 1, 1))
    S[1, 2, 1, 1] = -1.0
    with pytest.raises(np.linalg.LinAlgError, match=r"\(1, 2\) is not positive definite"):
        _linalg.chol_factors(S)
    S[1, 2, 1, 1] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        _linalg.chol_factors(S)
    with pytest.raises(np.linalg.LinAlgError, match="scale matrix"):
        _linalg.inv_wishart_bartlett(S[1], np.ones((4, 3)), np.zeros((4, 3)))


def test_inverse_wishart_draw_moments():
    rng = np.random.default_rng(8)
    p, K, df = 3, 40000, 12.0
    Psi = np.array([[2.0, 0.5, 0.2], [0.5, 1.0, 0.1], [0.2, 0.1, 1.5]])
    S = M.rinvwishart(rng, np.full(K, df), np.tile(Psi, (K, 1, 1)))
    # E[Sigma] = Psi / (df - p - 1); E[Sigma^-1] = df Psi^-1
    np.testing.assert_allclose(S.mean(0), Psi / (df - p - 1), rtol=0.03, atol=0.01)
    np.testing.assert_allclose(np.linalg.inv(S).mean(0), df * np.linalg.inv(Psi), rtol=0.03, atol=0.03)


def test_gibbs_sigma_conditional_and_empty_prior_draw():
    rng = np.random.default_rng(9)
    p, K = 2, 40000
    X = rng.normal(size=(30, p))
    Sigma = np.eye(p)
    L = np.tile(Sigma, (K, 1, 1))
    m0 = np.zeros(p)
    gamma0, nu0 = 10.0, 4.0
    Phi0 = nu0 * np.eye(p)
    # half the copies occupied (n = 30), half empty: empty ones are exact prior draws
    N = np.where(np.arange(K) < K // 2, 30.0, 0.0)
    S1 = np.where(N[:, None] > 0, X.sum(0), 0.0)
    S2 = np.where(N[:, None, None] > 0, X.T @ X, 0.0)
    mu, Sg = M.gibbs_mu_sigma(rng, N, S1, S2, L, m0, gamma0, nu0, Phi0)
    occ = N > 0
    # prior: Sigma ~ IW(nu0 + p + 1, Phi0) -> mean Phi0 / nu0 = I;  mu ~ N(0, gamma0 Sigma) -> var gamma0 E[Sigma]
    np.testing.assert_allclose(Sg[~occ].mean(0), np.eye(p), atol=0.05)
    np.testing.assert_allclose(mu[~occ].var(0), gamma0 * np.ones(p), rtol=0.06)
    # occupied: given mu, Sigma ~ IW(n + p + nu0 + 2, Psi(mu)): check E[Sigma | mu] through the
    # average of Psi(mu)/(df - p - 1) (conditional expectation, Monte Carlo over mu)
    Psi = M.scatter_about(N[occ], S1[occ], S2[occ], mu[occ]) + np.einsum("ja,jb->jab", mu[occ], mu[occ]) / gamma0 + Phi0
    df = 30 + p + nu0 + 2
    np.testing.assert_allclose(Sg[occ].mean(0), (Psi / (df - p - 1)).mean(0), rtol=0.03, atol=0.01)


def test_bem_mode_matches_dpmix_form():
    rng = np.random.default_rng(10)
    p, k = 3, 4
    X = rng.normal(size=(50, p))
    R = rng.dirichlet(np.ones(k), size=50)
    N, S1, S2 = nv.component_stats(X, R)
    m0 = np.array([0.1, 0.0, -0.2])
    gamma0, nu0 = 10.0, 1.0
    Phi0 = nu0 * np.eye(p)
    mu, Sg = M.bem_mu_sigma(N, S1, S2, m0, gamma0, nu0, Phi0)
    for j in range(k):
        xbar = S1[j] / N[j]
        np.testing.assert_allclose(mu[j], (m0 + gamma0 * S1[j]) / (1 + gamma0 * N[j]), rtol=1e-12)
        Xd = X - xbar
        SS = (Xd.T * R[:, j]) @ Xd + Phi0 + N[j] / (1 + gamma0 * N[j]) * np.outer(xbar - m0, xbar - m0)
        np.testing.assert_allclose(Sg[j], SS / (N[j] + nu0 + 2 * p + 3), rtol=1e-10)


def test_stick_breaking_weights_sum_to_one_and_alpha_conditional():
    rng = np.random.default_rng(12)
    N = np.array([50.0, 0.0, 20.0, 5.0, 0.0])
    v, lw = M.gibbs_sticks(rng, N, 2.0)
    assert np.exp(lw).sum() == pytest.approx(1.0, rel=1e-12)
    # v_j ~ Be(1 + n_j, alpha + sum_{r>j} n_r): Monte Carlo mean
    draws = np.array([M.gibbs_sticks(rng, N, 2.0)[0] for _ in range(4000)])
    a = 1 + N[:-1]
    b = 2.0 + np.array([25.0, 25.0, 5.0, 0.0])
    np.testing.assert_allclose(draws.mean(0), a / (a + b), atol=0.01)
    al = np.array([M.gibbs_alpha(rng, v, 5, 10.0, 1.0) for _ in range(20000)])
    rate = 1.0 - np.log1p(-v).sum()
    assert al.mean() == pytest.approx((10.0 + 4) / rate, rel=0.01)


def test_relabel_draws_undoes_a_known_permutation():
    rng = np.random.default_rng(13)
    k, p = 5, 2
    w = rng.dirichlet(np.ones(k))
    mu = rng.normal(scale=5, size=(k, p))
    S = np.tile(np.eye(p), (k, 1, 1))
    perms_true = np.array([rng.permutation(k) for _ in range(6)])
    W = np.stack([w[q] for q in perms_true]) + 1e-3 * rng.random((6, k))
    MU = np.stack([mu[q] for q in perms_true]) + 0.01 * rng.normal(size=(6, k, p))
    SS = np.stack([S[q] for q in perms_true])
    perms = relabel_draws(W, MU, SS)
    rows = np.arange(6)[:, None]
    aligned = MU[rows, perms]
    np.testing.assert_allclose(aligned, np.broadcast_to(MU[-1], aligned.shape), atol=0.1)


# ----------------------------------------------------------------------------- estimator
def test_score_samples_and_predict_proba_original_units():
    rng = np.random.default_rng(14)
    X = np.column_stack([rng.normal(100, 15, 200), rng.normal(-3, 0.01, 200)])
    m = TDPGaussianMixture(3, method="bem", n_iter=30, seed=1, progress=False, backend="cpu").fit(X)
    ref = nv.log_component_densities(X, m.weights_, m.means_, m.covariances_)
    np.testing.assert_allclose(m.score_samples(X), nv.loglik(ref), rtol=1e-10)
    np.testing.assert_allclose(m.predict_proba(X), nv.responsibilities(ref), atol=1e-10)
    np.testing.assert_array_equal(m.predict(X), ref.argmax(1))


def test_bem_log_posterior_never_decreases():
    rng = np.random.default_rng(15)
    X = np.vstack([rng.normal(0, 1, (150, 2)), rng.normal([4, 0], 0.5, (100, 2))])
    m = TDPGaussianMixture(8, method="bem", n_iter=200, tol=1e-10, seed=2, progress=False, backend="cpu").fit(X)
    lp = m.log_posterior_trace_
    assert len(lp) > 5
    assert np.all(np.diff(lp) >= -1e-8 * np.abs(lp[:-1]))
    assert m.draws_ is None


def test_gibbs_draws_shapes_units_and_thinning():
    rng = np.random.default_rng(16)
    X = rng.normal([10.0, -5.0], [2.0, 0.1], size=(120, 2))
    m = TDPGaussianMixture(4, n_iter=10, burn_in=3, thin=2, seed=3, progress=False, backend="cpu").fit(X)
    d = m.draws_
    assert d["weights"].shape == (5, 4) and d["means"].shape == (5, 4, 2)
    assert d["covariances"].shape == (5, 4, 2, 2) and d["alpha"].shape == (5,)
    np.testing.assert_allclose(d["weights"].sum(1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(m.weights_, d["weights"].mean(0), rtol=1e-12)
    np.testing.assert_allclose(m.means_, d["means"].mean(0), rtol=1e-12)
    # the heaviest component sits on the data in original units
    j = np.argmax(m.weights_)
    assert np.all(np.abs(m.means_[j] - X.mean(0)) < 0.5 * X.std(0))
    assert len(m.loglik_trace_) == 13 and m.labels_.shape == (120,)


def test_same_seed_same_fit():
    X = np.random.default_rng(17).normal(size=(80, 2))
    a = TDPGaussianMixture(3, n_iter=4, burn_in=1, seed=5, progress=False, backend="cpu").fit(X)
    b = TDPGaussianMixture(3, n_iter=4, burn_in=1, seed=np.random.default_rng(5), progress=False, backend="cpu").fit(X)
    np.testing.assert_array_equal(a.draws_["means"], b.draws_["means"])


# ----------------------------------------------------------------------------- bad input
def _fit(X, **kw):
    kw = {"n_iter": 2, "burn_in": 0, "progress": False, "backend": "cpu", **kw}
    return TDPGaussianMixture(kw.pop("k", 3), **kw).fit(X)


GOOD = np.random.default_rng(0).normal(size=(20, 3))


@pytest.mark.parametrize(
    "X, msg",
    [
        (np.where(np.arange(60).reshape(20, 3) == 7, np.nan, GOOD), "finite"),
        (np.where(np.arange(60).reshape(20, 3) == 7, np.inf, GOOD), "finite"),
        (GOOD[:1], "at least 2 rows"),
        (np.random.default_rng(1).normal(size=(3, 5)), "more columns"),
        (np.column_stack([GOOD, np.full(20, 4.2)]), "constant"),
    ],
)
def test_bad_data_is_refused(X, msg):
    with pytest.raises(ValueError, match=msg):
        _fit(X)


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"k": 0}, "n_components"),
        ({"gamma0": 0.0}, "gamma0"),
        ({"gamma0": -1.0}, "gamma0"),
        ({"nu0": 0.0}, "nu0"),
        ({"Phi0": -np.eye(3)}, "positive definite"),
        ({"Phi0": np.array([[1.0, 2, 0], [0, 1, 0], [0, 0, 1]])}, "symmetric"),
        ({"Phi0": np.eye(2)}, "shape"),
        ({"m0": np.zeros(2)}, "m0"),
        ({"alpha_prior": (0.0, 1.0)}, "alpha_prior"),
        ({"alpha_prior": (1.0,)}, "alpha_prior"),
        ({"method": "vb"}, "method"),
        ({"thin": 5, "n_iter": 2}, "thin"),
    ],
)
def test_bad_parameters_are_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        _fit(GOOD, **kw)


def test_unfitted_and_wrong_width():
    m = TDPGaussianMixture(2, progress=False)
    with pytest.raises(RuntimeError, match="not fitted"):
        m.predict(GOOD)
    m = _fit(GOOD)
    with pytest.raises(ValueError, match="3 columns"):
        m.score_samples(GOOD[:, :2])
    assert "TDPGaussianMixture" in repr(m) and "backend='cpu'" in repr(m)
