"""Monte Carlo inference of the scans: replicate seeds and batches, the null maxima, p-values.

Every replicate has its own seed, a child of the root seed, so a replicate's data (and its
maximum LLR) do not depend on batching, threads or the executor. The p-value of a cluster is
``(1 + #{null maxima >= its LLR}) / (1 + n_replicates)``; :func:`gumbel_p_values` gives SaTScan's
Gumbel approximation from the same maxima.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._backend import is_gpu_backend, resolve_backend
from .._parallel import as_executor, run_replicates, spawn_seeds
from .._validate import check_bool, check_in, check_int, check_seed, check_threads
from .engine import DIRECTIONS
from .null_draws import draw_multinomial_cases, draw_null_cases
from .secondary import CRITERIA

__all__ = ["RunOptions", "check_run", "replicate_seed_batches", "batch_children", "replicate_batches",
           "gumbel_p_values", "EULER_GAMMA", "BATCH_SIZE"]

#: Euler-Mascheroni constant (the mean of the standard Gumbel distribution)
EULER_GAMMA = 0.5772156649015329
#: replicates per Monte Carlo batch (a fixed size: the per-replicate seeds make results
#: independent of it anyway, it only sets the granularity of executor jobs)
BATCH_SIZE = 256
#: largest Monte Carlo batch on a GPU engine (see _replicate_batch)
GPU_BATCH_SIZE = 2048
#: memory for the case counts and per-centre maxima of one Monte Carlo batch on the CPU engine when
#: the batches run here, one after the other (see _replicate_batch)
CPU_BATCH_BYTES = 1 << 26
#: refuse more Monte Carlo replicates than this (SaTScan's own limit is 999,999; the null
#: maxima alone take 8 bytes each and every replicate evaluates every window)
MAX_REPLICATES = 10**8


def replicate_seed_batches(seed, n_replicates: int, batch: int = BATCH_SIZE) -> list:
    """One SeedSequence per batch of ``batch`` replicates; ``.spawn(size)`` of the batch
    starting at replicate ``s`` gives the seeds of replicates ``s .. s + size - 1``, which are
    the children ``s ..`` of the root seed (``spawn_seeds(seed, n_replicates)``), whatever the
    batching or the executor. Only the batch seeds are created here (not ``n_replicates`` seeds)."""
    first = spawn_seeds(seed, 1)[0]  # replicate 0: carries the root's entropy and spawn key
    return [np.random.SeedSequence(first.entropy, spawn_key=first.spawn_key[:-1], pool_size=first.pool_size,
                                   n_children_spawned=start)
            for start in range(0, n_replicates, batch)]


def batch_children(batch_seed, size: int):
    """The seeds of a batch's ``size`` replicates, the children of ``batch_seed``, as the draw
    functions take them: ``(batch_seed, size)`` for a SeedSequence, whose children's seed words
    are then hashed in one kernel (:func:`~._rng.replicate_seed_words`) instead of creating
    ``size`` SeedSequences in Python; else ``batch_seed.spawn(size)``."""
    return (batch_seed, size) if isinstance(batch_seed, np.random.SeedSequence) else batch_seed.spawn(size)


def _check_replicates(n_replicates):
    n = check_int(n_replicates, "n_replicates", minimum=1)
    if n > MAX_REPLICATES:
        raise ValueError(
            f"n_replicates={n} is too many: the null maxima alone would need {8 * n / 2**30:.3g} GiB, and every "
            f"replicate evaluates every window ({n:.3g} x the number of windows log likelihood ratios); "
            f"at most {MAX_REPLICATES:,} (SaTScan allows 999,999)"
        )
    return n


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How one scan runs, the settings every scan entry point shares (see :func:`check_run`).

    ``min_cases``: high-rate windows need this many cases; ``n_replicates``: Monte Carlo
    replicates; ``direction``: "high", "low" or "both"; ``progress``: progress bar; ``threads``:
    Numba threads (None: all); ``backend``: the resolved backend; ``seed``: root of the replicate
    seeds; ``executor``: where the Monte Carlo batches run (None: here); ``secondary``: the criterion for
    reporting secondary clusters (:data:`~.secondary.CRITERIA`).
    """

    min_cases: int
    n_replicates: int
    direction: str
    progress: bool
    threads: Any
    backend: str
    seed: Any = None
    executor: Any = None
    secondary: str = "no-overlap"


def check_run(min_cases, n_replicates, direction, secondary, progress, threads, seed, backend,
              executor=None) -> RunOptions:
    """The settings every scan entry point shares, checked before any work; the backend is
    resolved here, once per public call."""
    min_cases = check_int(min_cases, "min_cases", minimum=0)
    n_replicates = _check_replicates(n_replicates)
    check_in(direction, "direction", DIRECTIONS)
    check_in(secondary, "secondary", tuple(CRITERIA))
    progress = check_bool(progress, "progress")
    threads = check_threads(threads)
    check_seed(seed)
    as_executor(executor)  # refused here, before the windows are built, not when the batches start
    return RunOptions(min_cases, n_replicates, direction, progress, threads, resolve_backend(backend), seed, executor,
                      secondary)


def _monte_carlo(engine, weights, n_cases, n_replicates, seed, executor, progress, penalties=None):
    """(n_replicates,) float64 maxima of the null replicates, in replicate order. The null:
    Bernoulli, the cases relabelled among the persons (``weights``: persons per location);
    Poisson, the cases redistributed multinomially (``weights``: expected cases per location)."""
    batch = _replicate_batch(engine, len(weights), n_replicates, executor)
    starts = list(range(0, n_replicates, batch))
    sizes = [min(batch, n_replicates - s) for s in starts]
    parts = run_replicates(_null_batch, sizes, seeds=replicate_seed_batches(seed, n_replicates, batch),
                           executor=executor, progress=progress, desc="scan Monte Carlo",
                           args=(engine, weights, n_cases, penalties))
    return np.concatenate(parts).astype(np.float64)


def _replicate_batch(engine, n_locations: int, n_replicates: int, executor=None) -> int:
    """Replicates per Monte Carlo batch (the null does not depend on it: replicate seeds are
    batching-invariant).

    CPU engine: BATCH_SIZE when an ``executor`` runs the batches (its jobs); run here, as few
    batches of equal size as keep each within CPU_BATCH_BYTES of int32 case counts and float64
    per-centre maxima (or BATCH_SIZE replicates, when more), since every batch costs a pilot pass,
    rounds of pruned passes (a parallel region each) and their Python steps whatever its size (NY
    leukaemia, 281 locations x 9,999 replicates: one batch instead of 40 of 256). GPU: as many as
    256 MiB allow, at most GPU_BATCH_SIZE, since every batch costs a host-device round trip and a
    launch whose blocks are fuller with more replicates."""
    n_centres = getattr(engine, "n_centres", 0)
    if not is_gpu_backend(getattr(engine, "backend", "cpu")):
        if executor is not None:
            return BATCH_SIZE
        cap = max(BATCH_SIZE, CPU_BATCH_BYTES // max(4 * n_locations + 8 * n_centres, 1))
        n_batches = math.ceil(n_replicates / cap)
        return max(1, math.ceil(n_replicates / n_batches))
    per_replicate = max(4 * n_locations, 16 * n_centres, 1)
    return int(max(BATCH_SIZE, min(GPU_BATCH_SIZE, (1 << 28) // per_replicate)))


def replicate_batches(n_replicates: int, per_replicate: int, gpu: bool, executor=None, least: int = BATCH_SIZE):
    """``(batch, sizes)``: the replicates per Monte Carlo batch of an engine whose replicate holds ``per_replicate``
    bytes, and the sizes of the batches (the last one the rest). On a GPU as many as 256 MiB allow, at most
    GPU_BATCH_SIZE; with an ``executor``, BATCH_SIZE (its jobs); run here, as few batches of equal size as keep
    each within CPU_BATCH_BYTES. Never fewer than ``least`` (the null does not depend on the batching: replicate
    seeds are batching-invariant)."""
    R = n_replicates
    if gpu:
        batch = max(least, min(GPU_BATCH_SIZE, (1 << 28) // max(per_replicate, 1)))
    elif executor is not None:
        batch = BATCH_SIZE
    else:
        cap = max(least, CPU_BATCH_BYTES // max(per_replicate, 1))
        batch = math.ceil(R / math.ceil(R / cap))
    return batch, [min(batch, R - s) for s in range(0, R, batch)]


def _null_batch(size, batch_seed, engine, weights, n_cases, penalties=None):
    """One Monte Carlo batch of ``size`` replicates (module level so process pools can pickle it).
    With ``penalties`` (one factor per window block, elliptic scans), the maximum of the penalised
    best LLR of every block."""
    draw = draw_multinomial_cases if engine.model == "poisson" else draw_null_cases
    cases = draw(weights, n_cases, batch_children(batch_seed, size))
    if penalties is None:
        return engine.max_llr(cases)
    if hasattr(engine, "max_llr_penalised"):  # CPU: pruned per run of equal penalties
        return engine.max_llr_penalised(cases, penalties)
    best, _ = engine.best_per_centre(cases)
    return (best * penalties[:, None]).max(axis=0) if best.shape[0] else np.zeros(size)


def gumbel_p_values(observed: np.ndarray, null_max: np.ndarray) -> np.ndarray:
    """SaTScan's Gumbel approximation: fit a Gumbel distribution to the null maxima by
    the method of moments (scale = sd sqrt(6) / pi, location = mean - gamma scale) and
    return its upper tail probability at each observed LLR."""
    observed = np.asarray(observed, dtype=np.float64)
    sd = float(np.std(null_max, ddof=1)) if len(null_max) > 1 else 0.0
    if not sd > 0:
        return np.where(observed > float(np.max(null_max)), 0.0, 1.0)
    beta = sd * math.sqrt(6.0) / math.pi
    mu = float(np.mean(null_max)) - EULER_GAMMA * beta
    return -np.expm1(-np.exp(-(observed - mu) / beta))
