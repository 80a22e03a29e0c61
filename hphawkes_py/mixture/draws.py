"""Posterior draws of the Gibbs sampler: label switching undone, convergence diagnosed.

The components of a mixture are exchangeable, so their labels may switch between draws
(:func:`relabel_draws` permutes each draw to match a reference), and convergence is judged on
quantities that do not depend on the labels (:func:`label_invariant_diagnostics`).
"""
from __future__ import annotations

import numpy as np

from .._validate import as_float_array, check_int

__all__ = ["relabel_draws", "label_invariant_diagnostics"]


def relabel_draws(weights, means, covariances, reference=None):
    """Undo label switching: permute each draw's components to best match a reference draw.

    Parameters
    ----------
    weights : ndarray (S, k)
        Mixture weights of the S posterior draws (unitless, each row sums to one).
    means : ndarray (S, k, p)
        Component means of the draws (any units; the cost is computed on ``means`` as given,
        so pass standardised means when columns have very different scales).
    covariances : ndarray (S, k, p, p)
        Component covariances of the draws (units of ``means`` squared); checked for shape,
        not used by the cost.
    reference : int, optional
        Index of the reference draw (default: the last draw; negative indices count from
        the end).

    Returns
    -------
    perms : ndarray (S, k) int
        ``perms[s, i]`` is the component of draw s that is labelled i after relabelling.

    Notes
    -----
    For every draw s, solves the assignment problem (``scipy.optimize.linear_sum_assignment``)
    with cost ``C[i, j] = (w_ref_i + w_sj) * ||mu_ref_i - mu_sj||^2``: heavy components
    are matched by location first, and empty components (weight ~ 0) are matched
    arbitrarily, which does not change posterior means of weights.  dpmix relabels by a
    cost built from classifications of all n points to the initial values; the
    mean/weight cost used here needs no per-draw labels (O(k^2 p) per draw).

    Examples
    --------
    Three draws of a two-component mixture in one dimension; the middle draw has its labels
    switched:

    >>> from hphawkes_py.mixture import relabel_draws
    >>> weights = np.array([[0.3, 0.7], [0.7, 0.3], [0.3, 0.7]])
    >>> means = np.array([[[0.0], [5.0]], [[5.0], [0.0]], [[0.1], [4.9]]])
    >>> covariances = np.ones((3, 2, 1, 1))
    >>> perms = relabel_draws(weights, means, covariances)
    >>> perms.tolist()
    [[0, 1], [1, 0], [0, 1]]
    >>> rows = np.arange(3)[:, None]
    >>> print(means[rows, perms][:, :, 0])
    [[0.  5. ]
     [0.  5. ]
     [0.1 4.9]]
    """
    from scipy.optimize import linear_sum_assignment

    weights = as_float_array(weights, "weights", ndim=2)
    S, k = weights.shape
    means = as_float_array(means, "means", ndim=3)
    if means.shape[:2] != (S, k):
        raise ValueError(f"means must have shape ({S}, {k}, p) to match weights, got {means.shape}")
    p = means.shape[2]
    as_float_array(covariances, "covariances", shape=(S, k, p, p))
    r = S - 1 if reference is None else check_int(reference, "reference", minimum=-S, maximum=S - 1) % S
    wr, mr = weights[r], means[r]
    perms = np.empty((S, k), dtype=np.int64)
    sq_r = (mr * mr).sum(1)
    for s in range(S):
        ms = means[s]
        d2 = sq_r[:, None] + (ms * ms).sum(1)[None, :] - 2.0 * mr @ ms.T
        cost = (wr[:, None] + weights[s][None, :]) * np.maximum(d2, 0.0)
        _, cols = linear_sum_assignment(cost)
        perms[s] = cols
    return perms


def label_invariant_diagnostics(traces: dict) -> "object":
    """R-hat and bulk/tail ESS (ArviZ) of label-invariant quantities.

    ``traces`` maps a name to an array (chains, draws).  One chain is split in two halves (the
    split R-hat of a single chain).  Returns a pandas DataFrame indexed by name.
    """
    import arviz as az
    import pandas as pd

    rows = {}
    for name, a in traces.items():
        a = np.asarray(a, dtype=np.float64)
        if a.shape[0] == 1:
            h = a.shape[1] // 2
            a = np.stack([a[0, :h], a[0, h : 2 * h]])
        if a.shape[1] < 4:
            rows[name] = (float(a.mean()), np.nan, np.nan, np.nan)
            continue
        if np.ptp(a) == 0:
            rows[name] = (float(a.mean()), 1.0, np.nan, np.nan)
            continue
        rows[name] = (
            float(a.mean()),
            float(az.rhat(a)),
            float(az.ess(a, method="bulk")),
            float(az.ess(a, method="tail")),
        )
    return pd.DataFrame.from_dict(rows, orient="index", columns=["mean", "r_hat", "ess_bulk", "ess_tail"])
