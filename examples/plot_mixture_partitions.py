"""
Flow cytometry: from FCS files to a reported partition
======================================================

Three simulated blood samples, written as FCS 3.1 files with a spillover matrix as a cytometer
stores it, are read back compensated and arcsinh-transformed; a truncated Dirichlet-process
mixture is fitted to the pooled events, and its posterior over partitions is summarised by the
partition of least expected variation of information (the SALSO search).  The figures are the
ones cytometrists read: a biaxial plot coloured by cluster, the posterior similarity of a
subsample, and each sample's share of each cluster.
"""

import tempfile
from pathlib import Path

import flowio
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hphawkes_py.mixture import (TDPGaussianMixture, cluster_summary, plot_biaxial, plot_sample_proportions,
                                 point_partition, posterior_similarity, read_fcs_folder, sample_label_draws,
                                 sample_proportions)

# %%
# Write three FCS files
# ---------------------
# T helper (CD4+), cytotoxic T (CD8+) and B cells (CD19+) in proportions that differ between
# donors; the detectors see the true fluorescence times the spillover matrix.
channels = ["FSC-A", "SSC-A", "FL1-A", "FL2-A", "FL3-A"]
markers = ["", "", "CD4", "CD8", "CD19"]
spill = np.array([[1.0, 0.12, 0.01], [0.03, 1.0, 0.10], [0.0, 0.05, 1.0]])
populations = np.array([[2500.0, 40.0, 30.0], [60.0, 2200.0, 40.0], [50.0, 30.0, 1800.0]])
shares = {"donor_A": [0.5, 0.3, 0.2], "donor_B": [0.3, 0.5, 0.2], "donor_C": [0.4, 0.2, 0.4]}
folder = Path(tempfile.mkdtemp())
rng = np.random.default_rng(7)
for donor, share in shares.items():
    kind = rng.choice(3, size=400, p=share)
    true = rng.normal(populations[kind], 0.15 * populations[kind])
    scatter = rng.normal([50000, 20000], [5000, 3000], (400, 2))
    with open(folder / f"{donor}.fcs", "wb") as fh:
        flowio.create_fcs(fh, np.column_stack([scatter, true @ spill]).ravel().tolist(), channels,
                          opt_channel_names=markers,
                          metadata_dict={"spillover": "3,FL1-A,FL2-A,FL3-A," + ",".join(map(str, spill.ravel()))})

# %%
# Read, compensate, transform
# ---------------------------
frames, samples = read_fcs_folder(folder, channels=["CD4", "CD8", "CD19"], transform="arcsinh",
                                  cofactor=150.0, column_names="pns")
X = pd.concat(frames, ignore_index=True)
sample_of_event = np.repeat(samples, [len(f) for f in frames])
print(samples, X.shape, frames[0].attrs["compensated"])

# %%
# Fit, draw partitions, report one
# --------------------------------
model = TDPGaussianMixture(16, n_iter=60, burn_in=40, seed=3, progress=False).fit(X)
Z = sample_label_draws(model, X, n_draws=30, seed=0)
estimate = point_partition(Z, loss="VI", seed=0)
print(f"{estimate.n_clusters} clusters, expected VI {estimate.expected_loss:.3f} bits")
cluster_summary(X, estimate.labels)

# %%
# Biaxial plots and the posterior similarity of a subsample
# ---------------------------------------------------------
fig, axes = plt.subplots(1, 3, figsize=(13, 4))
plot_biaxial(X, estimate.labels, "CD4", "CD8", ax=axes[0])
plot_biaxial(X, estimate.labels, "CD8", "CD19", ax=axes[1])
idx = np.random.default_rng(1).choice(len(X), 150, replace=False)
idx = idx[np.argsort(estimate.labels[idx], kind="stable")]
im = axes[2].imshow(posterior_similarity(Z, index=idx), vmin=0, vmax=1, cmap="Greys")
axes[2].set_title("posterior similarity (150 events)")
fig.colorbar(im, ax=axes[2])
fig.tight_layout()

# %%
# Each donor's share of each cluster
# ----------------------------------
props = sample_proportions(estimate.labels, sample_of_event)
plot_sample_proportions(props)
props.round(2)
