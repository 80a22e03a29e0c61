"""Checks of the atoms' Normal-inverse-Wishart prior and of the initial means, shared by the DP
mixture (:class:`~.model.TDPGaussianMixture`) and the HDP mixture (:class:`~.hdp.HDPGaussianMixture`).

Both estimators take the same ``m0``, ``nu0``, ``Phi0`` and ``init`` settings on the standardised
scale; these plain functions check them against the data at ``fit`` so that the two refuse the
same inputs with the same messages.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import as_float_array
from ._data import real_data

__all__ = ["check_priors", "check_prior_scale", "check_init"]


def check_priors(m0, Phi0, nu0, p, k):
    """(m0 (p,), Phi0 (p, p) or (k, p, p)) from the settings: None gives 0 and ``nu0 * I``."""
    if m0 is None:
        m0_arr = np.zeros(p)
    elif isinstance(m0, numbers.Real) and not isinstance(m0, bool):
        m0_arr = np.full(p, float(m0))
    else:
        m0_arr = as_float_array(m0, "m0", shape=(p,))
    if not np.isfinite(m0_arr).all():
        raise ValueError("m0 must be finite")
    if Phi0 is None:
        Phi = nu0 * np.eye(p)
    else:
        Phi = as_float_array(Phi0, "Phi0", ndim=(2, 3), copy=True)
        if Phi.shape not in ((p, p), (k, p, p)):
            raise ValueError(f"Phi0 must have shape ({p}, {p}) or ({k}, {p}, {p}), got {Phi.shape}")
        if not np.allclose(Phi, np.swapaxes(Phi, -1, -2), rtol=1e-10, atol=1e-12):
            raise ValueError("Phi0 must be symmetric")
        try:
            np.linalg.cholesky(Phi)
        except np.linalg.LinAlgError:
            raise ValueError("Phi0 must be positive definite (its Cholesky factorisation failed)") from None
    return m0_arr, Phi


def check_prior_scale(Phi0, Xs, m0, nu0, default_Phi0):
    """Refuse a prior scale matrix that float64 cannot tell from singular beside the data.

    A component's inverse-Wishart scale (posterior, or the BEM mode's numerator) is ``Phi0``
    plus the scatter of its points about ``m0``, whose norm is at most the total sum of squares
    ``T = sum_i |x_i - m0|^2`` of the standardised data ``Xs``.  A float64 Cholesky factorisation
    of a p x p matrix A fails when an eigenvalue falls below about ``p eps |A|``; so the smallest
    eigenvalue of ``Phi0`` must exceed ``4 p eps (largest eigenvalue of Phi0 + T)``, or an empty
    or one-point component's covariance is singular in the middle of the run.  (The
    inverse-Wishart degrees of freedom ``nu0 + p + 1`` exceed ``p - 1`` for every ``nu0 > 0``.)
    ``default_Phi0``: whether ``Phi0`` is the default ``nu0 * I`` (the message then names nu0).
    """
    p = Xs.shape[1]
    eig = np.linalg.eigvalsh(Phi0)
    total = float(((Xs - m0) ** 2).sum())
    floor = 4 * p * np.finfo(np.float64).eps * (float(eig.max()) + total)
    smallest = float(eig.min())
    if smallest > floor:
        return
    if default_Phi0:
        raise ValueError(
            f"nu0={nu0:g} is too small: the prior scale matrix Phi0 = nu0 * I must have eigenvalues above "
            f"{floor:.3g} = 4 p eps (nu0 + sum of squares of the standardised data about m0, {total:.4g}), "
            "or the components' covariances are singular in float64; use nu0 > "
            f"{floor:.3g} (dpmix's default is nu0=1)"
        )
    raise ValueError(
        f"Phi0 has smallest eigenvalue {smallest:.3g}, at or below {floor:.3g} = 4 p eps (its largest "
        f"eigenvalue + sum of squares of the standardised data about m0, {total:.4g}): the components' "
        "covariances would be singular in float64; scale Phi0 up (the data are standardised: nu0 * I, "
        "nu0 of order 1, is the usual scale)"
    )


def check_init(init, center, scale, k, p):
    """``init`` as given (a method name) or as standardised means (k, p) from original units."""
    if isinstance(init, str):
        return init
    mu = as_float_array(real_data(init, "init"), "init", shape=(k, p), copy=True)
    return (mu - center) / scale
