"""NumPy's OpenBLAS on one thread for a block of code (the mixture's many small products).

The CPU engine and k-means++ run many small GEMMs, each from a worker thread of their own;
OpenBLAS's threads would only compete with those for the cores.
"""
from __future__ import annotations

import numpy as np

__all__ = ["single_threaded_blas"]

_OPENBLAS = None


def _openblas():
    """ctypes handles (get, set) of NumPy's OpenBLAS thread count, or None."""
    global _OPENBLAS
    if _OPENBLAS is None:
        _OPENBLAS = False
        try:
            import ctypes
            import glob
            import os

            libdir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
            for path in glob.glob(os.path.join(libdir, "*openblas*")):
                lib = ctypes.CDLL(path)
                for suffix in ("scipy_openblas_{}_num_threads64_", "openblas_{}_num_threads64_", "openblas_{}_num_threads"):
                    get, set_ = suffix.format("get"), suffix.format("set")
                    if hasattr(lib, get) and hasattr(lib, set_):
                        fset = getattr(lib, set_)
                        fset.argtypes = [ctypes.c_int]
                        _OPENBLAS = (getattr(lib, get), fset)
                        break
                if _OPENBLAS:
                    break
        except Exception:  # no OpenBLAS found: leave BLAS threading alone
            _OPENBLAS = False
    return _OPENBLAS or None


class single_threaded_blas:
    """Context manager: NumPy's OpenBLAS on one thread, restored afterwards.

    The CPU engine parallelises over chunks of points with its own worker threads, each
    calling a small GEMM; letting OpenBLAS also start its threads would oversubscribe
    the cores, and every call would then wait for threads that have no core.  k-means++'s Lloyd steps
    (many 256 x p x k products, far too small to gain from threads) run under it too.
    """

    def __enter__(self):
        h = _openblas()
        self._prev = None
        if h is not None:
            self._prev = int(h[0]())
            if self._prev != 1:
                h[1](1)
        return self

    def __exit__(self, *exc):
        h = _openblas()
        if h is not None and self._prev is not None and self._prev != 1:
            h[1](self._prev)
        return False
