"""
Relative risk: larynx cancer near Chorley
=========================================

The log ratio of the case and control intensities, as in sparr and spatstat: 58 larynx cancer
cases against 978 lung cancer controls in Chorley-Ribble (Diggle 1990), with Monte Carlo
p-values from random relabellings of cases and controls and the tolerance contours where the
risk is significantly raised.
"""

import numpy as np

import hphawkes_py as hp

chorley = hp.datasets.load_point_pattern("chorley")
window = hp.kde.Window.from_asc(hp.datasets.path("kde/chorley_mask_0.1km.asc.gz"))
cases = chorley.loc[chorley["mark"] == "larynx", ["x", "y"]].to_numpy()
controls = chorley.loc[chorley["mark"] == "lung", ["x", "y"]].to_numpy()

# %%
# Fit: fixed bandwidths by the oversmoothing rule
# -----------------------------------------------
rr = hp.kde.relative_risk(cases, controls, window, bandwidth="oversmoothing", progress=False, backend="cpu")
rr.summary()

# %%
# Check: where is the risk raised?
# --------------------------------
# 99 relabellings keep the example quick; use 999 or more in an analysis.
p = rr.p_values("monte_carlo", n_replicates=99, seed=1, progress=False)
print(f"share of the window with p < 0.05: {np.nanmean(p.values < 0.05):.3f}")
rr.tolerance_contours([0.05, 0.01], p_values=p)
