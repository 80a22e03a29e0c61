"""GPU layer: the :class:`Device` interface, PyCUDA devices and the CPU emulator.

>>> from hphawkes_py.gpu import get_device, kernel_path
>>> dev = get_device("emulator")                       # or "gpu" / "auto"
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


def get_device(kind: str = "auto", device_id: int = 0) -> Device:
    """Shared device instance: ``"emulator"``, ``"gpu"`` (PyCUDA) or ``"auto"``.

    ``"gpu"`` raises ``BackendUnavailableError`` with the reason when no usable GPU exists;
    ``"auto"`` returns the GPU when usable, else raises the same error (callers decide whether
    to fall back to the CPU engine; the emulator is never chosen automatically).
    """
    if kind not in ("auto", "gpu", "emulator"):
        raise ValueError(f"kind must be 'auto', 'gpu' or 'emulator', got {kind!r}")
    key = ("emulator",) if kind == "emulator" else ("gpu", device_id)
    with _lock:
        dev = _devices.get(key)
        if dev is None:
            if kind == "emulator":
                from .emulator import EmulatorDevice

                dev = EmulatorDevice()
            else:
                from .pycuda_device import PyCudaDevice

                dev = PyCudaDevice(device_id)
            _devices[key] = dev
    return dev
