"""Issue 16 goal for the TDP mixture: held-out density and merged clusters on known mixtures.

Two cases:

* ``3c``: 4,000 training points from the well-separated 3-component bivariate mixture of
  ``tests/test_mixture_stats.py``; ``TDPGaussianMixture(32, method="gibbs", n_iter=400, burn_in=150)``
  and BEM (32 components);
* ``10d``: 4,000 points from an 8-component mixture in 10 dimensions (means on a scale of 4 sd).

For each fit: the mean log density of 20,000 fresh points minus that of the TRUE density
(nats/point; the goal is > -0.01), the number of clusters by modal merging (goal: the true
number), the number of components above 5% weight, and the same figures for scikit-learn's
``BayesianGaussianMixture`` (Dirichlet-process prior, 32 components, k-means init) when
scikit-learn is installed.  Not a timing benchmark.  Writes ``benchmarks/results/mixture_goal.json``.

Usage::

    python benchmarks/bench_mixture_goal.py [--cases 3c 10d] [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from hphawkes_py.mixture import TDPGaussianMixture

RESULTS = Path(__file__).resolve().parent / "results" / "mixture_goal.json"


def case_3c():
    w = np.array([0.5, 0.3, 0.2])
    mu = np.array([[0.0, 0.0], [6.0, 2.0], [-4.0, 5.0]])
    cov = np.array([[[1.0, 0.5], [0.5, 1.0]], [[0.5, 0.0], [0.0, 2.0]], [[1.5, -0.6], [-0.6, 0.8]]])
    return w, mu, cov


def case_10d(seed=7):
    rng = np.random.default_rng(seed)
    k, p = 8, 10
    w = rng.dirichlet(np.full(k, 5.0))
    mu = rng.normal(scale=4.0, size=(k, p))
    A = rng.normal(scale=0.35, size=(k, p, p))
    cov = A @ np.swapaxes(A, 1, 2) + 0.5 * np.eye(p)
    return w, mu, cov


def simulate(w, mu, cov, n, rng):
    z = rng.choice(len(w), n, p=w)
    L = np.linalg.cholesky(cov)
    return mu[z] + np.einsum("iab,ib->ia", L[z], rng.standard_normal((n, mu.shape[1])))


def true_logdens(X, w, mu, cov):
    D = np.stack([np.log(w[j]) + multivariate_normal(mu[j], cov[j]).logpdf(X) for j in range(len(w))], 1)
    return logsumexp(D, axis=1)


def run_case(name, w, mu, cov, seed):
    rng = np.random.default_rng(seed)
    Xtr = simulate(w, mu, cov, 4000, rng)
    Xte = simulate(w, mu, cov, 20000, rng)
    truth = true_logdens(Xte, w, mu, cov).mean()
    rows = []
    fits = {
        "gibbs": dict(method="gibbs", n_iter=400, burn_in=150),
        "bem": dict(method="bem", n_iter=1000),
    }
    for label, kw in fits.items():
        t = time.perf_counter()
        m = TDPGaussianMixture(32, seed=seed, progress=False, backend="cpu", **kw).fit(Xtr)
        sec = time.perf_counter() - t
        row = {"case": name, "fit": f"hphawkes {label}", "seconds": round(sec, 1),
               "heldout_minus_truth": float(m.score(Xte) - truth),
               "clusters": int(m.n_clusters_), "components_over_5pct": int((m.weights_ > 0.05).sum()),
               "true_components": len(w)}
        if label == "gibbs":
            row["heldout_minus_truth_plugin"] = float(m.score(Xte, estimate="plugin") - truth)
        rows.append(row)
    try:
        from sklearn.mixture import BayesianGaussianMixture
    except ImportError:
        rows.append({"case": name, "fit": "sklearn BayesianGaussianMixture", "note": "scikit-learn not installed"})
    else:
        t = time.perf_counter()
        b = BayesianGaussianMixture(n_components=32, weight_concentration_prior_type="dirichlet_process",
                                    max_iter=1000, random_state=seed).fit(Xtr)
        rows.append({"case": name, "fit": "sklearn BayesianGaussianMixture", "seconds": round(time.perf_counter() - t, 1),
                     "heldout_minus_truth": float(b.score(Xte) - truth), "clusters": None,
                     "components_over_5pct": int((b.weights_ > 0.05).sum()), "true_components": len(w)})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["3c", "10d"], choices=["3c", "10d"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for c in args.cases:
        rows += run_case(c, *(case_3c() if c == "3c" else case_10d()), args.seed)
    for r in rows:
        print(json.dumps(r))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"seed": args.seed, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
