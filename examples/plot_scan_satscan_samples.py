"""
SaTScan's own samples: survival in space and time, points in a region
=====================================================================

Two of the sample analyses SaTScan ships, rerun unchanged from their parameter files with
``hp.scan.run_prm``:

* ``FakeSpaceTimeExponential.prm``: 65 patients at 5 places, each with a survival time (censored or not)
  and a date from 2000 to 2005. The exponential model asks whether some place, during some period, had
  shorter survival than the others: a cylinder's expected deaths are its patients' follow-up time scaled
  to the deaths, and the null permutes the (time, censoring) pairs among the patients.
* ``PolygonSpatialContinuousPoisson.prm``: 500 points in a square made of two triangles. The continuous
  Poisson model compares the points in a circle with the circle's area.

Both give SaTScan 10.3.2's clusters (``tests/test_scan_exponential_space_time.py``,
``tests/test_scan_continuous_poisson.py``).
"""

from pathlib import Path

import matplotlib.pyplot as plt

import hphawkes_py as hp

samples = Path(hp.__file__).parent / "data" / "scan" / "satscan_sample_data"

# %%
# Survival in space and time
# --------------------------
survival = hp.scan.run_prm(samples / "FakeSpaceTimeExponential.prm", seed=1, progress=False, backend="cpu")
survival.clusters[["location_ids", "start", "end", "population", "cases", "expected", "log_likelihood_ratio",
                   "p_value"]]

# %%
# Points in a region
# ------------------
points = hp.scan.run_prm(samples / "PolygonSpatialContinuousPoisson.prm", seed=1, progress=False, backend="cpu")
points.clusters[["x", "y", "radius", "cases", "expected", "log_likelihood_ratio", "p_value"]].head()

# %%
# The points and the circles of the clusters (the most likely one in bold)
fig, ax = plt.subplots(figsize=(6, 6))
hp.scan.plot_clusters(points, ax, max_clusters=3)
ax.set_aspect("equal")
