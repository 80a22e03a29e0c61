"""
Hierarchical DP mixture: cell populations shared across samples
===============================================================

Three simulated cytometry samples share two cell populations in different proportions, and
the third has a population of its own.  The hierarchical Dirichlet-process mixture (dpmix's
``HDPNormalMixture``) fits one set of components to all samples and a weight vector per
sample, with credible intervals, so that the sample-specific population shows up as a weight
near zero in the other samples.
"""

import matplotlib.pyplot as plt
import numpy as np

import hphawkes_py as hp

rng = np.random.default_rng(0)
centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
counts = [[300, 300, 0], [420, 180, 0], [240, 180, 180]]
samples = []
for c in counts:
    z = np.repeat(np.arange(3), c)
    samples.append(centres[z] + rng.normal(scale=0.6, size=(z.size, 2)))

# %%
# Fit: blocked Gibbs from a Bayesian EM warm start
# ------------------------------------------------
model = hp.mixture.HDPGaussianMixture(n_components=8, n_iter=200, burn_in=100, warm_start=True, seed=1,
                                      progress=False, backend="cpu").fit(samples)
print("clusters (modes of the fitted density):", model.n_clusters_)
print("cluster means:\n", model.cluster_means_.round(2))
print("sample proportions of each cluster (posterior means):\n", model.group_cluster_weights_.round(3))
print("acceptance rate of alpha0's MH step:", model.acceptance_rates_[-1].round(2))

# %%
# Per-sample proportions with 95% credible intervals
# --------------------------------------------------
# Per cluster: in every draw, the sum of the weights of the cluster's components, so a
# population that the sampler shares between two components still has a tight interval.
lower, upper = model.group_weight_intervals(0.95, by="cluster")
C = model.n_clusters_
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
width = 0.25
for j in range(len(samples)):
    w = model.group_cluster_weights_[j]
    err = np.vstack([w - lower[j], upper[j] - w])
    axes[0].bar(np.arange(C) + (j - 1) * width, w, width, yerr=err, capsize=3, label=f"sample {j}")
axes[0].set_xticks(range(C), [f"cluster {c}" for c in range(C)])
axes[0].set_ylabel("proportion of the sample's cells")
axes[0].legend()

# %%
# Events of the third sample coloured by their cluster
# ----------------------------------------------------
labels = model.predict_cluster(samples[2], group=2)
axes[1].scatter(samples[2][:, 0], samples[2][:, 1], c=labels, s=6, cmap="tab10")
axes[1].set_xlabel("channel 1")
axes[1].set_ylabel("channel 2")
axes[1].set_title("sample 2")
fig.tight_layout()
