"""The CPU mixture engine's Numba kernels against obvious NumPy references (float64): feature-major
quadratic features, the pruned label draw at component counts around the 64-bit mask words,
the per-component moments, and results that do not depend on the number of threads."""
from __future__ import annotations

import numpy as np
import pytest

from hphawkes_py._fastmath import count_trailing_zeros, max_num
from hphawkes_py.mixture import cpu as C
from hphawkes_py.mixture.cpu import CpuEngine
from hphawkes_py.mixture.engine import features_numpy

import naive_mixture as nv


def test_feature_major_features_equal_numpy_on_a_strided_chunk():
    rng = np.random.default_rng(0)
    X = rng.normal(scale=3.0, size=(37, 6))
    F = features_numpy(X).shape[1]
    buf = np.full((F, 50), np.nan)
    C._features_t(X, buf[:, :37])  # the last, partial chunk of a larger buffer
    np.testing.assert_array_equal(buf[:, :37].T, features_numpy(X))
    assert np.isnan(buf[:, 37:]).all()  # nothing written past the chunk


@pytest.mark.parametrize("k", [1, 5, 63, 64, 65, 128, 130, 300])
def test_pruned_draw_equals_the_numpy_draw_for_any_k(k):
    """Labels and log-sum-exp equal the plain NumPy inverse-CDF draw over all k components, for k
    below, at and across the 64-component mask words; some rows keep many components, some one."""
    rng = np.random.default_rng(k)
    n = 400
    D = rng.normal(scale=15.0, size=(n, k))
    D[::7] = rng.normal(scale=1.0, size=D[::7].shape)  # rows where nearly everything is kept
    if k > 2:
        D[3, : k // 2] = -np.inf  # components with weight zero
    u = rng.random(n)
    z = np.empty(n, np.int32)
    ll = np.empty(n)
    kept = np.empty(n, np.int32)
    C._sample_rows_pruned(D, u, z, ll, C.prune_margin(k), kept)
    np.testing.assert_array_equal(z, nv.sample_labels(D, u))
    np.testing.assert_allclose(ll, nv.loglik(D), rtol=1e-14, atol=0)
    keep_ref = (D >= D.max(1, keepdims=True) - C.prune_margin(k)).sum(1)
    np.testing.assert_array_equal(kept, keep_ref)


def test_vector_max_and_trailing_zeros_intrinsics():
    from numba import njit

    @njit
    def rowmax(a):
        m = a[0]
        for j in range(a.shape[0]):
            m = max_num(m, a[j])
        return m

    @njit
    def ctz(x):
        return count_trailing_zeros(x)

    rng = np.random.default_rng(1)
    for dt in (np.float64, np.float32):
        a = rng.normal(size=301).astype(dt)
        a[:5] = -np.inf
        assert rowmax(a) == a.max()
        assert rowmax(np.full(9, -np.inf, dt)) == -np.inf
    for bit in (0, 1, 31, 32, 63):
        assert ctz(np.uint64(1) << np.uint64(bit) | (np.uint64(1) << np.uint64(63))) == bit


def test_moments_by_label_equal_numpy_sums():
    rng = np.random.default_rng(2)
    n, p, k = 500, 4, 7
    X = rng.normal(size=(n, p))
    z = rng.integers(0, k - 1, size=n).astype(np.int32)  # component k - 1 stays empty
    M = np.zeros((k, 1 + p + p * p))
    C._add_moments(X, z, M)
    T = C.moments_to_stats(M, p)
    Phi = features_numpy(X)
    ref = np.stack([Phi[z == j].sum(0) for j in range(k)])
    np.testing.assert_allclose(T, ref, rtol=1e-13, atol=1e-12)
    assert (T[k - 1] == 0).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_engine_results_do_not_depend_on_the_thread_count(dtype):
    """The fixed blocks of chunks give bit-identical labels, log-likelihood, label statistics and
    BEM statistics with 1, 2 and 3 worker threads."""
    rng = np.random.default_rng(3)
    n, p, k = 3000, 3, 10
    X = rng.normal(size=(n, p))
    mu = rng.normal(size=(k, p))
    U = np.tile(np.eye(p) * 1.3, (k, 1, 1))
    logw = np.log(rng.dirichlet(np.ones(k)))
    u = rng.random(n)
    out = []
    for threads in (1, 2, 3):
        eng = CpuEngine(X, threads=threads, chunk_size=128, dtype=dtype)
        eng.set_components(logw, mu, U, np.full(k, -2 * p * np.log(1.3)))
        z = eng.sample_labels(u).copy()
        out.append((z, eng.loglik, eng.label_stats(), *eng.responsibilities_stats()))
        eng.close()
    for other in out[1:]:
        np.testing.assert_array_equal(other[0], out[0][0])
        assert other[1] == out[0][1]
        np.testing.assert_array_equal(other[2], out[0][2])
        assert other[3] == out[0][3]
        np.testing.assert_array_equal(other[4], out[0][4])
