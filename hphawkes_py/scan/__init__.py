"""Kulldorff's spatial scan statistic (Bernoulli model) on CPU and GPU (Larew et al. 2010).

>>> import hphawkes_py as hp
>>> res = hp.scan.bernoulli(coords, cases, controls, max_population=0.5, n_replicates=999)
>>> res.clusters          # most likely cluster first, then secondary clusters
>>> res.plot()

Semantics follow SaTScan's purely spatial Bernoulli analysis with circular windows; see
:func:`bernoulli`. :func:`read_satscan` reads SaTScan's .cas/.ctl/.pop/.geo files.
"""
from ._satscan import read_satscan
from .model import ScanResult, bernoulli
from .prm import PrmError, read_prm, run_prm
from .spacetime import SpaceTimeScanResult, read_satscan_spacetime, space_time_permutation

__all__ = ["bernoulli", "space_time_permutation", "read_satscan", "read_satscan_spacetime", "ScanResult",
           "SpaceTimeScanResult", "run_prm", "read_prm", "PrmError"]
