"""Reports of a fitted :class:`~.hdp.HDPGaussianMixture`: the text summary and the plain-Python dict.

Both lead with what a cytometrist reads off an HDP fit: the clusters (modal merging of the
sample-averaged mixture) and each sample's proportion of each cluster, with equal-tailed
credible intervals over the Gibbs draws; then the shared components, the concentrations and
the label-invariant convergence diagnostics.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._validate import check_positive, check_probability

__all__ = ["hdp_summary", "hdp_to_dict"]


def _fmt(v):
    return f"{v:.4g}"


def _proportion_table(model, level) -> pd.DataFrame:
    """(J, n_clusters) table of strings: 'mean [lower, upper]' (Gibbs) or the BEM estimate."""
    W = model.group_cluster_weights_
    cols = [f"cluster {c}" for c in range(W.shape[1])]
    if model.draws_ is None:
        cells = [[f"{m:.3f}" for m in row] for row in W]
    else:
        lo, hi = model.group_weight_intervals(level, by="cluster")
        cells = [[f"{m:.3f} [{a:.3f}, {b:.3f}]" for m, a, b in zip(W[j], lo[j], hi[j])] for j in range(W.shape[0])]
    return pd.DataFrame(cells, columns=cols, index=pd.Index(range(W.shape[0]), name="sample"))


def hdp_summary(model, level: float = 0.95, min_weight: float = 0.01) -> str:
    """The text report of :meth:`HDPGaussianMixture.summary`."""
    model._check_fitted()
    check_probability(level, "level", high_open=True)
    min_weight = check_positive(min_weight, "min_weight", strict=False)
    head = (f"HDP Gaussian mixture ({model.method}, k={model.n_components}, {model.n_samples_} samples, "
            f"n={model.n_}, p={model.p_}, backend={model.backend_}); alpha = {model.alpha_:.4g}, "
            f"alpha0 = {model.alpha0_:.4g}")
    if model.draws_ is not None:
        head += f"; {model.chains} chain(s), {model.draws_['alpha'].shape[0]} draws"
    names = model.feature_names_ or [f"x{a}" for a in range(model.p_)]
    lines = [head, f"{model.n_clusters_} cluster(s) by modal merging (sample-averaged weights):"]
    avg = model.group_cluster_weights_.mean(0)
    for c in range(model.n_clusters_):
        means = ", ".join(f"{nm}={v:.4g}" for nm, v in zip(names, model.cluster_means_[c]))
        lines.append(f"  cluster {c}: weight {avg[c]:.3f}, mean {means}")
    what = f"posterior mean [{level:.0%} credible interval]" if model.draws_ is not None else "BEM estimate"
    lines.append(f"per-sample cluster proportions ({what}):")
    lines.append(_proportion_table(model, level).to_string())
    w = model.group_weights_.mean(0)
    order = np.argsort(-w, kind="stable")
    order = order[w[order] >= min_weight]
    comp = {"component": order, "weight": w[order], "cluster": model.component_clusters_[order]}
    for a, nm in enumerate(names):
        comp[f"mean_{nm}"] = model.means_[order, a]
    lines.append(f"components with sample-averaged weight >= {min_weight:g}:")
    lines.append(pd.DataFrame(comp).to_string(index=False, float_format=_fmt))
    diag = model.diagnostics()
    if diag is not None:
        lines.append("label-invariant convergence diagnostics:\n" + diag.to_string(float_format=_fmt))
        bad = diag.index[diag["r_hat"] > 1.01].tolist()
        if bad:
            warnings.warn(f"R-hat > 1.01 for {bad}: the HDP Gibbs chain(s) may not have converged; run longer "
                          "(n_iter, burn_in) or more chains", RuntimeWarning, stacklevel=3)
    return "\n".join(lines)


def _finite_or_none(v):
    v = float(v)
    return v if np.isfinite(v) else None


def hdp_to_dict(model, level: float = 0.95) -> dict:
    """The JSON-serialisable dict of :meth:`HDPGaussianMixture.to_dict`."""
    model._check_fitted()
    check_probability(level, "level", high_open=True)
    props = {"level": float(level), "cluster": model.group_cluster_weights_.tolist(),
             "component": model.group_weights_.tolist()}
    if model.draws_ is not None:
        for by in ("cluster", "component"):
            lo, hi = model.group_weight_intervals(level, by=by)
            props[f"{by}_lower"], props[f"{by}_upper"] = lo.tolist(), hi.tolist()
    diag = model.diagnostics()
    return {
        "model": "HDPGaussianMixture",
        "method": model.method,
        "n_components": model.n_components,
        "n_samples": int(model.n_samples_),
        "n_per_sample": [int(v) for v in model.n_per_sample_],
        "n": int(model.n_),
        "p": int(model.p_),
        "backend": model.backend_,
        "feature_names": model.feature_names_,
        "alpha": float(model.alpha_),
        "alpha0": float(model.alpha0_),
        "beta": model.beta_.tolist(),
        "weights": model.weights_.tolist(),
        "group_weights": model.group_weights_.tolist(),
        "means": model.means_.tolist(),
        "covariances": model.covariances_.tolist(),
        "center": model.center_.tolist(),
        "scale": model.scale_.tolist(),
        "n_iter": int(model.n_iter_),
        "converged": None if model.converged_ is None else bool(model.converged_),
        "chains": model.chains,
        "acceptance_rates": None if model.acceptance_rates_ is None else model.acceptance_rates_.tolist(),
        "proportions": props,
        "clusters": {
            "n_clusters": int(model.n_clusters_),
            "component_cluster": model.component_clusters_.tolist(),
            "means": model.cluster_means_.tolist(),
        },
        "diagnostics": None if diag is None else {
            str(name): {str(col): _finite_or_none(v) for col, v in row.items()} for name, row in diag.iterrows()},
        "priors": {
            "alpha_prior": list(model.alpha_prior),
            "alpha0_prior": list(model.alpha0_prior),
            "m0_standardised": model._m0.tolist(),
            "gamma0": model.gamma0,
            "nu0": model.nu0,
            "Phi0_standardised": np.asarray(model._Phi0).tolist(),
        },
    }
