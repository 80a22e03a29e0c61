"""Space-time ETAS (hphawkes_py.hawkes.etas): log-likelihood against the NumPy reference, the CUDA
kernel on the emulator against the Numba kernel, simulation, recovery by MCMC, refusals."""
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from hphawkes_py.hawkes import etas
from naive_hawkes_marked import etas_loglik

P = dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0)


@pytest.fixture(scope="module")
def cat():
    return etas.simulate(**P, m0=3.0, region=10.0, duration=100.0, seed=1)


@pytest.mark.parametrize("kernel", ["gaussian", "power-law"])
@pytest.mark.parametrize("marks", [True, False])
def test_log_likelihood_matches_reference(cat, kernel, marks):
    x, t, m = cat
    p = dict(P, q=1.8) if kernel == "power-law" else P
    got = etas.log_likelihood(x, t, m, p, m0=3.0, region=10.0, window=(0.0, 100.0), spatial_kernel=kernel,
                              marks=marks)
    ref = etas_loglik(x, t, m, p, 3.0, np.full(t.size, 0.01), (0.0, 100.0), kernel, marks)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_background_density_ties_and_order(cat):
    x, t, m = cat
    rng = np.random.default_rng(0)
    t2 = np.round(t, 0)  # many tied times: tied events do not trigger each other
    u = rng.uniform(0.005, 0.02, t.size)
    perm = rng.permutation(t.size)
    got = etas.log_likelihood(x[perm], t2[perm], m[perm], P, m0=2.9, background=u[perm], window=(0.0, 100.0))
    ref = etas_loglik(x, t2, m, P, 2.9, u, (0.0, 100.0))
    assert got == pytest.approx(ref, rel=1e-12)


def test_emulator_kernel_matches_cpu(cat):
    x, t, m = cat
    for kernel, p in (("gaussian", P), ("power-law", dict(P, q=2.5))):
        cpu = etas.log_likelihood(x, t, m, p, m0=3.0, spatial_kernel=kernel)
        emu = etas.log_likelihood(x, t, m, p, m0=3.0, spatial_kernel=kernel, backend="emulator")
        assert emu == pytest.approx(cpu, rel=1e-14)


def test_threads_bit_identical(cat):
    x, t, m = cat
    a = etas.log_likelihood(x, t, m, P, m0=3.0, threads=1)
    b = etas.log_likelihood(x, t, m, P, m0=3.0)
    assert a == b


def test_probabilities_are_the_background_share(cat):
    x, t, m = cat
    pr = etas.probabilities(x, t, m, P, m0=3.0, region=10.0)
    # reference: mu u / lambda from the reference's pieces (lambda = exp(loglik difference) is awkward;
    # recompute lambda_n directly)
    lam = np.full(t.size, P["mu"] * 0.01)
    for n in range(t.size):
        for j in range(t.size):
            if t[j] < t[n]:
                sig = P["d"] * math.exp(P["gamma"] * (m[j] - 3.0))
                r2 = float(np.sum((x[n] - x[j]) ** 2))
                lam[n] += (P["A"] * math.exp(P["alpha"] * (m[j] - 3.0)) * (P["p"] - 1) / P["c"]
                           * (1 + (t[n] - t[j]) / P["c"]) ** -P["p"] * math.exp(-r2 / (2 * sig)) / (2 * math.pi * sig))
    np.testing.assert_allclose(pr["background"], P["mu"] * 0.01 / lam, rtol=1e-12)
    np.testing.assert_allclose(pr["background"] + pr["triggered"], 1.0)
    assert pr["background"][0] == 1.0


def test_simulate_is_seeded_and_follows_gutenberg_richter():
    a = etas.simulate(**P, m0=3.0, region=10.0, duration=100.0, seed=5, return_parents=True)
    b = etas.simulate(**P, m0=3.0, region=10.0, duration=100.0, seed=5, return_parents=True)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    x, t, m, parent = etas.simulate(**dict(P, mu=20.0), m0=3.0, region=10.0, duration=100.0, seed=6,
                                    return_parents=True)
    beta = math.log(10.0)
    n = m.size
    assert abs(np.mean(m - 3.0) - 1 / beta) < 4 * (1 / beta) / math.sqrt(n)
    assert np.all(np.diff(t) >= 0) and m.min() >= 3.0
    nb = int((parent == -1).sum())
    assert abs(nb - 2000) < 4 * math.sqrt(2000)
    kids = parent[parent >= 0]
    assert np.all(t[parent >= 0] > t[kids])  # children after their parents
    # offspring count of a parent: mean A exp(alpha (m - m0)) times the Omori mass before the end
    early = np.flatnonzero(t < 50.0)
    counts = np.bincount(kids, minlength=t.size)[early]
    inside = 1.0 - (1.0 + (100.0 - t[early]) / P["c"]) ** (1.0 - P["p"])
    expect = P["A"] * np.exp(P["alpha"] * (m[early] - 3.0)) * inside
    assert abs(counts.sum() - expect.sum()) < 4 * math.sqrt(expect.sum())


@pytest.mark.slow
def test_mcmc_recovers_simulated_parameters():
    truth = dict(mu=2.0, A=0.4, alpha=0.8, c=0.02, p=1.3, d=0.05, gamma=0.8, b=1.0)
    x, t, m = etas.simulate(**truth, m0=3.0, region=10.0, duration=60.0, seed=3)
    post = etas.mcmc(x, t, m, m0=3.0, region=10.0, window=(0.0, 60.0), n_iter=400, burn_in=150, chains=1, seed=2)
    for name in ("A", "alpha", "c", "p", "d", "gamma", "b", "mu"):
        lo, hi = np.quantile(post.draws[name], [0.005, 0.995])
        assert lo < truth[name] < hi, (name, lo, hi)
    assert post.extra["background"].shape == t.shape


def test_mcmc_result_object_and_executor(cat):
    x, t, m = cat
    kw = dict(m0=3.0, region=10.0, n_iter=30, burn_in=10, chains=2, seed=4, fixed={"gamma": 0.5, "d": 0.02})
    a = etas.mcmc(x, t, m, **kw)
    with ThreadPoolExecutor(2) as ex:
        b = etas.mcmc(x, t, m, executor=ex, **kw)
    for n in a.draws:
        np.testing.assert_array_equal(a.draws[n], b.draws[n])
    assert a.chains == 2 and a.n_draws == 20 and "gamma" not in a.draws
    assert list(a.summary().index) == list(a.draws)
    assert set(a.to_arviz().posterior.data_vars) == set(a.draws)
    assert a.params_mean()["gamma"] == 0.5
    assert np.all(np.isfinite(a.draws["b"])) and np.all(a.draws["b"] > 0)


@pytest.mark.parametrize("call, match", [
    (lambda x, t, m: etas.log_likelihood(x, t, m, dict(P, p=1.0)), r"params\['p'\] must be > 1"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, {k: v for k, v in P.items() if k != "A"}), "missing"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, dict(P, zeta=1.0)), "unknown"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, dict(P, q=2.0)), "power-law"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, P, m0=5.0), "m0"),
    (lambda x, t, m: etas.log_likelihood(x, t, m[:-1], P), "one magnitude per event"),
    (lambda x, t, m: etas.log_likelihood(x[:, 0], t, m, P), "2-D"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, P, region=10.0, background=np.ones(t.size)), "not both"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, P, background=-np.ones(t.size)), "background"),
    (lambda x, t, m: etas.log_likelihood(x, t, m, P, spatial_kernel="cauchy"), "spatial_kernel"),
    (lambda x, t, m: etas.mcmc(x, t, m, n_iter=10, burn_in=10), "burn_in"),
    (lambda x, t, m: etas.mcmc(x, t, m, sample=("zeta",)), "unknown"),
    (lambda x, t, m: etas.mcmc(x, t, m, sample=("mu",), fixed={"mu": 1.0}), "fixed"),
    (lambda x, t, m: etas.simulate(**dict(P, A=0.9), m0=3.0, region=1.0, duration=1.0), "branching ratio"),
    (lambda x, t, m: etas.simulate(**P, m0=3.0, region=1.0, duration=1.0, q=2.0), "q is the power-law"),
])
def test_refusals(cat, call, match):
    with pytest.raises(ValueError, match=match):
        call(*cat)


def test_type_refusals(cat):
    x, t, m = cat
    with pytest.raises(TypeError, match="params"):
        etas.log_likelihood(x, t, m, [1, 2])
    with pytest.raises(TypeError, match=r"params\['mu'\]"):
        etas.log_likelihood(x, t, m, dict(P, mu="1"))
    with pytest.raises(TypeError, match="executor"):
        etas.mcmc(x, t, m, executor=object())
