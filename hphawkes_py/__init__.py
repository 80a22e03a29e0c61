"""hphawkes_py: five massively parallel statistical methods on CPU (Numba) and GPU (CUDA).

Public namespaces (imported on first use, so ``import hphawkes_py`` is cheap):

* :mod:`hphawkes_py.hawkes`  -- spatiotemporal Hawkes processes (Holbrook et al. 2021)
* :mod:`hphawkes_py.kde`     -- adaptive kernel density estimation (Zhang, Zhu & Huang 2017)
* :mod:`hphawkes_py.sccs`    -- Bayesian self-controlled case series (Suchard et al. 2013)
* :mod:`hphawkes_py.scan`    -- Kulldorff's Bernoulli spatial scan statistic (Larew et al. 2010)
* :mod:`hphawkes_py.mixture` -- truncated Dirichlet-process Gaussian mixtures (Suchard et al. 2010)
* :mod:`hphawkes_py.datasets` -- the bundled data sets
"""
from __future__ import annotations

import importlib

from ._backend import BackendUnavailableError

__version__ = "0.1.0"
__all__ = ["hawkes", "kde", "sccs", "scan", "mixture", "datasets", "BackendUnavailableError", "__version__"]

_NAMESPACES = {"hawkes", "kde", "sccs", "scan", "mixture", "datasets", "interop"}


def __getattr__(name: str):
    if name in _NAMESPACES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hphawkes_py' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _NAMESPACES)
