"""Engines every method test runs on: the Numba CPU engine, the CUDA engine on the CPU emulator,
and the same CUDA engine on a real GPU when one is usable (PyCUDA or CuPy; skipped otherwise).

``ENGINES`` parametrises tests over all three; ``CUDA_ENGINES`` over the two that run the ``.cu``
kernels (emulator and GPU), for tests that compare the CUDA engine with the CPU engine.  The GPU
rows are the same tests as the emulator rows: ``scripts/gpu_check.sh`` selects them with ``-k gpu``.
"""
from __future__ import annotations

import pytest

from hphawkes_py import _backend


def _emulator_available() -> bool:
    try:
        _backend.resolve_backend("emulator")
        import hphawkes_py.gpu.emulator  # noqa: F401
    except Exception:
        return False
    return True


def _gpu_available() -> bool:
    try:
        return bool(_backend.gpu_status()[0])
    except Exception:
        return False


needs_emulator = pytest.mark.skipif(not _emulator_available(), reason="CUDA emulator (g++) not available")
needs_gpu = pytest.mark.skipif(not _gpu_available(), reason="no usable NVIDIA GPU (PyCUDA or CuPy)")
CUDA_ENGINES = [pytest.param("emulator", marks=needs_emulator), pytest.param("gpu", marks=needs_gpu)]
ENGINES = ["cpu", *CUDA_ENGINES]
