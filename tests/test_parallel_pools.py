"""Executors and seeds shared by every method (hphawkes_py._parallel, _validate.check_seed)."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py import _parallel


def _parallel_sum(item, seed):
    """A job that runs a Numba parallel (OpenMP) kernel in the worker, as every CPU engine does."""
    from hphawkes_py.hawkes import log_likelihood

    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (200, 2))
    t = np.sort(rng.uniform(0, 10, 200))
    params = dict(mu0=1.0, tau_x=0.1, tau_t=1.0, theta=0.5, omega=1.0, h=0.1)
    return item, log_likelihood(x, t, params, backend="cpu", threads=2)


def test_forking_process_pool_after_an_engine_ran_in_the_parent():
    """Linux's default fork start method used to abort the workers ("fork() called from a process
    already using GNU OpenMP") once a CPU engine had run in the parent: the library now runs the
    jobs on a spawn-based pool of the same size, with the same results as serially."""
    _parallel_sum(0, np.random.SeedSequence(0))  # OpenMP is initialised in this process
    serial = _parallel.run_replicates(_parallel_sum, range(3), seed=7)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
        assert _parallel._forks(pool)
        forked = _parallel.run_replicates(_parallel_sum, range(3), seed=7, executor=pool)
    assert forked == serial


def test_seeds_given_with_the_items_are_used_as_given():
    seeds = np.random.SeedSequence(3).spawn(4)
    got = _parallel.run_replicates(lambda i, s: s.entropy, range(4), seeds=seeds)
    assert got == [s.entropy for s in seeds]
    again = _parallel.run_replicates(lambda i, s: s.spawn_key, range(4), seeds=seeds)
    assert again == [s.spawn_key for s in seeds]
    with pytest.raises(ValueError, match="either seed= or seeds="):
        _parallel.run_replicates(lambda i, s: 0, range(4), seed=1, seeds=seeds)
    with pytest.raises(ValueError, match="4 numpy SeedSequence"):
        _parallel.run_replicates(lambda i, s: 0, range(4), seeds=seeds[:3])


@pytest.mark.parametrize("bad, exc, match", [(-1, ValueError, "seed must be a non-negative integer, got -1"),
                                              (True, TypeError, "seed must be None, an int"),
                                              ("7", TypeError, "seed must be None, an int")])
def test_bad_seeds_name_the_argument(bad, exc, match):
    with pytest.raises(exc, match=match):
        _parallel.spawn_seeds(bad, 2)
    with pytest.raises(exc, match=match):
        hp._validate.check_random_state(bad)
