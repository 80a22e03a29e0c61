"""The software prefetch (hphawkes_py._prefetch) is only a hint: a kernel that prefetches the
entries it is about to gather returns what the same kernel without it returns, for the index and
element types the kernels use, and it is refused (at compile time) for what it does not support."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit

from hphawkes_py._prefetch import prefetch


@njit
def _gather_sum(table, idx, ahead):
    s = 0.0  # exact: small integers
    for k in range(idx.shape[0]):
        if ahead > 0 and k + ahead < idx.shape[0]:
            prefetch(table, idx[k + ahead])
        s += table[idx[k]]
    return s


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int8])
@pytest.mark.parametrize("itype", [np.int64, np.int32, np.uint16])
def test_prefetching_kernel_returns_the_same(dtype, itype):
    rng = np.random.default_rng(4)
    table = rng.integers(0, 100, size=70_000).astype(dtype)
    idx = rng.integers(0, min(table.size, np.iinfo(itype).max), size=5_000).astype(itype)
    plain = _gather_sum(table, idx, 0)
    for ahead in (1, 8, 64):
        assert _gather_sum(table, idx, ahead) == plain
    assert plain == table[idx.astype(np.int64)].astype(np.float64).sum()


def test_prefetch_refuses_other_arguments():
    @njit
    def two_d(a):
        prefetch(a, 0)

    @njit
    def float_index(a):
        prefetch(a, 1.5)

    with pytest.raises(numba.core.errors.TypingError):
        two_d(np.zeros((3, 3)))
    with pytest.raises(numba.core.errors.TypingError):
        float_index(np.zeros(3))
