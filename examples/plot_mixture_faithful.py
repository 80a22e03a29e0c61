"""
Dirichlet-process mixture: Old Faithful
=======================================

A truncated Dirichlet-process mixture of Gaussians (Suchard et al. 2010) on the Old Faithful
eruptions: the number of components need not be chosen, and merging components by the modes of
the fitted density finds the two kinds of eruption (short ones after short waits, long ones after
long waits).
"""

import hphawkes_py as hp

faithful = hp.datasets.load_faithful()
X = faithful[["eruptions", "waiting"]].to_numpy()

# %%
# Fit by blocked Gibbs sampling
# -----------------------------
model = hp.mixture.TDPGaussianMixture(n_components=32, method="gibbs", n_iter=400, burn_in=100, seed=1,
                                      progress=False, backend="cpu").fit(X)
print(f"{model.n_clusters_} clusters, weights {model.cluster_weights_.round(3)}")
model.cluster_means_

# %%
# Check and predict
# -----------------
# The mean log density of the data under the posterior predictive, and cluster labels.
print(f"mean log density: {model.score(X):.3f}")
labels = model.predict_cluster(X)

# %%
# Plot
# ----
model.plot(X)
