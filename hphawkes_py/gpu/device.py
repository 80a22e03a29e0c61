"""The `Device` interface every GPU engine is written against.

Two implementations exist:

* :class:`hphawkes_py.gpu.pycuda_device.PyCudaDevice` -- a real NVIDIA GPU through PyCUDA;
* :class:`hphawkes_py.gpu.emulator.EmulatorDevice` -- the same ``.cu`` sources compiled with
  the host C++ compiler and executed on the CPU with CUDA semantics (tests, debugging).

Kernel sources are CUDA C files under ``hphawkes_py/gpu/kernels/`` whose entry points are
``extern "C" __global__ void name(...)``; they ``#include "hp_cuda.h"``.  Scalars passed to
:meth:`Device.launch` must be NumPy scalars of the exact C type (``np.int32`` for ``int``,
``np.float64`` for ``double`` ...): Python ``int``/``float`` are refused with ``TypeError``.
"""

from __future__ import annotations

import abc
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .._errors import BackendUnavailableError

__all__ = [
    "BackendUnavailableError",
    "KERNELS_DIR",
    "DeviceArray",
    "Module",
    "Function",
    "Device",
    "KernelCompileError",
    "KernelLaunchError",
    "SCALAR_TYPES",
]

#: Directory holding the method kernels and ``hp_cuda.h`` (always on the include path).
KERNELS_DIR = Path(__file__).resolve().parent / "kernels"

#: NumPy scalar types accepted as kernel arguments, with their C type.
SCALAR_TYPES = {
    np.int32: "int",
    np.uint32: "unsigned int",
    np.int64: "long long",
    np.uint64: "unsigned long long",
    np.float32: "float",
    np.float64: "double",
}

# CUDA limits (compute capability 7.0 - 9.0).
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_DYNAMIC_SHARED_BYTES = 48 * 1024


class KernelCompileError(RuntimeError):
    """A kernel source failed to compile; the message holds the compiler's output."""


class KernelLaunchError(RuntimeError):
    """A kernel launch failed (bad configuration, emulated deadlock, driver error)."""


class DeviceArray(abc.ABC):
    """Opaque handle to a C-contiguous buffer in device memory."""

    shape: tuple
    dtype: np.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} shape={self.shape} dtype={self.dtype}>"


class Function:
    """A kernel entry point of a :class:`Module`."""

    def __init__(self, name: str, module: "Module"):
        self.name = name
        self.module = module

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class Module:
    """A compiled kernel source."""

    def function(self, name: str) -> Function:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def function_names(self) -> tuple:
        """Names of the kernels found in the module (may be empty if unknown)."""
        return ()


class Device(abc.ABC):
    """Abstract GPU device: compile modules, move buffers, launch kernels."""

    name: str = "device"

    @abc.abstractmethod
    def module(self, source, defines: Mapping[str, Any] | None = None) -> Module:
        """Compile ``source`` (path to a ``.cu`` file, or CUDA source text) with ``defines``."""

    @abc.abstractmethod
    def to_device(self, host_array) -> DeviceArray:
        """Copy a host array to a new C-contiguous device buffer (dtype preserved)."""

    @abc.abstractmethod
    def empty(self, shape, dtype) -> DeviceArray:
        """Allocate an uninitialised buffer."""

    @abc.abstractmethod
    def zeros(self, shape, dtype) -> DeviceArray:
        """Allocate a zero-filled buffer."""

    @abc.abstractmethod
    def copy_to_device(self, dst: DeviceArray, host_array) -> None:
        """Overwrite ``dst`` with ``host_array`` (same dtype and number of elements)."""

    @abc.abstractmethod
    def to_host(self, arr: DeviceArray) -> np.ndarray:
        """Copy a device buffer back to a new NumPy array."""

    @abc.abstractmethod
    def launch(self, fn: Function, grid, block, args: Sequence, shared_bytes: int = 0) -> None:
        """Launch ``fn`` on ``grid`` x ``block`` threads with ``args``."""

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Wait for all launched work to finish."""

    #: Threads per block the emulator should use instead of a GPU's preferred size: it runs every
    #: thread of a block as a fiber, so small blocks keep the emulated launches fast.
    emulated_block: int | None = None

    def kernel_max_threads(self, fn: Function) -> int:
        """Most threads per block ``fn`` can launch with (its registers decide; 1024 if unknown)."""
        return MAX_THREADS_PER_BLOCK

    def block_size(self, fn: Function, preferred: int = 256, shared_bytes_per_thread: int = 0) -> int:
        """Occupancy-aware threads per block for ``fn``: ``preferred`` (a multiple of the warp size),
        lowered to what the compiled kernel's registers allow and to what its per-thread dynamic
        shared memory fits in 48 KiB.  Engines call this instead of hard-coding a size."""
        if self.emulated_block is not None:
            preferred = min(preferred, self.emulated_block)
        cap = min(int(preferred), self.kernel_max_threads(fn), MAX_THREADS_PER_BLOCK)
        if shared_bytes_per_thread:
            cap = min(cap, MAX_DYNAMIC_SHARED_BYTES // int(shared_bytes_per_thread))
        return max(1, cap // 32 * 32) if cap >= 32 else max(1, cap)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


# ----------------------------------------------------------------------------- helpers
def normalize_dims(value, what: str) -> tuple:
    """``int`` or tuple of up to three ints -> 3-tuple of Python ints >= 1."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        dims = (int(value),)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        dims = []
        for v in value:
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{what} must be an int or a tuple of up to 3 ints, got {value!r}")
            dims.append(int(v))
        dims = tuple(dims)
    else:
        raise TypeError(f"{what} must be an int or a tuple of up to 3 ints, got {value!r}")
    dims = dims + (1,) * (3 - len(dims))
    if any(d < 1 for d in dims):
        raise ValueError(f"{what} dimensions must be >= 1, got {dims}")
    return dims


def check_launch_config(grid, block, shared_bytes) -> tuple:
    """Validate a launch configuration against CUDA's limits; returns (grid3, block3, shared)."""
    g = normalize_dims(grid, "grid")
    b = normalize_dims(block, "block")
    for i, (d, m) in enumerate(zip(b, MAX_BLOCK_DIM)):
        if d > m:
            raise ValueError(f"block dimension {'xyz'[i]} = {d} exceeds the CUDA limit {m}")
    nthreads = b[0] * b[1] * b[2]
    if nthreads > MAX_THREADS_PER_BLOCK:
        raise ValueError(f"block has {nthreads} threads; CUDA allows at most {MAX_THREADS_PER_BLOCK}")
    for i, (d, m) in enumerate(zip(g, MAX_GRID_DIM)):
        if d > m:
            raise ValueError(f"grid dimension {'xyz'[i]} = {d} exceeds the CUDA limit {m}")
    if not isinstance(shared_bytes, (int, np.integer)) or isinstance(shared_bytes, (bool, np.bool_)):
        raise TypeError(f"shared_bytes must be an int, got {shared_bytes!r}")
    shared_bytes = int(shared_bytes)
    if shared_bytes < 0 or shared_bytes > MAX_DYNAMIC_SHARED_BYTES:
        raise ValueError(
            f"shared_bytes must be in [0, {MAX_DYNAMIC_SHARED_BYTES}] (48 KiB without opt-in), got {shared_bytes}"
        )
    return g, b, shared_bytes


def check_scalar_arg(arg, index: int, fname: str):
    """Refuse Python int/float/bool: the C type of a scalar must be explicit."""
    if isinstance(arg, (bool, np.bool_)):
        raise TypeError(f"{fname}: argument {index} is a bool; pass np.int32(0/1) for an int parameter")
    if isinstance(arg, (int, float)) and not isinstance(arg, np.generic):
        raise TypeError(
            f"{fname}: argument {index} is a Python {type(arg).__name__} ({arg!r}); kernel scalars must be "
            f"NumPy scalars of the exact C type (np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64)"
        )
    if isinstance(arg, np.generic):
        if type(arg) not in SCALAR_TYPES:
            raise TypeError(
                f"{fname}: argument {index} has unsupported scalar type {type(arg).__name__}; use one of "
                "np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64"
            )
        return arg
    raise TypeError(
        f"{fname}: argument {index} must be a DeviceArray or a NumPy scalar, got {type(arg).__name__}"
    )


def normalize_defines(defines: Mapping[str, Any] | None) -> dict:
    """Validate ``defines`` -> {name: str(value)} (bool -> 1/0; None -> defined without value)."""
    if defines is None:
        return {}
    if not isinstance(defines, Mapping):
        raise TypeError(f"defines must be a dict like {{'REAL': 'double'}}, got {type(defines).__name__}")
    out = {}
    for k, v in defines.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise ValueError(f"define name must be a C identifier, got {k!r}")
        if v is None:
            out[k] = None
        elif isinstance(v, (bool, np.bool_)):
            out[k] = "1" if v else "0"
        elif isinstance(v, (str, int, float, np.integer, np.floating)):
            s = str(v)
            if "\n" in s:
                raise ValueError(f"define {k} has a multi-line value")
            out[k] = s
        else:
            raise TypeError(f"define {k} must be str/int/float/bool/None, got {type(v).__name__}")
    return out


def define_flags(defines: dict) -> list:
    return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items())]


def read_source(source) -> tuple:
    """Return (text, path or None) for a path (str/Path to a file) or CUDA source text."""
    if isinstance(source, os.PathLike):
        p = Path(source)
        return p.read_text(), p.resolve()
    if not isinstance(source, str):
        raise TypeError(f"source must be a path or CUDA source text, got {type(source).__name__}")
    if "\n" not in source and (source.endswith((".cu", ".cuh", ".h")) or os.path.sep in source):
        p = Path(source)
        if not p.is_file():
            raise FileNotFoundError(f"kernel source file not found: {source}")
        return p.read_text(), p.resolve()
    return source, None


def as_host_source(host_array) -> np.ndarray:
    """A C-contiguous copy-source for ``to_device`` (object arrays refused)."""
    a = np.ascontiguousarray(host_array)
    if a.dtype == object:
        raise TypeError("cannot copy an object array to the device")
    return a


def host_copy_source(dst: DeviceArray, host) -> np.ndarray:
    """Validate ``copy_to_device(dst, host)``: same dtype and number of elements as ``dst``."""
    h = np.ascontiguousarray(host)
    if h.dtype != dst.dtype:
        raise TypeError(f"copy_to_device: host dtype {h.dtype} does not match the device buffer's {dst.dtype}")
    if h.size != dst.size:
        raise ValueError(f"copy_to_device: host array has {h.size} elements, device buffer {dst.size}")
    return h


def kernel_arguments(args: Sequence, fname: str, native) -> list:
    """Launch arguments: ``native(device_array, index)`` for buffers, checked NumPy scalars otherwise."""
    return [native(a, i) if isinstance(a, DeviceArray) else check_scalar_arg(a, i, fname)
            for i, a in enumerate(args)]


def missing_kernel(name: str, exc: Exception) -> ValueError:
    """The error for ``module.function(name)`` when the module has no such entry point."""
    return ValueError(f"kernel {name!r} not found in module ({exc}); entry points must be declared "
                      'extern "C" __global__ void name(...)')


def include_dirs(path) -> list:
    """Include path of a module: the source's own folder (when it is a file), then the kernels folder."""
    dirs = [str(KERNELS_DIR)]
    if path is not None:
        dirs.insert(0, str(Path(path).parent))
    return dirs


def check_device_ordinal(count: int, device_id, api: str) -> None:
    """Refuse a machine with no device, or a ``device_id`` it does not have (BackendUnavailableError)."""
    if count < 1:
        raise BackendUnavailableError(f"{api} and the driver work, but no CUDA device was found")
    if not isinstance(device_id, int) or isinstance(device_id, bool) or not 0 <= device_id < count:
        raise BackendUnavailableError(f"device_id={device_id!r} but only {count} CUDA device(s) exist")


def kernel_path(name: str) -> Path:
    """Path of a method kernel: ``kernel_path("hawkes")`` -> ``.../gpu/kernels/hawkes.cu``."""
    return KERNELS_DIR / (name if name.endswith(".cu") else name + ".cu")
