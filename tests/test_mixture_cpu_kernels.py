"""The CPU mixture engine's Numba kernels against obvious NumPy references (float64): feature-major
quadratic features, the pruned label draw at component counts around the 64-bit mask words,
the per-component moments, and results that do not depend on the number of threads."""
from __future__ import annotations

import numpy as np
import pytest

from hphawkes_py._fastmath import count_trailing_zeros, max_num
from hphawkes_py.mixture import cpu as C
from hphawkes_py.mixture import cpu_draw as CD
from hphawkes_py.mixture import cpu_features as CF
from hphawkes_py.mixture import cpu_float32 as C32
from hphawkes_py.mixture import cpu_moments as CM
from hphawkes_py.mixture.cpu import CpuEngine
from hphawkes_py.mixture.engine import features_numpy

import naive_mixture as nv


def test_feature_major_features_equal_numpy_on_a_strided_chunk():
    rng = np.random.default_rng(0)
    X = rng.normal(scale=3.0, size=(37, 6))
    F = features_numpy(X).shape[1]
    buf = np.full((F, 50), np.nan)
    CF._features_t(X, buf[:, :37])  # the last, partial chunk of a larger buffer
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
    CD._sample_rows_pruned(D, u, z, ll, CD.prune_margin(k), kept)
    np.testing.assert_array_equal(z, nv.sample_labels(D, u))
    np.testing.assert_allclose(ll, nv.loglik(D), rtol=1e-14, atol=0)
    keep_ref = (D >= D.max(1, keepdims=True) - CD.prune_margin(k)).sum(1)
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
    n, p, k = 500, 5, 7  # p not a multiple of 4: padded vectors
    X = rng.normal(size=(n, p))
    z = rng.integers(0, k - 1, size=n).astype(np.int32)  # component k - 1 stays empty
    M = np.zeros((k, CM.moments_width(p)))
    CM._add_moments(X, z, M)
    T = CM.moments_to_stats(M, p)
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


@pytest.mark.parametrize("dtype,prune", [(np.float64, True), (np.float32, True), (np.float64, False)])
def test_chunks_drawn_by_other_workers_keep_every_result(dtype, prune):
    """Workers with no block left take the last chunks of the blocks still running (``_run``'s
    ``finish``): labels, log-likelihood and label statistics stay bit-identical to one thread's,
    and the statistics equal the NumPy sums.  Two chunks per block and eight threads, so that
    chunks are taken (checked: the block's worker adds their moments through ``finish``)."""
    rng = np.random.default_rng(8)
    n, p, k = 32 * 64, 3, 10
    X = rng.normal(size=(n, p))
    comps = (np.log(rng.dirichlet(np.ones(k))), rng.normal(size=(k, p)), np.tile(np.eye(p) * 1.3, (k, 1, 1)),
             np.full(k, -2 * p * np.log(1.3)))
    u = rng.random(n)
    one = CpuEngine(X, threads=1, chunk_size=64, dtype=dtype, prune=prune)
    one.set_components(*comps)
    z1 = one.sample_labels(u).copy()
    ref = (z1, one.loglik, one.label_stats())
    np.testing.assert_allclose(ref[2], np.stack([features_numpy(X)[z1 == j].sum(0) for j in range(k)]),
                               rtol=1e-12, atol=1e-9)
    eng = CpuEngine(X, threads=8, chunk_size=64, dtype=dtype, prune=prune)
    eng.set_components(*comps)
    run, taken = eng._run, []

    def spy(n, work, nblocks=1, start_block=None, finish=None):
        return run(n, work, nblocks, start_block, lambda lo, hi, b: (taken.append(lo), finish(lo, hi, b)))

    eng._run = spy
    for _ in range(50):  # the scheduling decides which chunks are taken; repeat until some are
        z = eng.sample_labels(u).copy()
        np.testing.assert_array_equal(z, ref[0])
        assert eng.loglik == ref[1]
        np.testing.assert_array_equal(eng.label_stats(), ref[2])
        if taken:
            break
    assert taken
    eng.close()


def _offset_problem(seed=4, n=4000, p=3, k=12, offset=100.0):
    """Data far from the origin with tight, overlapping components: the expanded quadratic form
    cancels heavily (at offset 100: float32 log densities off by ~0.1 nats, ten plain float32
    labels of 4,000 differ from the float64 draw, ~30 % of rows need refining)."""
    rng = np.random.default_rng(seed)
    X = offset + rng.normal(size=(n, p))
    mu = offset + rng.normal(scale=0.7, size=(k, p))
    U = np.tile(np.eye(p) * 2.0, (k, 1, 1))
    logw = np.log(rng.dirichlet(np.ones(k) * 3))
    logw[-1] = -np.inf  # a component with weight zero
    return rng, X, (logw, mu, U, np.full(k, -2 * p * np.log(2.0)))


def test_float32_error_bound_holds_for_every_pair():
    from hphawkes_py.mixture.engine import build_coefficients

    for offset in (0.0, 100.0):
        rng, X, comps = _offset_problem(offset=offset, n=1500)
        W = build_coefficients(*comps)
        F = W.shape[0]
        phi_t = np.empty((F, len(X)), np.float32)
        CF._features_t(X.astype(np.float32), phi_t)
        d32 = (phi_t[1:].T @ W[1:].astype(np.float32)).astype(np.float64) + W[0]
        d64 = features_numpy(X) @ W
        a, b = C32.float32_error_norms(W, X.shape[1])
        xn = np.linalg.norm(X, axis=1)[:, None]
        E = C32.float32_error_factor(F) * (a * xn + b * xn ** 2)
        # the norm bound dominates the elementwise one, sum_f |phi_if| |W_fj|, for every pair
        elem = np.abs(features_numpy(X)[:, 1:]) @ np.abs(W[1:])
        assert (a * xn + b * xn ** 2 >= elem * (1 - 1e-12)).all()
        fin = np.isfinite(d64)
        with np.errstate(invalid="ignore"):  # -inf - -inf for the weightless component
            err = np.abs(d32 - d64)
        assert (err[fin] <= E[fin]).all()
        assert err[fin].max() > 0  # float32 did round


def test_certified_float32_draw_gives_the_float64_labels():
    rng, X, comps = _offset_problem()
    u = rng.random(len(X))
    z = {}
    for name, kw in (("f64", {}), ("f32 plain", {"dtype": np.float32, "prune": False}),
                     ("f32 certified", {"dtype": np.float32})):
        eng = CpuEngine(X, chunk_size=256, **kw)
        eng.set_components(*comps)
        z[name] = eng.sample_labels(u).copy()
        if name == "f64":
            ll64, T64 = eng.loglik, eng.label_stats()
        if name == "f32 certified":
            refined = eng.last_refined_fraction
            assert abs(eng.loglik - ll64) <= eng.last_loglik_error_bound
            np.testing.assert_array_equal(eng.label_stats(), T64)
    assert (z["f32 plain"] != z["f64"]).sum() > 0  # the problem is hard for float32
    np.testing.assert_array_equal(z["f32 certified"], z["f64"])
    assert 0 < refined < 1


def test_a_certificate_without_the_error_bound_fails(monkeypatch):
    """Teeth: with the float32 error taken as zero the certificate passes rows it must refine,
    and labels differ from the float64 draw."""
    rng, X, comps = _offset_problem()
    u = rng.random(len(X))
    e64 = CpuEngine(X)
    e64.set_components(*comps)
    z64 = e64.sample_labels(u).copy()
    monkeypatch.setattr(C, "float32_error_factor", lambda F: 0.0)  # the engine module's name
    e32 = CpuEngine(X, dtype=np.float32)
    e32.set_components(*comps)
    assert (e32.sample_labels(u) != z64).sum() > 0


@pytest.mark.parametrize("k", [1, 63, 64, 65, 200])
def test_refinement_selection_and_row_features_equal_numpy(k):
    """The refined rows' helpers: the components at or above a cut (bit masks, ascending) equal
    ``np.flatnonzero``, -inf entries included; one row's quadratic features equal NumPy's bit for
    bit."""
    from numba import njit

    rng = np.random.default_rng(k)
    row = rng.normal(size=k)
    row[rng.random(k) < 0.2] = -np.inf
    select = njit(lambda row, thr, idx, vals: CD._kept_indices(row, 0.5, thr, idx, vals))
    idx = np.empty(k, np.int64)
    vals = np.empty(k)
    for thr in (-np.inf, -1.0, 0.3, np.inf):
        cnt = select(row, thr, idx, vals)
        np.testing.assert_array_equal(idx[:cnt], np.flatnonzero(row >= thr))
        np.testing.assert_array_equal(vals[:cnt], row[row >= thr] - 0.5)
    x = rng.normal(size=5)
    phi = np.empty(features_numpy(x[None]).shape[1])
    njit(lambda x, phi: CF._row_features(x, phi))(x, phi)
    np.testing.assert_array_equal(phi, features_numpy(x[None])[0])


def test_certificate_exp_bound_and_candidate_dots():
    """The certificate's e^{2E} is replaced by a cubic upper bound for 2E <= 0.1 (never below e^x
    but for rounding, which the certificate's 1e-12 slack covers, and within 2e-5 of it there),
    and the refined rows' candidate dot products (four at a
    time) equal NumPy's for any candidate count."""
    from numba import njit

    up = njit(lambda x: C32._exp_upper(x))
    for x in np.concatenate([np.linspace(0.0, 0.1, 2001), [1e-12, 0.1 + 1e-12, 0.5, 2.0, 7.5]]):
        e = np.exp(x)
        assert up(x) * (1.0 + 4.5e-16) >= e
        assert up(x) <= e * (1.0 + 2e-5)
    rng = np.random.default_rng(4)
    F, k = 120, 40
    phi, Wt = rng.normal(size=F), rng.normal(size=(k, F))
    dots = njit(lambda phi, Wt, cand, nc, dc: C32._candidate_dots(phi, Wt, cand, nc, dc))
    for nc in (0, 1, 3, 4, 5, 11, k):
        cand = np.sort(rng.choice(k, nc, replace=False)).astype(np.int64)
        dc = np.full(k, -np.inf)
        dots(phi, Wt, np.concatenate([cand, np.zeros(k - nc, np.int64)]), nc, dc)
        ref = np.full(k, -np.inf)
        ref[:nc] = Wt[cand] @ phi
        np.testing.assert_allclose(dc, ref, rtol=1e-13, atol=1e-12)  # nothing written beyond nc


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_label_statistics_of_a_second_sweep_start_from_zero(dtype):
    """The per-block moment accumulators are kept between sweeps and only the rows filled last
    time are cleared: a second draw on the same engine, with other labels, gives the statistics
    of a fresh engine."""
    rng = np.random.default_rng(5)
    n, p, k = 5000, 4, 9
    X = rng.normal(size=(n, p))

    def comps(seed):
        r = np.random.default_rng(seed)
        return (np.log(r.dirichlet(np.ones(k))), r.normal(size=(k, p)), np.tile(np.eye(p) * 1.2, (k, 1, 1)),
                np.full(k, -2 * p * np.log(1.2)))

    u1, u2 = rng.random(n), rng.random(n)
    eng = CpuEngine(X, threads=2, chunk_size=128, dtype=dtype)
    eng.set_components(*comps(1))
    eng.sample_labels(u1)
    eng.set_components(*comps(2))
    z2 = eng.sample_labels(u2).copy()
    fresh = CpuEngine(X, threads=2, chunk_size=128, dtype=dtype)
    fresh.set_components(*comps(2))
    np.testing.assert_array_equal(fresh.sample_labels(u2), z2)
    np.testing.assert_array_equal(eng.label_stats(), fresh.label_stats())
    ref = np.stack([features_numpy(X)[z2 == j].sum(0) for j in range(k)])
    np.testing.assert_allclose(eng.label_stats(), ref, rtol=1e-12, atol=1e-9)
