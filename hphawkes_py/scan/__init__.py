"""Kulldorff's spatial scan statistic (Bernoulli, discrete Poisson and space-time permutation models) on CPU and GPU
(Larew et al. 2010).

>>> import hphawkes_py as hp
>>> res = hp.scan.bernoulli(coords, cases, controls, max_population=0.5, n_replicates=999)
>>> res.clusters          # most likely cluster first, then secondary clusters
>>> hp.scan.plot_clusters(res)

Semantics follow SaTScan's purely spatial Bernoulli and discrete Poisson analyses and its space-time
permutation model with circular windows; see :func:`bernoulli`, :func:`poisson` and
:func:`space_time_permutation`. :func:`read_satscan` and :func:`read_satscan_spacetime` read SaTScan's
.cas/.ctl/.pop/.geo files; :func:`run_prm` reruns a SaTScan parameter file.
"""
from ._satscan import read_satscan
from .model import ScanResult, bernoulli, poisson
from .plot import plot_clusters
from .prm import PrmError, prm_arguments, read_prm, run_prm
from .spacetime import SpaceTimeScanResult, read_satscan_spacetime, space_time_permutation

__all__ = ["bernoulli", "poisson", "space_time_permutation", "read_satscan", "read_satscan_spacetime",
           "run_prm", "read_prm", "prm_arguments", "PrmError", "ScanResult", "SpaceTimeScanResult", "plot_clusters"]
