"""Independent replicates on any executor, with seeds that do not depend on it.

MCMC chains, cross-validation folds, bootstrap replicates and Monte Carlo
batches are independent jobs. :func:`run_replicates` runs them serially
(``executor=None``), on any :class:`concurrent.futures.Executor`, or on a Dask
distributed ``Client`` (through ``client.get_executor()``). Job ``i`` always
receives the ``i``-th child of ``numpy.random.SeedSequence(seed).spawn(n)``,
so results are identical whichever executor ran them, and come back in job order.

Process pools: Numba's OpenMP threading layer is not fork-safe, so a worker
forked from a parent that already ran a parallel kernel aborts ("fork() called
from a process already using GNU OpenMP", ``BrokenProcessPool``).  A
``ProcessPoolExecutor`` that would fork (Linux's default start method before
Python 3.14) is therefore replaced, for the duration of the call, by one with
the same number of workers and the "spawn" start method; results are the same.
Thread pools and Dask clients are used as given.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing as mp
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ._progress import progress_bar
from ._validate import check_seed

__all__ = ["spawn_seeds", "run_replicates", "split_evenly", "as_executor"]


def spawn_seeds(seed: Any, n: int, name: str = "seed") -> list[np.random.SeedSequence]:
    """``n`` independent child seeds of ``seed``.

    ``seed`` may be None, a non-negative int, a ``SeedSequence`` or a ``Generator`` (its
    state is advanced by one draw to derive the root, so repeated calls with the
    same Generator give different but reproducible children).
    """
    seed = check_seed(seed, name)
    if isinstance(seed, np.random.SeedSequence):
        root = seed
    elif isinstance(seed, np.random.Generator):
        root = np.random.SeedSequence(seed.integers(0, 2**63 - 1, size=4).tolist())
    else:
        root = np.random.SeedSequence(seed)
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


def _forks(ex: cf.Executor) -> bool:
    if not isinstance(ex, cf.ProcessPoolExecutor):
        return False
    ctx = getattr(ex, "_mp_context", None)
    method = ctx.get_start_method() if ctx is not None else mp.get_start_method(allow_none=True) or "fork"
    return method == "fork"


@contextlib.contextmanager
def _fork_safe(ex: cf.Executor | None):
    """Yield ``ex``, or a spawn-based stand-in for a forking process pool (see the module notes)."""
    if ex is None or not _forks(ex):
        yield ex
        return
    workers = getattr(ex, "_max_workers", None)
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as safe:
        yield safe


def run_replicates(
    func: Callable[..., Any],
    items: Iterable[Any],
    *,
    seed: Any = None,
    seeds: Sequence[np.random.SeedSequence] | None = None,
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
    seeds : sequence of SeedSequence, optional
        The jobs' own seeds, one per item, when the caller already spawned them (then ``seed``
        must be None): no second, unused set is spawned.
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where to run; ``None`` runs serially in this process.  A process pool that would fork
        is replaced by a spawn-based one with the same number of workers.
    progress : bool
        Show a tqdm bar on stderr counting finished jobs.
    """
    items = list(items)
    if seeds is None:
        seeds = spawn_seeds(seed, len(items))
    else:
        if seed is not None:
            raise ValueError("give either seed= or seeds=, not both")
        seeds = list(seeds)
        if len(seeds) != len(items) or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
            raise ValueError(f"seeds must be {len(items)} numpy SeedSequence objects, one per item")
    ex = as_executor(executor)
    results: list[Any] = [None] * len(items)
    with _fork_safe(ex) as ex, progress_bar(total=len(items), desc=desc, enabled=progress) as bar:
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
