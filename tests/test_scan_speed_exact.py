"""The speed-ups of the scan engines leave every result bit-identical: each pruned path against the
exact loop it replaces (same replicates, same arrays), on small problems that exercise the bounds."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from hphawkes_py.scan.cpu_space_time import CpuSpaceTimeEngine, cylinder_batch
from hphawkes_py.scan.engine import klogk_table
from hphawkes_py.scan.windows import build_windows


def _cylinder_problem(seed, L=40, T=25, R=70, C=300, persons=False):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 10, size=(L, 2))
    loc = rng.integers(0, L, C)
    day = rng.integers(0, T, C)
    obs = np.zeros((L, T), np.int64)
    np.add.at(obs, (loc, day), 1)
    if persons:
        P = obs + rng.integers(0, 6, size=(L, T))
        M = np.stack([_relabel(rng, P, C) for _ in range(R)], axis=2)
        pl = P.sum(axis=1).astype(float)
        windows = build_windows(xy, xy, pl, 0.3 * pl.sum())
        return windows, M.astype(np.int32), P, np.zeros(T + 1), C, int(P.sum())
    # permuted days among the cases: counts per location and day, the circle's cases C_Z
    M = np.zeros((L, T, R), np.int32)
    for r in range(R):
        np.add.at(M[:, :, r], (loc, rng.permutation(day)), 1)
    sz = obs.sum(axis=1).astype(float)
    windows = build_windows(xy, xy, sz, 0.3 * sz.sum())
    dcum = np.r_[0.0, np.cumsum(obs.sum(axis=0))].astype(float)
    return windows, M, None, dcum, C, C


def _relabel(rng, P, C):
    flat = np.repeat(np.arange(P.size), P.ravel())
    pick = rng.choice(flat.size, C, replace=False)
    return np.bincount(flat[pick], minlength=P.size).reshape(P.shape)


@pytest.mark.parametrize("persons", [False, True])
@pytest.mark.parametrize("t_end_min,max_t", [(0, 7), (0, 25), (24, 5), (10, 3)])
@pytest.mark.parametrize("R", [70, 300])  # one group of replicates, and groups of CYLINDER_GROUP with a partial last
def test_cylinder_pruned_bit_identical(persons, t_end_min, max_t, R):
    windows, M, P, dcum, C, N = _cylinder_problem(3, R=R, persons=persons)
    kl = klogk_table(N + 1)
    args = (windows, M, P, dcum, kl, C, N, max_t, t_end_min, 2, "high")
    b0, a0 = cylinder_batch(*args, want_arg=True, pruned=False)
    b1, a1 = cylinder_batch(*args, want_arg=True, pruned=True)
    assert (b0 > 0).any()
    np.testing.assert_array_equal(b1, b0)
    np.testing.assert_array_equal(a1, a0)
    # with a pilot's floor (the Monte Carlo path), the maxima are the same too
    fl = b0[::5].max(axis=0)
    f0, _ = cylinder_batch(*args, floor=fl, pruned=False)
    f1, _ = cylinder_batch(*args, floor=fl, pruned=True)
    np.testing.assert_array_equal(f1, f0)
    np.testing.assert_array_equal(f1.max(axis=0), b0.max(axis=0))


def _numpy_cylinder_maxima(windows, M, dcum, C, max_t):
    """Every centre's best high-rate cylinder LLR (min. 2 cases) by a plain NumPy enumeration (float64)."""
    offsets, neighbors, wsize, boundary = windows
    ref = np.zeros((len(offsets) - 1, M.shape[2]))
    for i in range(len(offsets) - 1):
        S = np.zeros(M.shape[1:])
        for j in range(offsets[i], offsets[i + 1]):
            S += M[neighbors[j]]
            if not boundary[j]:
                continue
            for t2 in range(M.shape[1]):
                for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                    mu = wsize[j] * (dcum[t2 + 1] - dcum[t1]) / C
                    c = S[t1:t2 + 1].sum(axis=0)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        llr = np.where(c > 0, c * np.log(c / mu), 0) + \
                            np.where(C - c > 0, (C - c) * np.log((C - c) / (C - mu)), 0)
                    ok = (c > mu) & (c >= 2) & (mu > 0) & (mu < C)
                    ref[i] = np.maximum(ref[i], np.where(ok, llr, 0))
    return ref


def test_cylinder_pruned_against_numpy():
    """The pruned kernel's maxima equal a plain NumPy enumeration of the cylinders (float64)."""
    windows, M, _, dcum, C, _ = _cylinder_problem(5, L=15, T=12, R=9, C=120)
    kl = klogk_table(C + 1)
    max_t = 4
    best, _ = cylinder_batch(windows, M, None, dcum, kl, C, C, max_t, 0, 2, "high", pruned=True)
    np.testing.assert_allclose(best, _numpy_cylinder_maxima(windows, M, dcum, C, max_t), rtol=1e-10, atol=1e-10)


def test_cylinder_counts_beyond_16_bits(monkeypatch):
    """With more cases than 16-bit sums hold, the kernels sum in 32 bits: cylinders of over 32,767 cases
    against NumPy, both loops; with the 16-bit guard turned off the same problem comes out wrong (the
    sums wrap), so the guard is what keeps it right."""
    from hphawkes_py.scan import cpu_space_time

    rng = np.random.default_rng(2)
    L, T = 12, 3
    xy = rng.uniform(0, 10, size=(L, 2))
    M = rng.poisson(4000, size=(L, T, 5)).astype(np.int32)
    M[0, 0] += 30_000  # a cluster of over 32,767 cases in one location and day
    C = int(M.sum(axis=(0, 1)).max())
    sz = np.full(L, 4000.0 * T)  # expectations of the background only
    windows = build_windows(xy, xy, sz, 0.5 * sz.sum())
    dcum = np.arange(T + 1) * 4000.0 * L
    kl = klogk_table(C + 1)
    ref = _numpy_cylinder_maxima(windows, M, dcum, C, 3)
    assert ref.max() > 1e4  # the cluster is every replicate's best
    # the table's terms c log c are near 2e6 here: their rounding, not the counts, bounds the agreement
    tol = dict(rtol=1e-8, atol=1e-8)
    for pruned in (True, False):
        best, _ = cylinder_batch(windows, M, None, dcum, kl, C, C, 3, 0, 2, "high", pruned=pruned)
        np.testing.assert_allclose(best, ref, **tol)
    monkeypatch.setattr(cpu_space_time, "INT16_CASES", 10**9)
    wrapped, _ = cylinder_batch(windows, M, None, dcum, kl, C, C, 3, 0, 2, "high")
    assert not np.allclose(wrapped, ref, **tol)


@pytest.mark.parametrize("kind", ["permutation", "poisson"])
@pytest.mark.parametrize("T,max_t", [(25, 7), (12, 40), (1, 1)])
def test_interval_logs_are_the_per_cylinder_logs(kind, T, max_t):
    """The Poisson-type cylinders take mu and its logs from a table of the distinct interval sums: for every
    interval (t1, t2) and circle, mu = C_Z (dcum[t2 + 1] - dcum[t1]) / C, log mu and log(C - mu) equal,
    bit for bit, those computed for that cylinder alone (integer case counts per day, and the
    space-time Poisson's C t / T, whose sums differ in their last bits between intervals)."""
    from hphawkes_py.scan.cpu_space_time import _interval_logs, _interval_sums

    rng = np.random.default_rng(T)
    C = 997
    if kind == "permutation":
        dcum = np.r_[0.0, np.cumsum(rng.multinomial(C, np.ones(T) / T))].astype(float)
    else:
        dcum = C * np.arange(T + 1) / T
    du, didx = _interval_sums(dcum, T, max_t)
    assert len(du) < T * min(T, max_t) or T == 1  # some intervals share their sum
    mu_u, la_u, lb_u = np.empty(len(du)), np.empty(len(du)), np.empty(len(du))
    for cz in (0.0, 1.0, 37.25, float(C), 1.5 * C):
        _interval_logs(cz, du, float(C), mu_u, la_u, lb_u, None)
        for t2 in range(T):
            for t1 in range(max(0, t2 - max_t + 1), t2 + 1):
                u = didx[t2, t2 - t1]
                mu = cz * (dcum[t2 + 1] - dcum[t1]) / float(C)
                assert mu_u[u] == mu
                if 0.0 < mu < C:
                    assert (la_u[u], lb_u[u]) == _kernel_logs(mu, float(C))


@numba.njit
def _kernel_logs(mu, Cf):
    """The logarithms as a kernel takes them for one cylinder (Numba's, which NumPy's SIMD ones on some
    CPUs may differ from in the last bit)."""
    return np.log(mu), np.log(Cf - mu)


def test_engine_pruned_switch():
    windows, M, _, dcum, C, _ = _cylinder_problem(7)
    kl = klogk_table(C + 1)
    eng = CpuSpaceTimeEngine(windows, dcum, kl, C, 6, 0, 2, "high")
    m1 = eng.max_llr(M)
    eng.pruned = False
    m0 = eng.max_llr(M)
    np.testing.assert_array_equal(m1, m0)
    np.testing.assert_array_equal(m1, eng.batch(M)[0].max(axis=0))


def test_poisson_engine_shares_logs_bit_identical():
    """The engine's observed-data scan reuses its per-entry logarithms: same as scan_batch computing them."""
    from hphawkes_py.scan.cpu import CpuEngine, scan_batch
    rng = np.random.default_rng(11)
    L = 60
    xy = rng.uniform(0, 10, size=(L, 2))
    pop = rng.integers(50, 300, size=L)
    cases = rng.poisson(pop * 0.05).astype(np.int32)
    C = int(cases.sum())
    windows = build_windows(xy, xy, pop * (C / pop.sum()), 0.5 * C)
    kl = klogk_table(C + 1)
    eng = CpuEngine(windows, kl, C, C, "high", model="poisson", min_cases=2)
    M = np.stack([rng.multinomial(C, pop / pop.sum()) for _ in range(5)], axis=1).astype(np.int32)
    M[:, 0] = cases
    b1, a1 = eng.best_per_centre(M, want_arg=True)
    b0, a0 = scan_batch(windows, M, kl, C, C, "high", True, model="poisson", min_cases=2)
    assert (b0 > 0).any()
    np.testing.assert_array_equal(b1, b0)
    np.testing.assert_array_equal(a1, a0)
    np.testing.assert_array_equal(eng.max_llr(M), b0.max(axis=0))
