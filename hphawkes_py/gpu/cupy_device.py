"""Real NVIDIA GPUs through CuPy (optional extra: ``pip install 'hphawkes_py[cupy]'``).

CuPy ships binary wheels (``cupy-cuda12x``, ``cupy-cuda13x``) that bring NVRTC, so a machine
with an NVIDIA driver needs no CUDA toolkit and no compiler: the same ``.cu`` sources the
PyCUDA device and the emulator run are compiled at run time by NVRTC (or by nvcc with
``compiler="nvcc"``), with ``gpu/kernels/`` on the include path.

CuPy is imported only when a :class:`CupyDevice` is constructed; its absence, a missing driver
or the lack of a device raise ``BackendUnavailableError`` saying which.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np

from .device import (
    BackendUnavailableError,
    Device,
    DeviceArray,
    Function,
    KernelCompileError,
    KernelLaunchError,
    Module,
    check_device_ordinal,
    check_launch_config,
    define_flags,
    as_host_source,
    host_copy_source,
    include_dirs,
    kernel_arguments,
    missing_kernel,
    normalize_defines,
    read_source,
)

__all__ = ["CupyDevice", "CupyArray"]


def _headers_digest(include_dirs) -> str:
    """Hash of every header on the include path.

    CuPy's on-disk kernel cache is keyed by the source text and options only, not by the
    headers a source includes; putting this digest into the source makes an edited
    ``hp_cuda.h`` recompile instead of silently reusing a stale binary.
    """
    h = hashlib.sha1()
    for d in include_dirs:
        for p in sorted(Path(d).glob("*.h")) + sorted(Path(d).glob("*.cuh")):
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


class CupyArray(DeviceArray):
    """Device buffer backed by a ``cupy.ndarray``."""

    def __init__(self, a, device):
        self._a = a
        self.shape = tuple(a.shape)
        self.dtype = np.dtype(a.dtype)
        self._device = device


class CupyFunction(Function):
    def __init__(self, name, module, kernel):
        super().__init__(name, module)
        self._fn = kernel

    @property
    def attributes(self) -> dict:
        """Registers, static shared memory and the largest block this kernel can launch with."""
        return dict(self._fn.attributes)


class CupyModule(Module):
    def __init__(self, raw, defines, device, names):
        self._raw = raw
        self.defines = defines
        self._device = device
        self._functions = {}
        self._names = names

    @property
    def function_names(self) -> tuple:
        return self._names

    def function(self, name: str) -> CupyFunction:
        f = self._functions.get(name)
        if f is None:
            cp = self._device._cp
            try:
                with self._device._dev:
                    k = self._raw.get_function(name)
            except cp.cuda.driver.CUDADriverError as exc:
                raise missing_kernel(name, exc) from None
            f = self._functions[name] = CupyFunction(name, self, k)
        return f


class CupyDevice(Device):
    """A CUDA device through CuPy.

    Parameters
    ----------
    device_id : int
        Ordinal of the CUDA device.
    compiler : {"nvrtc", "nvcc"}
        How CuPy compiles the ``.cu`` sources: NVRTC (shipped with the CuPy wheel, the default)
        or the ``nvcc`` on ``PATH``.
    """

    def __init__(self, device_id: int = 0, compiler: str = "nvrtc"):
        if compiler not in ("nvrtc", "nvcc"):
            raise ValueError(f"compiler must be 'nvrtc' or 'nvcc', got {compiler!r}")
        try:
            import cupy as cp
        except ImportError as exc:
            raise BackendUnavailableError(
                f"CuPy is not installed ({exc}); install the wheel that matches your driver's CUDA "
                "version, e.g. `pip install 'hphawkes_py[cupy]'` (cupy-cuda12x) or `pip install cupy-cuda13x`"
            ) from None
        except Exception as exc:  # binary/driver library problems at import time
            raise BackendUnavailableError(
                f"CuPy failed to import ({type(exc).__name__}: {exc}); check the NVIDIA driver and that the "
                "cupy-cudaXXx wheel matches its CUDA version"
            ) from None
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:
            raise BackendUnavailableError(
                f"CuPy could not reach the NVIDIA driver ({type(exc).__name__}: {exc}); "
                "is a driver installed and a GPU present?"
            ) from None
        check_device_ordinal(count, device_id, "CuPy")
        self._cp = cp
        self._dev = cp.cuda.Device(device_id)
        props = cp.cuda.runtime.getDeviceProperties(device_id)
        name = props["name"]
        self.device_name = name.decode() if isinstance(name, bytes) else str(name)
        self.compute_capability = (int(props["major"]), int(props["minor"]))
        self.total_memory = int(props["totalGlobalMem"])
        self.multiprocessors = int(props["multiProcessorCount"])
        self.device_id = device_id
        self.compiler = compiler
        self.name = f"cupy:{self.device_name}"
        self._lock = threading.RLock()
        self._modules = {}

    def describe(self) -> dict:
        """Device name, compute capability, memory and the CUDA versions, for reports."""
        rt = self._cp.cuda.runtime
        return {
            "api": "cupy",
            "cupy": self._cp.__version__,
            "device": self.device_name,
            "compute_capability": "%d.%d" % self.compute_capability,
            "memory_gib": round(self.total_memory / 2**30, 2),
            "multiprocessors": self.multiprocessors,
            "driver_cuda_version": rt.driverGetVersion(),
            "runtime_cuda_version": rt.runtimeGetVersion(),
            "compiler": self.compiler,
        }

    # ------------------------------------------------------------------ compile
    def module(self, source, defines=None) -> CupyModule:
        text, path = read_source(source)
        defs = normalize_defines(defines)
        incs = include_dirs(path)
        key = (text, tuple(sorted(defs.items())), tuple(incs))
        with self._lock:
            mod = self._modules.get(key)
            if mod is not None:
                return mod
            options = tuple(define_flags(defs)) + tuple(f"-I{d}" for d in incs) + ("-std=c++17",)
            code = f"// hphawkes headers {_headers_digest(incs)}\n{text}"
            cp = self._cp
            try:
                with self._dev:
                    raw = cp.RawModule(code=code, options=options, backend=self.compiler)
                    raw.compile()
            except cp.cuda.compiler.CompileException as exc:
                raise KernelCompileError(
                    f"{self.compiler} failed on {path or '<source text>'} (defines {defs}):\n{exc}"
                ) from None
            names = tuple(_entry_points(text))
            mod = self._modules[key] = CupyModule(raw, defs, self, names)
            return mod

    # ------------------------------------------------------------------ memory
    def _check(self, arr, what="array") -> CupyArray:
        if not isinstance(arr, CupyArray):
            raise TypeError(f"{what} must be a DeviceArray of a CupyDevice, got {type(arr).__name__}")
        return arr

    def to_device(self, host_array) -> CupyArray:
        a = as_host_source(host_array)
        with self._dev:
            return CupyArray(self._cp.asarray(a), self)

    def empty(self, shape, dtype) -> CupyArray:
        with self._dev:
            return CupyArray(self._cp.empty(shape, np.dtype(dtype)), self)

    def zeros(self, shape, dtype) -> CupyArray:
        with self._dev:
            return CupyArray(self._cp.zeros(shape, np.dtype(dtype)), self)

    def copy_to_device(self, dst, host_array) -> None:
        dst = self._check(dst, "dst")
        h = host_copy_source(dst, host_array)
        with self._dev:
            dst._a.set(h.reshape(dst.shape))

    def to_host(self, arr) -> np.ndarray:
        arr = self._check(arr)
        with self._dev:
            try:
                return arr._a.get()
            except self._cp.cuda.runtime.CUDARuntimeError as exc:  # an earlier launch faulted
                raise KernelLaunchError(f"device error surfaced while copying back: {exc}") from None

    def synchronize(self) -> None:
        with self._dev:
            try:
                self._dev.synchronize()
            except self._cp.cuda.runtime.CUDARuntimeError as exc:
                raise KernelLaunchError(f"device error surfaced at synchronize: {exc}") from None

    # ------------------------------------------------------------------ launch
    def launch(self, fn, grid, block, args, shared_bytes=0) -> None:
        if not isinstance(fn, CupyFunction):
            raise TypeError(f"fn must be a Function from CupyDevice.module(...).function(name), got {fn!r}")
        g, b, shared = check_launch_config(grid, block, shared_bytes)
        cargs = kernel_arguments(args, fn.name, lambda a, i: self._check(a, f"argument {i}")._a)
        cp = self._cp
        try:
            with self._dev:
                fn._fn(g, b, tuple(cargs), shared_mem=shared)
        except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as exc:
            raise KernelLaunchError(f"kernel {fn.name} grid={g} block={b}: {exc}") from None

    def kernel_max_threads(self, fn) -> int:
        return int(fn._fn.max_threads_per_block)


def _entry_points(text: str):
    import re

    return re.findall(r'extern\s+"C"\s+__global__\s+void\s+([A-Za-z_]\w*)', text)
