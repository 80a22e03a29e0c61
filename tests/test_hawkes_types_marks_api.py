"""Types and marks through hp.hawkes's main functions (issue 31): ``types=`` / ``marks=`` on
log_likelihood, self_excitation_probabilities and mcmc, a K x K ``theta`` or ``etas=`` in simulate.
Each dispatches to hp.hawkes.multitype / hp.hawkes.etas with results bit for bit those of the direct
call, agrees with the NumPy references, and refuses every argument the submodel lacks. Also the
shared adaptive chain of marked_sampler.py on a target with a known answer."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.hawkes import etas, marked_sampler, multitype
from naive_hawkes_marked import etas_loglik, multitype_loglik

hk = hp.hawkes
THETA = [[0.3, 0.2], [0.0, 0.4]]
PT = dict(mu0=[0.6, 0.5], theta=THETA, omega=2.0, h=0.1, tau_x=1.0, tau_t=10.0)
FIXED = {"tau_x": 1.0, "tau_t": 10.0}
PE = dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5, b=1.0)
SET = {"m0": 3.0, "region": 10.0}


@pytest.fixture(scope="module")
def typed():
    return multitype.simulate(mu=[0.5, 0.3], theta=THETA, omega=2.0, h=0.1, region=2.0, duration=30.0, seed=1)


@pytest.fixture(scope="module")
def cat():
    return etas.simulate(**PE, m0=3.0, region=10.0, duration=100.0, seed=1)


def _same(a, b):
    """Bit-for-bit equality of nested results (dicts, tuples, arrays, floats)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)


# ----------------------------------------------------------------------------- simulate
@pytest.mark.parametrize("return_parents", [False, True])
def test_simulate_types_is_multitype_simulate(return_parents):
    kw = dict(omega=2.0, h=0.1, region=2.0, duration=30.0, seed=4, return_parents=return_parents)
    got = hk.simulate(mu=[0.5, 0.3], theta=THETA, **kw)
    ref = multitype.simulate(mu=[0.5, 0.3], theta=THETA, **kw)
    assert len(got) == (4 if return_parents else 3)
    _same(got, ref)
    assert set(got[2].tolist()) == {0, 1}


@pytest.mark.parametrize("spatial_kernel, extra", [("gaussian", {}), ("power-law", {"q": 1.8})])
def test_simulate_etas_is_etas_simulate(spatial_kernel, extra):
    got = hk.simulate(etas=dict(PE, m0=3.0, **extra), region=10.0, duration=100.0, seed=2,
                      spatial_kernel=spatial_kernel, return_parents=True)
    ref = etas.simulate(**PE, **extra, m0=3.0, region=10.0, duration=100.0, seed=2, spatial_kernel=spatial_kernel,
                        return_parents=True)
    _same(got, ref)
    assert got[2].min() >= 3.0 and got[0].shape == (got[1].size, 2)


def test_simulate_without_types_or_marks_is_unchanged():
    x, t = hk.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    assert x.shape == (187, 2)  # the documented example


# ----------------------------------------------------------------------------- log-likelihood, pi
def test_types_log_likelihood_and_pi_are_multitype(typed):
    x, t, k = typed
    got = hk.log_likelihood(x, t, PT, types=k, window=(0.0, 30.0), backend="cpu", threads=1)
    assert got == multitype.log_likelihood(x, t, k, PT, window=(0.0, 30.0), backend="cpu", threads=1)
    ref = multitype_loglik(x, t, k, PT["mu0"], THETA, 2.0, 0.1, 1.0, 10.0, (0.0, 30.0))
    assert got == pytest.approx(ref, rel=1e-12)
    pr = hk.self_excitation_probabilities(x, t, PT, types=k, backend="cpu", exact=True)
    _same(pr, multitype.probabilities(x, t, k, PT, backend="cpu"))
    np.testing.assert_allclose(pr["pi"].sum(axis=1) + pr["background"], 1.0, rtol=1e-12)


def test_one_type_through_types_is_the_paper_model():
    x, t = hk.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    pp = dict(mu0=0.5, tau_x=1.0, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    k0 = np.zeros(t.size, np.int64)
    got = hk.log_likelihood(x, t, dict(pp, mu0=[0.5], theta=[[0.5]]), types=k0, backend="cpu")
    assert got == pytest.approx(hk.log_likelihood(x, t, pp, exact=True, backend="cpu"), rel=1e-12)


@pytest.mark.parametrize("spatial_kernel", ["gaussian", "power-law"])
@pytest.mark.parametrize("gr", [True, False])
def test_marks_log_likelihood_is_etas(cat, spatial_kernel, gr):
    x, t, m = cat
    p = dict(PE, q=1.8) if spatial_kernel == "power-law" else PE
    got = hk.log_likelihood(x, t, p, marks=m, etas=dict(SET, gutenberg_richter=gr), window=(0.0, 100.0),
                            spatial_kernel=spatial_kernel, backend="cpu")
    assert got == etas.log_likelihood(x, t, m, p, m0=3.0, region=10.0, window=(0.0, 100.0),
                                      spatial_kernel=spatial_kernel, marks=gr, backend="cpu")
    ref = etas_loglik(x, t, m, p, 3.0, np.full(t.size, 0.01), (0.0, 100.0), spatial_kernel, gr)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_marks_probabilities_and_background_density_are_etas(cat):
    x, t, m = cat
    u = np.full(t.size, 0.02)
    got = hk.self_excitation_probabilities(x, t, PE, marks=m, etas={"m0": 3.0, "background": u}, backend="cpu")
    _same(got, etas.probabilities(x, t, m, PE, m0=3.0, background=u, backend="cpu"))
    ll = hk.log_likelihood(x, t, PE, marks=list(m), etas={"background": u}, backend="cpu")
    assert ll == etas.log_likelihood(x, t, m, PE, background=u, backend="cpu")


# ----------------------------------------------------------------------------- mcmc
def test_types_mcmc_is_multitype_mcmc(typed):
    x, t, k = typed
    init = {"omega": 1.5, "h": 0.2}
    got = hk.mcmc(x, t, types=k, n_iter=30, burn_in=10, chains=2, fixed=FIXED, init=init, seed=3, backend="cpu",
                  executor=ThreadPoolExecutor(2))
    ref = multitype.mcmc(x, t, k, tau_x=1.0, tau_t=10.0, n_iter=30, burn_in=10, chains=2, init=init, seed=3,
                         backend="cpu")
    assert isinstance(got, marked_sampler.MarkedPosterior)
    _same(got.draws, ref.draws)
    _same(got.acceptance_rates, ref.acceptance_rates)
    _same(got.extra, ref.extra)
    assert got.fixed == ref.fixed and got.n_draws == 20


def test_marks_mcmc_is_etas_mcmc(cat):
    x, t, m = cat
    kw = dict(n_iter=30, burn_in=10, chains=2, sample=("mu", "A", "alpha", "b"),
              fixed=dict(c=0.01, p=1.2, d=0.02, gamma=0.5), init={"A": 0.25}, seed=5, backend="cpu")
    got = hk.mcmc(x, t, marks=m, etas=SET, window=(0.0, 100.0), **kw)
    ref = etas.mcmc(x, t, m, m0=3.0, region=10.0, window=(0.0, 100.0), **kw)
    _same(got.draws, ref.draws)
    _same(got.acceptance_rates, ref.acceptance_rates)
    _same(got.extra, ref.extra)
    assert set(got.draws) == {"mu", "A", "alpha", "b"}


# ----------------------------------------------------------------------------- the shared chain
def test_adaptive_chain_samples_a_known_gaussian():
    """The chain of marked_sampler.py on N((1, -2), diag(0.5^2, 2^2)): mean and sd within MC error."""
    mean, sd = np.array([1.0, -2.0]), np.array([0.5, 2.0])

    def log_post(z):
        return -0.5 * float(np.sum(((z - mean) / sd) ** 2))

    rng = np.random.default_rng(11)
    kept, acc, acc_joint = marked_sampler.adaptive_chain(log_post, np.zeros(2), 6000, 1000, rng,
                                                         np.array([False, True]))
    assert kept.shape == (5000, 2)
    np.testing.assert_allclose(kept.mean(axis=0), mean, atol=0.15 * sd.max())
    np.testing.assert_allclose(kept.std(axis=0), sd, rtol=0.15)
    assert np.all((acc > 0.2) & (acc < 0.7)) and 0.0 < acc_joint < 1.0


def test_shared_names_are_one_object():
    assert etas.MarkedPosterior is marked_sampler.MarkedPosterior is multitype.MarkedPosterior
    assert multitype.adaptive_chain is marked_sampler.adaptive_chain


def test_chain_seeds_match_a_generator_and_an_int():
    a = [s.entropy for s in marked_sampler.chain_seeds(7, 3)]
    assert a == [7, 7, 7] and [s.spawn_key for s in marked_sampler.chain_seeds(7, 3)] == [(0,), (1,), (2,)]
    g = np.random.default_rng(1)
    root = int(np.random.default_rng(1).integers(2 ** 63))
    assert marked_sampler.chain_seeds(g, 2)[0].entropy == root


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("case", range(15))
def test_bad_data_refused_through_types_and_marks(case):
    """The data checks of tests/test_hawkes_bad_inputs.py give the same errors through types= and marks=."""
    from test_hawkes_bad_inputs import _bad_data
    rng = np.random.default_rng(3)
    good = (rng.uniform(0, 3, (40, 2)), np.sort(rng.uniform(0, 50, 40)))
    name, x, t, exc, match = _bad_data(good)[case]
    k, m = np.arange(40) % 2, np.full(40, 3.0)
    calls = [
        lambda: hk.log_likelihood(x, t, PT, types=k, backend="cpu"),
        lambda: hk.self_excitation_probabilities(x, t, PT, types=k, backend="cpu"),
        lambda: hk.mcmc(x, t, types=k, fixed=FIXED, n_iter=3, burn_in=1, chains=1, backend="cpu"),
        lambda: hk.log_likelihood(x, t, PE, marks=m, backend="cpu"),
        lambda: hk.self_excitation_probabilities(x, t, PE, marks=m, backend="cpu"),
        lambda: hk.mcmc(x, t, marks=m, n_iter=3, burn_in=1, chains=1, backend="cpu"),
    ]
    for call in calls:
        with pytest.raises(exc, match=match):
            call()


def _refusals(typed, cat):
    x, t, k = typed
    xe, te, m = cat
    both = dict(types=k, marks=np.full(t.size, 3.0))
    return [
        (lambda: hk.log_likelihood(x, t, PT, **both), ValueError, "types= and marks= together .* not implemented"),
        (lambda: hk.self_excitation_probabilities(x, t, PT, **both), ValueError, "types= and marks= together"),
        (lambda: hk.mcmc(x, t, fixed=FIXED, **both), ValueError, "types= and marks= together"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, kernel="exp2"), ValueError,
         "kernel='exp2' is not implemented for the multitype model"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, spatial_kernel=("power-law", 2.0)), ValueError,
         "spatial_kernel=.* not implemented for the multitype model"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, dtype=np.float32), ValueError, "dtype=.* not implemented"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, dtype=None), ValueError, "dtype=None is not implemented"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, background=object()), ValueError,
         "background=.* not implemented for the multitype model"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, exact="yes"), TypeError, "exact must be True or False"),
        (lambda: hk.log_likelihood(x, t, PT, types=k, etas=SET), ValueError, "multitype model .* does not have"),
        (lambda: hk.log_likelihood(x, t, PT, etas=SET), ValueError, "it needs marks="),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m, etas={"m_0": 3.0}), ValueError, r"unknown key\(s\) \['m_0'\]"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m, etas=3.0), TypeError, "etas must be a dict"),
        (lambda: hk.self_excitation_probabilities(xe, te, PE, marks=m, etas={"gutenberg_richter": False}), ValueError,
         "unknown key"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m, kernel=("power-law", 1.5)), ValueError,
         "Omori-Utsu law with c and p in params"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m, spatial_kernel=("power-law", 2.0)), ValueError,
         "spatial_kernel must be 'gaussian' or 'power-law'"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m[:-1]), ValueError, "one magnitude per event"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=np.where(m > 3.5, np.nan, m)), ValueError, "marks must be finite"),
        (lambda: hk.log_likelihood(xe, te, PE, marks=m > 3.5), TypeError, "marks must hold real numbers"),
        (lambda: hk.log_likelihood(x, t, PT, types=k.astype(float)), TypeError, "integer type codes"),
        (lambda: hk.log_likelihood(x, t, hk.HawkesParams(mu0=0.5, tau_x=1, tau_t=1, theta=0.5, omega=1, h=1),
                                   types=k), TypeError, "params must be a dict"),
        (lambda: hk.mcmc(x, t, types=k, fixed=FIXED, sampler="nuts"), ValueError,
         "sampler='nuts' is not implemented for the multitype model"),
        (lambda: hk.mcmc(x, t, types=k, fixed=FIXED, priors={"theta": 5.0}), ValueError, "priors=.* not implemented"),
        (lambda: hk.mcmc(x, t, types=k, fixed=FIXED, sample=("h",)), ValueError, "samples all of mu0, theta"),
        (lambda: hk.mcmc(x, t, types=k, fixed={"tau_x": 1.0}), ValueError, "fixed must give exactly"),
        (lambda: hk.mcmc(x, t, types=k, fixed=FIXED, init="mode"), ValueError, "init='mode' .* not implemented"),
        (lambda: hk.mcmc(x, t, types=k, fixed=FIXED, progress=1), TypeError, "progress must be True or False"),
        (lambda: hk.mcmc(xe, te, marks=m, spatial_window=object()), ValueError, "spatial_window=.* not implemented"),
        (lambda: hk.mcmc(xe, te, marks=m, target_accept=0.9), ValueError, "target_accept=0.9 is not implemented"),
        (lambda: hk.mcmc(xe, te, marks=m, sample=("theta",)), ValueError, "sample names unknown parameter"),
        (lambda: hk.simulate(mu=[0.5, 0.3], theta=0.3, omega=1.0, h=0.1, region=2.0, duration=5.0), ValueError,
         "mu as a K-vector and theta as a K x K matrix"),
        (lambda: hk.simulate(mu=[0.5, 0.3], theta=THETA, omega=1.0, h=0.1, region=2.0, duration=5.0, kernel="exp2"),
         ValueError, "kernel='exp2' is not implemented for the multitype model"),
        (lambda: hk.simulate(mu=[0.5, 0.3], theta=THETA, omega=1.0, h=0.1, region=2.0, duration=5.0,
                             spatial_kernel="power-law"), ValueError, "spatial_kernel='power-law' is not implemented"),
        (lambda: hk.simulate(mu=[0.5, 0.3], theta=[[0.9, 0.5], [0.5, 0.9]], omega=1.0, h=0.1, region=2.0,
                             duration=5.0), ValueError, "spectral radius must be < 1"),
        (lambda: hk.simulate(mu=0.5, etas=dict(PE, m0=3.0), region=2.0, duration=5.0), ValueError,
         "mu=0.5 is not implemented for the space-time ETAS .*ETAS's mu goes into etas="),
        (lambda: hk.simulate(etas=dict(PE), region=2.0, duration=5.0), ValueError, r"missing \['m0'\]"),
        (lambda: hk.simulate(etas=dict(PE, m0=3.0, h=1.0), region=2.0, duration=5.0), ValueError,
         r"unknown \['h'\]"),
        (lambda: hk.simulate(etas=dict(PE, m0=3.0), region=2.0, duration=5.0, dim=3), ValueError, "is 2-D"),
        (lambda: hk.simulate(etas=[1.0], region=2.0, duration=5.0), TypeError, "etas must be a dict"),
        (lambda: hk.simulate(etas=dict(PE, m0=3.0), region=2.0, duration=5.0, spatial_kernel=("power-law", 2.0)),
         ValueError, "spatial_kernel must be 'gaussian' or 'power-law'"),
        (lambda: hk.simulate(etas=dict(PE, m0=3.0, A=0.9), region=2.0, duration=5.0), ValueError,
         "branching ratio"),
        (lambda: hk.simulate(mu=[0.5, 0.3], theta=THETA, etas=dict(PE, m0=3.0), region=2.0, duration=5.0),
         ValueError, "together are not implemented"),
        (lambda: hk.simulate(theta=0.5, omega=2.0, h=0.1, region=2.0, duration=5.0), ValueError, "simulate needs mu"),
    ]


@pytest.mark.parametrize("case", range(43))
def test_refusals(typed, cat, case):
    call, exc, match = _refusals(typed, cat)[case]
    with pytest.raises(exc, match=match):
        call()


def test_refusal_cases_are_all_run(typed, cat):
    assert len(_refusals(typed, cat)) == 43
