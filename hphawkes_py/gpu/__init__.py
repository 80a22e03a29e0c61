"""GPU layer: the :class:`Device` interface, PyCUDA devices and the CPU emulator.

>>> from hphawkes_py.gpu import get_device, kernel_path
>>> dev = get_device("emulator")                       # or "gpu"
>>> mod = dev.module(kernel_path("hawkes"), defines={"REAL": "double"})
>>> fn = mod.function("hawkes_rates")                   # doctest: +SKIP

``PyCudaDevice`` imports PyCUDA lazily, only when constructed.
"""

from __future__ import annotations

import threading

from .device import (
    KERNELS_DIR,
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
    "get_device",
    "kernel_path",
]

_devices: dict = {}
_lock = threading.Lock()


def __getattr__(name):
    if name == "EmulatorDevice":
        from .emulator import EmulatorDevice

        return EmulatorDevice
    if name == "PyCudaDevice":
        from .pycuda_device import PyCudaDevice

        return PyCudaDevice
    raise AttributeError(name)


def get_device(kind: str = "emulator") -> Device:
    """Shared (one per process) device: ``"emulator"`` or ``"gpu"`` (PyCUDA, device 0).

    Delegates to :func:`hphawkes_py._backend.get_device` so that engines and tests share the
    same instances.  ``"gpu"`` raises ``BackendUnavailableError`` saying why when no usable
    GPU exists.
    """
    if kind not in ("gpu", "emulator"):
        raise ValueError(f"kind must be 'gpu' or 'emulator', got {kind!r}")
    try:
        from .._backend import get_device as _get
    except ImportError:  # pragma: no cover
        _get = None
    if _get is not None:
        return _get(kind)
    with _lock:
        dev = _devices.get(kind)
        if dev is None:
            if kind == "emulator":
                from .emulator import EmulatorDevice

                dev = EmulatorDevice()
            else:
                from .pycuda_device import PyCudaDevice

                dev = PyCudaDevice()
            _devices[kind] = dev
    return dev
