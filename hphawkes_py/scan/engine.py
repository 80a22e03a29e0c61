"""The scan engine interface, :func:`make_engine`, and host-side helpers used by both engines.

An engine holds one analysis' circular windows (flattened CSR neighbour lists, see
:func:`build_windows`) and the ``k log k`` table, and evaluates the log likelihood ratio of
every window for a batch of case vectors (locations x replicates, int32). Both engines
(:class:`~.cpu.CpuEngine`, :class:`~.gpu.GpuEngine`) derive from :class:`Engine` and offer:

``best_per_centre(cases, want_arg=False)``
    ``(m, R)`` best LLR of each centre for each column of ``cases`` and, with ``want_arg``,
    the CSR entry where that window ends (-1 when no window has a positive LLR).
``max_llr(cases)``
    ``(R,)`` maximum LLR over all windows of each column (the Monte Carlo statistic).
``max_llr_exhaustive(cases)``
    the same maxima evaluating every window (no pruning; for tests and benchmarks).

Host-side steps shared by both engines (window construction, the null draws) run on the CPU
with Numba whatever the engine: :func:`build_windows` and :func:`draw_null_cases` load those
kernels from :mod:`.cpu` when called, so importing this module (or :mod:`.gpu`) loads no
Numba kernels.

There is no ``dtype=``: the engines work on integer counts and a table of ``k log k`` in
float64; an LLR is a difference of terms of size ``N log N`` (1.4e7 for a million persons)
that float32 cannot resolve (its spacing there is ~1, the LLRs of interest are ~1-20).
"""
from __future__ import annotations

import numpy as np

from .._backend import get_device, is_gpu_backend

__all__ = ["Engine", "make_engine", "klogk_table", "null_loglik", "build_windows", "draw_null_cases",
           "DIRECTIONS"]

DIRECTIONS = ("high", "low", "both")


def make_engine(windows, klogk, n_cases, n_total, direction, *, backend: str):
    """Engine for one analysis on an already resolved backend (``"cpu"``, ``"gpu"`` or ``"emulator"``).

    Parameters
    ----------
    windows : tuple
        ``(offsets, neighbors, npop, boundary)`` from :func:`build_windows`.
    klogk : (N + 1,) float64
        :func:`klogk_table` of the total population ``N``.
    n_cases, n_total : int
        Totals ``C`` and ``N`` (persons).
    direction : {"high", "low", "both"}
    backend : str
        A resolved backend; the GPU engine receives its device here
        (:func:`hphawkes_py._backend.get_device`), engines never fetch devices themselves.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if is_gpu_backend(backend):
        from .gpu import GpuEngine

        return GpuEngine(windows, klogk, n_cases, n_total, direction, device=get_device(backend), backend=backend)
    if backend != "cpu":
        raise ValueError(f"make_engine needs a resolved backend ('cpu', 'gpu' or 'emulator'), got {backend!r}")
    from .cpu import CpuEngine

    return CpuEngine(windows, klogk, n_cases, n_total, direction)


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


def build_windows(centres: np.ndarray, coords: np.ndarray, pop: np.ndarray, limit: float):
    """Neighbour lists of every centre, cut where the window population would exceed ``limit``
    (ties in distance enter together). See :func:`hphawkes_py.scan.cpu.build_windows`.

    Returns ``(offsets, neighbors, npop, boundary)``.
    """
    from .cpu import build_windows as _build

    return _build(centres, coords, pop, limit)


def draw_null_cases(pop: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Cases per location for each replicate: the C cases relabelled at random among all
    N persons (a multivariate hypergeometric draw over the locations' populations, made
    as a uniformly random C-subset of the persons, O(C log L) per replicate). One seed per
    replicate (``seeds``: SeedSequences), so a replicate's data does not depend on how
    replicates are batched or on the executor. Returns (L, R) int32."""
    from .cpu import draw_cases

    s32 = np.array([ss.generate_state(1, np.uint32)[0] for ss in seeds], dtype=np.uint32)
    return draw_cases(pop, n_cases, s32)


# ---------------------------------------------------------------------------- base class
class Engine:
    """Shared part of both engines: the analysis' constants and the meaning of the hot steps
    (see the module notes). Subclasses implement ``best_per_centre`` and ``max_llr``."""

    backend = "cpu"

    def __init__(self, windows, klogk, n_cases, n_total, direction):
        self.windows = windows
        self.n_centres = len(windows[0]) - 1
        self.n_cases = int(n_cases)
        self.n_total = int(n_total)
        self.direction = direction
        self.want_high = direction in ("high", "both")
        self.want_low = direction in ("low", "both")
        self.l0 = null_loglik(klogk, self.n_cases, self.n_total)

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
