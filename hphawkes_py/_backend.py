"""Backend selection: ``backend="auto"|"cpu"|"gpu"|"emulator"`` and ``threads=``.

Every public entry point resolves its ``backend`` argument here, so that the
rules (when ``auto`` picks the GPU, what the error says when a GPU was asked
for and cannot run) are the same for all five methods.

* ``"cpu"`` -- the Numba multi-core engine.
* ``"gpu"`` -- the CUDA engine on a real NVIDIA device, through PyCUDA or CuPy
  (see :mod:`hphawkes_py.gpu`).
* ``"emulator"`` -- the same CUDA sources compiled for the host and run with
  CUDA semantics on the CPU (for validation; slow).
* ``"auto"`` -- ``"gpu"`` when a real device is usable, else ``"cpu"``.
"""
from __future__ import annotations

import contextlib
import os
import shutil

from ._errors import BackendUnavailableError

__all__ = [
    "BACKENDS",
    "BackendUnavailableError",
    "resolve_backend",
    "get_device",
    "gpu_status",
    "threads_context",
    "is_gpu_backend",
]

BACKENDS = ("auto", "cpu", "gpu", "emulator")


def gpu_status() -> tuple[bool, str]:
    """Whether a real CUDA device is usable (through PyCUDA or CuPy), and a human-readable reason.

    Returns
    -------
    (usable, reason) : (bool, str)
        ``reason`` names the API and the device when usable, otherwise what is missing for
        each API tried (PyCUDA, CuPy, the NVIDIA driver, a device) and how to fix it.
    """
    from .gpu import gpu_status as _status

    ok, api, why = _status()
    return ok, (f"{api}: {why}" if ok else why)


def resolve_backend(backend: str = "auto") -> str:
    """Turn a user's ``backend`` argument into ``"cpu"``, ``"gpu"`` or ``"emulator"``.

    Raises
    ------
    ValueError
        ``backend`` is not one of ``"auto"``, ``"cpu"``, ``"gpu"``, ``"emulator"``.
    BackendUnavailableError
        ``backend="gpu"`` but no usable CUDA device (the message says why).
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        return "gpu" if gpu_status()[0] else "cpu"
    if backend == "gpu":
        ok, why = gpu_status()
        if not ok:
            raise BackendUnavailableError(
                f"backend='gpu' cannot run: {why}. Or use backend='cpu' (or 'auto')."
            )
    if backend == "emulator" and shutil.which(os.environ.get("CXX", "g++")) is None:
        raise BackendUnavailableError(
            "backend='emulator' needs a host C++ compiler (g++ or $CXX) to compile the CUDA sources; none found"
        )
    return backend


def is_gpu_backend(resolved: str) -> bool:
    """True for the backends that run the CUDA engine (``"gpu"`` and ``"emulator"``)."""
    return resolved in ("gpu", "emulator")


def get_device(resolved: str):
    """The :class:`~hphawkes_py.gpu.device.Device` for a resolved GPU backend (the registry in
    :mod:`hphawkes_py.gpu`: one per kind and process)."""
    if resolved not in ("gpu", "emulator"):
        raise ValueError(f"get_device needs 'gpu' or 'emulator', got {resolved!r}")
    from .gpu import get_device as _get

    return _get(resolved)


@contextlib.contextmanager
def threads_context(threads: int | None):
    """Run the body with ``numba.set_num_threads(threads)`` and restore the previous value.

    ``threads=None`` leaves Numba's current setting alone. A value above the
    number of threads Numba was started with (``NUMBA_NUM_THREADS``) is refused.
    """
    if threads is None:
        yield
        return
    import numba

    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"threads={threads} exceeds the {numba.config.NUMBA_NUM_THREADS} threads Numba was started with "
            "(set NUMBA_NUM_THREADS before importing hphawkes_py to raise it)"
        )
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
