"""Hawkes likelihood engines (CPU Numba and the CUDA kernels on the emulator) against the NumPy reference.

Tolerances
----------
* float64: 1e-10 relative (the engines sum in a different order than NumPy; observed ~1e-15).
* float32: every pair term is exp(-a) with a computed in float32, so its relative error is about
  (|a| + 4) * 6e-8; terms that matter have |a| < ~40, giving <= ~3e-6. Time differences are kept
  accurate by the hi/lo split (see times.split_time). Sums of positive terms keep that relative
  error (CPU accumulates in float64, the GPU tree reduction in float adds <= log2(N) * 6e-8).
  We therefore allow 2e-5 relative on S and on lambda, and 2e-6 relative on log L (a sum of
  logs, errors of 1e-5 in lambda_n become 1e-5 absolute per term against |log lambda_n| ~ 1).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402

from hphawkes_py.hawkes.engine import make_engine  # noqa: E402
from hphawkes_py.hawkes.windows import EPS_WINDOW  # noqa: E402

P = dict(mu0=0.7, tau_x=0.8, tau_t=5.0, theta=0.4, omega=0.5, h=0.3)
from engines import ENGINES as BACKENDS  # noqa: E402


def _data(N, D, seed, ties=True, span=100.0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, (N, D))
    t = rng.uniform(0, span, N)
    if ties:
        t = np.round(t, 0)  # many exact ties (N events on ~span distinct times)
    order = np.argsort(t, kind="stable")
    return x[order], t[order]


def _ll(e, p=P):
    return e.log_likelihood(p["mu0"], p["tau_x"], p["tau_t"], p["theta"], p["omega"], p["h"])


def _rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("D", [1, 2, 3])
@pytest.mark.parametrize("exact", [True, False])
def test_float64_matches_reference(backend, D, exact):
    x, t = _data(220, D, seed=D)
    Sr = nv.background_sums(x, t, P["tau_x"], P["tau_t"])
    Gr = nv.trigger_sums(x, t, P["h"], P["omega"])
    lam = P["mu0"] * Sr + P["theta"] * Gr
    e = make_engine(x, t, backend=backend, exact=exact)
    assert e.backend == backend
    ll = _ll(e)
    assert _rel(e.background_sums(), Sr) < 1e-10
    # G can be 0 (first events); compare on the scale of the intensity it enters
    assert np.max(np.abs(P["theta"] * e.trigger_sums() - P["theta"] * Gr) / lam) < 1e-10
    assert abs(ll - nv.log_likelihood(x, t, **P)) / abs(ll) < 1e-10
    assert abs(e.sum_log_intensity(P["mu0"], P["theta"]) - np.log(lam).sum()) < 1e-10 * np.abs(np.log(lam)).sum()
    Ir = nv.integral(t, P["mu0"], P["tau_t"], P["theta"], P["omega"])
    assert abs(e.integral(P["mu0"], P["theta"], P["omega"]) - Ir) / Ir < 1e-10
    pi_r = nv.self_excitation(x, t, **P)
    assert np.max(np.abs(e.self_excitation(P["mu0"], P["theta"]) - pi_r)) < 1e-10
    assert 0.0 < pi_r.max() < 1.0 and pi_r.min() == 0.0  # the data exercise both ends


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("D", [2, 3])
def test_float32_within_tolerance(backend, D):
    x, t = _data(200, D, seed=10 + D)
    # times far from 0 (hours since 2006 ...) stress the float32 time handling
    t = t * 3.0 + 60_000.0
    Sr = nv.background_sums(x, t, P["tau_x"], P["tau_t"])
    Gr = nv.trigger_sums(x, t, P["h"], P["omega"])
    lam = P["mu0"] * Sr + P["theta"] * Gr
    e = make_engine(x, t, backend=backend, dtype=np.float32, exact=False)
    ll = _ll(e)
    assert _rel(e.background_sums(), Sr) < 2e-5
    lam_e = P["mu0"] * e.background_sums() + P["theta"] * e.trigger_sums()
    assert _rel(lam_e, lam) < 2e-5
    ref = nv.log_likelihood(x, t, **P)
    assert abs(ll - ref) / abs(ref) < 2e-6
    assert np.max(np.abs(e.self_excitation(P["mu0"], P["theta"]) - nv.self_excitation(x, t, **P))) < 2e-5


@pytest.mark.parametrize("backend", BACKENDS)
def test_ties_do_not_excite_but_enter_background(backend):
    # events 1, 2, 3 share a time; event 0 is earlier, event 4 later
    x = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1], [0.05, 0.05]])
    t = np.array([0.0, 1.0, 1.0, 1.0, 2.0])
    h, om = 0.2, 1.5
    e = make_engine(x, t, backend=backend, exact=True)
    e.set_background(0.3, 0.7)
    e.set_trigger(h, om)
    G = e.trigger_sums()

    def k(n, m):
        r2 = np.sum((x[n] - x[m]) ** 2)
        return om * math.exp(-om * (t[n] - t[m])) * math.exp(-r2 / (2 * h * h)) / (2 * math.pi * h * h)

    assert G[0] == 0.0
    for n in (1, 2, 3):  # only event 0 excites the tied events
        assert G[n] == pytest.approx(k(n, 0), rel=1e-12)
    assert G[4] == pytest.approx(sum(k(4, m) for m in range(4)), rel=1e-12)
    S = e.background_sums()
    assert _rel(S, nv.background_sums(x, t, 0.3, 0.7)) < 1e-12  # ties do enter S


def _stress_data(N, seed):
    """Bursts of events packed in time (and many ties), a few isolated events, long gaps."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, 5000, 25)
    t = np.concatenate([c + rng.exponential(0.05, N // 25) for c in centres])
    t[: N // 10] = np.round(t[: N // 10], 1)
    x = rng.normal(0, 1.0, (t.size, 2))
    x[::7] *= 0.001  # spatial clusters
    order = np.argsort(t, kind="stable")
    return x[order], t[order]


STRESS = [
    dict(mu0=0.5, tau_x=1.6, tau_t=50.0, theta=0.1, omega=2.0, h=0.07),
    dict(mu0=0.5, tau_x=0.01, tau_t=0.5, theta=0.1, omega=1e-3, h=1e-4),   # tiny h, tiny omega
    dict(mu0=2.0, tau_x=5.0, tau_t=2.0, theta=3.0, omega=50.0, h=3.0),
    dict(mu0=1e-4, tau_x=0.2, tau_t=10.0, theta=50.0, omega=0.3, h=0.01),  # theta >> mu0: guard rebuilds
]


@pytest.mark.parametrize("p", STRESS)
def test_windowed_equals_exact_on_stress_data(p):
    x, t = _stress_data(4000, seed=5)
    ex = make_engine(x, t, exact=True)
    wi = make_engine(x, t, exact=False)
    la, lb = _ll(ex, p), _ll(wi, p)
    assert abs(la - lb) <= 1e-12 * abs(la)
    # the proven per-event bound itself: |lambda^w - lambda| <= 1e-13 lambda
    lam_ex = p["mu0"] * ex.background_sums() + p["theta"] * ex.trigger_sums()
    lam_wi = p["mu0"] * wi.background_sums() + p["theta"] * wi.trigger_sums()
    assert np.max(np.abs(lam_wi - lam_ex) / lam_ex) <= EPS_WINDOW
    assert np.max(np.abs(ex.self_excitation(p["mu0"], p["theta"]) - wi.self_excitation(p["mu0"], p["theta"]))) < 1e-13
    assert wi.pair_evaluations < ex.pair_evaluations


def test_guard_rebuilds_trigger_slot_for_extreme_theta_over_mu0():
    x, t = _stress_data(2000, seed=6)
    wi = make_engine(x, t)
    ex = make_engine(x, t, exact=True)
    for e in (wi, ex):
        e.set_background(0.5, 5.0)
        e.set_trigger(0.05, 0.01)
    n0 = wi.pair_evaluations
    v_ok = wi.sum_log_intensity(1.0, 1.0)
    assert wi.pair_evaluations == n0  # mu0/theta = 1 >= rho: no rebuild
    assert abs(v_ok - ex.sum_log_intensity(1.0, 1.0)) <= 1e-12 * abs(v_ok)
    v = wi.sum_log_intensity(1e-9, 1e3)  # mu0/theta = 1e-12 < rho = 1e-6: rebuilt wider
    assert wi.pair_evaluations > n0
    assert abs(v - ex.sum_log_intensity(1e-9, 1e3)) <= 1e-12 * abs(v)


def test_window_skips_pairs_on_spread_out_data():
    rng = np.random.default_rng(3)
    N = 3000
    x = rng.uniform(0, 20, (N, 2))
    t = np.sort(rng.uniform(0, 100_000, N))
    p = dict(mu0=0.5, tau_x=1.6, tau_t=336.0, theta=0.1, omega=2.0, h=0.07)
    ex, wi = make_engine(x, t, exact=True), make_engine(x, t)
    la, lb = _ll(ex, p), _ll(wi, p)
    assert abs(la - lb) <= 1e-12 * abs(la)
    assert wi.pair_evaluations < 0.15 * ex.pair_evaluations


@pytest.mark.parametrize("backend", BACKENDS)
def test_slots_swap_and_caching(backend):
    x, t = _data(150, 2, seed=7)
    tx, tt = 0.8, 5.0
    e = make_engine(x, t, backend=backend)
    e.set_background(tx, tt)
    e.set_trigger(0.3, 0.5, slot=0)
    e.set_trigger(0.6, 2.0, slot=1)
    G0, G1 = nv.trigger_sums(x, t, 0.3, 0.5), nv.trigger_sums(x, t, 0.6, 2.0)
    S = nv.background_sums(x, t, tx, tt)
    assert np.allclose(e.trigger_sums(0), G0, rtol=1e-10, atol=1e-14)
    assert np.allclose(e.trigger_sums(1), G1, rtol=1e-10, atol=1e-14)
    v1 = e.sum_log_intensity(0.7, 0.4, slot=1)
    assert v1 == pytest.approx(np.log(0.7 * S + 0.4 * G1).sum(), rel=1e-12)
    e.swap_trigger()  # accepted proposal: slot 1 becomes current
    assert np.allclose(e.trigger_sums(0), G1, rtol=1e-10, atol=1e-14)
    assert np.allclose(e.trigger_sums(1), G0, rtol=1e-10, atol=1e-14)
    assert e.sum_log_intensity(0.7, 0.4) == v1
    # a rejected proposal overwrites slot 1 only
    e.set_trigger(0.9, 0.1, slot=1)
    assert e.sum_log_intensity(0.7, 0.4) == v1
    # log_likelihood reuses resident S and slot 0 when unchanged; mu0/theta moves cost O(N)
    n = e.pair_evaluations
    ll = e.log_likelihood(1.3, tx, tt, 0.2, 2.0, 0.6)
    assert e.pair_evaluations == n
    assert ll == pytest.approx(nv.log_likelihood(x, t, 1.3, tx, tt, 0.2, 2.0, 0.6), rel=1e-10)
    ll2 = e.log_likelihood(1.3, tx, tt, 0.2, 0.5, 0.3)  # new (h, omega): only G recomputed
    assert ll2 == pytest.approx(nv.log_likelihood(x, t, 1.3, tx, tt, 0.2, 0.5, 0.3), rel=1e-10)
    e.set_background(1.1, 9.0)  # new background, the resident trigger stays valid
    assert e.sum_log_intensity(1.3, 0.2) == pytest.approx(
        np.log(1.3 * nv.background_sums(x, t, 1.1, 9.0) + 0.2 * G0).sum(), rel=1e-10)


def test_cpu_threads_and_window_argument():
    x, t = _data(300, 2, seed=8)
    e1 = make_engine(x, t, threads=1, exact=True)
    e2 = make_engine(x, t, threads=2 if __import__("numba").config.NUMBA_NUM_THREADS >= 2 else 1, exact=True)
    assert _ll(e1) == pytest.approx(_ll(e2), rel=1e-13)
    w = (-10.0, 150.0)
    e = make_engine(x, t, window=w)
    e.set_background(P["tau_x"], P["tau_t"])
    ref = nv.integral(t, P["mu0"], P["tau_t"], P["theta"], P["omega"], window=w)
    assert e.integral(P["mu0"], P["theta"], P["omega"]) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", ["trigger", "background"])
def test_window_bound_is_nearly_attained_and_holds(backend, which):
    """Adversarial data for bound (2)/(3): N-1 co-located events in a burst, and one more event at
    the same place just beyond the cut-off, so every skipped term is almost as large as the bound
    allows. The skipped mass is then ~EPS * lambda: the windowed lambda must be within 1e-13 of
    the exact one, and measurably different (so a looser cut-off would fail this test)."""
    from hphawkes_py.hawkes import windows as W
    from hphawkes_py.hawkes.kernels import phi0

    N = 300
    tau_x, tau_t, h, omega = 0.5, 0.5, 0.1, 1.0
    burst = np.linspace(0.0, 0.01, N - 1)
    own = phi0(2, tau_x) * phi0(1, tau_t)
    if which == "trigger":
        gap = W.trigger_delta(N, 2, tau_x, tau_t, h, omega, W.RHO_DEFAULT) * 1.00001
        mu0 = 1.0
        theta = mu0 / (W.RHO_DEFAULT * 1.001)  # mu0 / theta just above rho: no rebuild
    else:
        gap = W.background_delta(N, tau_t) * 1.000001
        mu0, theta = 1.0, 0.0
    t = np.append(burst, burst[-1] + gap)
    x = np.zeros((N, 2))
    ex = make_engine(x, t, backend=backend, exact=True)
    wi = make_engine(x, t, backend=backend)
    p = dict(mu0=mu0, tau_x=tau_x, tau_t=tau_t, theta=theta, omega=omega, h=h)
    _ll(ex, p), _ll(wi, p)
    lam_ex = mu0 * ex.background_sums()[-1] + theta * ex.trigger_sums()[-1]
    lam_wi = mu0 * wi.background_sums()[-1] + theta * wi.trigger_sums()[-1]
    rel = (lam_ex - lam_wi) / lam_ex
    assert rel <= W.EPS_WINDOW
    assert rel > 1e-15  # the test data really sit at the edge of the bound
    assert lam_wi >= mu0 * own * (1 - 1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pair_evaluation_counts_exact(backend):
    x, t = _data(120, 2, seed=9)  # with ties
    N = t.size
    earlier = int(np.sum(np.searchsorted(t, t, side="left")))  # trigger terms: strictly earlier events
    e = make_engine(x, t, backend=backend, exact=True)
    e.set_background(0.8, 5.0)
    bg = e.pair_evaluations
    # CPU: each unordered pair once (symmetry); GPU: each ordered pair incl. m = n (row-parallel)
    assert bg == (N * (N - 1) // 2 if backend == "cpu" else N * N)
    e.set_trigger(0.3, 0.5)
    assert e.pair_evaluations - bg == earlier
    e.sum_log_intensity(1.0, 1.0)
    e.integral(1.0, 1.0, 0.5)
    assert e.pair_evaluations - bg == earlier  # O(N) steps evaluate no pairs


def _query_reference(x, t, q, time, tau_x, tau_t, h, omega):
    """float64 NumPy: Sq, Gq at query points q (Q, D) at one time (see Engine.query_sums)."""
    D = x.shape[1]
    r2 = ((q[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = time - t[None, :]
    phi = lambda z2, s, d: (2 * np.pi * s * s) ** (-d / 2) * np.exp(-z2 / (2 * s * s))  # noqa: E731
    Sq = (phi(r2, tau_x, D) * phi(dt**2, tau_t, 1)).sum(1)
    earlier = dt > 0
    Gq = np.where(earlier, omega * np.exp(-omega * np.where(earlier, dt, 0.0)) * phi(r2, h, D), 0.0).sum(1)
    return Sq, Gq


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("D", [1, 2, 3])
@pytest.mark.parametrize("exact", [True, False])
def test_query_sums_match_reference(backend, D, exact):
    """The forecast kernel (query points off the data, CPU loop and CUDA hawkes_query)."""
    x, t = _data(180, D, seed=10 + D)
    rng = np.random.default_rng(D)
    q = rng.uniform(-1, 6, (37, D))
    e = make_engine(x, t, backend=backend, exact=exact)
    for time in (t[-1] + 0.7, t[90], t[-1] + 30.0):  # after the data, at a tied data time, far ahead
        Sq, Gq = e.query_sums(q, time, P["tau_x"], P["tau_t"], P["h"], P["omega"])
        Sr, Gr = _query_reference(x, t, q, time, P["tau_x"], P["tau_t"], P["h"], P["omega"])
        own = E_phi0(D, P["tau_x"]) * E_phi0(1, P["tau_t"])
        lam, lam_r = P["mu0"] * Sq + P["theta"] * Gq, P["mu0"] * Sr + P["theta"] * Gr
        if exact:
            assert np.max(np.abs(lam - lam_r) / lam_r) < 1e-10
        # windowed: the documented absolute bound (far ahead the intensity itself is ~1e-9 own)
        assert np.all(np.abs(lam - lam_r) <= 1e-13 * P["mu0"] * own + 1e-12 * lam_r)
        assert np.max(np.abs(lam - lam_r) / lam_r) < 1e-10 or time > t[-1] + 10
    e32 = make_engine(x, t, backend=backend, dtype=np.float32, exact=exact)
    Sq, Gq = e32.query_sums(q, t[-1] + 0.7, P["tau_x"], P["tau_t"], P["h"], P["omega"])
    Sr, Gr = _query_reference(x, t, q, t[-1] + 0.7, P["tau_x"], P["tau_t"], P["h"], P["omega"])
    lam, lam_r = P["mu0"] * Sq + P["theta"] * Gq, P["mu0"] * Sr + P["theta"] * Gr
    assert np.max(np.abs(lam - lam_r) / lam_r) < 2e-5


def E_phi0(D, s):
    return (2 * np.pi * s * s) ** (-D / 2)


# ----------------------------------------------------------------------------- power-law (Omori-Utsu) trigger
def _power_reference(x, t, p, kp, window=None):
    """float64 NumPy log L with the power-law trigger density (kp - 1) om (1 + om dt)^(-kp)."""
    D = x.shape[1]
    r2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    dt = t[:, None] - t[None, :]
    phi = lambda z2, s, d: (2 * np.pi * s * s) ** (-d / 2) * np.exp(-z2 / (2 * s * s))  # noqa: E731
    S = (phi(r2, p["tau_x"], D) * phi(dt**2, p["tau_t"], 1)).sum(1)
    pos = dt > 0
    g = (kp - 1) * p["omega"] * (1 + p["omega"] * np.where(pos, dt, 0)) ** (-kp)
    G = np.where(pos, g * phi(r2, p["h"], D), 0).sum(1)
    T0, T1 = window or (t.min(), t.max())
    from scipy.special import ndtr

    integral = (p["mu0"] * (ndtr((T1 - t) / p["tau_t"]) - ndtr((T0 - t) / p["tau_t"])).sum()
                + p["theta"] * (1 - (1 + p["omega"] * (T1 - t)) ** (1 - kp)).sum())
    return np.log(p["mu0"] * S + p["theta"] * G).sum() - integral, S, G


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("D", [1, 2])
@pytest.mark.parametrize("exact", [True, False])
def test_power_law_kernel_matches_reference(backend, D, exact):
    x, t = _data(200, D, seed=20 + D)
    for kp in (1.3, 2.5):
        ll_r, S_r, G_r = _power_reference(x, t, P, kp)
        e = make_engine(x, t, backend=backend, exact=exact, kernel_p=kp)
        ll = _ll(e)
        if exact:
            G = e.trigger_sums()
            assert np.max(np.abs(G - G_r) / np.maximum(G_r, 1e-300)) < 1e-10
        assert abs(ll - ll_r) < 1e-9 * abs(ll_r)
        # self-excitation and the move caches use the same kernel
        e.set_trigger(P["h"] * 1.1, P["omega"], slot=1)
        pi = e.self_excitation(P["mu0"], P["theta"])
        lam = P["mu0"] * S_r + P["theta"] * G_r
        assert np.max(np.abs(pi - P["theta"] * G_r / lam)) < 1e-10
    e32 = make_engine(x, t, backend=backend, dtype=np.float32, exact=exact, kernel_p=1.3)
    assert abs(_ll(e32) - _power_reference(x, t, P, 1.3)[0]) < 2e-6 * abs(ll_r) + 1e-3
