"""The posterior of a Hawkes fit: :class:`HawkesPosterior`, the draws of :func:`~.sampler.mcmc` with
their tables (ArviZ summary, long frame, JSON, CSV, R's coda), figures and the per-event
self-excitation probabilities."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import numpy as np

from .._validate import check_int, check_random_state
from .excitation import self_excitation, self_excitation_draws
from .kernels import kernel_label, spatial_kernel_label
from .model import PARAM_NAMES, HawkesParams
from .plot import plot_density, plot_trace

__all__ = ["HawkesPosterior"]


class _quiet_arviz:
    """Silence ArviZ's logger (it warns that one chain or few draws cannot be shape-validated)."""

    def __enter__(self):
        import logging

        import arviz

        # ArviZ logs through its own ``Logger("arviz")`` object, not the one logging.getLogger returns
        self._logger = getattr(arviz, "_log", None) or logging.getLogger("arviz")
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)

    def __exit__(self, *exc):
        self._logger.setLevel(self._level)
        return False


@dataclasses.dataclass(repr=False, eq=False)
class HawkesPosterior:
    """Posterior draws of the spatiotemporal Hawkes model from :func:`mcmc`.

    Built by :func:`mcmc` (the constructor's parameters are its attributes).

    Parameters
    ----------
    draws : dict of str -> ndarray, shape (chains, n_iter - burn_in)
        Post burn-in draws of every parameter in natural units (``h``,
        ``tau_x`` in units of ``x``; ``omega`` per unit of ``t``; ``tau_t`` in
        units of ``t``), fixed parameters included (constant rows).
    acceptance_rates : dict of str -> ndarray, shape (chains,)
        Post burn-in Metropolis-Hastings acceptance rate of each sampled parameter.
    sampled : tuple of str
        The sampled parameters.
    fixed : dict
        The fixed parameters and their values.
    init, prior_scales : dict
        Initial values and half-normal prior scales of the sampled parameters.
    n_iter, burn_in : int
        Sweeps per chain and discarded leading sweeps.
    backend : str
        Engine that ran (``"cpu"``, ``"gpu"`` or ``"emulator"``).
    elapsed_seconds : float
        Wall time of the sampling.
    proposal_sd : dict of str -> ndarray, shape (chains,)
        Final adapted proposal standard deviations (on the sampled state scale).
    engine_factory : EngineFactory
        The data (time-sorted) and engine settings the chains ran with; what
        :func:`~hphawkes_py.hawkes.self_excitation` and the forecasts rebuild engines from.
    _debug : list
        Per chain, the moves' incremental and fresh log-likelihoods of ``mcmc(..., _debug=True)``
        (empty lists otherwise).

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> post.draws["theta"].shape  # (chains, kept draws)
    (2, 150)
    >>> post.fixed
    {'tau_x': 0.5, 'tau_t': 5.0}
    >>> type(post.params_mean()).__name__
    'HawkesParams'
    """

    draws: dict
    acceptance_rates: dict
    sampled: tuple
    fixed: dict
    init: dict
    prior_scales: dict
    n_iter: int
    burn_in: int
    backend: str
    elapsed_seconds: float
    proposal_sd: dict
    engine_factory: Any = None
    _debug: list = dataclasses.field(default_factory=list)

    # ---------------------------------------------------------------- basics
    @property
    def kernel(self):
        """The temporal triggering kernel the chains used (``kernel=`` of :func:`mcmc`)."""
        return kernel_label(self.engine_factory.kernel if self.engine_factory is not None else 0.0)

    @property
    def spatial_kernel(self):
        """The spatial triggering kernel the chains used (``spatial_kernel=`` of :func:`mcmc`):
        ``"gaussian"`` or ``("power-law", q)``."""
        return spatial_kernel_label(self.engine_factory.spatial_kernel if self.engine_factory is not None else None)

    @property
    def param_names(self) -> tuple:
        """Every parameter of the fitted model: :data:`PARAM_NAMES` plus the kernel's (``omega2``, ``w``)."""
        return PARAM_NAMES + tuple(n for n in ("omega2", "w") if n in self.draws)

    @property
    def chains(self) -> int:
        """Number of chains."""
        return next(iter(self.draws.values())).shape[0]

    @property
    def n_draws(self) -> int:
        """Kept draws per chain."""
        return next(iter(self.draws.values())).shape[1]

    def __repr__(self) -> str:
        means = ", ".join(f"{n}={self.draws[n].mean():.4g}" for n in self.sampled)
        return (f"HawkesPosterior(chains={self.chains}, draws={self.n_draws}, sampled={list(self.sampled)}, "
                f"fixed={self.fixed}, posterior means: {means}, backend={self.backend!r}"
                + ("" if self.kernel == "exponential" else f", kernel={self.kernel!r}")
                + ("" if self.spatial_kernel == "gaussian" else f", spatial_kernel={self.spatial_kernel!r}") + ")")

    def select_draws(self, n_draws: int, seed: Any = None) -> tuple[np.ndarray, dict]:
        """``n_draws`` posterior draws chosen at random without replacement from all chains (all of
        them when fewer are stored): their sorted flat indices (``chain * n_draws + draw``) and a
        dict name -> float64 values. The one draw-selection rule of every tool built on a posterior."""
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        rng = check_random_state(seed)
        total = self.chains * self.n_draws
        idx = np.arange(total) if n_draws >= total else np.sort(rng.choice(total, size=n_draws, replace=False))
        return idx, {n: np.asarray(self.draws[n], dtype=np.float64).reshape(-1)[idx] for n in self.param_names}

    def params_mean(self) -> HawkesParams:
        """Posterior means as :class:`HawkesParams`."""
        return HawkesParams(**{n: float(self.draws[n].mean()) for n in self.param_names})

    # ---------------------------------------------------------------- tables
    def to_arviz(self):
        """An :class:`arviz.InferenceData` with the draws as its posterior group."""
        import arviz as az

        with _quiet_arviz():
            return az.from_dict(posterior={n: np.asarray(v) for n, v in self.draws.items()})

    def summary(self, hdi_prob: float = 0.95):
        """Posterior table (pandas DataFrame) via ArviZ, one row per sampled parameter.

        Columns: ``mean``, ``sd``, ``hdi_2.5%``, ``hdi_97.5%`` (95% highest
        density interval), ``ess_bulk``, ``r_hat``. Parameters held fixed are not
        in the table (they have no posterior spread, ESS or R-hat); their values are
        :attr:`fixed`.
        """
        import arviz as az

        lo = f"hdi_{100 * (1 - hdi_prob) / 2:g}%"
        hi = f"hdi_{100 * (1 - (1 - hdi_prob) / 2):g}%"
        with _quiet_arviz():
            table = az.summary(self.to_arviz(), var_names=list(self.sampled), hdi_prob=hdi_prob, round_to="none")
        table = table[["mean", "sd", lo, hi, "ess_bulk", "r_hat"]]
        return table.loc[list(self.sampled)]

    def to_frame(self):
        """Long table of draws: columns ``chain``, ``draw`` and one per parameter."""
        import pandas as pd

        c, d = self.chains, self.n_draws
        data = {"chain": np.repeat(np.arange(c), d), "draw": np.tile(np.arange(d), c)}
        data.update({n: self.draws[n].reshape(-1) for n in self.param_names})
        return pd.DataFrame(data)

    def to_dict(self) -> dict:
        """JSON-friendly summary: settings, posterior table, acceptance rates."""
        table = self.summary()
        return {
            "chains": self.chains, "n_iter": self.n_iter, "burn_in": self.burn_in, "draws_per_chain": self.n_draws,
            "sampled": list(self.sampled), "fixed": dict(self.fixed), "init": dict(self.init),
            "prior_scales": {n: (v if math.isfinite(v) else None) for n, v in self.prior_scales.items()},
            "backend": self.backend,
            "kernel": self.kernel if isinstance(self.kernel, str) else list(self.kernel),
            "spatial_kernel": self.spatial_kernel if isinstance(self.spatial_kernel, str) else list(self.spatial_kernel),
            "elapsed_seconds": self.elapsed_seconds,
            "acceptance_rates": {n: v.tolist() for n, v in self.acceptance_rates.items()},
            "summary": {n: {k: (None if not np.isfinite(v) else float(v)) for k, v in row.items()}
                        for n, row in table.iterrows()},
        }

    def to_csv(self, path) -> None:
        """Write the draws (long format, :meth:`to_frame`) to a CSV file."""
        self.to_frame().to_csv(path, index=False)

    def to_json(self, path) -> None:
        """Write :meth:`to_dict` to a JSON file."""
        import json

        with open(path, "w") as fh:
            json.dump(self.to_dict(), fh, indent=2)

    def to_coda(self, include_fixed: bool = False):
        """The draws as an R ``coda::mcmc.list``, one ``mcmc`` per chain (needs rpy2 and R's coda).

        Only the sampled parameters are exported by default: a fixed parameter is a
        constant column, which makes coda's multivariate ``gelman.diag`` fail on a
        singular covariance. ``include_fixed=True`` adds them.
        """
        from ..interop.coda import draws_to_coda

        names = [n for n in self.draws if include_fixed or n in self.sampled]
        return draws_to_coda({n: np.asarray(self.draws[n]) for n in names})

    # ---------------------------------------------------------------- figures
    def plot_trace(self, params: Sequence[str] | None = None, path=None):
        """Trace plots per parameter and chain (matplotlib Figure; saved when ``path`` given)."""
        return plot_trace(self, params=params, path=path)

    def plot_density(self, params: Sequence[str] | None = None, path=None):
        """Posterior density per parameter and chain (matplotlib Figure)."""
        return plot_density(self, params=params, path=path)

    # ---------------------------------------------------------------- pi_n
    def self_excitation(self, n_draws: int = 1000, seed: Any = None, *, executor: Any = None, progress: bool = True,
                        max_values: int = 2**23):
        """Posterior of the self-excitation probability ``pi_n`` of every event: see
        :func:`hphawkes_py.hawkes.self_excitation` (this method calls it)."""
        return self_excitation(self, n_draws=n_draws, seed=seed, executor=executor, progress=progress,
                               max_values=max_values)

    def self_excitation_draws(self, n_draws: int = 100, seed: Any = None, *, executor: Any = None,
                              progress: bool = True, max_values: int = 2**23):
        """``pi_n`` per posterior draw, a ``(draws, N)`` matrix: see
        :func:`hphawkes_py.hawkes.self_excitation_draws` (this method calls it)."""
        return self_excitation_draws(self, n_draws=n_draws, seed=seed, executor=executor, progress=progress,
                                     max_values=max_values)
