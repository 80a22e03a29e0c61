"""Truncated DP Gaussian mixture (Suchard et al. 2010) in Python on flow-cytometry data.

    python vignettes/python/mixture.py --quick
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from _common import parse  # noqa: E402

args = parse(__doc__)
fc = hp.datasets.load_flow_cytometry("facscalibur")
X = np.arcsinh(fc.drop(columns="Time").to_numpy(float) / 150.0)
if args.quick:
    X = X[np.random.default_rng(1).choice(len(X), 2000, replace=False)]
k = 16 if args.quick else 256
bem = hp.mixture.TDPGaussianMixture(k, method="bem", n_iter=60 if args.quick else 500, seed=1,
                                    progress=False, backend=args.backend).fit(X)
print(bem.summary(min_weight=0.02))
gibbs = hp.mixture.TDPGaussianMixture(k, method="gibbs", n_iter=40 if args.quick else 1000,
                                      burn_in=10 if args.quick else 100, seed=2, progress=False,
                                      backend=args.backend).fit(X)
print(gibbs.summary(min_weight=0.02))
print("alpha draws: mean %.3f" % gibbs.draws_["alpha"].mean())
print("mean log density: bem %.4f, gibbs %.4f" % (bem.score(X), gibbs.score(X)))
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(6, 5))
ax.scatter(X[:, 0], X[:, 1], c=gibbs.cluster_labels_, s=2, cmap="tab10")
ax.set_xlabel("asinh(FSC-H / 150)"); ax.set_ylabel("asinh(SSC-H / 150)")
ax.set_title(f"TDP mixture (Gibbs): {gibbs.n_clusters_} clusters by modal merging")
fig.savefig(Path(args.outdir) / "mixture_gibbs.png", dpi=100)
print(f"figures in {args.outdir}")
