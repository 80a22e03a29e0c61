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
sample; dpmix's ``HDPNormalMixture``).
"""
from .draws import relabel_draws
from .hdp import HDPGaussianMixture
from .model import TDPGaussianMixture

__all__ = ["HDPGaussianMixture", "TDPGaussianMixture", "relabel_draws"]
