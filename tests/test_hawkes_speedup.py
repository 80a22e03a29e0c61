"""Issue 31 (speed on the CPU): the windowed trigger pass from a pair list, the sum of logs by block
products and the compensator's exponential part from its tail give the values of the paths they
replace: bit for bit where the arithmetic is the same, to rounding where only the order of additions
differs (checked against the row loop, the NumPy reference and math.fsum)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from hphawkes_py.hawkes import cpu  # noqa: E402
from hphawkes_py.hawkes.compensator import ONE_FROM, ExponentialIntegralTail, trigger_integral_part  # noqa: E402
from hphawkes_py.hawkes.engine import make_engine  # noqa: E402

TAU = (0.8, 5.0)


def _data(N, D, seed, span=100.0, ties=True):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, (N, D))
    t = rng.uniform(0, span, N)
    if ties:
        t = np.round(t, 1)
    o = np.argsort(t, kind="stable")
    return x[o], t[o]


def _row_loop(eng, h, rates, delta, limit=None):
    """G by the row loop (the path the pair list replaces) and the number of window terms; ``limit``
    the space-time cut (default: the engine's for these parameters)."""
    bh, om, kp, scale = eng._loop_consts(eng._trigger_consts(h, rates))
    if limit is None:
        limit = eng._limit_g(h, rates, eng._rho)
    out = np.zeros(eng.N)
    cnt = cpu._trigger_kernel(eng._x, eng._th, eng._tl, eng._tw, eng._ts, bh, om, kp, eng._sq, eng._limit(limit),
                              float(delta), scale, out)
    return out, int(cnt)


def _window_lengths(eng, delta):
    lo = np.searchsorted(eng._tw, eng._tw - delta, side="left")
    return np.maximum(eng._ts - lo, 0)


KERNELS = [("exponential", {}), (("power-law", 1.7), {}), ("exp2", dict(omega2=20.0, w=0.6))]


CASES = ([(k, e, s, np.float64, 2) for k, e in KERNELS for s in ("gaussian", ("power-law", 2.0))]
         + [(k, e, "gaussian", np.float32, 2) for k, e in KERNELS]
         + [("exponential", {}, "gaussian", np.float64, 1), ("exponential", {}, "gaussian", np.float64, 3)])


@pytest.mark.parametrize("kernel,extra,spatial,dtype,D", CASES)
def test_pair_list_trigger_sums_equal_the_row_loop(kernel, extra, spatial, dtype, D):
    # ~0.4 events an hour and omega = 40: a window of a few hours, rows of 0 to a dozen terms (the
    # power law's heavy tail keeps every earlier event)
    x, t = _data(400, D, seed=D, span=1000.0)
    eng = make_engine(x, t, backend="cpu", threads=1, dtype=dtype, kernel=kernel, spatial_kernel=spatial)
    eng.set_background(*TAU)
    h, omega = 0.3, 40.0
    eng.set_trigger(h, omega, slot=0, **extra)
    assert eng._pair_list is not None  # the windowed pass ran from the pair list
    rates = eng._rates(omega, **extra)
    delta = eng._delta_g(h, rates, eng._rho)
    assert math.isfinite(delta)
    G = eng.trigger_sums(0)
    ref, cnt = _row_loop(eng, h, rates, delta)
    pairs_before = eng._pairs
    eng.set_trigger(h * (1 + 1e-9), omega, slot=1, **extra)
    L = _window_lengths(eng, delta)
    assert L.sum() == cnt  # the row loop evaluates every pair of the time window
    pl = eng._pair_list
    assert eng._pairs - pairs_before == pl.r2.size  # the pair list's pass evaluates its own pairs
    if kernel == "exp2":
        assert pl.cut is None and pl.r2.size >= cnt  # no space-time cut: the whole (headroom) time window
    else:
        assert pl.cut is not None
    # float64 rows of 0 or 1 term: the same arithmetic, bit for bit; longer rows: the same terms, added
    # in m order here and possibly in interleaved partial sums by the row loop
    short = L <= 1
    assert (~short).sum() > 20
    if kernel != ("power-law", 1.7):
        assert short.sum() > 100 and L.max() >= 4
    if dtype == np.float64:
        assert np.array_equal(G[short], ref[short])
        np.testing.assert_allclose(G, ref, rtol=1e-14, atol=0)
    else:  # float32: against the float64 engine, errors relative to the rate (test_hawkes_engine.py's 2e-5)
        e64 = make_engine(x, t, backend="cpu", threads=1, kernel=kernel, spatial_kernel=spatial)
        e64.set_background(*TAU)
        e64.set_trigger(h, omega, slot=0, **extra)
        lam = 0.01 * e64.background_sums() + 0.4 * e64.trigger_sums(0)
        assert np.max(np.abs(0.4 * (G - e64.trigger_sums(0))) / lam) < 2e-5
    # (float32's own accuracy is tested in test_hawkes_engine.py)
    if kernel != ("power-law", 1.7) and dtype == np.float64:
        Gr = nv.trigger_sums(x, t, h, omega, q=eng.spatial_q, **extra)
        lam = 0.01 * eng.background_sums() + 0.4 * G
        lam_r = 0.01 * eng.background_sums() + 0.4 * Gr
        np.testing.assert_allclose(lam, lam_r, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_longer_than_a_block_are_summed_in_blocks_as_the_row_loop(dtype):
    # 700 events within 2 hours: with omega = 0.05 the window holds every earlier event, up to 699 a row
    x, t = _data(700, 2, seed=5, span=2.0, ties=False)
    eng = make_engine(x, t, backend="cpu", threads=1, dtype=dtype)
    eng.set_background(*TAU)
    h, omega = 0.5, 0.05
    eng.set_trigger(h, omega, slot=0)
    pl = eng._pair_list
    assert pl is not None and pl.long_rows.size > 300  # rows of more than _BLK = 256 pairs
    G = eng.trigger_sums(0)
    ref, _ = _row_loop(eng, h, (omega,), eng._delta_g(h, (omega,), eng._rho))
    np.testing.assert_allclose(G, ref, rtol=1e-14 if dtype == np.float64 else 2e-6, atol=0)
    # against the exact sums, relative to the rate (the windows' bound (3) is on lambda_n, not on G_n: a
    # row of tiny terms alone may lose a term below 1e-13 of the rate to the space-time cut)
    Gr = nv.trigger_sums(x, t, h, omega)
    S = eng.background_sums()
    np.testing.assert_allclose(0.01 * S + 0.4 * G, 0.01 * S + 0.4 * Gr, rtol=1e-12 if dtype == np.float64 else 2e-5)


def test_pair_list_is_reused_rebuilt_and_its_values_do_not_depend_on_its_history():
    x, t = _data(500, 2, seed=3)
    eng = make_engine(x, t, backend="cpu", threads=1)
    eng.set_background(*TAU)
    lists = []
    values = {}
    for omega in (2.0, 2.1, 1.9, 1.2, 3.0, 8.0, 2.0):  # delta ~ 1/omega: reuse, growth, shrink
        eng.set_trigger(0.3, omega, slot=0)
        lists.append(eng._pair_list)
        values.setdefault(omega, []).append(eng.trigger_sums(0))
        fresh = make_engine(x, t, backend="cpu", threads=1)
        fresh.set_background(*TAU)
        fresh.set_trigger(0.3, omega, slot=0)
        assert np.array_equal(eng.trigger_sums(0), fresh.trigger_sums(0)), omega
    assert lists[1] is lists[0] and lists[2] is lists[0]  # small moves keep the list
    assert lists[3] is not lists[2]  # a longer window (smaller omega) needs more pairs
    assert lists[5] is not lists[4]  # a much shorter one is rebuilt smaller
    assert np.array_equal(values[2.0][0], values[2.0][1])


def test_pair_list_results_do_not_depend_on_the_thread_count():
    x, t = _data(3000, 2, seed=8, span=300.0)
    G = []
    for threads in (1, 2, None):
        eng = make_engine(x, t, backend="cpu", threads=threads)
        eng.set_background(*TAU)
        eng.set_trigger(0.3, 2.0, slot=0)
        assert eng._pair_list is not None
        G.append(eng.trigger_sums(0))
    assert np.array_equal(G[0], G[1]) and np.array_equal(G[0], G[2])


def test_too_many_pairs_or_exact_falls_back_to_the_row_loop(monkeypatch):
    x, t = _data(300, 2, seed=2)
    eng = make_engine(x, t, backend="cpu", threads=1, exact=True)
    eng.set_background(*TAU)
    eng.set_trigger(0.3, 2.0, slot=0)
    assert eng._pair_list is None
    monkeypatch.setattr(cpu, "MAX_PAIRS", 10)
    eng = make_engine(x, t, backend="cpu", threads=1)
    eng.set_background(*TAU)
    eng.set_trigger(0.3, 2.0, slot=0)
    assert eng._pair_list is None
    ref, _ = _row_loop(eng, 0.3, (2.0,), eng._delta_g(0.3, (2.0,), eng._rho))
    assert np.array_equal(eng.trigger_sums(0), ref)


def test_mcmc_chain_is_the_same_from_the_pair_list_and_from_the_row_loop(monkeypatch):
    x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=60.0, seed=1)
    kw = dict(n_iter=60, burn_in=10, chains=1, fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=3, progress=False,
              backend="cpu", threads=1)
    fast = hp.hawkes.mcmc(x, t, **kw)
    monkeypatch.setattr(cpu, "MAX_PAIRS", -1)
    slow = hp.hawkes.mcmc(x, t, **kw)
    for n in fast.sampled:
        assert np.array_equal(fast.draws[n], slow.draws[n]), n


# ------------------------------------------------------------------ sum of logs
def _sum_log(S, G, mu0, theta):
    return cpu._sum_log_kernel(np.asarray(S, float), np.asarray(G, float), mu0, theta)


@pytest.mark.parametrize("N", [0, 1, 15, 16, 17, 100, 1003])
def test_sum_log_by_block_products_matches_fsum(N):
    rng = np.random.default_rng(N)
    S = rng.uniform(1e-5, 1e-1, N)
    G = rng.exponential(1.0, N) * (rng.random(N) < 0.5)
    lam = 0.8 * S + 0.3 * G
    ref = math.fsum(np.log(lam).tolist())
    got = _sum_log(S, G, 0.8, 0.3)
    assert abs(got - ref) <= 1e-15 * max(1.0, np.abs(np.log(lam)).sum())


def test_sum_log_blocks_out_of_range_take_the_logs_one_by_one():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 2.0, 64)
    for bad, expect in ((0.0, -math.inf), (math.nan, math.nan), (math.inf, math.inf)):
        S = base.copy()
        S[20] = bad
        got = _sum_log(S, np.zeros(64), 1.0, 0.0)
        assert got == expect or (math.isnan(expect) and math.isnan(got)), bad
    # rates far outside [2^-62, 2^62]: 16 of them would overflow or underflow a product
    for scale in (1e-200, 1e200, 1e-310):
        S = base * scale
        ref = math.fsum(np.log(S).tolist())
        got = _sum_log(S, np.zeros(64), 1.0, 0.0)
        assert got == pytest.approx(ref, rel=1e-15), scale


# ------------------------------------------------------------------ compensator tail
def test_one_minus_exp_is_one_from_forty_on_this_platform():
    x = np.concatenate([np.linspace(ONE_FROM, 800.0, 200_001), np.nextafter(ONE_FROM, 0.0) + np.zeros(1) * 0,
                        [1e10, np.inf]])
    x = x[x >= ONE_FROM]
    assert np.all(-np.expm1(-x) == 1.0)


@pytest.mark.parametrize("span", [50.0, 5000.0])
def test_integral_tail_is_bit_identical_to_the_full_sum(span):
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(0.0, span, 4000))
    window = (0.0, span + 0.5)
    tail = ExponentialIntegralTail(t, window)
    # any order of omegas: the resident ones must stay right whichever tail the last call left
    for omega in (60.0, 1e-3, 59.0, 2.0, 1e4, 0.05, 1e-8, 61.0, 3.3e5):
        assert tail(omega) == trigger_integral_part(t, omega, window), omega
    e = make_engine(np.zeros((t.size, 1)), t, backend="cpu", window=window)
    assert e._k_trigger_integral(7.0) == trigger_integral_part(t, 7.0, window)


def test_float32_pair_list_keeps_the_split_of_large_times():
    # times near 1e5 hours (the DC data reach 1.15e5): a float32 time alone is off by up to 4e-3 h;
    # the hi/lo split keeps t_n - t_m exact to float32 rounding of the difference itself
    x, t = _data(400, 2, seed=4, span=1000.0)
    t = t + 1e5
    h, omega = 0.3, 40.0
    G = {}
    for dtype in (np.float64, np.float32):
        e = make_engine(x, t, backend="cpu", threads=1, dtype=dtype)
        e.set_background(*TAU)
        e.set_trigger(h, omega, slot=0)
        assert e._pair_list is not None
        G[dtype] = e.trigger_sums(0)
        S = e.background_sums()
    lam = 0.01 * S + 0.4 * G[np.float64]
    assert np.max(np.abs(0.4 * (G[np.float32] - G[np.float64])) / lam) < 2e-5
