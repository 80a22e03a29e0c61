"""Spatiotemporal Hawkes processes (Holbrook, Loeffler, Flaxman & Suchard 2021).

Model, for locations ``x_n`` in R^D (D = 1, 2 or 3; km in the examples) and times
``t_n`` (hours)::

    lambda_n = mu0 * sum_m phi_D(x_n - x_m; tau_x) phi_1(t_n - t_m; tau_t)
             + theta * omega * sum_{m: t_m < t_n} exp(-omega (t_n - t_m)) phi_D(x_n - x_m; h)
    log L    = sum_n log lambda_n - Lambda

Public API
----------
HawkesParams
    Frozen parameters ``(mu0, tau_x, tau_t, theta, omega, h)``, all > 0 (plus ``omega2``, ``w`` for
    ``kernel="exp2"``).
log_likelihood(x, t, params, *, exact=False, window=None, dtype, backend, threads, kernel="exponential")
    ``kernel``: the temporal trigger, ``"exponential"``, the power law ``("power-law", p)`` (Omori-Utsu)
    or ``"exp2"``, the sum of two exponentials ``w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt)``
    (``omega2`` in 1/units of t, ``w`` in [0, 1]: two more parameters, sampled by ``mcmc`` by default);
    also on ``self_excitation_probabilities``, ``simulate``, ``mcmc``, ``posterior_mode`` and the tools below.
    ``spatial_kernel``: the spatial trigger, ``"gaussian"`` (the paper's phi_D(.; h), default) or the
    isotropic power law ``("power-law", q)``, density ``Gamma(q) / (Gamma(q - D/2) pi^(D/2) h^D)
    (1 + r^2/h^2)^(-q)`` with q > D/2 (``(q - 1) / (pi h^2) (1 + r^2/h^2)^(-q)`` in 2-D), ``h`` its scale
    (units of x); on the same functions (the tools default to the posterior's; not with
    ``spatial_window``).
self_excitation_probabilities(x, t, params, ...)
    ``pi_n``, the probability that event n was triggered by an earlier event.
simulate(*, mu, theta, omega, h, region, duration, dim=2, seed)
    Branching simulation.
mcmc(x, t, *, n_iter=10_000, burn_in=1_000, chains=4, sample=..., fixed=..., ...)
    Adaptive Metropolis-Hastings (the paper's Algorithm 1) -> :class:`HawkesPosterior`.
types= and marks= on log_likelihood, self_excitation_probabilities and mcmc
    ``types=k`` (integer codes 0..K-1, ``params`` with a K-vector ``mu0`` and a K x K ``theta``) hands
    over to ``multitype``; ``marks=m`` (magnitudes; ETAS settings in ``etas={"m0": ..., "region": ...}``)
    to ``etas``: the same results as calling them, arguments the model lacks refused. ``simulate``
    simulates types for a K-vector ``mu`` and a K x K ``theta``, and ETAS with ``etas=`` (its parameters
    and ``m0``).
mcmc_latent(x, t, *, location_region=("box", half_width), random_rates="trigger", ...)
    Latent true locations of coarsened events and per-event log-rates, sampled with the parameters
    -> :class:`LatentPosterior`; ``latent_gradient`` gives their gradients.
etas.simulate / etas.log_likelihood / etas.mcmc / etas.probabilities
    Space-time ETAS with magnitudes (marks): productivity ``A exp(alpha (m - m0))``, Omori delays,
    spatial scale ``d exp(gamma (m - m0))``, Gutenberg-Richter magnitudes (Zhuang et al. 2002).
multitype.simulate / multitype.log_likelihood / multitype.mcmc / multitype.probabilities
    K event types with a K x K excitation matrix ``theta`` (which type triggers which).
posterior_mode(x, t, *, sample=..., fixed=..., ...)
    Maximum of the same posterior (Nelder-Mead), e.g. to start chains.
self_excitation(posterior, n_draws=1000, seed=None, *, executor=None, progress=True)
    Posterior mean, sd and 95% interval of ``pi_n`` per event.
self_excitation_draws(posterior, n_draws=100, seed=None, ...)
    ``pi_n`` per posterior draw, a (draws, N) matrix (e.g. for :func:`hphawkes_py.scan.declustered`).
residuals(posterior_or_params, x, t, ...)
    Time-rescaled residuals (Ogata) and a KS uniformity test -> :class:`HawkesResiduals`.
super_thinned_residuals(posterior_or_params, x, t, region, ...)
    Spatial residuals by super-thinning (Clements et al. 2012) and a chi-square uniformity test.
forecast_intensity(posterior, x, t, times, grid, ...)
    Posterior mean and quantiles of the conditional intensity on a grid -> :class:`HawkesForecast`.
forecast_score(posterior_or_params, x, t, *, origin, horizon, ...)
    Out-of-sample log score of the events in (origin, origin + horizon] given the history, against a
    background-only model and a homogeneous Poisson process -> :class:`HawkesForecastScore`.
posterior_predictive(posterior, x, t, ...)
    Simulations from posterior draws against the data: counts, inter-event times, K(r, u).

``x, t`` may come in any order: results come back in the caller's order.
"""
from __future__ import annotations

from . import etas, multitype
from .excitation import self_excitation, self_excitation_draws
from .forecast import HawkesForecast, forecast_intensity
from .gradient import log_likelihood_gradient
from .latent import LatentPosterior, latent_gradient, mcmc_latent
from .kernels import KERNEL_PARAMS, KERNELS, SPATIAL_KERNELS
from .model import PARAM_NAMES, PARAM_RANGE, HawkesParams, log_likelihood, self_excitation_probabilities
from .nuts import mcmc_nuts
from .posterior import HawkesPosterior
from .predictive import PosteriorPredictive, posterior_predictive
from .residual_analysis import HawkesResiduals, residuals
from .mode import DEFAULT_INIT, DEFAULT_PRIOR_SCALES, posterior_mode
from .sampler import mcmc
from .scoring import HawkesForecastScore, forecast_score
from .simulation import simulate
from .superthin import SuperThinnedResiduals, super_thinned_residuals

__all__ = [
    "HawkesParams",
    "HawkesPosterior",
    "log_likelihood",
    "log_likelihood_gradient",
    "self_excitation_probabilities",
    "simulate",
    "mcmc",
    "mcmc_nuts",
    "mcmc_latent",
    "latent_gradient",
    "LatentPosterior",
    "posterior_mode",
    "self_excitation",
    "self_excitation_draws",
    "residuals",
    "HawkesResiduals",
    "super_thinned_residuals",
    "SuperThinnedResiduals",
    "forecast_intensity",
    "HawkesForecast",
    "forecast_score",
    "HawkesForecastScore",
    "posterior_predictive",
    "PosteriorPredictive",
    "PARAM_NAMES",
    "PARAM_RANGE",
    "KERNELS",
    "KERNEL_PARAMS",
    "SPATIAL_KERNELS",
    "DEFAULT_PRIOR_SCALES",
    "DEFAULT_INIT",
]
