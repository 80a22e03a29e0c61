"""Engines every method test runs on: the Numba CPU engine and the CUDA engine on the CPU emulator."""
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


needs_emulator = pytest.mark.skipif(not _emulator_available(), reason="CUDA emulator (g++) not available")
ENGINES = ["cpu", pytest.param("emulator", marks=needs_emulator)]
