"""Independent replicates on any executor, with seeds that do not depend on it.

MCMC chains, cross-validation folds, bootstrap replicates and Monte Carlo
batches are independent jobs. :func:`run_replicates` runs them serially
(``executor=None``), on any :class:`concurrent.futures.Executor`, or on a Dask
distributed ``Client`` (through ``client.get_executor()``). Job ``i`` always
receives the ``i``-th child of ``numpy.random.SeedSequence(seed).spawn(n)``,
so results are identical whichever executor ran them, and come back in job order.

Process pools: create them with the "spawn" start method,
``ProcessPoolExecutor(mp_context=multiprocessing.get_context("spawn"))``.
Numba's OpenMP threading layer is not fork-safe, so a forked worker that runs
a parallel kernel after the parent did can crash (``BrokenProcessPool``).
Thread pools and Dask clients need nothing special.
"""
from __future__ import annotations

import concurrent.futures as cf
import numbers
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ._progress import progress_bar

__all__ = ["spawn_seeds", "run_replicates", "split_evenly", "as_executor"]


def spawn_seeds(seed: Any, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seeds of ``seed``.

    ``seed`` may be None, an int, a ``SeedSequence`` or a ``Generator`` (its
    state is advanced by one draw to derive the root, so repeated calls with the
    same Generator give different but reproducible children).
    """
    if isinstance(seed, np.random.SeedSequence):
        root = seed
    elif isinstance(seed, np.random.Generator):
        root = np.random.SeedSequence(seed.integers(0, 2**63 - 1, size=4).tolist())
    elif seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        root = np.random.SeedSequence(seed)
    else:
        raise TypeError(f"seed must be None, an int, a SeedSequence or a Generator, got {type(seed).__name__}")
    return root.spawn(int(n))


def split_evenly(n: int, parts: int) -> list[int]:
    """Sizes of ``parts`` nearly equal batches summing to ``n`` (empty batches dropped)."""
    parts = max(1, min(int(parts), int(n))) if n > 0 else 1
    base, extra = divmod(int(n), parts)
    return [base + (1 if i < extra else 0) for i in range(parts) if base + (1 if i < extra else 0) > 0]


def as_executor(executor: Any) -> cf.Executor | None:
    """Accept None, a ``concurrent.futures.Executor`` or a Dask ``Client``."""
    if executor is None or isinstance(executor, cf.Executor):
        return executor
    if hasattr(executor, "get_executor"):  # dask.distributed.Client
        return executor.get_executor()
    raise TypeError(
        "executor must be None, a concurrent.futures.Executor or a dask.distributed.Client, "
        f"got {type(executor).__name__}"
    )


def run_replicates(
    func: Callable[..., Any],
    items: Iterable[Any],
    *,
    seed: Any = None,
    executor: Any = None,
    progress: bool = False,
    desc: str | None = None,
    args: Sequence[Any] = (),
) -> list[Any]:
    """Run ``func(item, seed_sequence, *args)`` for every item; results in item order.

    Parameters
    ----------
    func : callable
        Must be picklable (a module-level function) when ``executor`` is a
        process pool or a Dask client.
    items : iterable
        One entry per job (a replicate index, a fold, a batch size ...).
    seed : None, int, SeedSequence or Generator
        Root of the per-job seeds (see :func:`spawn_seeds`).
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where to run; ``None`` runs serially in this process.
    progress : bool
        Show a tqdm bar on stderr counting finished jobs.
    """
    items = list(items)
    seeds = spawn_seeds(seed, len(items))
    ex = as_executor(executor)
    results: list[Any] = [None] * len(items)
    with progress_bar(total=len(items), desc=desc, enabled=progress) as bar:
        if ex is None:
            for i, (item, s) in enumerate(zip(items, seeds)):
                results[i] = func(item, s, *args)
                bar.update(1)
            return results
        futures = {ex.submit(func, item, s, *args): i for i, (item, s) in enumerate(zip(items, seeds))}
        try:
            for fut in cf.as_completed(futures):
                results[futures[fut]] = fut.result()
                bar.update(1)
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    return results
