"""GPU layer: the :class:`Device` interface, real GPUs (PyCUDA or CuPy) and the CPU emulator.

>>> from hphawkes_py.gpu import get_device, kernel_path
>>> dev = get_device("emulator")                       # or "gpu"
>>> mod = dev.module(kernel_path("hawkes"), defines={"REAL": "double"})
>>> fn = mod.function("hawkes_rates")                   # doctest: +SKIP

This module is **the one device registry** of the package: one device per kind and process,
created lazily on first use.  Nothing GPU-specific is imported until a device is asked for.

Which API reaches a real GPU: PyCUDA first (the ``[gpu]`` extra), then CuPy (the ``[cupy]``
extra, binary wheels with NVRTC: no toolkit needed).  ``HPHAWKES_GPU=pycuda|cupy`` forces one;
``HPHAWKES_DISABLE_GPU=1`` hides every GPU.
"""

from __future__ import annotations

import functools
import os
import threading

from .device import (
    KERNELS_DIR,
    BackendUnavailableError,
    Device,
    DeviceArray,
    Function,
    KernelCompileError,
    KernelLaunchError,
    Module,
    kernel_path,
)

__all__ = [
    "KERNELS_DIR",
    "Device",
    "DeviceArray",
    "Function",
    "Module",
    "KernelCompileError",
    "KernelLaunchError",
    "EmulatorDevice",
    "PyCudaDevice",
    "CupyDevice",
    "GPU_APIS",
    "get_device",
    "gpu_status",
    "kernel_path",
]

#: The APIs that reach a real NVIDIA GPU, in the order ``backend="gpu"`` tries them.
GPU_APIS = ("pycuda", "cupy")
#: Kinds of device :func:`get_device` knows.
KINDS = ("gpu", "emulator") + GPU_APIS

_devices: dict = {}
_lock = threading.Lock()


def __getattr__(name):
    if name == "EmulatorDevice":
        from .emulator import EmulatorDevice

        return EmulatorDevice
    if name == "PyCudaDevice":
        from .pycuda_device import PyCudaDevice

        return PyCudaDevice
    if name == "CupyDevice":
        from .cupy_device import CupyDevice

        return CupyDevice
    raise AttributeError(name)


def _construct(kind: str) -> Device:
    if kind == "emulator":
        from .emulator import EmulatorDevice

        return EmulatorDevice()
    if kind == "pycuda":
        from .pycuda_device import PyCudaDevice

        return PyCudaDevice()
    from .cupy_device import CupyDevice

    return CupyDevice()


def _api_order() -> tuple:
    forced = os.environ.get("HPHAWKES_GPU", "").strip().lower()
    if forced:
        if forced not in GPU_APIS:
            raise BackendUnavailableError(
                f"HPHAWKES_GPU={forced!r} is not one of {GPU_APIS}; unset it to try both"
            )
        return (forced,)
    return GPU_APIS


@functools.lru_cache(maxsize=1)
def gpu_status() -> tuple:
    """Whether a real CUDA device is usable, through which API, and why (not).

    Returns
    -------
    (usable, api, reason) : (bool, str or None, str)
        ``api`` is ``"pycuda"`` or ``"cupy"`` when usable; ``reason`` names the device, or says
        for every API tried what is missing and how to fix it.
    """
    if os.environ.get("HPHAWKES_DISABLE_GPU"):
        return False, None, "disabled by the HPHAWKES_DISABLE_GPU environment variable"
    try:
        order = _api_order()
    except BackendUnavailableError as exc:
        return False, None, str(exc)
    reasons = []
    for api in order:
        try:
            dev = get_device(api)
        except BackendUnavailableError as exc:
            reasons.append(f"{api}: {exc}")
            continue
        return True, api, f"{dev.name}"
    return False, None, "; ".join(reasons)


def get_device(kind: str = "emulator") -> Device:
    """The shared device of ``kind``: ``"gpu"`` (the first working API), ``"pycuda"``,
    ``"cupy"`` or ``"emulator"``.

    Raises ``BackendUnavailableError`` saying why when the kind cannot run here.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "gpu":
        ok, api, why = gpu_status()
        if not ok:
            raise BackendUnavailableError(f"no usable GPU: {why}")
        kind = api
    with _lock:
        dev = _devices.get(kind)
        if dev is None:
            dev = _devices[kind] = _construct(kind)
    return dev
