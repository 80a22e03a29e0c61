"""Label moments of the Gibbs sweep: per-component counts, sums and second moments (CPU, Numba).

The sufficient statistics of the conjugate updates are, per component, the count, the sum and
the second-moment matrix of the points drawn to it.  They are accumulated from the float64 data
(whatever the engine dtype) while a chunk is in cache, into fixed blocks of chunks that are
summed in block order (:data:`STAT_BLOCKS`, ``CpuEngine._run``), so the totals do not depend on
the number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .cpu_draw import FASTMATH as _FM

__all__ = ["moments_width", "moments_to_stats", "STAT_BLOCKS"]

#: fixed blocks of chunks whose label statistics are summed separately (see ``CpuEngine._run``)
STAT_BLOCKS = 16


def moments_width(p: int) -> int:
    """Columns of a component's row of moments: count, sums and p rows of second moments, the
    vectors padded to a multiple of 4 entries (whole AVX2 vectors, no scalar remainder loops)."""
    P4 = -(-int(p) // 4) * 4
    return 1 + P4 + p * P4


@njit(cache=True, nogil=True, fastmath=_FM)
def _add_moments(X, z, M):
    """M[z_i] += [1, x_i, x_i x_i'] for every row (vectors zero-padded to P4 = 4 ceil(p / 4)
    entries, see :func:`moments_width`): counts, sums and the p rows of the full second-moment
    matrix per component; each row of the outer product is P4 / 4 vector multiply-adds, the upper
    triangle is taken afterwards by :func:`moments_to_stats`."""
    n, p = X.shape
    P4 = (M.shape[1] - 1) // (p + 1)
    xi = np.zeros(P4)
    for i in range(n):
        for a in range(p):
            xi[a] = X[i, a]
        mrow = M[z[i]]
        mrow[0] += 1.0
        for a in range(P4):
            mrow[1 + a] += xi[a]
        off = 1 + P4
        for a in range(p):
            xa = xi[a]
            for b in range(P4):
                mrow[off + b] += xa * xi[b]
            off += P4


@njit(cache=True, nogil=True)
def _clear_moments(M):
    """Zero one block of label moments (k, width), without the GIL: only the rows of components
    with a non-zero count, since :func:`_add_moments` writes no row without adding 1 to its
    count: a fitted chain occupies a small share of the k components, so most rows are still
    zero and a memset of every block would cost more than the rows written."""
    for j in range(M.shape[0]):
        if M[j, 0] != 0.0:
            M[j, :] = 0.0


def moments_to_stats(M: np.ndarray, p: int) -> np.ndarray:
    """(k, :func:`moments_width`) moments of :func:`_add_moments` as the (k, F) feature sums of
    the engine interface (counts, sums, upper triangle of the second moments, row-major)."""
    P4 = (M.shape[1] - 1) // (p + 1)
    a, b = np.triu_indices(p)
    return np.concatenate([M[:, :1], M[:, 1:1 + p], M[:, 1 + P4:][:, a * P4 + b]], axis=1)

