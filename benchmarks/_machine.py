"""What a benchmark ran on, recorded beside its figures (every speed claim names its CPU).

``machine_info()`` is merged into the ``machine`` entry of each ``benchmarks/results/*.json``;
the docs' performance tables print ``cpu_model`` from it.
"""
from __future__ import annotations

import os
import platform


def _cpuinfo() -> tuple[str, set]:
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model in ("", platform.machine(), platform.processor()):
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return model, flags


def machine_info(threads=None) -> dict:
    """CPU model, vector extensions, cores, threads used, platform, versions and the load average."""
    import numba
    import numpy

    model, flags = _cpuinfo()
    return {
        "cpu_model": model,
        "avx2": "avx2" in flags,
        "avx512f": "avx512f" in flags,
        "cpus": os.cpu_count(),
        "threads": threads,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "loadavg_start": list(os.getloadavg()),
    }
