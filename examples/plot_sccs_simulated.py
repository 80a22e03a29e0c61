"""
Self-controlled case series at scale: many drugs, a Laplace prior
=================================================================

The setting of Suchard et al. (2013): many drugs at once, most without effect, a Laplace prior
that sets most coefficients exactly to zero, and its variance chosen by cross-validation.
"""

import matplotlib.pyplot as plt
import numpy as np

import hphawkes_py as hp

data, truth = hp.sccs.simulate(n_cases=1500, n_drugs=40, prevalence=0.1, seed=1)
print(data)

# %%
# Fit: cross-validate the prior variance
# --------------------------------------
cv = hp.sccs.cross_validate(data, prior="laplace", folds=3, grid=[0.01, 0.1, 1.0], seed=2, progress=False,
                            backend="cpu")
print(cv)
est = cv.fit.coefficients.reindex(truth.index)

# %%
# Check: estimates against the truth
# ----------------------------------
fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(truth, est, s=14)
lim = [min(truth.min(), est.min()) - 0.1, max(truth.max(), est.max()) + 0.1]
ax.plot(lim, lim, color="grey", lw=1)
ax.set_xlabel("true log IRR")
ax.set_ylabel("Laplace MAP estimate")
ax.set_title(f"{int(np.sum(est != 0))} of {len(est)} coefficients non-zero")
