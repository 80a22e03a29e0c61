"""Posterior self-excitation probabilities ``pi_n`` over the draws of a :class:`~.mcmc.HawkesPosterior`.

``pi_n = theta G_n / (mu0 S_n + theta G_n)`` is the probability that event ``n`` was triggered
by an earlier event. :func:`self_excitation` evaluates it for a random subset of posterior draws
and summarises it per event. The draws are split into batches of at most ``max_values`` values
(``draws x events``) each; a batch rebuilds its engine from the posterior's
:class:`~.engine.EngineFactory` and may run on any executor. The batches do not depend on the
executor, so neither do the results.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from .._parallel import run_replicates
from .._progress import progress_bar
from .._validate import check_bool, check_int, check_random_state
from .model import rate_kwargs

__all__ = ["self_excitation", "self_excitation_draws"]

#: largest (draws x events) matrix :func:`self_excitation_draws` returns (2**27 values, 1 GiB in float64)
MAX_DRAW_VALUES = 2**27

_WAVE = 4  # batches in flight on an executor when the values are spilled to disk


def _pi_batch(batch: dict, seed_seq, factory) -> np.ndarray:
    """pi_n (sorted order, float64) for the draws of one batch, on an engine built from ``factory``."""
    eng = factory.build()
    m = len(batch["h"])
    out = np.empty((m, factory.data.n))
    background = None
    for k in range(m):
        bg = (batch["tau_x"][k], batch["tau_t"][k])
        if bg != background:  # fixed bandwidths: computed once per batch
            eng.set_background(*bg)
            background = bg
        eng.set_trigger(batch["h"][k], batch["omega"][k], slot=0,
                        **rate_kwargs({n: batch[n][k] for n in ("omega2", "w") if n in batch}))
        out[k] = np.asarray(eng.self_excitation(batch["mu0"][k], batch["theta"][k], slot=0), dtype=np.float64)
    return out


def _check_draw_args(posterior, n_draws, max_values, progress, seed):
    """The arguments every per-draw summary of a posterior shares, checked before any work:
    ``(engine factory, n_draws, max_values, progress, rng)``."""
    factory = getattr(posterior, "engine_factory", None)
    if factory is None:
        raise TypeError(f"posterior must be a HawkesPosterior from hphawkes_py.hawkes.mcmc, got "
                        f"{type(posterior).__name__}")
    return (factory, check_int(n_draws, "n_draws", minimum=1), check_int(max_values, "max_values", minimum=1),
            check_bool(progress, "progress"), check_random_state(seed))


def self_excitation(posterior, n_draws: int = 1000, seed: Any = None, *, executor: Any = None,
                    progress: bool = True, max_values: int = 2**23):
    """Posterior of the self-excitation probability ``pi_n`` of every event.

    ``pi_n`` is computed for ``n_draws`` posterior draws chosen at random without replacement
    from all chains (all draws when there are fewer), on the engine the chains ran on.

    Parameters
    ----------
    posterior : HawkesPosterior
        The result of :func:`~hphawkes_py.hawkes.mcmc`.
    n_draws : int
        Posterior draws used (>= 1).
    seed : None, int, SeedSequence or Generator
        Chooses the draws.
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where the batches of draws run (see the module notes); the result does not depend on it.
    progress : bool
        Progress bar (batches finished) on stderr.
    max_values : int
        Memory bound, in values: a batch holds at most ``max_values`` pi values (default 8.4
        million, 64 MB; with an executor and spilling, up to 4 batches are in flight). Per-event mean and sd are accumulated in one pass (Welford, float64).
        Exact 2.5% and 97.5% quantiles need every value of every event; when
        ``n_draws * N <= max_values`` they are kept in memory in float64, otherwise each
        draw's ``pi`` vector is spilled to a temporary float32 file (relative error 6e-8)
        which is then read back in blocks of events.

    Returns
    -------
    pandas.DataFrame
        One row per event in the caller's input order: ``mean``, ``sd`` (ddof=1), ``q2.5``,
        ``q97.5``. ``df.attrs["draw_indices"]`` holds the flat indices
        (``chain * n_draws + draw``) of the draws used.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> pi = hp.hawkes.self_excitation(post, n_draws=50, seed=1, progress=False)
    >>> list(pi.columns), len(pi), len(pi.attrs["draw_indices"])
    (['mean', 'sd', 'q2.5', 'q97.5'], 187, 50)
    >>> bool(((pi["q2.5"] <= pi["mean"]) & (pi["mean"] <= pi["q97.5"])).all())
    True
    """
    import pandas as pd

    factory, n_draws, max_values, progress, rng = _check_draw_args(posterior, n_draws, max_values, progress, seed)
    idx, flat = posterior.select_draws(n_draws, rng)
    m = idx.size
    n_events = factory.data.n
    per_batch = max(1, max_values // n_events)
    starts = list(range(0, m, per_batch))
    batches = [{n: v[a:a + per_batch] for n, v in flat.items()} for a in starts]
    mean = np.zeros(n_events)
    m2 = np.zeros(n_events)
    in_memory = m * n_events <= max_values
    tmpdir = None
    if in_memory:
        store = np.empty((m, n_events))
    else:
        tmpdir = tempfile.TemporaryDirectory(prefix="hphawkes-pi-")
        store = np.memmap(os.path.join(tmpdir.name, "pi.f32"), dtype=np.float32, mode="w+", shape=(m, n_events))
    try:
        # the batches run where the executor says; they are folded in here in draw order
        seeds = [np.random.SeedSequence(0)] * len(batches)  # pi is deterministic: the seeds are unused
        k = 0
        with progress_bar(total=len(batches), desc="pi_n over draws", enabled=progress) as bar:
            def fold(pis):
                nonlocal k
                for pi in pis:
                    delta = pi - mean
                    mean[:] += delta / (k + 1)
                    m2[:] += delta * (pi - mean)
                    store[k] = pi
                    k += 1
                bar.update(1)

            if executor is None:
                for b in batches:
                    fold(_pi_batch(b, None, factory))
            else:
                # in waves, so that at most _WAVE batches of results are held at once when spilling
                wave = len(batches) if in_memory else _WAVE
                for w in range(0, len(batches), wave):
                    for pis in run_replicates(_pi_batch, batches[w:w + wave], seeds=seeds[w:w + wave],
                                              executor=executor, progress=False, args=(factory,)):
                        fold(pis)
        sd = np.sqrt(m2 / (m - 1)) if m > 1 else np.full(n_events, np.nan)
        q = np.empty((2, n_events))
        block = max(1, max_values // m)
        for j0 in range(0, n_events, block):
            j1 = min(n_events, j0 + block)
            q[:, j0:j1] = np.quantile(np.asarray(store[:, j0:j1], dtype=np.float64), [0.025, 0.975], axis=0)
    finally:
        if tmpdir is not None:
            del store
            tmpdir.cleanup()
    inv = factory.data.inverse
    df = pd.DataFrame({"mean": mean[inv], "sd": sd[inv], "q2.5": q[0][inv], "q97.5": q[1][inv]})
    df.attrs["draw_indices"] = idx
    return df


def self_excitation_draws(posterior, n_draws: int = 100, seed: Any = None, *, executor: Any = None,
                          progress: bool = True, max_values: int = 2**23) -> np.ndarray:
    """``pi_n`` of every event for each of ``n_draws`` posterior draws, as a matrix.

    Where :func:`self_excitation` summarises ``pi_n`` over the draws, this returns the draws
    themselves, e.g. to propagate the uncertainty of the branching structure into a later
    analysis (:func:`hphawkes_py.scan.declustered` samples each event's background label from
    its row). Given the parameters, the parents of the events are independent, so the label
    "background" of event ``n`` in draw ``s`` is Bernoulli(``1 - pi[s, n]``) independently over
    ``n``: rows of this matrix give draws from the joint posterior of the labels.

    Parameters
    ----------
    posterior : HawkesPosterior
        The result of :func:`~hphawkes_py.hawkes.mcmc`.
    n_draws : int
        Posterior draws used (>= 1; all of them when fewer are stored), chosen by the same rule
        and ``seed`` as :func:`self_excitation` (same seed, same draws).
    seed : None, int, SeedSequence or Generator
        Chooses the draws.
    executor, progress, max_values : Executor or None, bool, int
        As in :func:`self_excitation` (``max_values``: values per batch of draws).

    Returns
    -------
    numpy.ndarray
        ``(draws, N)`` float64, dimensionless probabilities in [0, 1]; columns in the caller's
        input order, rows in the order of the flat draw indices (``chain * n_draws + draw``).
        At most :data:`MAX_DRAW_VALUES` values (draws x events): ask for fewer draws otherwise.

    Examples
    --------
    >>> x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0, seed=1)
    >>> post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=2, fixed={"tau_x": 0.5, "tau_t": 5.0},
    ...                       seed=1, progress=False, backend="cpu")
    >>> pi = hp.hawkes.self_excitation_draws(post, n_draws=20, seed=1, progress=False)
    >>> pi.shape, bool(((pi >= 0) & (pi <= 1)).all())
    ((20, 187), True)
    """
    factory, n_draws, max_values, progress, rng = _check_draw_args(posterior, n_draws, max_values, progress, seed)
    n_events = factory.data.n
    m = min(n_draws, posterior.chains * posterior.n_draws)
    if m * n_events > MAX_DRAW_VALUES:
        raise ValueError(f"n_draws={n_draws} x {n_events} events is {m * n_events:,} values, more than the "
                         f"{MAX_DRAW_VALUES:,} (1 GiB) a matrix of draws may hold: ask for at most "
                         f"{MAX_DRAW_VALUES // n_events} draws, or summarise with self_excitation()")
    idx, flat = posterior.select_draws(n_draws, rng)
    per_batch = max(1, max_values // n_events)
    batches = [{n: v[a:a + per_batch] for n, v in flat.items()} for a in range(0, idx.size, per_batch)]
    seeds = [np.random.SeedSequence(0)] * len(batches)  # pi is deterministic: the seeds are unused
    out = np.empty((idx.size, n_events))
    k = 0
    with progress_bar(total=len(batches), desc="pi_n over draws", enabled=progress) as bar:
        if executor is None:
            parts = (_pi_batch(b, None, factory) for b in batches)
        else:
            parts = run_replicates(_pi_batch, batches, seeds=seeds, executor=executor, progress=False,
                                   args=(factory,))
        for pis in parts:
            out[k:k + len(pis)] = pis
            k += len(pis)
            bar.update(1)
    return np.ascontiguousarray(out[:, factory.data.inverse])
