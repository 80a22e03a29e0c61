"""The scan engine interface, :func:`make_engine`, and the constants both engines share.

An engine holds one analysis' circular windows (flattened CSR neighbour lists, see
:func:`~.windows.build_windows`) and the ``k log k`` table, and evaluates the log likelihood ratio of
every window for a batch of case vectors (locations x replicates, int32). Both engines
(:class:`~.cpu.CpuEngine`, :class:`~.gpu.GpuEngine`) derive from :class:`Engine` and offer:

``best_per_centre(cases, want_arg=False)``
    ``(m, R)`` best LLR of each centre for each column of ``cases`` and, with ``want_arg``,
    the CSR entry where that window ends (-1 when no window has a positive LLR).
``max_llr(cases)``
    ``(R,)`` maximum LLR over all windows of each column (the Monte Carlo statistic).
``max_llr_exhaustive(cases)``
    the same maxima evaluating every window (no pruning; for tests and benchmarks).

Host-side steps shared by both engines run on the CPU with Numba whatever the engine, in their
own modules: window construction (:mod:`.windows`) and the null draws (:mod:`.null_draws`).
This module and :mod:`.gpu` import no Numba kernels.

There is no ``dtype=``: the engines work on integer counts and a table of ``k log k`` in
float64; an LLR is a difference of terms of size ``N log N`` (1.4e7 for a million persons)
that float32 cannot resolve (its spacing there is ~1, the LLRs of interest are ~1-20).
"""
from __future__ import annotations

import concurrent.futures as cf

import numba
import numpy as np

from .._backend import get_device, is_gpu_backend

__all__ = ["Engine", "make_engine", "klogk_table", "null_loglik", "poisson_logs", "make_space_time_engine",
           "DIRECTIONS", "MODELS"]

DIRECTIONS = ("high", "low", "both")
MODELS = ("bernoulli", "poisson")


def make_engine(windows, klogk, n_cases, n_total, direction, *, backend: str, model: str = "bernoulli",
                min_cases: int = 0, location_size=None):
    """Engine for one analysis on an already resolved backend (``"cpu"``, ``"gpu"`` or ``"emulator"``).

    Parameters
    ----------
    windows : tuple
        ``(offsets, neighbors, size, boundary)`` from :func:`~.windows.build_windows`; ``size`` is
        the window size after each entry: persons (Bernoulli, int64) or expected cases (Poisson,
        float64, see :func:`~.windows.cumulative_expected`).
    klogk : float64
        :func:`klogk_table` of the total population ``N`` (Bernoulli) or of the total number of
        cases ``C`` (Poisson).
    n_cases, n_total : int
        Totals ``C`` and ``N`` (persons; Poisson: ``N = C``, the total expected).
    direction : {"high", "low", "both"}
    backend : str
        A resolved backend; the GPU engine receives its device here
        (:func:`hphawkes_py._backend.get_device`), engines never fetch devices themselves.
    model : {"bernoulli", "poisson"}
    min_cases : int
        High-rate windows need at least this many cases (SaTScan's "minimum cases in cluster
        for high rates"; 0 = no restriction).
    location_size : (L,) int64, optional
        Bernoulli: persons per location (what ``windows`` was built from); the GPU engine sums
        them along the neighbour lists instead of uploading ``size`` (recovered from ``windows``
        when not given).  The CPU engine reads ``size``.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    kw = dict(model=model, min_cases=int(min_cases))
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(windows, klogk, n_cases, n_total, direction, device=get_device(backend), backend=backend,
                         location_size=location_size, **kw)
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(windows, klogk, n_cases, n_total, direction, **kw)


# ---------------------------------------------------------------------------- host helpers
def klogk_table(n_total: int) -> np.ndarray:
    """``t[k] = k log k`` for k = 0..n_total (``0 log 0 = 0``), float64."""
    k = np.arange(n_total + 1, dtype=np.float64)
    out = np.zeros(n_total + 1, dtype=np.float64)
    out[1:] = k[1:] * np.log(k[1:])
    return out


def null_loglik(klogk: np.ndarray, n_cases: int, n_total: int) -> float:
    """Log likelihood of the null (one proportion C/N everywhere), from the k log k table.

    ``C log(C/N) + (N-C) log((N-C)/N) = klogk[C] + klogk[N-C] - klogk[N]``.
    """
    return float(klogk[n_cases] + klogk[n_total - n_cases] - klogk[n_total])


def poisson_logs(wexp: np.ndarray, n_cases: int):
    """``(E, log E, log(C - E))`` per window entry (float64), computed once on the host so that
    the CPU and CUDA engines use identical logarithms. Entries a boundary mask skips are
    not scored; ``E >= C`` (a window with every case expected) gets -inf."""
    e = np.ascontiguousarray(wexp, dtype=np.float64)
    loge = np.empty_like(e)
    logce = np.empty_like(e)

    def part(a, b):
        # NumPy's logarithms (the same bits whatever the split), slices on the threads: they release the GIL
        with np.errstate(divide="ignore", invalid="ignore"):
            np.log(e[a:b], out=loge[a:b])
            rest = logce[a:b]  # C - E in place, no temporaries
            np.subtract(float(n_cases), e[a:b], out=rest)
            np.maximum(rest, 0.0, out=rest)
            np.log(rest, out=rest)

    parts = max(1, min(numba.get_num_threads(), len(e) // 65536))
    cuts = np.linspace(0, len(e), parts + 1).astype(np.int64)
    if parts == 1:
        part(0, len(e))
    else:
        with cf.ThreadPoolExecutor(parts) as pool:
            list(pool.map(part, cuts[:-1], cuts[1:]))
    return e, loge, logce


def make_space_time_engine(windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, *, backend: str,
                           persons=None, strata=None, expected=None):
    """Space-time engine on a resolved backend: ``batch(cases (L, T, R), want_arg)`` gives the
    ``(m, R)`` best cylinder LLR per centre [and the cylinder's code ``(j T + t1) T + t2``].

    Poisson-type cylinders (space-time permutation, space-time Poisson: ``windows[2]`` and ``dcum``
    give the expectations), or, with ``persons`` ((L, T) whole persons per location and day, cases +
    controls), the space-time Bernoulli model: ``klogk`` is then the table of the total persons N
    and ``dcum`` is not read. ``strata``: time-stratified, the cases and persons per day; ``expected``:
    the Poisson-type cylinders' expectations per location and day, when they are not a location's share
    times a day's (see :func:`~.cpu_space_time.cylinder_batch`)."""
    args = (windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction)
    if is_gpu_backend(backend):
        from .gpu import GpuSpaceTimeEngine

        return GpuSpaceTimeEngine(*args, device=get_device(backend), backend=backend, persons=persons, strata=strata,
                                  expected=expected)
    if backend != "cpu":
        raise ValueError(f"make_space_time_engine needs a resolved backend, got {backend!r}")
    from .cpu_space_time import CpuSpaceTimeEngine

    return CpuSpaceTimeEngine(*args, persons=persons, strata=strata, expected=expected)


# ---------------------------------------------------------------------------- base class
class Engine:
    """Shared part of both engines: the analysis' constants and the meaning of the hot steps
    (see the module notes). Subclasses implement ``best_per_centre`` and ``max_llr``."""

    backend = "cpu"

    def __init__(self, windows, klogk, n_cases, n_total, direction, *, model="bernoulli", min_cases=0):
        self.windows = windows
        self.n_centres = len(windows[0]) - 1
        self.n_cases = int(n_cases)
        self.n_total = int(n_total)
        self.direction = direction
        self.model = model
        self.min_cases = int(min_cases)
        self.want_high = direction in ("high", "both")
        self.want_low = direction in ("low", "both")
        # the null log likelihood enters the Bernoulli LLR only (the Poisson one is 0 under the null)
        self.l0 = null_loglik(klogk, self.n_cases, self.n_total) if model == "bernoulli" else 0.0

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):  # pragma: no cover - interface
        """(m, R) best LLR per centre [and best window end entry] for cases (L, R) int32."""
        raise NotImplementedError

    def max_llr(self, cases: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """(R,) maximum LLR over all windows for each column of ``cases``."""
        raise NotImplementedError

    def max_llr_exhaustive(self, cases: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR evaluating every window (no pruning; for tests and benchmarks)."""
        best, _ = self.best_per_centre(cases)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(cases)[1])
