"""Kulldorff's spatial scan statistic (Bernoulli and discrete Poisson models) on CPU and GPU
(Larew et al. 2010).

>>> import hphawkes_py as hp
>>> res = hp.scan.bernoulli(coords, cases, controls, max_population=0.5, n_replicates=999)
>>> res.clusters          # most likely cluster first, then secondary clusters
>>> hp.scan.plot_clusters(res)

Semantics follow SaTScan's purely spatial Bernoulli and discrete Poisson analyses with circular
windows; see :func:`bernoulli` and :func:`poisson`. :func:`read_satscan` reads SaTScan's .cas/.ctl/.pop/.geo files.
"""
from ._prm import run_prm
from ._satscan import read_satscan
from .model import ScanResult, bernoulli, poisson
from .plot import plot_clusters
from .space_time import space_time_permutation

__all__ = ["bernoulli", "poisson", "space_time_permutation", "read_satscan", "run_prm", "ScanResult",
           "plot_clusters"]
