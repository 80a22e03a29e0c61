"""Truncated Dirichlet-process Gaussian mixtures (Suchard, Wang, Chan, Frelinger, Cron & West 2010).

:class:`TDPGaussianMixture` fits a k-component (default 256) truncated DP mixture of
multivariate normals by blocked Gibbs sampling (``method="gibbs"``) or Bayesian EM
(``method="bem"``).  The hot step -- configuration probabilities of all n x k
(point, component) pairs and the label draws -- runs on a Numba/BLAS CPU engine
or on a CUDA engine (``backend="gpu"``; ``"emulator"`` runs the same kernels on the CPU).
"""
from .model import TDPGaussianMixture, relabel_draws

__all__ = ["TDPGaussianMixture", "relabel_draws"]
