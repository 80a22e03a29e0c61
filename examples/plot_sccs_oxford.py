"""
Self-controlled case series: MMR vaccine and meningitis
=======================================================

The Oxford data (Farrington & Whitaker; Cyclops' test set): 10 children with aseptic meningitis,
each observed over its second year of life, with a risk window after MMR vaccination. The
self-controlled case series compares each child's event rate inside and outside the risk
window, so fixed characteristics of the child cancel out. Suchard et al. (2013) fit such models
with Normal or Laplace priors by cyclic coordinate descent.
"""

import hphawkes_py as hp

ox = hp.datasets.load_oxford()
ox.head()

# %%
# Data
# ----
# ``SCCSData.from_long`` takes data already split into intervals, as Cyclops does: an outcome
# table (one row per interval: its case, its events and its length) and a covariate table (which
# intervals have which covariate: here the risk window after vaccination and the second age
# group).
import numpy as np
import pandas as pd

rows = np.arange(len(ox))
outcomes = pd.DataFrame({"stratum_id": ox["indiv"], "row_id": rows, "y": ox["event"], "time": ox["interval"]})
covariates = pd.concat([pd.DataFrame({"row_id": rows[ox["exgr"] == 1], "covariate_id": "exgr1"}),
                        pd.DataFrame({"row_id": rows[ox["agegr"] == 2], "covariate_id": "agegr2"})],
                       ignore_index=True)
data = hp.sccs.SCCSData.from_long(outcomes, covariates)
print(data)

# %%
# Fit: the conditional MLE and a Normal prior
# -------------------------------------------
# The incidence rate ratio in the risk window, with a profile-likelihood interval (these equal
# R's ``survival::clogit`` on the same data).
mle = hp.sccs.fit(data, prior="none", progress=False, backend="cpu")
mle.results_table(method="profile")

# %%
normal = hp.sccs.fit(data, prior="normal", variance=1.0, progress=False, backend="cpu")
normal.coefficients
