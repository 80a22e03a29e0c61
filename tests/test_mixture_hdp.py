"""HDP mixture across samples (issue 32): dpmix's conditionals and MH steps against references,
truth recovery (shared and sample-specific components), reproducibility, engines, bad input."""
from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import hphawkes_py as hp
from hphawkes_py.mixture.hdp import HDPGaussianMixture
from hphawkes_py.mixture.hdp_gibbs import (
    HDPState, _mh_sticks, _stick_terms, beta_and_tail, draw_group_sticks, mh_alpha0, tune_scales,
)

CENTRES = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
TRUE_W = np.array([[0.5, 0.5, 0.0], [0.7, 0.3, 0.0], [0.4, 0.3, 0.3]])  # component 2: sample 2 only


def _samples(seed=0, n=300):
    """One sample per row of TRUE_W, its rows drawn from the components in exactly those proportions."""
    rng = np.random.default_rng(seed)
    out = []
    for w in TRUE_W:
        z = rng.permutation(np.repeat(np.arange(3), np.round(w * n).astype(int)))
        out.append(CENTRES[z] + rng.normal(scale=0.5, size=(z.size, 2)))
    return out


def _match(means):
    """Index of the fitted component nearest each true centre."""
    return np.array([int(np.argmin(((means - c) ** 2).sum(1))) for c in CENTRES])


# ----------------------------------------------------------------------------- conditionals and MH steps
def _dpmix_beta_post(sticks, v, alpha0, alpha):
    """dpmix's Python ``beta_post`` (hdp.py), with its 1 - cumsum(beta) tail, over all groups."""
    beta = np.append(sticks * np.concatenate([[1.0], np.cumprod(1 - sticks)[:-1]]), np.prod(1 - sticks))
    a, b = alpha0 * beta[:-1], alpha0 * (1 - beta[:-1].cumsum())
    return np.sum(stats.beta.logpdf(v, a, b)) + np.sum(stats.beta.logpdf(sticks, 1, alpha))


def test_stick_likelihood_equals_dpmix_beta_post():
    rng = np.random.default_rng(3)
    sticks = rng.uniform(0.05, 0.6, size=6)
    v = rng.uniform(0.01, 0.9, size=(4, 6))
    alpha0, alpha = 2.5, 1.7
    out = np.empty(6)
    _stick_terms(sticks, np.log(v).sum(0), np.log1p(-v).sum(0), 4, alpha0, 0, out)
    ours = out.sum() + np.sum(np.log(alpha) + (alpha - 1) * np.log1p(-sticks))
    assert ours == pytest.approx(_dpmix_beta_post(sticks, v, alpha0, alpha), rel=1e-12)


def test_beta_and_tail_sum_to_one():
    sticks = np.array([0.3, 0.5, 0.2])
    beta, tail = beta_and_tail(sticks)
    np.testing.assert_allclose(beta, [0.3, 0.35, 0.07, 0.28], rtol=1e-14)
    np.testing.assert_allclose(tail, 1 - np.cumsum(beta)[:-1], rtol=1e-14)


def _run_mh_sticks(sticks, v, alpha0, alpha, scale, n, seed):
    rng = np.random.default_rng(seed)
    J = v.shape[0]
    slv, sl1 = np.log(v).sum(0), np.log1p(-v).sum(0)
    acc = np.zeros(sticks.size + 1)
    sc = np.full(sticks.size + 1, scale)
    out = np.empty((n, sticks.size))
    for i in range(n):
        _mh_sticks(sticks, slv, sl1, J, alpha0, alpha, rng.standard_normal(sticks.size),
                   rng.exponential(size=sticks.size), sc, acc, 1e-9, 1 - 1e-9)
        out[i] = sticks
    return out


def test_stick_mh_without_groups_samples_the_gem_prior():
    # no group sticks: the target of each s_k is its prior Be(1, alpha)
    draws = _run_mh_sticks(np.full(3, 0.5), np.empty((0, 3)), 1.0, 2.0, 0.3, 20000, 0)
    assert draws.mean() == pytest.approx(1 / 3, abs=0.01)
    assert draws.var() == pytest.approx(2 / (9 * 4), rel=0.06)


def test_stick_mh_targets_the_posterior_of_beta_given_group_sticks():
    # K = 2: p(s | v) ~ prod_j Be(v_j | alpha0 s, alpha0 (1 - s)) Be(s | 1, alpha), by quadrature
    v, alpha0, alpha = np.array([[0.2], [0.35], [0.15]]), 4.0, 1.5

    def dens(s):
        return np.exp(stats.beta.logpdf(v[:, 0], alpha0 * s, alpha0 * (1 - s)).sum() + stats.beta.logpdf(s, 1, alpha))

    z = integrate.quad(dens, 0, 1)[0]
    mean = integrate.quad(lambda s: s * dens(s), 0, 1)[0] / z
    draws = _run_mh_sticks(np.array([0.5]), v, alpha0, alpha, 0.15, 30000, 1)[2000:]
    assert draws.mean() == pytest.approx(mean, abs=0.01)


def test_alpha0_mh_without_groups_samples_its_gamma_prior():
    rng = np.random.default_rng(2)
    state = HDPState(None, None, None, np.empty((0, 3)), np.empty((0, 3)), np.full(3, 0.3), 1.0, 1.0,
                     np.full(4, 2.0), np.zeros(4))
    draws = np.empty(40000)
    for i in range(draws.size):
        state.alpha0 = mh_alpha0(rng, state, 2.0, 1.0)
        draws[i] = state.alpha0
    assert draws.mean() == pytest.approx(2.0, abs=0.06)
    np.testing.assert_allclose(np.quantile(draws, [0.1, 0.5, 0.9]), stats.gamma(2.0).ppf([0.1, 0.5, 0.9]),
                               rtol=0.05)


def test_group_sticks_are_dirichlet_draws():
    # pi_j | N_j ~ Dirichlet(alpha0 beta + N_j): mean and variance of every component
    rng = np.random.default_rng(4)
    sticks, alpha0 = np.array([0.4, 0.3, 0.5]), 3.0
    N = np.tile([5.0, 0.0, 2.0, 1.0], (40000, 1))
    _, _, log_pi = draw_group_sticks(rng, N, sticks, alpha0)
    a = alpha0 * beta_and_tail(sticks)[0] + N[0]
    m = a / a.sum()
    np.testing.assert_allclose(np.exp(log_pi).mean(0), m, atol=0.004)
    np.testing.assert_allclose(np.exp(log_pi).var(0), m * (1 - m) / (a.sum() + 1), rtol=0.05)


def test_tune_scales_follows_dpmix_table():
    scale = np.ones(7)
    acc = np.array([0.0, 3.0, 10.0, 40.0, 60.0, 80.0, 99.0])
    tune_scales(scale, acc, 100)
    np.testing.assert_allclose(scale ** 2, [0.1, 0.5, 0.9, 1.0, 1.1, 2.0, 10.0])
    assert not acc.any()


# ----------------------------------------------------------------------------- the fit
@pytest.fixture(scope="module")
def gibbs_fit():
    return HDPGaussianMixture(6, n_iter=150, burn_in=150, seed=3, progress=False, backend="cpu").fit(_samples())


def test_gibbs_recovers_shared_and_sample_specific_components(gibbs_fit):
    m = gibbs_fit
    idx = _match(m.means_)
    assert len(set(idx)) == 3
    np.testing.assert_allclose(m.means_[idx], CENTRES, atol=0.15)
    W = m.group_weights_[:, idx]
    np.testing.assert_allclose(W, TRUE_W, atol=0.04)
    assert (W[:2, 2] < 0.02).all()  # the specific component is (nearly) absent from samples 0 and 1
    lo, hi = m.group_weight_intervals(0.95)
    assert ((lo[:, idx] <= TRUE_W + 1e-3) & (TRUE_W <= hi[:, idx])).all()  # a true 0 is not inside (0, 1)
    assert (hi[:, idx][:2, 2] < 0.03).all()
    assert (lo[:, idx][2, 2] > 0.2)
    assert m.draws_["group_weights"].shape == (150, 3, 6)
    np.testing.assert_allclose(m.draws_["group_weights"].sum(2), 1.0, rtol=1e-12)
    np.testing.assert_allclose(m.weights_, m.group_weights_.mean(0), rtol=1e-12)  # equal sample sizes
    assert (m.acceptance_rates_ > 0).all() and (m.acceptance_rates_ <= 1).all()


def test_predictions_use_the_sample_weights(gibbs_fit):
    m = gibbs_fit
    idx = _match(m.means_)
    x = np.array([[0.0, 4.0], [2.0, 2.0]])
    # the point at the specific component: assigned to it in sample 2, whose weights hold it
    assert m.predict(x[:1], group=2).tolist() == [idx[2]]
    # plug-in density is sum_k pi_gk N(x | mu_k, Sigma_k), original units
    for g in range(3):
        ref = np.log(sum(m.group_weights_[g, k] * stats.multivariate_normal(m.means_[k], m.covariances_[k]).pdf(x)
                         for k in range(6)))
        np.testing.assert_allclose(m.score_samples(x, group=g, estimate="plugin"), ref, rtol=1e-9)
    # the sample with the specific component gives its region more density
    assert m.score_samples(x[:1], group=2)[0] > m.score_samples(x[:1], group=0)[0] + 2
    P = m.predict_proba(x, group=1)
    np.testing.assert_allclose(P.sum(1), 1.0, rtol=1e-12)


def test_bem_recovers_the_truth_and_warm_starts_gibbs():
    S = _samples()
    bem = HDPGaussianMixture(6, method="bem", n_iter=300, seed=3, progress=False, backend="cpu").fit(S)
    idx = _match(bem.means_)
    np.testing.assert_allclose(bem.means_[idx], CENTRES, atol=0.15)
    np.testing.assert_allclose(bem.group_weights_[:, idx], TRUE_W, atol=0.04)
    assert bem.draws_ is None and bem.converged_
    with pytest.raises(ValueError, match="needs posterior draws"):
        bem.group_weight_intervals()
    warm = HDPGaussianMixture(6, n_iter=5, burn_in=0, warm_start=True, warm_start_iter=300, seed=3, progress=False,
                              backend="cpu").fit(S)
    # the chain starts at BEM's fixed point: its first sweep is already as good as a converged fit
    assert warm.loglik_trace_[0] > bem.loglik_trace_[-1] - 20
    cold = HDPGaussianMixture(6, n_iter=5, burn_in=0, seed=3, progress=False, backend="cpu").fit(S)
    assert cold.loglik_trace_[0] < bem.loglik_trace_[-1] - 100


def test_same_seed_gives_the_same_bits_for_any_thread_count():
    S = _samples(1, 120)
    fits = [HDPGaussianMixture(4, n_iter=20, burn_in=10, tune_interval=5, seed=7, progress=False, backend="cpu",
                               threads=t, chunk_size=32).fit(S) for t in (1, 2, 1)]
    for f in fits[1:]:
        for key in fits[0].draws_:
            np.testing.assert_array_equal(f.draws_[key], fits[0].draws_[key])
        np.testing.assert_array_equal(f.loglik_trace_, fits[0].loglik_trace_)
    other = HDPGaussianMixture(4, n_iter=20, burn_in=10, tune_interval=5, seed=8, progress=False,
                               backend="cpu").fit(S)
    assert not np.array_equal(other.draws_["group_weights"], fits[0].draws_["group_weights"])


def test_chains_are_pooled_and_reproducible():
    S = _samples(2, 80)
    a, b = (HDPGaussianMixture(4, n_iter=10, burn_in=5, chains=2, seed=5, progress=False, backend="cpu").fit(S)
            for _ in range(2))
    assert a.draws_["group_weights"].shape == (20, 3, 4)
    assert a.loglik_trace_.shape == (2, 15)
    np.testing.assert_array_equal(a.draws_["means"], b.draws_["means"])
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as ex:
        c = HDPGaussianMixture(4, n_iter=10, burn_in=5, chains=2, seed=5, progress=False, backend="cpu",
                               executor=ex).fit(S)
    np.testing.assert_array_equal(a.draws_["group_weights"], c.draws_["group_weights"])


def test_emulator_engine_gives_the_cpu_chain():
    S = [s[:40] for s in _samples(4, 40)]
    fits = [HDPGaussianMixture(3, n_iter=3, burn_in=1, seed=2, progress=False, backend=b, relabel=False).fit(S)
            for b in ("cpu", "emulator")]
    for g in range(3):
        np.testing.assert_array_equal(fits[0].labels_[g], fits[1].labels_[g])
    np.testing.assert_allclose(fits[0].draws_["means"], fits[1].draws_["means"], rtol=1e-9, atol=1e-9)
    assert fits[1].backend_ == "emulator"


def test_dataframes_keep_their_names():
    S = [pd.DataFrame(s, columns=["CD4", "CD8"]) for s in _samples(5, 60)]
    m = HDPGaussianMixture(3, method="bem", n_iter=30, seed=0, progress=False, backend="cpu").fit(S)
    assert list(m.feature_names_in_) == ["CD4", "CD8"]
    with pytest.raises(ValueError, match="another order"):
        m.predict(S[0][["CD8", "CD4"]], group=0)
    np.testing.assert_array_equal(m.predict(S[0], group=0), m.predict(S[0].to_numpy(), group=0))


def test_docstring_example_runs(monkeypatch):
    monkeypatch.setattr(hp.mixture, "HDPGaussianMixture", HDPGaussianMixture, raising=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in doctest.DocTestFinder(recurse=False).find(HDPGaussianMixture, globs={"np": np, "hp": hp}):
        runner.run(t)
    assert runner.summarize(verbose=False).failed == 0


# ----------------------------------------------------------------------------- bad input
_GOOD = [np.arange(20.0).reshape(10, 2) % 7, (np.arange(20.0).reshape(10, 2) * 3) % 5]


@pytest.mark.parametrize("samples, exc, msg", [
    (np.ones((10, 2)), TypeError, r"list of 2-D arrays.*wrap a single sample as \[X\]"),
    (pd.DataFrame(np.ones((4, 2))), TypeError, r"wrap a single sample"),
    ({"a": np.ones((4, 2))}, TypeError, "list of 2-D arrays"),
    ([], ValueError, "at least one sample"),
    ([_GOOD[0], None], TypeError, r"samples\[1\] must be a 2-D array"),
    ([_GOOD[0], np.ones(5)], ValueError, r"samples\[1\] must be 2-dimensional"),
    ([_GOOD[0], np.ones((3, 3))], ValueError, r"samples\[1\] has 3 columns but samples\[0\] has 2"),
    ([_GOOD[0], np.empty((0, 2))], ValueError, r"samples\[1\] has no rows"),
    ([_GOOD[0], np.array([[1.0, np.nan]])], ValueError, r"samples\[1\] must be finite"),
    ([_GOOD[0], np.array([["a", "b"]])], TypeError, r"samples\[1\] must be an array of numbers"),
    ([_GOOD[0], np.ones((3, 2), dtype=complex)], TypeError, r"samples\[1\] must be an array of numbers"),
    ([pd.DataFrame(_GOOD[0], columns=["a", "b"]), _GOOD[1]], ValueError, r"samples \[0\] are DataFrames"),
    ([pd.DataFrame(_GOOD[0], columns=["a", "b"]), pd.DataFrame(_GOOD[1], columns=["b", "a"])], ValueError,
     "another order"),
    ([np.ones((1, 2))], ValueError, "at least 2"),
    ([np.ones((5, 2)), np.ones((5, 2))], ValueError, r"constant \(zero-variance\) column"),
])
def test_bad_samples_are_refused(samples, exc, msg):
    with pytest.raises(exc, match=msg):
        HDPGaussianMixture(3, n_iter=2, burn_in=0, progress=False, backend="cpu").fit(samples)


@pytest.mark.parametrize("kw, exc, msg", [
    ({"n_components": 1}, ValueError, "n_components must be >= 2"),
    ({"method": "vb"}, ValueError, "method must be one of"),
    ({"alpha0_prior": (0.1,)}, ValueError, r"alpha0_prior must be a pair \(g0, h0\)"),
    ({"alpha0_prior": (0.1, -1.0)}, ValueError, r"alpha0_prior\[1\] \(gamma rate\) must be > 0"),
    ({"tune_interval": 0}, ValueError, "tune_interval must be >= 1"),
    ({"method": "bem", "warm_start": True}, ValueError, "warm_start=True .* needs method='gibbs'"),
    ({"warm_start": "yes"}, TypeError, "warm_start must be True or False"),
    ({"method": "bem", "chains": 2}, ValueError, "chains=2 needs method='gibbs'"),
    ({"thin": 5, "n_iter": 2}, ValueError, "thin=5 exceeds n_iter=2"),
])
def test_bad_settings_are_refused(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        HDPGaussianMixture(**{"n_components": 3, **kw})


def test_bad_group_and_level_are_refused(gibbs_fit):
    m = gibbs_fit
    x = np.zeros((1, 2))
    with pytest.raises(ValueError, match=r"group must be the index of a sample of the fit, 0..2 .*got 3"):
        m.predict(x, group=3)
    with pytest.raises(ValueError, match="got -1"):
        m.score_samples(x, group=-1)
    for bad in (True, 1.0, "0", None):
        with pytest.raises(TypeError, match="group must be a sample index"):
            m.predict_proba(x, group=bad)
    with pytest.raises(ValueError, match="X must have 2 columns"):
        m.predict(np.zeros((1, 3)), group=0)
    for level in (0.0, 1.0, 1.5, True):
        with pytest.raises(ValueError, match="level must be a probability in"):
            m.group_weight_intervals(level)
    with pytest.raises(RuntimeError, match="not fitted"):
        HDPGaussianMixture(3).predict(x, group=0)


def test_clusters_merge_split_components_and_carry_intervals():
    # a population split over two components in the fit is one cluster; its per-sample proportion
    # is the sum, with an interval from the per-draw sums
    S = _samples(6)
    m = HDPGaussianMixture(10, n_iter=100, burn_in=100, seed=0, progress=False, backend="cpu").fit(S)
    assert m.n_clusters_ == 3
    cidx = np.array([int(np.argmin(((m.cluster_means_ - c) ** 2).sum(1))) for c in CENTRES])
    np.testing.assert_allclose(m.cluster_means_[cidx], CENTRES, atol=0.15)
    np.testing.assert_allclose(m.group_cluster_weights_[:, cidx], TRUE_W, atol=0.04)
    lo, hi = m.group_weight_intervals(0.95, by="cluster")
    assert ((lo[:, cidx] <= TRUE_W + 1e-3) & (TRUE_W <= hi[:, cidx])).all()
    assert (hi - lo).max() < 0.15
    lo_c, hi_c = m.group_weight_intervals(0.95)
    assert (hi_c - lo_c).max() > 0.15  # this fit does split a population: its components' intervals are wide
    np.testing.assert_allclose(lo.sum(1) <= 1.0, True)
    x = np.array([[0.0, 4.0], [4.0, 0.0]])
    assert m.predict_cluster(x, group=2).tolist() == [cidx[2], cidx[1]]
    with pytest.raises(ValueError, match="by must be one of"):
        m.group_weight_intervals(0.9, by="sample")


def test_sweep_gives_the_mh_steps_the_sticks_of_every_group(monkeypatch):
    # dpmix's Cython beta_post loops over range(J - 1); here beta and alpha0 see all J groups
    import hphawkes_py.mixture.hdp_gibbs as G
    from hphawkes_py.mixture._math import Priors
    from hphawkes_py.mixture.engine import make_engine

    S = [s[:30] for s in _samples(7, 30)]
    rng = np.random.default_rng(0)
    state = G.initial_hdp_state(np.concatenate(S), 3, 4, rng, "random")
    seen = {}
    real_mh, real_ll = G._mh_sticks, G._group_stick_loglik

    def spy_mh(sticks, slv, sl1, J, *rest):
        seen["mh"] = (slv.copy(), sl1.copy(), J)
        return real_mh(sticks, slv, sl1, J, *rest)

    def spy_ll(sticks, slv, sl1, J, a0):
        seen["alpha0"] = (slv.copy(), J)
        return real_ll(sticks, slv, sl1, J, a0)

    monkeypatch.setattr(G, "_mh_sticks", spy_mh)
    monkeypatch.setattr(G, "_group_stick_loglik", spy_ll)
    engines = [make_engine(s, backend="cpu") for s in S]
    priors = G.HDPPriors(Priors(np.zeros(2), 10.0, 1.0, np.eye(2), 5.0, 0.1), 0.1, 0.1)
    state = G.hdp_sweep(engines, rng, state, priors)
    assert seen["mh"][2] == 3 and seen["alpha0"][1] == 3
    np.testing.assert_array_equal(seen["mh"][0], state.log_v.sum(0))
    np.testing.assert_array_equal(seen["mh"][1], state.log_1mv.sum(0))
    np.testing.assert_array_equal(seen["alpha0"][0], state.log_v.sum(0))
    assert state.N.shape == (3, 4) and state.N.sum(1).tolist() == [30, 30, 30]


def test_to_frame_lists_every_sample_and_cluster(gibbs_fit):
    m = gibbs_fit
    df = m.to_frame(0.9)
    assert len(df) == 3 * m.n_clusters_
    np.testing.assert_array_equal(df["proportion"].to_numpy().reshape(3, -1), m.group_cluster_weights_)
    lo, hi = m.group_weight_intervals(0.9, by="cluster")
    np.testing.assert_array_equal(df["upper"].to_numpy().reshape(3, -1), hi)
    np.testing.assert_array_equal(df["mean_x1"].to_numpy()[: m.n_clusters_], m.cluster_means_[:, 1])
    dc = m.to_frame(by="component")
    assert len(dc) == 18 and "component" in dc


def test_memory_is_checked_before_the_fit(monkeypatch):
    import hphawkes_py.mixture.hdp as H

    monkeypatch.setattr(H, "_physical_memory", lambda: 1e6)
    with pytest.raises(MemoryError, match=r"n_components=50 with 3 samples.*GiB of memory"):
        HDPGaussianMixture(50, n_iter=1000, progress=False, backend="cpu").fit(_samples(0, 30))


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.2])
def test_to_frame_checks_level_after_bem_too(level):
    # BEM has no intervals, but a level outside (0, 1) is still a mistake to report
    S = _samples(seed=4, n=60)
    m = HDPGaussianMixture(3, method="bem", n_iter=10, seed=0, progress=False, backend="cpu").fit(S)
    with pytest.raises(ValueError, match="level"):
        m.to_frame(level=level)
