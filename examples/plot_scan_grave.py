"""
Bernoulli scan: medieval grave sites
====================================

Kulldorff's Bernoulli spatial scan statistic, as SaTScan computes it and as Larew et al. (2010)
parallelised it: among 143 medieval graves, are the 30 with a tooth deformity clustered? Every
circle around every grave (up to half the population) is scored by its likelihood ratio, and the
largest is compared with its distribution under random relabelling.
"""

import hphawkes_py as hp

g = hp.datasets.load_grave()
coords = g[["x", "y"]].to_numpy()

# %%
# Fit
# ---
res = hp.scan.bernoulli(coords, g["case"].to_numpy(), 1 - g["case"].to_numpy(), n_replicates=999, seed=1,
                        progress=False, backend="cpu")
res.summary()

# %%
# The clusters (most likely first, then secondary clusters that do not overlap it)
res.clusters.head()

# %%
# Plot
# ----
res.plot()
