"""Truncated Dirichlet-process Gaussian mixtures (Suchard, Wang, Chan, Frelinger, Cron & West 2010).

:class:`TDPGaussianMixture` fits a k-component (default 256) truncated DP mixture of
multivariate normals by blocked Gibbs sampling (``method="gibbs"``, several chains with
``chains=``/``executor=`` and label-invariant R-hat/ESS in ``summary()``) or Bayesian EM
(``method="bem"``, optional pruning of light components).  Predictions use the posterior
predictive density over the stored draws (or the plug-in of the point estimates); components
are merged into clusters by the modes of the fitted density (Chan et al. 2008):
``cluster_labels_``, ``predict_cluster``.  The hot step -- configuration probabilities of all
n x k (point, component) pairs and the label draws -- runs on a Numba/BLAS CPU engine or on a
CUDA engine (``backend="gpu"``; ``"emulator"`` runs the same kernels on the CPU).
:class:`HDPGaussianMixture` is the hierarchical DP across samples (shared components, weights per
sample; dpmix's ``HDPNormalMixture``). For flow cytometry: :func:`read_fcs` reads FCS files
(compensated, arcsinh/logicle transformed), :func:`point_partition` reports one partition by
Binder or VI loss from per-draw labels, and :mod:`~hphawkes_py.mixture.cytometry` summarises it.
"""
from .cytometry import cluster_summary, plot_biaxial, plot_sample_proportions, sample_proportions
from .draws import relabel_draws
from .fcs import arcsinh_transform, compensate, logicle_transform, parse_spillover, read_fcs, read_fcs_folder
from .hdp import HDPGaussianMixture
from .model import TDPGaussianMixture
from .similarity import posterior_similarity_blocks
from .partitions import (PointPartition, binder_distance, binder_loss, point_partition, posterior_similarity,
                         sample_label_draws, variation_of_information, vi_loss)

__all__ = ["HDPGaussianMixture", "TDPGaussianMixture", "relabel_draws",
           "read_fcs", "read_fcs_folder", "parse_spillover", "compensate", "arcsinh_transform", "logicle_transform",
           "posterior_similarity", "posterior_similarity_blocks", "point_partition", "PointPartition", "binder_loss", "vi_loss",
           "variation_of_information", "binder_distance", "sample_label_draws",
           "cluster_summary", "sample_proportions", "plot_biaxial", "plot_sample_proportions"]
