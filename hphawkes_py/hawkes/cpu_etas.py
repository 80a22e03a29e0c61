"""Numba kernel of the space-time ETAS model (Ogata 1998; Zhuang, Ogata & Vere-Jones 2002): the
triggering sum of every event, with magnitude-dependent productivity and spatial scale.

Model (events sorted by time, 2-D locations, magnitudes m >= m0)::

    lambda_n = mu u(x_n) + A C_g C_f G_n,
    G_n = sum_{j < ts[n]} w_j exp(-(p log(1 + dt/c) + spatial_j(r^2))),   dt = t_n - t_j,  r = |x_n - x_j|
    w_j = exp(alpha (m_j - m0)) / sigma_j,   sigma_j = d exp(gamma (m_j - m0))

with ``spatial_j(r^2) = r^2 / (2 sigma_j)`` (Gaussian kernel f(r | m_j) = exp(-r^2/(2 sigma_j)) /
(2 pi sigma_j), C_f = 1/(2 pi)) or ``q log(1 + r^2 / sigma_j)`` (power law (q - 1)/(pi sigma_j)
(1 + r^2/sigma_j)^(-q), C_f = (q - 1)/pi), and the Omori-Utsu constant C_g = (p - 1)/c. ``ts[n]`` is
the first event tied with n (tied times do not trigger each other).

Every row is one thread's sequential loop over j in increasing order, stored, never added across
threads: results are identical for any thread count. Float64 throughout.
"""
from __future__ import annotations

import math

from numba import njit, prange

__all__ = ["etas_rows", "SPATIAL_CODE"]

#: Integer codes of the spatial kernels in :func:`etas_rows`.
SPATIAL_CODE = {"gaussian": 0, "power-law": 1}


@njit(parallel=True, cache=True, nogil=True)
def etas_rows(x, t, ts, w, sigma, c, p, q, kind, out):
    """Fill ``out[n] = G_n`` of the module notes.

    ``x``: (N, 2) float64 locations; ``t`` sorted times; ``ts`` tie starts (int64); ``w`` and ``sigma``
    (N,) the sources' weights w_j and spatial scales sigma_j; ``c``, ``p`` Omori-Utsu; ``q`` the
    power-law exponent (``kind`` 1) or unused (``kind`` 0, Gaussian)."""
    N = t.shape[0]
    for n in prange(N):
        g = 0.0
        x0 = x[n, 0]
        x1 = x[n, 1]
        tn = t[n]
        for j in range(ts[n]):
            d0 = x0 - x[j, 0]
            d1 = x1 - x[j, 1]
            r2 = d0 * d0 + d1 * d1
            if kind == 0:
                sp = 0.5 * r2 / sigma[j]
            else:
                sp = q * math.log1p(r2 / sigma[j])
            g += w[j] * math.exp(-(p * math.log1p((tn - t[j]) / c) + sp))
        out[n] = g
