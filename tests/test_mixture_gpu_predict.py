"""score_samples on the GPU engine (issue 11 parity): the posterior-predictive and plug-in densities
evaluated by the CUDA density kernel equal the host's evaluation; far rows keep the host's scaled form."""
from __future__ import annotations

import numpy as np
import pytest

import hphawkes_py as hp
from tests.engines import CUDA_ENGINES


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("method", ["gibbs", "bem"])
def test_score_samples_on_the_cuda_engine_equal_the_host(backend, method):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (150, 3)), rng.normal(4, 0.5, (150, 3))]
    fit = hp.mixture.TDPGaussianMixture(6, method=method, n_iter=30, burn_in=10, seed=1, progress=False,
                                        backend=backend).fit(X)
    Q = np.r_[rng.normal(2, 3, (40, 3)), [[1e200, 1e200, 1e200]], [[5e4, 0.0, 0.0]]]
    for est in (("predictive", "plugin") if method == "gibbs" else ("plugin",)):
        got = fit.score_samples(Q, est)
        mix = fit._mixture(est)
        host = mix.log_density(fit._standardise(Q)) - float(np.log(fit.scale_).sum())
        np.testing.assert_allclose(got[:40], host[:40], rtol=1e-12)
        np.testing.assert_array_equal(got[40:], host[40:])  # far rows: the host's scaled evaluation
        assert np.isfinite(got[:40]).all()
        # and the density is a density: the predictive puts more mass near the data than far from it
        assert got[:40].max() > got[41]


@pytest.mark.parametrize("backend", CUDA_ENGINES)
@pytest.mark.parametrize("method", ["gibbs", "bem"])
def test_predict_proba_on_the_cuda_engine_equals_the_host(backend, method):
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 1, (150, 2)), rng.normal(3, 0.6, (150, 2))]
    fit = hp.mixture.TDPGaussianMixture(5, method=method, n_iter=25, burn_in=10, seed=2, progress=False,
                                        backend=backend).fit(X)
    Q = np.r_[rng.normal(1.5, 2.5, (60, 2)), [[1e200, -1e200]], [[4e4, 1.0]]]
    for est in (("predictive", "plugin") if method == "gibbs" else ("plugin",)):
        got = fit.predict_proba(Q, est)
        host = fit._mixture(est).proba(fit._standardise(Q))
        np.testing.assert_allclose(got[:60], host[:60], rtol=1e-10, atol=1e-13)
        np.testing.assert_array_equal(got[60:], host[60:])  # far rows: the host's scaled evaluation
        np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-12)
        # the probabilities separate the two groups (not a constant answer)
        centres = fit.predict_proba(np.array([[0.0, 0.0], [3.0, 3.0]]), est)
        assert centres[0].argmax() != centres[1].argmax()
    if method == "gibbs":
        # the predictive differs from the plug-in (draws are averaged, not the parameters)
        assert not np.allclose(fit.predict_proba(Q[:60], "predictive"), fit.predict_proba(Q[:60], "plugin"))
