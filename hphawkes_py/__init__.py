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

from ._errors import BackendUnavailableError
from ._numba_cache import refresh as _refresh_numba_cache

_refresh_numba_cache()  # kernels compiled against a changed _fastmath must not be reused

__version__ = "0.1.0"
__all__ = ["hawkes", "kde", "sccs", "scan", "mixture", "datasets", "BackendUnavailableError", "backends", "info",
           "__version__"]

_NAMESPACES = {"hawkes", "kde", "sccs", "scan", "mixture", "datasets", "interop"}


def backends():
    """Which compute backends can run here, as a table.

    Returns
    -------
    pandas.DataFrame
        One row per backend (``cpu``, ``gpu``, ``emulator``): ``available``, ``detail`` (what runs,
        or why it cannot and how to fix it), ``is_auto`` (what ``backend="auto"`` picks) and, for a
        usable GPU, ``api`` (``pycuda`` or ``cupy``), ``device``, ``compute_capability`` and
        ``memory_gib``.

    See Also
    --------
    info : versions, threads and GPU status as a dict.

    Examples
    --------
    >>> table = hp.backends()
    >>> list(table["backend"])
    ['cpu', 'gpu', 'emulator']
    >>> bool(table.set_index("backend").loc["cpu", "available"])
    True
    """
    import pandas as pd

    from . import _backend

    auto = _backend.resolve_backend("auto")
    rows = []
    for name, detail in (("cpu", "Numba multi-core CPU engine"), ("gpu", None),
                         ("emulator", "CUDA sources compiled for the host and run on the CPU (validation, slow)")):
        row = dict(backend=name, available=True, detail=detail, is_auto=name == auto, api=None, device=None,
                   compute_capability=None, memory_gib=None)
        try:
            _backend.resolve_backend(name)
        except BackendUnavailableError as exc:
            row.update(available=False, detail=str(exc))
        if name == "gpu" and row["available"]:
            from .gpu import get_device

            d = get_device("gpu").describe()
            row.update(detail=f"{d['api']}: {d['device']}", api=d["api"], device=d["device"],
                       compute_capability=d["compute_capability"], memory_gib=d["memory_gib"])
        rows.append(row)
    return pd.DataFrame(rows)


def info() -> dict:
    """Versions, threads, the Numba threading layer, GPU and compiler status (``hphawkes info``).

    Returns
    -------
    dict
        Keys include ``hphawkes_py``, ``python``, ``platform``, the versions of ``numpy``,
        ``scipy``, ``numba``, ``pandas`` and ``arviz``, ``cpu_count``, ``numba_threads``,
        ``numba_threading_layer``, ``gpu_usable`` and ``gpu_status`` (and, on a usable GPU, its
        API, device, compute capability and memory), and ``auto_backend`` (what ``backend="auto"``
        picks here).

    See Also
    --------
    backends : which backends can run, as a table.

    Examples
    --------
    >>> d = hp.info()
    >>> d["hphawkes_py"] == hp.__version__
    True
    >>> d["auto_backend"] in ("cpu", "gpu")
    True
    """
    from ._info import info_dict

    return info_dict()


def __getattr__(name: str):
    if name in _NAMESPACES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hphawkes_py' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _NAMESPACES)
