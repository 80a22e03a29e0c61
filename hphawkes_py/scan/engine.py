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

__all__ = ["Engine", "make_engine", "klogk_table", "null_loglik", "build_windows", "cumulative_expected",
           "draw_null_cases", "draw_multinomial_cases", "make_space_time_engine", "permute_days_cases", "DIRECTIONS",
           "MODELS"]

DIRECTIONS = ("high", "low", "both")
MODELS = ("bernoulli", "poisson")


def make_engine(windows, klogk, n_cases, n_total, direction, *, backend: str, model: str = "bernoulli",
                min_cases: int = 0, location_size=None):
    """Engine for one analysis on an already resolved backend (``"cpu"``, ``"gpu"`` or ``"emulator"``).

    Parameters
    ----------
    windows : tuple
        ``(offsets, neighbors, size, boundary)`` from :func:`build_windows`; ``size`` is the
        window size after each entry: persons (Bernoulli, int64) or expected cases (Poisson,
        float64, see :func:`cumulative_expected`).
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


def build_windows(centres: np.ndarray, coords: np.ndarray, pop: np.ndarray, limit: float,
                  max_distance: float | None = None, tie_coords: np.ndarray | None = None):
    """Neighbour lists of every centre, cut where the window size would exceed ``limit`` (or
    the radius ``max_distance``; ties in distance enter together, the lesser ``tie_coords``,
    default ``coords``, first, as SaTScan). See :func:`hphawkes_py.scan.cpu.build_windows`.

    Returns ``(offsets, neighbors, size, boundary)``.
    """
    from .cpu import build_windows as _build

    return _build(centres, coords, pop, limit, max_distance, tie_coords)


def cumulative_expected(windows, expected: np.ndarray) -> np.ndarray:
    """(E,) expected cases of each centre's window after each entry (sums in entry order)."""
    offsets, neighbors = windows[0], windows[1]
    out = np.empty(len(neighbors), dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)[neighbors]
    for i in range(len(offsets) - 1):
        a, b = offsets[i], offsets[i + 1]
        np.cumsum(e[a:b], out=out[a:b])
    return out


def poisson_logs(wexp: np.ndarray, n_cases: int):
    """``(E, log E, log(C - E))`` per window entry (float64), computed once on the host so that
    the CPU and CUDA engines use identical logarithms. Entries inside a tie group (never a
    window end) may hold any value; ``E >= C`` (a window with every case expected) gets -inf."""
    e = np.ascontiguousarray(wexp, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        loge = np.log(e)
        logce = np.log(np.maximum(float(n_cases) - e, 0.0))
    return e, loge, logce


def _uint32_words(x) -> list:
    """NumPy SeedSequence's coercion of an entropy or spawn-key value to uint32 words (little-endian
    words of a non-negative int, 0 -> [0]; sequences concatenated); None when unsure."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        n = int(x)
        if n < 0:
            return None
        words = [0] if n == 0 else []
        while n:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
        return words
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            w = _uint32_words(v)
            if w is None:
                return None
            out += w
        return out
    return None


def replicate_seed_words(seeds) -> np.ndarray:
    """(R,) uint32: the first ``generate_state`` word of each replicate's SeedSequence (the seed the
    draw kernels reseed with). ``seeds``: a sequence of SeedSequences, or ``(parent, size)`` for the
    children ``parent.n_children_spawned ..`` + size - 1 of ``parent`` (what ``parent.spawn(size)``
    would give, without creating them and without advancing ``parent``): those words come from
    NumPy's hashing algorithm redone in one Numba kernel (creating and hashing one SeedSequence per
    replicate in Python costs more than the draws), checked against NumPy on the first and last child
    (else NumPy's way)."""
    if isinstance(seeds, tuple) and len(seeds) == 2 and isinstance(seeds[0], np.random.SeedSequence):
        parent, size = seeds
        first = int(parent.n_children_spawned)
        size = int(size)

        def child(i):
            return np.random.SeedSequence(parent.entropy, spawn_key=tuple(parent.spawn_key) + (i,),
                                          pool_size=parent.pool_size)

        run = _uint32_words(parent.entropy)
        key = _uint32_words(tuple(parent.spawn_key))
        if size == 0:
            return np.zeros(0, dtype=np.uint32)
        if run is not None and key is not None and first + size <= 2**32:
            run = run + [0] * max(0, parent.pool_size - len(run))  # padded: the spawn key is never empty here
            from .cpu import _child_seed_words

            out = np.empty(size, dtype=np.uint32)
            _child_seed_words(np.array(run + key, dtype=np.uint64), np.int64(parent.pool_size), np.int64(first), out)
            if (out[0] == child(first).generate_state(1, np.uint32)[0]
                    and out[-1] == child(first + size - 1).generate_state(1, np.uint32)[0]):
                return out
        seeds = [child(first + k) for k in range(size)]
    return np.array([ss.generate_state(1, np.uint32)[0] for ss in seeds], dtype=np.uint32)


def draw_multinomial_cases(expected: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Poisson model null: the C cases redistributed over the locations, multinomially with
    probabilities ``expected / sum(expected)`` (one seed per replicate, as
    :func:`draw_null_cases`). Returns (L, R) int32."""
    from .cpu import draw_multinomial

    s32 = replicate_seed_words(seeds)
    return draw_multinomial(expected, n_cases, s32)


def draw_null_cases(pop: np.ndarray, n_cases: int, seeds) -> np.ndarray:
    """Cases per location for each replicate: the C cases relabelled at random among all
    N persons (a multivariate hypergeometric draw over the locations' populations, made
    as a uniformly random C-subset of the persons, O(C log L) per replicate). One seed per
    replicate (``seeds``: SeedSequences), so a replicate's data does not depend on how
    replicates are batched or on the executor. Returns (L, R) int32."""
    from .cpu import draw_cases

    s32 = replicate_seed_words(seeds)
    return draw_cases(pop, n_cases, s32)


def make_space_time_engine(windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, *, backend: str,
                           persons=None):
    """Space-time engine on a resolved backend: ``batch(cases (L, T, R), want_arg)`` gives the
    ``(m, R)`` best cylinder LLR per centre [and the cylinder's code ``(j T + t1) T + t2``].

    Poisson-type cylinders (space-time permutation, space-time Poisson: ``windows[2]`` and ``dcum``
    give the expectations), or, with ``persons`` ((L, T) whole persons per location and day, cases +
    controls), the space-time Bernoulli model: ``klogk`` is then the table of the total persons N
    and ``dcum`` is not read."""
    args = (windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction)
    if is_gpu_backend(backend):
        from .gpu import GpuSpaceTimeEngine

        return GpuSpaceTimeEngine(*args, device=get_device(backend), backend=backend, persons=persons)
    if backend != "cpu":
        raise ValueError(f"make_space_time_engine needs a resolved backend, got {backend!r}")
    from .cpu import CpuSpaceTimeEngine

    return CpuSpaceTimeEngine(*args, persons=persons)


def space_time_interval_best(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, min_cases, direction,
                             lo, hi):
    """Observed data, centres ``lo..hi-1``: the best cylinder LLR of every interval over the circles,
    ``(val, code)`` of shape ``(hi - lo, T, max_t)`` indexed ``[centre, t2, t2 - t1]`` (``code``: the
    circle's window entry, -1 where no cylinder qualifies). Host-side (Numba), run once per
    retrospective space-time analysis for SaTScan's secondary clusters."""
    from .cpu import space_time_interval_best as _best

    return _best(windows, cases, persons, dcum, klogk, n_cases, n_total, max_t, min_cases, direction, lo, hi)


def permute_days_cases(loc_of_case, day_of_case, L: int, T: int, seeds) -> np.ndarray:
    """Space-time permutation null: (L, T, R) int32 counts with the cases' days permuted among the
    cases (one seed per replicate, as :func:`draw_null_cases`)."""
    from .cpu import permute_days

    s32 = replicate_seed_words(seeds)
    return permute_days(loc_of_case, day_of_case, L, T, s32)


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
