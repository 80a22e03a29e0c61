"""float32 Hawkes engines on large times with small gaps (the DC data's times reach 1.2e5 hours).

The float32 engines split each time into t^hi + t^lo (``hawkes.times.split_time``) so that a time
difference keeps float32 accuracy relative to the difference, not to |t|. The CPU loops compute
``(t_n^hi - t_m^hi) + (t_n^lo - t_m^lo)`` inside ``fastmath`` code; if LLVM may re-associate that
sum it becomes ``(t_n^hi + t_n^lo) - (t_m^hi + t_m^lo)``, each time rounded to float32 first (an
ulp of 1e5 is 0.008), and a trigger term exp(-omega dt) with omega = 40 / hour is off by ~30 %.
``_fastmath.fsub``/``fadd`` keep the grouping. Every float32 path (exact and windowed, row loops,
fused loops, the pair list, forecasts' query points, the gradient, CPU and the emulated GPU engine)
must agree with float64 to float32 accuracy.
"""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.hawkes.engine import make_engine
from hphawkes_py.hawkes.gradient import log_likelihood_gradient

P = dict(mu0=0.5, tau_x=0.3, tau_t=5.0, theta=0.3, omega=40.0, h=0.1)
TOL = 1e-4  # float32 pair terms, float64 sums: the errors seen are ~3e-5 at worst


@pytest.fixture(scope="module")
def events():
    """150 events at t ~ 1e5 hours, gaps of ~0.05 hours (clusters within the trigger's reach)."""
    rng = np.random.default_rng(7)
    n = 150
    t = 1.0e5 + np.cumsum(rng.exponential(0.05, n))
    x = rng.uniform(0.0, 0.5, (n, 2))
    return x, t


def _rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def _sums(x, t, backend, dtype, exact):
    e = make_engine(x, t, backend=backend, dtype=dtype, exact=exact)
    e.set_background(P["tau_x"], P["tau_t"])
    e.set_trigger(P["h"], P["omega"])
    S, G = e.background_sums(), e.trigger_sums()
    pi = e.self_excitation(P["mu0"], P["theta"])
    # the fused background-and-trigger pass (log_likelihood with both sums out of date)
    e2 = make_engine(x, t, backend=backend, dtype=dtype, exact=exact)
    ll = e2.log_likelihood(P["mu0"], P["tau_x"], P["tau_t"], P["theta"], P["omega"], P["h"])
    G2 = e2.trigger_sums()
    qs, qg = e.query_sums(x[:20], float(t[-1]) + 0.01, P["tau_x"], P["tau_t"], P["h"], P["omega"])
    return dict(S=S, G=G, pi=pi, ll=ll, G_fused=G2, query_S=qs, query_G=qg)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_float32_sums_match_float64_at_large_times(events, backend, exact):
    x, t = events
    want = _sums(x, t, backend, np.float64, exact)
    got = _sums(x, t, backend, np.float32, exact)
    assert np.median(want["G"]) > 1.0  # the trigger sums are not negligible: their error would show
    for k in want:
        assert _rel(got[k], want[k]) < TOL, (k, _rel(got[k], want[k]))
    assert any(not np.array_equal(got[k], want[k]) for k in want)  # the float32 kernels ran


@pytest.mark.parametrize("exact", [True, False])
def test_float32_public_functions_match_float64(events, exact):
    x, t = events
    kw = dict(exact=exact, backend="cpu")
    ll64 = hp.hawkes.log_likelihood(x, t, P, dtype=np.float64, **kw)
    ll32 = hp.hawkes.log_likelihood(x, t, P, dtype=np.float32, **kw)
    assert abs(ll32 - ll64) < TOL * abs(ll64)
    pi64 = hp.hawkes.self_excitation_probabilities(x, t, P, dtype=np.float64, **kw)
    pi32 = hp.hawkes.self_excitation_probabilities(x, t, P, dtype=np.float32, **kw)
    assert np.max(np.abs(pi32 - pi64)) < TOL


@pytest.mark.parametrize("kernel", ["exponential", ("power-law", 2.5)])
@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("backend", ["cpu", "emulator"])
def test_float32_gradient_matches_float64_at_large_times(events, backend, exact, kernel):
    x, t = events
    g64 = log_likelihood_gradient(x, t, P, exact=exact, backend="cpu", kernel=kernel)
    g32 = log_likelihood_gradient(x, t, P, exact=exact, backend=backend, kernel=kernel, dtype=np.float32)
    scale = max(abs(v) for v in g64.values())
    for n in g64:
        # relative to the gradient's largest partial: a partial near 0 is a difference of large sums
        assert abs(g32[n] - g64[n]) < TOL * scale, (n, g32[n], g64[n])


def test_the_split_matters(events):
    """The check above can fail: float32 times without the split lose the trigger sums."""
    x, t = events
    t32 = t.astype(np.float32).astype(np.float64)  # each time rounded to float32 first
    e64 = make_engine(x, t, backend="cpu", dtype=np.float64, exact=True)
    e64.set_trigger(P["h"], P["omega"])
    e_bad = make_engine(x, t32, backend="cpu", dtype=np.float64, exact=True)
    e_bad.set_trigger(P["h"], P["omega"])
    assert _rel(e_bad.trigger_sums(), e64.trigger_sums()) > 0.05
