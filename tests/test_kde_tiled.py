"""The CPU engine's tiled gather (``cpu_tiled.gather_tiled_kernel``) against the per-target walk
(``cpu_gather.gather_kernel``, the reference: ``CpuEngine.tiled = False``): same pairs (same cut-off
test per source, same self exclusion), another summation order, so equal to rounding."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import naive_kde as nk  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from hphawkes_py.kde import Window, cpu, cpu_edge, cpu_tiled  # noqa: E402
from hphawkes_py.kde.engine import make_engine  # noqa: E402

RTOL = 1e-13


def PACKED(mnemonic):
    """A packed instruction on vector registers of any width (xmm, ymm or zmm: AVX, AVX2, AVX-512).

    Which width LLVM picks depends on the host CPU, so the tests ask only that the loop is vectorised."""
    import re

    return re.compile(mnemonic + r"\s+[^\n]*%[xyz]mm\d+")


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(a == 0, b == 0)
    m = b != 0
    return float(np.max(np.abs(a[m] - b[m]) / np.abs(b[m]), initial=0.0))


def _both(eng, fn):
    eng.tiled = False
    ref = fn()
    eng.tiled = True
    got = fn()
    eng.tiled = None
    return got, ref


def _unit_window(n=40, side=1.0):
    return Window.from_mask(np.ones((n, n), bool), 0.0, 0.0, side / n)


def _clustered(rng, n):
    a = rng.uniform(0, 1, (n // 2, 2))
    b = 0.5 + 0.04 * rng.standard_normal((n - n // 2, 2))
    return np.vstack([a, b]).clip(0.0, 0.999)


@pytest.mark.parametrize("tile,cap", [(cpu.TILE, cpu.TILE_CAP), (1, 3), (5, 7), (64, 64)])
@pytest.mark.parametrize("cutoff", [3.0, np.inf])
def test_tiled_equals_reference_with_many_classes(monkeypatch, tile, cap, cutoff):
    # bandwidths over a factor 50 (about 11 half-octave classes, some nearly empty), weights varying;
    # small tiles/caps exercise the buffer flushes and one-target tiles
    monkeypatch.setattr(cpu, "TILE", tile)
    monkeypatch.setattr(cpu, "TILE_CAP", cap)
    rng = np.random.default_rng(3)
    n = 1500
    pts = _clustered(rng, n)
    bws = 0.004 * np.exp(rng.uniform(0, np.log(50.0), n))
    wts = rng.uniform(0.5, 2.0, n)
    eng = make_engine(pts, _unit_window(), cutoff, backend="cpu")
    assert len(eng.source_index(bws, wts).cls_s) >= 8
    for loo in (True, False):
        got, ref = _both(eng, lambda: eng.point_intensities(bws, wts, loo))
        assert _rel(got, ref) < RTOL
    q = rng.uniform(-0.2, 1.2, (700, 2))  # targets outside the points' extent too
    got, ref = _both(eng, lambda: eng.intensity_at(q, bws, wts))
    assert _rel(got, ref) < RTOL
    if cutoff == 3.0:
        assert _rel(got, nk.intensity(q, pts, bws, wts, cutoff)) < 1e-12


def test_tiled_ties_duplicates_and_pairs_exactly_at_the_cutoff():
    # a lattice of spacing 1 with b = 1/3: neighbours lie at d^2 = 1 = (3 b)^2 exactly, which the
    # rule d^2 < cut^2 excludes; duplicated points (10 copies of some) are each other's pairs at d = 0
    g = np.arange(12, dtype=float)
    lat = np.array([(x, y) for x in g for y in g])
    pts = np.vstack([lat, np.repeat(lat[::17], 10, axis=0)]) + 0.5
    n = len(pts)
    bws = np.full(n, 1.0 / 3.0)
    assert (3.0 * bws[0]) ** 2 == 1.0
    w = Window.from_mask(np.ones((13, 13), bool), 0.0, 0.0, 1.0)
    eng = make_engine(pts, w, 3.0, backend="cpu")
    wts = np.ones(n)
    for loo in (True, False):
        got, ref = _both(eng, lambda: eng.point_intensities(bws, wts, loo))
        assert _rel(got, ref) < RTOL
        assert _rel(got, nk.point_intensities(pts, bws, wts, 3.0, loo)) < 1e-12
    # a lattice point alone (no copies) has no pair at all when left out: exactly 0 on both paths
    inv = np.unique(pts, axis=0, return_inverse=True)[1].ravel()
    alone = np.flatnonzero(np.bincount(inv)[inv] == 1)
    got, _ = _both(eng, lambda: eng.point_intensities(bws, wts, True))
    assert alone.size and np.all(got[alone] == 0.0)
    # the same with bandwidths straddling class borders (two classes, lattice targets on cell edges)
    bws2 = np.where(np.arange(n) % 2 == 0, 1.0 / 3.0, 2.0 / 3.0)
    got, ref = _both(eng, lambda: eng.point_intensities(bws2, wts, True))
    assert _rel(got, ref) < RTOL
    q = np.array([(x, y) for x in np.arange(0, 13, 0.5) for y in np.arange(0, 13, 0.5)])
    got, ref = _both(eng, lambda: eng.intensity_at(q, bws2, wts))
    assert _rel(got, ref) < RTOL


def test_tiled_single_point_and_all_points_identical():
    w = _unit_window()
    eng = make_engine(np.array([[0.3, 0.4]]), w, 3.0, backend="cpu")
    b, wt = np.array([0.05]), np.array([1.0])
    got, ref = _both(eng, lambda: eng.point_intensities(b, wt, True))
    assert got[0] == ref[0] == 0.0
    got, ref = _both(eng, lambda: eng.point_intensities(b, wt, False))
    assert got[0] == pytest.approx(ref[0], rel=RTOL)
    q = np.array([[0.3, 0.4], [0.9, 0.9], [0.31, 0.4]])
    got, ref = _both(eng, lambda: eng.intensity_at(q, b, wt))
    assert _rel(got, ref) < RTOL and got[1] == 0.0
    pts = np.full((50, 2), 0.5)
    eng = make_engine(pts, w, 3.0, backend="cpu")
    bws = np.linspace(0.01, 0.2, 50)
    got, ref = _both(eng, lambda: eng.point_intensities(bws, np.ones(50), True))
    assert _rel(got, ref) < RTOL
    got, ref = _both(eng, lambda: eng.intensity_at(np.empty((0, 2)), bws, np.ones(50)))
    assert got.shape == ref.shape == (0,)


def test_tiled_float32_within_the_float32_bound():
    rng = np.random.default_rng(5)
    n = 1200
    pts = _clustered(rng, n)
    bws = 0.01 * np.exp(rng.uniform(0, 2, n))
    eng = make_engine(pts, _unit_window(), 3.0, backend="cpu", dtype=np.float32)
    got, ref = _both(eng, lambda: eng.point_intensities(bws, np.ones(n), True))
    assert 0 < _rel(got, ref) < 100 * np.finfo(np.float32).eps


def _redwood_fits(monkeypatch, owner, switch):
    """The adaptive redwood fit with ``owner.switch`` False (the reference path), then True."""
    import pandas as pd

    d = Path(hp.__file__).parent / "data" / "kde" / "zhang2017"
    pts = pd.read_csv(d / "pntsRedwood.csv").to_numpy(float)
    w = Window.from_asc(d / "redwood.asc.gz")
    fits = []
    for on in (False, True):
        monkeypatch.setattr(owner, switch, on)
        fits.append(hp.kde.fit(pts, w, method="adaptive", backend="cpu", progress=False))
    return fits


def test_fit_chooses_the_same_bandwidths_with_the_tiled_gather(monkeypatch):
    a, b = _redwood_fits(monkeypatch, cpu, "TILED")
    assert (a.h, a.alpha) == (b.h, b.alpha)
    assert b.log_likelihood == pytest.approx(a.log_likelihood, rel=1e-13)
    assert _rel(b.bandwidths, a.bandwidths) < 1e-13
    sa, sb = a.density_surface().values, b.density_surface().values
    assert np.array_equal(np.isnan(sa), np.isnan(sb))
    m = ~np.isnan(sa)
    assert _rel(sb[m], sa[m]) < RTOL


def test_exp_nonpos_matches_numpy():
    from numba import njit

    from hphawkes_py._fastmath import exp_nonpos

    f = njit(lambda x: np.array([exp_nonpos(v) for v in x]))
    x = -np.concatenate([np.geomspace(1e-300, 708.0, 20001), np.random.default_rng(0).uniform(0, 50, 20000)])
    ref = np.exp(x)
    assert np.max(np.abs(f(x) - ref) / ref) < 5e-16
    out = f(np.array([0.0, -0.0, -709.0, -1e300, -np.inf, np.nan]))
    assert out[0] == out[1] == 1.0 and np.all(out[2:5] == 0.0) and np.isnan(out[5])


def test_exp2_mul_matches_the_exact_product_and_vectorises():
    import re

    from numba import njit

    from hphawkes_py._fastmath import exp2_mul

    # compiled as the KDE kernels are (reassociation allowed): the magic-number rounding must survive
    @njit(fastmath={"reassoc", "contract", "nsz"})
    def apply(a, b, out):
        for i in range(a.shape[0]):
            out[i] = exp2_mul(a[i], b[i])

    rng = np.random.default_rng(3)
    # d^2 x (-log2(e) / (2 b^2)) as the gather forms it: products down to -6.5 and far beyond, ties at
    # half-integers, and tiny ones
    a = np.concatenate([rng.uniform(0, 9, 100000), rng.uniform(0, 1100, 50000), [0.5, 1.5, 2.5, 1e-300, 0.0]])
    b = np.concatenate([-rng.uniform(0.2, 1.0, 150000), [-1.0] * 5])
    out = np.empty_like(a)
    apply(a, b, out)
    exact = np.exp2(a.astype(np.longdouble) * b.astype(np.longdouble))  # the product unrounded
    live = exact > 2.3e-308
    assert np.max(np.abs(out[live] / exact[live] - 1)) < 5e-16
    assert np.all(out[~live] <= 2.3e-308)
    assert out[-1] == 1.0 and out[-2] == 1.0
    special = np.empty(4)
    apply(np.array([1.0, 1.0, np.inf, np.nan]), np.array([-1100.0, -np.inf, -1.0, -1.0]), special)
    assert special[0] == special[1] == special[2] == 0.0 and np.isnan(special[3])
    asm = apply.inspect_asm(apply.signatures[0])
    # packed FMAs at whatever width the host has (xmm/ymm/zmm), and no libm exp call
    assert PACKED(r"vfmadd\w*pd").search(asm) and not re.search(r"call\w*\s+[^\n]*exp", asm)


def test_exp2_mul_inrange_is_exp2_mul_in_its_range():
    from numba import njit

    from hphawkes_py._fastmath import exp2_mul, exp2_mul_inrange

    @njit(fastmath={"reassoc", "contract", "nsz"})
    def both(a, b, out):
        for i in range(a.shape[0]):
            out[0, i] = exp2_mul(a[i], b[i])
            out[1, i] = exp2_mul_inrange(a[i], b[i])

    rng = np.random.default_rng(8)
    a = np.concatenate([rng.uniform(0, 9, 50000), rng.uniform(0, 1022, 50000), [0.0, 1022.0, 1e-300]])
    b = np.concatenate([-rng.uniform(0.0, 1.0, 100000), [-1.0] * 3])
    out = np.empty((2, len(a)))
    both(a, b, out)
    assert np.array_equal(out[0], out[1])  # same bits wherever a b >= -1022


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernels_without_underflow_tests_give_the_same_sums(monkeypatch, dtype):
    # a finite cut-off of at most UNDERFLOW_FREE_CUTOFF compiles the float64 kernels without exp2_mul's
    # range tests: every path (tiled, symmetric, pairs) gives the same sums as with them, up to the
    # order in which the compiler adds the vectorised partial sums (reassociation is allowed, and two
    # compilations need not choose the same one)
    rng = np.random.default_rng(17)
    n = 1000
    pts = _clustered(rng, n)
    bws = 0.004 * np.exp(rng.uniform(0, np.log(30.0), n))
    wts = rng.uniform(0.5, 2.0, n)
    eng = make_engine(pts, _unit_window(), 3.0, backend="cpu", dtype=dtype)
    q = rng.uniform(-0.1, 1.1, (300, 2))

    def sums():
        return (eng.point_intensities(bws, wts, True), eng.point_intensities(np.full(n, 0.03), wts, False),
                eng.intensity_at(q, bws, wts), *eng.point_intensities_many([(bws, wts), (bws * 1.3, wts)], True))

    assert cpu._underflow(3.0) is None and cpu._underflow(np.inf) is True
    fast = sums()
    monkeypatch.setattr(cpu, "UNDERFLOW_FREE_CUTOFF", 0.0)
    assert cpu._underflow(3.0) is True
    eng._index_key = None
    checked = sums()
    tol = 1e-14 if dtype == np.float64 else 100 * np.finfo(np.float32).eps
    for f, c in zip(fast, checked):
        assert _rel(f, c) < tol


@pytest.mark.parametrize("cutoff", [3.0, np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_rows_are_kernel_constants_in_sorted_order(cutoff, dtype):
    # the one loop behind the index's packed rows and the pair pass's constants
    from hphawkes_py.kde.engine import kernel_constants, kernel_rows

    rng = np.random.default_rng(9)
    n = 3001
    b, w = rng.uniform(1e-3, 2.0, n), rng.uniform(0.1, 3.0, n)
    order = rng.permutation(n)
    out = np.empty((3, n), dtype=dtype)
    kernel_rows(order, b, w, cutoff, out)
    for row, ref in zip(out, kernel_constants(b, w, cutoff)):
        assert np.array_equal(row, ref[order].astype(dtype))


def test_hilbert_order_is_a_permutation_of_compact_runs():
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0, 1, 4096), rng.uniform(0, 1, 4096)
    o = cpu_tiled.hilbert_order(x, y)
    assert np.array_equal(np.sort(o), np.arange(4096))
    # runs of 16 consecutive points along the curve span about 4 / 64 of the side, not the whole square
    ext = [np.ptp(x[o[i:i + 16]]) + np.ptp(y[o[i:i + 16]]) for i in range(0, 4096, 16)]
    assert np.median(ext) < 0.15
    assert cpu_tiled.hilbert_order(np.zeros(3), np.zeros(3)).tolist() == [0, 1, 2]
    assert cpu_tiled.hilbert_order(np.empty(0), np.empty(0)).shape == (0,)


def test_ndtr_fast_matches_scipy_and_vectorises():
    import re

    from numba import njit
    from scipy.special import ndtr

    from hphawkes_py._fastmath import ndtr_fast

    @njit(fastmath={"contract"})
    def apply(z, out):
        for i in range(z.shape[0]):
            out[i] = ndtr_fast(z[i])

    z = np.concatenate([np.linspace(-40.0, 40.0, 400001), np.random.default_rng(2).normal(0.0, 6.0, 100000),
                        [-1.0, 1.0, -11.313708498984761, 11.313708498984761, 0.0, -0.0]])
    out = np.empty_like(z)
    apply(z, out)
    ref = ndtr(z)
    assert np.max(np.abs(out - ref)) < 3e-16
    lower = ref > 1e-300
    assert np.max(np.abs(out - ref)[lower] / ref[lower]) < 5e-15  # relative, deep into the lower tail
    special = np.array([np.inf, -np.inf, np.nan, 1e300, -1e300])
    out = np.empty(5)
    apply(special, out)
    assert out[0] == 1.0 and out[1] == 0.0 and np.isnan(out[2]) and out[3] == 1.0 and out[4] == 0.0
    # the point of it: packed divisions, no libm call in the loop
    asm = apply.inspect_asm(apply.signatures[0])
    assert PACKED("vdivpd").search(asm)


def test_ndtr_monotone_equals_ndtr_fast_in_both_directions():
    from numba import njit
    from scipy.special import ndtr

    from hphawkes_py._fastmath import ndtr_fast, ndtr_monotone

    one = njit(lambda z: np.array([ndtr_fast(v) for v in z]))
    # stretches of every branch (|z| / sqrt 2 below 1, in [1, 8), beyond 8), branch boundaries hit exactly
    edges = np.array([-8.0, -1.0, 1.0, 8.0]) / 0.7071067811865476
    for z in (np.linspace(-15.0, 15.0, 30001), np.sort(np.concatenate([edges, np.linspace(-12, 3, 777)])),
              np.linspace(0.5, 0.7, 10), np.linspace(-40.0, -39.0, 5), np.array([2.0]), np.empty(0)):
        for v in (z, z[::-1].copy()):
            got = v.copy()
            ndtr_monotone(got)
            ref = one(v)  # the same branches; FMA contraction may differ, so equal to rounding
            assert np.max(np.abs(got - ref) / np.maximum(ref, 1e-300), initial=0.0) < 2e-15
            assert np.max(np.abs(got - ndtr(v)), initial=0.0) < 3e-16


def test_edge_masses_dense_tables_equal_memoised():
    # the vectorised tables (every CDF in reach up front, branch-free run sums) against the memoised
    # path on a ragged window (chorley, 0.1 km cells), bandwidths from a fifth of a cell to the
    # window's size, and against the cell-by-cell NumPy integral
    import pandas as pd

    data = Path(hp.__file__).parent / "data" / "kde"
    w = Window.from_asc(next(data.rglob("chorley_mask_0.1km.asc.gz")))
    pts = pd.read_csv(next(data.rglob("chorley.csv")))[["x", "y"]].to_numpy(float)
    rng = np.random.default_rng(3)
    pts = pts[w.contains(pts)][rng.choice(int(w.contains(pts).sum()), 200)]
    bws = np.exp(rng.uniform(np.log(0.02), np.log(20.0), len(pts)))
    eng = make_engine(pts, w, 4.0, backend="cpu")
    idx = np.arange(len(pts), dtype=np.int64)
    r0, r1, bptr, c0, c1, row_band = w.row_bands()
    got = {}
    for dense in (0, 10**9):
        out = np.empty(len(pts))
        cpu_edge.edge_mass_kernel(eng.x, eng.y, bws, idx, w.x0, w.y0, w.cell_size, *w.mask.shape, r0, r1, bptr, c0, c1,
                                  row_band, cpu_edge.run_bands(bptr), 8.0, out, dense)
        got[dense] = out
    assert np.max(np.abs(got[10**9] - got[0])) < 1e-14
    ref = nk.edge_masses(pts, bws, w.mask, w.x0, w.y0, w.cell_size)
    # (the reference sums ~1e5 differences of nearly equal CDFs per point: its own rounding is ~1e-12)
    assert np.max(np.abs(got[10**9] - ref)) < 1e-11
    assert np.max(np.abs(eng.edge_masses(bws) - got[10**9])) < 1e-14  # the engine's default choice


def test_edge_masses_of_one_band_and_run_in_reach():
    # a rectangle (every point: one band, one run) and a window with a hole (points far from it see one
    # band and one run, points near it several): the direct four-CDF path against the cell-by-cell
    # NumPy integral, bandwidths from a fifth of a cell to beyond the window, points up to the edges
    rng = np.random.default_rng(5)
    rect = np.ones((40, 50), bool)
    holed = rect.copy()
    holed[15:22, 20:31] = False
    for mask in (rect, holed):
        w = Window.from_mask(mask, -3.0, 2.0, 0.1)
        pts = np.column_stack([rng.uniform(-3.0, 2.0, 300), rng.uniform(2.0, 6.0, 300)])
        pts = pts[w.contains(pts)][:200]
        bws = np.exp(rng.uniform(np.log(0.02), np.log(8.0), len(pts)))
        eng = make_engine(pts, w, 4.0, backend="cpu")
        ref = nk.edge_masses(pts, bws, w.mask, w.x0, w.y0, w.cell_size)
        assert np.max(np.abs(eng.edge_masses(bws) - ref)) < 1e-12


@pytest.mark.parametrize("tile,cap", [(cpu.TILE, cpu.TILE_CAP), (1, 3), (5, 7), (64, 64)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_symmetric_gather_with_one_bandwidth(monkeypatch, tile, cap, dtype):
    # one bandwidth (pilots, fixed fits, CV): each pair once with one exp, shares scattered to
    # per-group rows (a fixed number of tile groups); weights differ per point, so the two directions of a pair differ
    monkeypatch.setattr(cpu, "TILE", tile)
    monkeypatch.setattr(cpu, "TILE_CAP", cap)
    rng = np.random.default_rng(11)
    n = 1300
    pts = np.vstack([_clustered(rng, n - 60), np.repeat(rng.uniform(0, 1, (20, 2)), 3, axis=0)])
    wts = rng.uniform(0.5, 2.0, n)
    bws = np.full(n, 0.03)
    eng = make_engine(pts, _unit_window(), 3.0, backend="cpu", dtype=dtype)
    used = []
    orig = cpu.CpuEngine._gather_symmetric
    monkeypatch.setattr(cpu.CpuEngine, "_gather_symmetric", lambda self, *a: used.append(1) or orig(self, *a))
    tol = RTOL if dtype == np.float64 else 100 * np.finfo(np.float32).eps
    for loo in (True, False):
        got, ref = _both(eng, lambda: eng.point_intensities(bws, wts, loo))
        assert _rel(got, ref) < tol
        if dtype == np.float64:
            assert _rel(got, nk.point_intensities(pts, bws, wts, 3.0, loo)) < 1e-12
    assert len(used) == 2
    # varying bandwidths never take it
    eng.point_intensities(bws * rng.uniform(1.0, 1.5, n), wts, True)
    assert len(used) == 2


@pytest.mark.parametrize("tile,cap", [(cpu.TILE, cpu.TILE_CAP), (1, 3), (5, 7), (64, 64)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ncases", [2, 3, 4])
def test_pair_pass_equals_one_kernel_at_a_time(monkeypatch, tile, cap, dtype, ncases):
    # the pattern search's candidates two per walk (gather_tiled_pair_kernel): bandwidths of the two
    # kernels of a pair differ per point in both directions (the union index holds the larger one) and
    # span many classes, weights differ, duplicates and a small cut-off make the inclusion rule matter:
    # every sum must have exactly its own kernel's pairs
    monkeypatch.setattr(cpu, "TILE", tile)
    monkeypatch.setattr(cpu, "TILE_CAP", cap)
    rng = np.random.default_rng(21)
    n = 1400
    pts = np.vstack([_clustered(rng, n - 40), np.repeat(rng.uniform(0, 1, (20, 2)), 2, axis=0)])
    base = 0.004 * np.exp(rng.uniform(0, np.log(30.0), n))
    cases = [(base * rng.uniform(0.6, 1.6, n), rng.uniform(0.5, 2.0, n)) for _ in range(ncases)]
    eng = make_engine(pts, _unit_window(), 1.5, backend="cpu", dtype=dtype)
    calls = []
    orig = cpu.CpuEngine._point_intensities_pair
    monkeypatch.setattr(cpu.CpuEngine, "_point_intensities_pair", lambda self, *a: calls.append(1) or orig(self, *a))
    got = eng.point_intensities_many(cases, True)
    assert len(calls) == ncases // 2
    eng.paired = False
    ref = eng.point_intensities_many(cases, True)
    assert len(calls) == ncases // 2
    tol = RTOL if dtype == np.float64 else 100 * np.finfo(np.float32).eps
    for (b, w), g, r in zip(cases, got, ref):
        assert _rel(g, r) < tol
        if dtype == np.float64:
            assert _rel(g, nk.point_intensities(pts, b, w, 1.5, True)) < 1e-12
    # not leave-one-out: one at a time (the pass leaves each target's own term out)
    eng.paired = True
    got = eng.point_intensities_many(cases[:2], False)
    assert len(calls) == ncases // 2
    assert _rel(got[0], eng.point_intensities(*cases[0], False)) == 0.0


def test_pair_search_chooses_the_same_bandwidths(monkeypatch):
    a, b = _redwood_fits(monkeypatch, cpu.CpuEngine, "paired")
    assert (a.h, a.alpha, a.n_iter) == (b.h, b.alpha, b.n_iter)
    assert b.log_likelihood == pytest.approx(a.log_likelihood, rel=1e-13)
    assert [t["log_likelihood"] for t in b.trace] == pytest.approx([t["log_likelihood"] for t in a.trace], rel=1e-13)
    assert _rel(b.bandwidths, a.bandwidths) < 1e-13
