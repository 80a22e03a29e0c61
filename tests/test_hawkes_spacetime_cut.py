"""The windowed trigger pass's space-time cut (``windows.trigger_limit``): pairs whose trigger exponent
Q + T reaches the limit are skipped, not only those beyond the time cut Delta_G. Checked here: the
proven bound (every windowed rate within EPS_WINDOW of the exact one) on data where the cut skips most of
the time window, on the CPU engine and the GPU engine (emulator); the cut is the one the bound allows
(no skipped term above its share, and the terms kept are all the others); the pair list always holds
every pair the cut keeps, whatever the chain's moves did to it; and the cut does not apply where it
must not (exact engines, the sum of two exponentials)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402

from hphawkes_py.hawkes import cpu  # noqa: E402
from hphawkes_py.hawkes.engine import make_engine  # noqa: E402
from hphawkes_py.hawkes.kernels import phi0  # noqa: E402
from hphawkes_py.hawkes.windows import EPS_G, EPS_WINDOW, RHO_DEFAULT, trigger_delta, trigger_limit  # noqa: E402

TAU = (1.6, 336.0)


def _city(N, seed):
    """DC-like: events spread over a 20 km square and 2,000 hours, a small trigger bandwidth."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 20.0, (N, 2))
    t = np.sort(rng.uniform(0.0, 2000.0, N))
    # a few near-repeats, so that the cut keeps some pairs
    k = N // 10
    src = rng.integers(0, N, k)
    x[:k] = x[src] + rng.normal(0.0, 0.05, (k, 2))
    t[:k] = t[src] + rng.exponential(0.02, k)
    o = np.argsort(t, kind="stable")
    return x[o], t[o]


def _exponents(x, t, h, omega, p=0.0, q=0.0):
    """Every earlier pair (n, m) with its trigger exponent Q + T in float64, and the time window."""
    n, m = np.nonzero(t[:, None] > t[None, :])
    r2 = np.sum((x[n] - x[m]) ** 2, axis=1)
    dt = t[n] - t[m]
    Q = r2 / (2 * h * h) if q == 0.0 else q * np.log1p(r2 / (h * h))
    T = omega * dt if p == 0.0 else p * np.log1p(omega * dt)
    return n, m, Q + T, dt


def test_limit_is_the_time_cut_budget():
    # the time cut is where T alone reaches the limit: omega Delta_G = limit (exponential),
    # p log(1 + omega Delta_G) = limit (power law)
    N, D, h, omega = 5000, 2, 0.07, 60.0
    lim = trigger_limit(N, D, *TAU, h, omega, RHO_DEFAULT)
    assert omega * trigger_delta(N, D, *TAU, h, omega, RHO_DEFAULT) == pytest.approx(lim, rel=1e-14)
    lim_p = trigger_limit(N, D, *TAU, h, omega, RHO_DEFAULT, p=1.8)
    assert 1.8 * math.log1p(omega * trigger_delta(N, D, *TAU, h, omega, RHO_DEFAULT, p=1.8)) == pytest.approx(
        lim_p, rel=1e-12)
    # by hand: log((N - 1) omega phi_2(0; h) / (eps rho own))
    own = phi0(D, TAU[0]) * phi0(1, TAU[1])
    by_hand = math.log((N - 1) * omega * phi0(D, h) / (EPS_G * RHO_DEFAULT * own))
    assert lim == pytest.approx(by_hand, rel=1e-13)
    assert trigger_limit(N, D, *TAU, h, omega, RHO_DEFAULT, omega2=2.0, w=0.5) == math.inf
    assert trigger_limit(1, D, *TAU, h, omega, RHO_DEFAULT) == math.inf


@pytest.mark.parametrize("backend", ["cpu", "emulator"])
@pytest.mark.parametrize("kernel,spatial", [("exponential", "gaussian"), (("power-law", 1.8), "gaussian"),
                                            ("exponential", ("power-law", 2.0))])
def test_windowed_rates_keep_the_bound_while_the_cut_skips_most_pairs(backend, kernel, spatial):
    x, t = _city(600 if backend == "cpu" else 250, seed=1)
    h, omega, mu0, theta = 0.07, 6.0, 0.05, 0.2
    ex = make_engine(x, t, backend=backend, exact=True, kernel=kernel, spatial_kernel=spatial)
    wi = make_engine(x, t, backend=backend, kernel=kernel, spatial_kernel=spatial)
    for e in (ex, wi):
        e.set_background(*TAU)
        e.set_trigger(h, omega)
    lam_ex = mu0 * ex.background_sums() + theta * ex.trigger_sums()
    lam_wi = mu0 * wi.background_sums() + theta * wi.trigger_sums()
    assert np.max(np.abs(lam_wi - lam_ex) / lam_ex) <= EPS_WINDOW
    # the exact engine against the NumPy reference (the exact pass has no cut)
    if kernel == "exponential" and spatial == "gaussian":
        np.testing.assert_allclose(ex.trigger_sums(), nv.trigger_sums(x, t, h, omega), rtol=1e-12, atol=1e-290)
    # the cut skipped pairs of the time window: rows with pairs in the window but no kept term
    p = wi.kernel_p
    q = wi.spatial_q
    n, m, E, dt = _exponents(x, t, h, omega, p, q)
    lim = wi._limit_g(h, wi._rates(omega), wi._rho)
    delta = wi._delta_g(h, wi._rates(omega), wi._rho)
    in_window = dt <= delta
    skipped = in_window & (E >= lim * (1 + 1e-6))
    assert skipped.sum() > 0.2 * in_window.sum()
    rows_all_skipped = np.setdiff1d(n[in_window], n[in_window & (E < lim * (1 - 1e-6))])
    assert rows_all_skipped.size > 10
    np.testing.assert_array_equal(wi.trigger_sums()[rows_all_skipped], 0.0)


def test_cut_keeps_every_term_above_its_share_and_drops_every_term_below():
    # G_n from the engine equals the sum of exactly the terms with E < lim (up to the terms within
    # 1e-6 of the limit, which rounding may put on either side)
    x, t = _city(500, seed=2)
    h, omega = 0.07, 6.0
    e = make_engine(x, t, backend="cpu", threads=1)
    e.set_background(*TAU)
    e.set_trigger(h, omega)
    lim = e._limit_g(h, e._rates(omega), e._rho)
    n, m, E, dt = _exponents(x, t, h, omega)
    scale = omega * phi0(2, h)
    near = np.abs(E / lim - 1) < 1e-6
    assert not near.any()  # (no term within rounding of the limit in these data)
    G = np.zeros(t.size)
    np.add.at(G, n[E < lim], scale * np.exp(-E[E < lim]))
    np.testing.assert_allclose(e.trigger_sums(), G, rtol=1e-13, atol=0)
    # a skipped term is below the share of bound (3): eps rho own / (N - 1)
    own = phi0(2, TAU[0]) * phi0(1, TAU[1])
    assert np.all(scale * np.exp(-E[E >= lim]) <= EPS_G * RHO_DEFAULT * own / (t.size - 1) * (1 + 1e-12))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pair_list_holds_every_kept_pair_through_a_chain_of_moves(dtype):
    # h and omega wander as in a chain (small steps, some large): the pair list is reused or rebuilt,
    # and its sums equal the row loop's, which has no list (bit for bit on rows of 0 or 1 term)
    x, t = _city(800, seed=3)
    e = make_engine(x, t, backend="cpu", threads=1, dtype=dtype)
    e.set_background(*TAU)
    rng = np.random.default_rng(0)
    h, omega = 0.07, 6.0
    lists = set()
    for step in range(40):
        if step % 10 == 9:
            h *= 1.6 if rng.random() < 0.5 else 1 / 1.6
        else:
            h *= math.exp(0.03 * rng.standard_normal())
            omega *= math.exp(0.03 * rng.standard_normal())
        e.set_trigger(h, omega, slot=1)
        lists.add(id(e._pair_list))
        rates = e._rates(omega)
        bh, om, kp, scale = e._loop_consts(e._trigger_consts(h, rates))
        ref = np.zeros(e.N)
        cpu._trigger_kernel(e._x, e._th, e._tl, e._tw, e._ts, bh, om, kp, e._sq,
                            e._limit(e._limit_g(h, rates, e._rho)), float(e._delta_g(h, rates, e._rho)), scale, ref)
        G = e.trigger_sums(1)
        L = np.diff(e._pair_list.ptr)
        assert np.array_equal(G[L <= 1], ref[L <= 1]), step
        np.testing.assert_allclose(G, ref, rtol=1e-14 if dtype == np.float64 else 1e-6, atol=0)
    assert 2 <= len(lists) < 40  # reused across small moves, rebuilt after large ones


def test_no_cut_when_exact_or_for_the_sum_of_two_exponentials():
    x, t = _city(300, seed=4)
    e = make_engine(x, t, backend="cpu", exact=True)
    assert e._limit_g(0.07, (6.0,), RHO_DEFAULT) == math.inf
    e2 = make_engine(x, t, backend="cpu", threads=1, kernel="exp2")
    e2.set_background(*TAU)
    e2.set_trigger(0.07, 6.0, omega2=0.5, w=0.7)
    assert e2._pair_list is not None and e2._pair_list.cut is None
    delta = e2._delta_g(0.07, e2._rates(6.0, 0.5, 0.7), e2._rho)
    lo = np.searchsorted(e2._tw, e2._tw - e2._pair_list.dmax, side="left")
    assert e2._pair_list.r2.size == int(np.sum(np.maximum(e2._ts - lo, 0)))  # every pair of the time window
    assert delta <= e2._pair_list.dmax
