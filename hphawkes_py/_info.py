"""``hphawkes info``: what this installation can run."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess


def _version(mod: str) -> str:
    try:
        m = __import__(mod)
        return getattr(m, "__version__", "installed")
    except Exception as exc:  # noqa: BLE001 - report anything that prevents import
        return f"not available ({type(exc).__name__})"


def _nvcc() -> str:
    path = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not path:
        return "not found (GPU kernels cannot be compile-checked here)"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
        release = [ln for ln in out.splitlines() if "release" in ln]
        return f"{path} ({release[0].strip() if release else 'unknown version'})"
    except Exception as exc:  # noqa: BLE001
        return f"{path} (failed to run: {exc})"


def info_dict() -> dict:
    """Versions, threads and GPU status as a plain dict (also used by the R package)."""
    from . import __version__
    from ._backend import gpu_status, resolve_backend

    import numba

    try:
        # The threading layer is only known after a parallel function ran once.
        from numba import njit, prange

        @njit(parallel=True)
        def _touch(n):
            s = 0
            for i in prange(n):
                s += i
            return s

        _touch(4)
        layer = numba.threading_layer()
    except Exception as exc:  # noqa: BLE001
        layer = f"unknown ({exc})"
    ok, why = gpu_status()
    gpu = {}
    if ok:
        from .gpu import get_device

        describe = getattr(get_device("gpu"), "describe", None)
        gpu = {f"gpu_{k}": v for k, v in (describe() if describe else {}).items()}
    return {
        "hphawkes_py": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "numba": numba.__version__,
        "pandas": _version("pandas"),
        "arviz": _version("arviz"),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": layer,
        "pycuda": _version("pycuda"),
        "cupy": _version("cupy"),
        "gpu_usable": ok,
        "gpu_status": why,
        **gpu,
        "auto_backend": resolve_backend("auto"),
        "emulator_compiler": shutil.which(os.environ.get("CXX", "g++")) or "not found",
        "nvcc": _nvcc(),
        "rpy2": _version("rpy2"),
        "dask": _version("dask"),
    }


def info_text() -> str:
    d = info_dict()
    width = max(len(k) for k in d)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in d.items())
