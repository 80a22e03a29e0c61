"""Compensator over a spatial observation window (``spatial_window=`` a kde.Window raster mask)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).parent))
import naive_hawkes as nv  # noqa: E402
from engines import ENGINES  # noqa: E402

import hphawkes_py.hawkes as hk  # noqa: E402
from hphawkes_py.kde import Window  # noqa: E402

P = dict(mu0=0.7, tau_x=0.8, tau_t=5.0, theta=0.4, omega=0.5, h=0.3)


def _mask():
    # 8 x 10 cells of 0.5: an L-shaped area with a hole, lower-left corner (0, 0)
    m = np.ones((8, 10), bool)
    m[:4, 5:] = False      # top-right quadrant out
    m[5, 2] = False        # a hole
    return m


def _events(win, N, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, (4 * N, 2))
    x = x[win.contains(x)][:N]
    t = np.sort(rng.uniform(0, 60, x.shape[0]))
    return x, t


def _mass_reference(x, s, win):
    """Mass of N(x_m, s^2 I) inside the window, cell by cell with scipy's normal cdf."""
    rows, cols = win.mask.shape
    cs = win.cell_size
    out = np.zeros(len(x))
    for r in range(rows):
        ylo = win.y0 + (rows - 1 - r) * cs
        for c in range(cols):
            if not win.mask[r, c]:
                continue
            xlo = win.x0 + c * cs
            out += ((norm.cdf(xlo + cs, x[:, 0], s) - norm.cdf(xlo, x[:, 0], s))
                    * (norm.cdf(ylo + cs, x[:, 1], s) - norm.cdf(ylo, x[:, 1], s)))
    return out


def _ll_reference(x, t, win):
    lam = P["mu0"] * nv.background_sums(x, t, P["tau_x"], P["tau_t"]) + P["theta"] * nv.trigger_sums(x, t, P["h"], P["omega"])
    T0, T1 = t[0], t[-1]
    bt = norm.cdf(T1, t, P["tau_t"]) - norm.cdf(T0, t, P["tau_t"])
    gt = 1.0 - np.exp(-P["omega"] * (T1 - t))
    comp = (P["mu0"] * np.sum(_mass_reference(x, P["tau_x"], win) * bt)
            + P["theta"] * np.sum(_mass_reference(x, P["h"], win) * gt))
    return np.log(lam).sum() - comp


@pytest.mark.parametrize("backend", ENGINES)
def test_small_window_matches_numpy_reference(backend):
    win = Window.from_mask(_mask(), 0.0, 0.0, 0.5)
    x, t = _events(win, 150, seed=3)
    ref = _ll_reference(x, t, win)
    ll = hk.log_likelihood(x, t, P, backend=backend, spatial_window=win)
    assert abs(ll - ref) < 1e-10 * abs(ref)
    # the window matters: the plane compensator is clearly larger
    plane = hk.log_likelihood(x, t, P, backend=backend)
    assert plane < ll - 1.0


@pytest.mark.parametrize("backend", ENGINES)
def test_huge_rectangle_equals_plane(backend):
    x, t = _events(Window.from_mask(_mask(), 0.0, 0.0, 0.5), 120, seed=5)
    rng = np.random.default_rng(1)
    order = rng.permutation(len(t))         # caller's order is free
    big = Window.rectangle(-500.0, 500.0, -500.0, 500.0, 5.0)
    a = hk.log_likelihood(x[order], t[order], P, backend=backend, spatial_window=big)
    b = hk.log_likelihood(x[order], t[order], P, backend=backend)
    assert abs(a - b) < 1e-10 * abs(b)


def test_event_outside_refused_naming_first():
    win = Window.from_mask(_mask(), 0.0, 0.0, 0.5)
    x, t = _events(win, 30, seed=7)
    x = x.copy()
    x[11] = (4.5, 4.5)   # top-right quadrant: outside
    x[20] = (9.0, 1.0)   # off the raster
    with pytest.raises(ValueError, match=r"event 11 at \(4.5, 4.5\).*2 of 30"):
        hk.log_likelihood(x, t, P, backend="cpu", spatial_window=win)


def test_bad_spatial_window_arguments():
    win = Window.from_mask(_mask(), 0.0, 0.0, 0.5)
    x, t = _events(win, 20, seed=8)
    with pytest.raises(TypeError, match="spatial_window"):
        hk.log_likelihood(x, t, P, backend="cpu", spatial_window=(0, 5, 0, 5))
    with pytest.raises(ValueError, match="D = 1"):
        hk.log_likelihood(x[:, 0], t, P, backend="cpu", spatial_window=win)


def test_mcmc_spatial_window():
    win = Window.from_mask(_mask(), 0.0, 0.0, 0.5)
    x, t = _events(win, 80, seed=9)
    big = Window.rectangle(-500.0, 500.0, -500.0, 500.0, 5.0)
    kw = dict(n_iter=60, burn_in=10, chains=1, seed=4, backend="cpu", progress=False,
              fixed=dict(tau_x=0.8, tau_t=5.0), init=dict(h=0.3, omega=0.5, theta=0.4, mu0=0.7))
    plane = hk.mcmc(x, t, **kw)
    huge = hk.mcmc(x, t, spatial_window=big, **kw)
    small = hk.mcmc(x, t, spatial_window=win, **kw)
    a, b, c = (np.array([p.draws[n] for n in ("h", "omega", "theta", "mu0")]) for p in (plane, huge, small))
    np.testing.assert_allclose(b, a, rtol=1e-8)     # the plane limit: same chain
    assert not np.allclose(c, a)                     # a small window changes the posterior
    with pytest.raises(ValueError, match="outside spatial_window"):
        hk.mcmc(x + 10.0, t, spatial_window=win, **kw)


def test_power_law_kernel_window():
    win = Window.from_mask(_mask(), 0.0, 0.0, 0.5)
    x, t = _events(win, 100, seed=11)
    big = Window.rectangle(-500.0, 500.0, -500.0, 500.0, 5.0)
    k = ("power-law", 2.5)
    plane = hk.log_likelihood(x, t, P, backend="cpu", kernel=k)
    assert abs(hk.log_likelihood(x, t, P, backend="cpu", kernel=k, spatial_window=big) - plane) < 1e-10 * abs(plane)
    # small window: plane minus the trigger/background mass lost outside, with the power-law time term
    T1 = t[-1]
    gt = 1.0 - (1.0 + P["omega"] * (T1 - t)) ** (1.0 - 2.5)
    bt = norm.cdf(T1, t, P["tau_t"]) - norm.cdf(t[0], t, P["tau_t"])
    lost = (P["mu0"] * np.sum((1.0 - _mass_reference(x, P["tau_x"], win)) * bt)
            + P["theta"] * np.sum((1.0 - _mass_reference(x, P["h"], win)) * gt))
    ll = hk.log_likelihood(x, t, P, backend="cpu", kernel=k, spatial_window=win)
    assert abs(ll - (plane + lost)) < 1e-10 * abs(plane)
