"""Analytic gradient of the Hawkes log-likelihood (issue 31, "Gradients and a real NUTS sampler").

Checked against (1) the naive NumPy reference (tests/naive_hawkes_gradient.py, every pair as a matrix,
float64, ~1e-12), (2) central finite differences of the library's own ``log_likelihood`` (~1e-6), for
every temporal kernel (exponential, power law, sum of two exponentials), the spatial power law, D = 1,
2, 3, tied times, windowed and exact, float32, a spatial window and a KDE background; the CUDA kernel (on the emulator) against the Numba one;
and the refusals of bad inputs.
"""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.hawkes.gradient import GradientModel, log_likelihood_gradient, window_mass_and_derivative
from hphawkes_py.hawkes.model import engine_factory, prepare_data
import naive_hawkes as nh
import naive_hawkes_gradient as ng

P = dict(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
EXP2 = dict(P, omega2=0.3, w=0.6)
KERNELS = [  # (kernel, spatial_kernel, params, reference keywords)
    ("exponential", "gaussian", P, {}),
    (("power-law", 2.5), "gaussian", P, {"p": 2.5}),
    ("exp2", "gaussian", EXP2, {"omega2": 0.3, "w": 0.6}),
    ("exponential", ("power-law", 2.0), P, {"q": 2.0}),
]


@pytest.fixture(scope="module")
def sim():
    return hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)


@pytest.mark.parametrize("kernel,skernel,params,ref", KERNELS)
@pytest.mark.parametrize("D", [1, 2, 3])
def test_gradient_matches_the_naive_reference(kernel, skernel, params, ref, D):
    x, t = nh.tied_events(60, D, seed=D, span=30.0)  # many exact ties: tied events do not excite
    p = dict(params, h=0.7, tau_x=1.2, tau_t=3.0)
    g = log_likelihood_gradient(x, t, p, exact=True, backend="cpu", kernel=kernel, spatial_kernel=skernel)
    want = ng.log_likelihood_gradient(x, t, p["mu0"], p["tau_x"], p["tau_t"], p["theta"], p["omega"], p["h"], **ref)
    assert list(g) == list(want)
    for n in want:
        assert ng.relative_error(g[n], want[n]) < 1e-11, (n, g[n], want[n])


@pytest.mark.parametrize("kernel,skernel,params,ref", KERNELS)
def test_gradient_matches_finite_differences_of_log_likelihood(sim, kernel, skernel, params, ref):
    x, t = sim
    kw = dict(backend="cpu", kernel=kernel, spatial_kernel=skernel)
    g = log_likelihood_gradient(x, t, params, **kw)  # windowed (the default)

    def ll(q):
        return hp.hawkes.log_likelihood(x, t, q, exact=True, **kw)

    for n in params:
        fd = ng.finite_difference(ll, params, n)
        assert ng.relative_error(g[n], fd) < 1e-6, (n, g[n], fd)


def test_windowed_gradient_equals_exact_and_a_wrong_window_would_show(sim):
    x, t = sim
    g_w = log_likelihood_gradient(x, t, P, backend="cpu")
    g_e = log_likelihood_gradient(x, t, P, backend="cpu", exact=True)
    for n in P:
        assert ng.relative_error(g_w[n], g_e[n]) < 1e-10, n
    # the comparison can fail: with the trigger window too short the omega partial changes visibly
    from hphawkes_py.hawkes import gradient as gmod
    orig = gmod.trigger_delta
    try:
        gmod.trigger_delta = lambda *a, **k: 0.1 * orig(*a, **k)
        g_bad = log_likelihood_gradient(x, t, P, backend="cpu")
    finally:
        gmod.trigger_delta = orig
    assert ng.relative_error(g_bad["omega"], g_e["omega"]) > 1e-6


def test_window_time_range_and_caller_order(sim):
    x, t = sim
    win = (float(t.min()) - 3.0, float(t.max()) + 2.0)
    g = log_likelihood_gradient(x, t, P, backend="cpu", window=win, exact=True)
    want = ng.log_likelihood_gradient(x, t, *(P[n] for n in hp.hawkes.PARAM_NAMES), window=win)
    for n in want:
        assert ng.relative_error(g[n], want[n]) < 1e-11, n
    perm = np.random.default_rng(3).permutation(len(t))
    g2 = log_likelihood_gradient(x[perm], t[perm], P, backend="cpu", window=win, exact=True)
    for n in g:
        assert ng.relative_error(g2[n], g[n]) < 1e-12, n


def test_float32_gradient_is_close_to_float64(sim):
    x, t = sim
    g64 = log_likelihood_gradient(x, t, P, backend="cpu")
    g32 = log_likelihood_gradient(x, t, P, backend="cpu", dtype=np.float32)
    for n in P:
        assert ng.relative_error(g32[n], g64[n]) < 2e-4, (n, g32[n], g64[n])
    assert any(g32[n] != g64[n] for n in P)  # the float32 kernels ran


def test_same_bits_for_any_thread_count(sim):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba started with one thread")
    x, t = sim
    a = log_likelihood_gradient(x, t, P, backend="cpu", threads=1)
    b = log_likelihood_gradient(x, t, P, backend="cpu", threads=2)
    assert a == b


def test_value_is_the_log_likelihood(sim):
    x, t = sim
    model = GradientModel(engine_factory(prepare_data(x, t), backend="cpu"))
    ll, _ = model.value_and_gradient(P)
    assert abs(ll - hp.hawkes.log_likelihood(x, t, P, backend="cpu", exact=True)) < 1e-10
    # cached background: a second call at new trigger parameters still agrees
    q = dict(P, h=0.2, omega=1.0, theta=0.3)
    ll2, g2 = model.value_and_gradient(q)
    assert abs(ll2 - hp.hawkes.log_likelihood(x, t, q, backend="cpu", exact=True)) < 1e-10
    assert g2 == log_likelihood_gradient(x, t, q, backend="cpu")


def test_spatial_window_gradient_matches_finite_differences():
    win = hp.kde.Window.rectangle(0.0, 2.0, 0.0, 2.0, 0.1)
    x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=20.0, seed=4)
    keep = np.all((x > 0.0) & (x < 2.0), axis=1)  # offspring may land outside the simulation square
    x, t = x[keep], t[keep]
    p = dict(P, tau_x=0.3, h=0.25)
    kw = dict(backend="cpu", spatial_window=win)
    g = log_likelihood_gradient(x, t, p, **kw)

    def ll(q):
        return hp.hawkes.log_likelihood(x, t, q, exact=True, **kw)

    for n in p:
        fd = ng.finite_difference(ll, p, n)
        assert ng.relative_error(g[n], fd) < 1e-6, (n, g[n], fd)
    # the window's part matters: without it the h and tau_x partials differ
    g0 = log_likelihood_gradient(x, t, p, backend="cpu")
    assert ng.relative_error(g0["h"], g["h"]) > 1e-3


def test_window_mass_derivative_matches_finite_differences():
    win = hp.kde.Window(mask=np.array([[1, 1, 0], [1, 1, 1]], bool), cell_size=0.5, x0=0.0, y0=0.0)
    pts = np.array([[0.3, 0.4], [1.2, 0.2], [0.9, 0.9]])
    from hphawkes_py.hawkes.compensator import gaussian_window_mass
    for s in (0.1, 0.4, 2.0):
        m, dm = window_mass_and_derivative(pts, s, win)
        np.testing.assert_allclose(m, gaussian_window_mass(pts, s, win), rtol=1e-13)
        e = 1e-6 * s
        fd = (gaussian_window_mass(pts, s + e, win) - gaussian_window_mass(pts, s - e, win)) / (2 * e)
        np.testing.assert_allclose(dm, fd, rtol=1e-6, atol=1e-9)


def test_kde_background_gradient():
    rng = np.random.default_rng(2)
    win = hp.kde.Window.rectangle(0.0, 4.0, 0.0, 4.0, 0.25)
    x = rng.uniform(0.2, 3.8, (40, 2))
    t = rng.uniform(0.0, 20.0, 40)
    fit = hp.kde.fit(x, win, method="fixed", bandwidth=0.8, progress=False, backend="cpu")
    kw = dict(backend="cpu", background=fit)
    g = log_likelihood_gradient(x, t, P, **kw)
    assert g["tau_x"] == 0.0 and g["tau_t"] == 0.0  # unused by a KDE background

    def ll(q):
        return hp.hawkes.log_likelihood(x, t, q, exact=True, **kw)

    for n in ("mu0", "theta", "omega", "h"):
        fd = ng.finite_difference(ll, P, n)
        assert ng.relative_error(g[n], fd) < 1e-6, (n, g[n], fd)


@pytest.mark.parametrize("kernel,skernel,params,ref", KERNELS)
@pytest.mark.parametrize("exact", [True, False])
def test_emulated_gpu_gradient_matches_the_cpu(kernel, skernel, params, ref, exact):
    """The CUDA kernel hawkes_gradient_sums (on the CPU emulator) against the Numba kernel: float64 to
    rounding, float32 to float32 accuracy, exact and windowed, with tied times."""
    x, t = nh.tied_events(60, 2, seed=5, span=30.0)
    p = dict(params, h=0.7, tau_x=1.2, tau_t=3.0)
    kw = dict(exact=exact, kernel=kernel, spatial_kernel=skernel)
    cpu = log_likelihood_gradient(x, t, p, backend="cpu", **kw)
    emu = log_likelihood_gradient(x, t, p, backend="emulator", **kw)
    emu32 = log_likelihood_gradient(x, t, p, backend="emulator", dtype=np.float32, **kw)
    assert list(emu) == list(cpu)
    for n in cpu:
        assert ng.relative_error(emu[n], cpu[n]) < 1e-12, (n, emu[n], cpu[n])
        assert ng.relative_error(emu32[n], cpu[n]) < 1e-4, (n, emu32[n], cpu[n])
    assert any(emu32[n] != emu[n] for n in cpu)  # the float32 kernel ran


def test_emulated_gpu_gradient_d1_d3_and_the_model(sim):
    for D in (1, 3):
        x, t = nh.tied_events(40, D, seed=D, span=20.0)
        p = dict(P, h=0.7, tau_x=1.2, tau_t=3.0)
        cpu = log_likelihood_gradient(x, t, p, backend="cpu", exact=True)
        emu = log_likelihood_gradient(x, t, p, backend="emulator", exact=True)
        for n in cpu:
            assert ng.relative_error(emu[n], cpu[n]) < 1e-12, (D, n)
    x, t = sim
    model = GradientModel(engine_factory(prepare_data(x, t), backend="emulator"))
    assert model.backend == "emulator"
    ll, g = model.value_and_gradient(P)
    assert abs(ll - hp.hawkes.log_likelihood(x, t, P, backend="cpu", exact=True)) < 1e-10
    want = log_likelihood_gradient(x, t, P, backend="cpu")
    for n in P:
        assert ng.relative_error(g[n], want[n]) < 1e-12, n


def test_gpu_gradient_on_a_real_gpu_matches_the_cpu(sim):
    from hphawkes_py._backend import gpu_status

    if not gpu_status()[0]:
        pytest.skip("no usable CUDA GPU")
    x, t = sim
    cpu = log_likelihood_gradient(x, t, P, backend="cpu")
    gpu = log_likelihood_gradient(x, t, P, backend="gpu")
    gpu32 = log_likelihood_gradient(x, t, P, backend="gpu", dtype=np.float32)
    for n in P:
        assert ng.relative_error(gpu[n], cpu[n]) < 1e-12, n
        assert ng.relative_error(gpu32[n], cpu[n]) < 2e-4, n


def test_bad_inputs_are_refused(sim):
    x, t = sim
    with pytest.raises(ValueError, match="theta must be > 0"):
        log_likelihood_gradient(x, t, dict(P, theta=-1.0), backend="cpu")
    with pytest.raises(ValueError, match="omega2"):
        log_likelihood_gradient(x, t, P, backend="cpu", kernel="exp2")
    with pytest.raises(ValueError, match="h = 1e-60 is outside"):
        log_likelihood_gradient(x, t, dict(P, h=1e-60), backend="cpu")
    with pytest.raises(ValueError, match="backend must be one of"):
        log_likelihood_gradient(x, t, P, backend="tpu")
    with pytest.raises(ValueError, match="x must not contain NaN|x must be finite|NaN"):
        log_likelihood_gradient(np.where(np.arange(len(t))[:, None] == 3, np.nan, x), t, P, backend="cpu")
