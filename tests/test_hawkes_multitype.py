"""Multitype Hawkes model (hphawkes_py.hawkes.multitype): log-likelihood against the NumPy reference and
hp.hawkes for K = 1, the CUDA kernel on the emulator, pi per type pair, simulation, recovery of the
excitation matrix by MCMC, the plot, refusals."""
import math

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.hawkes import multitype
from naive_hawkes_marked import multitype_loglik

THETA = [[0.3, 0.2], [0.0, 0.4]]
P = dict(mu0=[0.6, 0.5], theta=THETA, omega=2.0, h=0.1, tau_x=1.0, tau_t=10.0)


@pytest.fixture(scope="module")
def data():
    return multitype.simulate(mu=[0.5, 0.3], theta=THETA, omega=2.0, h=0.1, region=2.0, duration=30.0, seed=1)


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_log_likelihood_matches_reference(dim):
    x, t, k = multitype.simulate(mu=[0.4, 0.3, 0.2], theta=[[0.2, 0.1, 0.0], [0.1, 0.3, 0.1], [0.2, 0.0, 0.1]],
                                 omega=1.5, h=0.2, region=2.0, duration=20.0, dim=dim, seed=dim)
    p = dict(mu0=[0.5, 0.4, 0.7], theta=[[0.2, 0.1, 0.05], [0.1, 0.3, 0.1], [0.2, 0.01, 0.1]], omega=1.5, h=0.2,
             tau_x=0.8, tau_t=5.0)
    got = multitype.log_likelihood(x, t, k, p, window=(0.0, 20.0))
    ref = multitype_loglik(x, t, k, p["mu0"], p["theta"], 1.5, 0.2, 0.8, 5.0, (0.0, 20.0))
    assert got == pytest.approx(ref, rel=1e-12)


def test_one_type_is_the_hphawkes_model():
    x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    pp = dict(mu0=0.5, tau_x=1.0, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    ref = hp.hawkes.log_likelihood(x, t, pp, exact=True)
    got = multitype.log_likelihood(x, t, np.zeros(t.size, int), dict(pp, mu0=[0.5], theta=[[0.5]]))
    assert got == pytest.approx(ref, rel=1e-12)
    pi = multitype.probabilities(x, t, np.zeros(t.size, int), dict(pp, mu0=[0.5], theta=[[0.5]]))["pi"][:, 0]
    np.testing.assert_allclose(pi, hp.hawkes.self_excitation_probabilities(x, t, pp, exact=True), rtol=1e-12)


def test_ties_and_order(data):
    x, t, k = data
    t2 = np.round(t, 0)
    perm = np.random.default_rng(0).permutation(t.size)
    got = multitype.log_likelihood(x[perm], t2[perm], k[perm], P, window=(0.0, 30.0))
    ref = multitype_loglik(x, t2, k, P["mu0"], THETA, 2.0, 0.1, 1.0, 10.0, (0.0, 30.0))
    assert got == pytest.approx(ref, rel=1e-12)


def test_emulator_and_threads(data):
    x, t, k = data
    cpu = multitype.log_likelihood(x, t, k, P)
    assert multitype.log_likelihood(x, t, k, P, backend="emulator") == pytest.approx(cpu, rel=1e-14)
    assert multitype.log_likelihood(x, t, k, P, threads=1) == cpu
    a = multitype.probabilities(x, t, k, P)
    b = multitype.probabilities(x, t, k, P, backend="emulator")
    np.testing.assert_allclose(a["pi"], b["pi"], rtol=1e-13, atol=1e-300)


def test_pi_per_type_pair(data):
    x, t, k = data
    pr = multitype.probabilities(x, t, k, P)
    np.testing.assert_allclose(pr["pi"].sum(axis=1) + pr["background"], 1.0, rtol=1e-13)
    # theta[1, 0] = 0: no type-0 event has a type-1 parent
    assert np.all(pr["pi"][k == 0, 1] == 0.0)
    # direct pair sum for one event
    n = int(np.flatnonzero(k == 1)[-1])
    trig = np.zeros(2)
    for m in np.flatnonzero(t < t[n]):
        r2 = float(np.sum((x[n] - x[m]) ** 2))
        trig[k[m]] += THETA[k[m]][1] * 2.0 * math.exp(-2.0 * (t[n] - t[m])) * math.exp(-r2 / 0.02) / (2 * math.pi * 0.01)
    same = k == 1
    r2 = np.sum((x[same] - x[n]) ** 2, axis=1)
    bg = 0.5 * np.sum(np.exp(-r2 / 2) / (2 * math.pi) * np.exp(-(t[same] - t[n]) ** 2 / 200) / math.sqrt(200 * math.pi))
    np.testing.assert_allclose(pr["pi"][n], trig / (bg + trig.sum()), rtol=1e-12)
    M = pr["matrix"]
    np.testing.assert_allclose(M, [[pr["pi"][k == l, j].sum() for l in range(2)] for j in range(2)])


def test_simulate_offspring_by_type():
    theta = np.array([[0.3, 0.2], [0.1, 0.4]])
    x, t, k, parent = multitype.simulate(mu=[2.0, 1.0], theta=theta, omega=5.0, h=0.1, region=5.0, duration=100.0,
                                         seed=2, return_parents=True)
    again = multitype.simulate(mu=[2.0, 1.0], theta=theta, omega=5.0, h=0.1, region=5.0, duration=100.0, seed=2)
    np.testing.assert_array_equal(again[0], x)
    bg = parent == -1
    for j, mu in enumerate([2.0, 1.0]):
        n0 = int(np.sum(bg & (k == j)))
        assert abs(n0 - mu * 25 * 100) < 4 * math.sqrt(mu * 2500)
    early = t < 90.0  # children lost past the end are negligible (mean delay 0.2)
    kids = parent >= 0
    for a in range(2):
        for b in range(2):
            n_par = int(np.sum(early & (k == a)))
            n_kid = int(np.sum(kids & (k == b) & (k[np.maximum(parent, 0)] == a) & early[np.maximum(parent, 0)]))
            assert abs(n_kid - theta[a, b] * n_par) < 4 * math.sqrt(theta[a, b] * n_par) + 3


@pytest.mark.slow
def test_mcmc_recovers_excitation_matrix():
    theta = np.array([[0.4, 0.3], [0.05, 0.5]])
    # short, local triggering against a smooth background: the smoother's misfit to the simulated
    # homogeneous background stays out of the excitation matrix
    x, t, k = multitype.simulate(mu=[0.5, 0.3], theta=theta, omega=5.0, h=0.02, region=3.0, duration=30.0, seed=7)
    post = multitype.mcmc(x, t, k, tau_x=1.0, tau_t=10.0, window=(0.0, 30.0), n_iter=400, burn_in=150, chains=1,
                          seed=3)
    for a in range(2):
        for b in range(2):
            lo, hi = np.quantile(post.draws[f"theta[{a},{b}]"], [0.005, 0.995])
            assert lo < theta[a, b] < hi, (a, b, lo, hi)
    for name, v in (("omega", 5.0), ("h", 0.02)):
        lo, hi = np.quantile(post.draws[name], [0.005, 0.995])
        assert lo < v < hi, (name, lo, hi)
    assert post.extra["pi"].shape == (t.size, 3)


def test_mcmc_result_and_plot(data, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    x, t, k = data
    post = multitype.mcmc(x, t, k, tau_x=1.0, tau_t=10.0, n_iter=30, burn_in=10, chains=2, seed=1)
    again = multitype.mcmc(x, t, k, tau_x=1.0, tau_t=10.0, n_iter=30, burn_in=10, chains=2, seed=1)
    np.testing.assert_array_equal(post.draws["theta[0,1]"], again.draws["theta[0,1]"])
    assert post.chains == 2 and post.n_draws == 20
    assert list(post.summary().index)[:2] == ["mu0[0]", "mu0[1]"]
    np.testing.assert_allclose(post.extra["pi"].sum(axis=1), 1.0, rtol=1e-12)
    fig = multitype.plot_excitation_matrix(post, labels=["a", "b"], path=tmp_path / "m.png")
    assert (tmp_path / "m.png").stat().st_size > 0
    assert [tl.get_text() for tl in fig.axes[0].get_xticklabels()] == ["a", "b"]


@pytest.mark.parametrize("call, exc, match", [
    (lambda x, t, k: multitype.log_likelihood(x, t, k, dict(P, theta=[[0.1]])), ValueError, "K x K"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k, dict(P, mu0=[0.5, -1.0])), ValueError, "mu0"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k, dict(P, theta=[[0.1, -0.1], [0, 0]])), ValueError, ">= 0"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k, {"mu0": [1.0]}), ValueError, "missing"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k + 1, P), ValueError, "codes 0..K-1"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k.astype(float), P), TypeError, "integer"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k[:-1], P), ValueError, "one type per event"),
    (lambda x, t, k: multitype.log_likelihood(x, t, k, dict(P, omega="a")), TypeError, "omega"),
    (lambda x, t, k: multitype.mcmc(x, t, k, tau_x=1.0, tau_t=-1.0), ValueError, "tau_t"),
    (lambda x, t, k: multitype.mcmc(x, t, k, tau_x=1.0, tau_t=1.0, n_iter=5, burn_in=5), ValueError, "burn_in"),
    (lambda x, t, k: multitype.mcmc(x, t, k, tau_x=1.0, tau_t=1.0, init={"beta": 1}), ValueError, "unknown"),
    (lambda x, t, k: multitype.simulate(mu=[1.0], theta=[[1.2]], omega=1, h=1, region=1, duration=1), ValueError,
     "spectral radius"),
    (lambda x, t, k: multitype.simulate(mu=[1.0, 1.0], theta=[[0.1]], omega=1, h=1, region=1, duration=1),
     ValueError, "K x K"),
    (lambda x, t, k: multitype.plot_excitation_matrix([[1, 2, 3]]), ValueError, "square"),
    (lambda x, t, k: multitype.plot_excitation_matrix([[1]], labels=["a", "b"]), ValueError, "labels"),
])
def test_refusals(data, call, exc, match):
    with pytest.raises(exc, match=match):
        call(*data)
