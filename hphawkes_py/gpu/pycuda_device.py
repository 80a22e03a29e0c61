"""Real NVIDIA GPUs through PyCUDA (optional extra: ``pip install .[gpu]``).

PyCUDA is imported only when a :class:`PyCudaDevice` is constructed; its absence, a missing
driver or the lack of a device raise ``BackendUnavailableError`` saying which.
"""

from __future__ import annotations

import contextlib
import threading

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


__all__ = ["PyCudaDevice", "PyCudaArray", "BackendUnavailableError"]


class PyCudaArray(DeviceArray):
    """Device buffer backed by a ``pycuda.gpuarray.GPUArray``."""

    def __init__(self, g, device):
        self._g = g
        self.shape = tuple(g.shape)
        self.dtype = np.dtype(g.dtype)
        self._device = device

    @property
    def gpudata(self):
        return self._g.gpudata


class PyCudaFunction(Function):
    def __init__(self, name, module, fn):
        super().__init__(name, module)
        self._fn = fn


class PyCudaModule(Module):
    def __init__(self, sm, defines, device):
        self._sm = sm
        self.defines = defines
        self._device = device
        self._functions = {}

    def function(self, name: str) -> PyCudaFunction:
        f = self._functions.get(name)
        if f is None:
            drv = self._device._drv
            try:
                with self._device._active():
                    fn = self._sm.get_function(name)
            except drv.LogicError as exc:
                raise missing_kernel(name, exc) from None
            f = self._functions[name] = PyCudaFunction(name, self, fn)
        return f


class PyCudaDevice(Device):
    """A CUDA device through PyCUDA.

    Parameters
    ----------
    device_id : int
        Ordinal of the CUDA device.
    arch : str, optional
        ``-arch`` passed to nvcc (default: PyCUDA's choice, the device's own architecture).
    """

    def __init__(self, device_id: int = 0, arch: str | None = None):
        try:
            import pycuda.driver as drv
            import pycuda.gpuarray as gpuarray
            from pycuda.compiler import SourceModule
        except ImportError as exc:
            raise BackendUnavailableError(
                f"PyCUDA is not installed ({exc}); install the GPU extra with `pip install 'hphawkes_py[gpu]'` "
                "(needs the NVIDIA driver and the CUDA toolkit)"
            ) from None
        except Exception as exc:  # binary/driver library problems at import time
            raise BackendUnavailableError(
                f"PyCUDA failed to import ({type(exc).__name__}: {exc}); check the NVIDIA driver and CUDA toolkit"
            ) from None
        try:
            drv.init()
            count = drv.Device.count()
        except Exception as exc:
            raise BackendUnavailableError(
                f"the NVIDIA driver could not be initialised ({type(exc).__name__}: {exc}); "
                "is a driver installed and a GPU present?"
            ) from None
        check_device_ordinal(count, device_id, "PyCUDA")
        self._drv = drv
        self._gpuarray = gpuarray
        self._SourceModule = SourceModule
        self._dev = drv.Device(device_id)
        self._ctx = self._dev.retain_primary_context()
        self.device_id = device_id
        self.arch = arch
        self.name = f"pycuda:{self._dev.name()}"
        self._lock = threading.RLock()
        self._modules = {}

    def describe(self) -> dict:
        """Device name, compute capability, memory and the CUDA versions, for reports."""
        import pycuda

        drv = self._drv
        return {
            "api": "pycuda",
            "pycuda": pycuda.VERSION_TEXT,
            "device": self._dev.name(),
            "compute_capability": "%d.%d" % self._dev.compute_capability(),
            "memory_gib": round(self._dev.total_memory() / 2**30, 2),
            "multiprocessors": self._dev.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT),
            "driver_cuda_version": drv.get_driver_version(),
            "runtime_cuda_version": drv.get_version(),
        }

    @contextlib.contextmanager
    def _active(self):
        """Make this device's primary context current for the duration of the block.

        Push/pop nest, so this is correct whichever context the calling thread had current.
        """
        self._ctx.push()
        try:
            yield
        finally:
            self._drv.Context.pop()

    # ------------------------------------------------------------------ compile
    def module(self, source, defines=None) -> PyCudaModule:
        text, path = read_source(source)
        defs = normalize_defines(defines)
        incs = include_dirs(path)
        key = (text, tuple(sorted(defs.items())), tuple(incs))
        with self._lock:
            mod = self._modules.get(key)
            if mod is not None:
                return mod
            try:
                with self._active():
                    sm = self._SourceModule(
                        text,
                        no_extern_c=True,
                        include_dirs=incs,
                        options=define_flags(defs),
                        arch=self.arch,
                    )
            except self._drv.CompileError as exc:
                raise KernelCompileError(
                    f"nvcc failed on {path or '<source text>'} (defines {defs}):\n{exc}"
                ) from None
            mod = self._modules[key] = PyCudaModule(sm, defs, self)
            return mod

    # ------------------------------------------------------------------ memory
    def _check(self, arr, what="array") -> PyCudaArray:
        if not isinstance(arr, PyCudaArray):
            raise TypeError(f"{what} must be a DeviceArray of a PyCudaDevice, got {type(arr).__name__}")
        return arr

    def to_device(self, host_array) -> PyCudaArray:
        a = as_host_source(host_array)
        with self._active():
            return PyCudaArray(self._gpuarray.to_gpu(a), self)

    def empty(self, shape, dtype) -> PyCudaArray:
        with self._active():
            return PyCudaArray(self._gpuarray.empty(shape, np.dtype(dtype)), self)

    def zeros(self, shape, dtype) -> PyCudaArray:
        with self._active():
            return PyCudaArray(self._gpuarray.zeros(shape, np.dtype(dtype)), self)

    def copy_to_device(self, dst, host_array) -> None:
        dst = self._check(dst, "dst")
        h = host_copy_source(dst, host_array)
        with self._active():
            self._drv.memcpy_htod(dst._g.gpudata, h)

    def to_host(self, arr) -> np.ndarray:
        arr = self._check(arr)
        with self._active():
            return arr._g.get()

    def synchronize(self) -> None:
        with self._active():
            self._drv.Context.synchronize()

    def kernel_max_threads(self, fn) -> int:
        return int(fn._fn.get_attribute(self._drv.function_attribute.MAX_THREADS_PER_BLOCK))

    # ------------------------------------------------------------------ launch
    def launch(self, fn, grid, block, args, shared_bytes=0) -> None:
        if not isinstance(fn, PyCudaFunction):
            raise TypeError(f"fn must be a Function from PyCudaDevice.module(...).function(name), got {fn!r}")
        g, b, shared = check_launch_config(grid, block, shared_bytes)
        cargs = kernel_arguments(args, fn.name, lambda a, i: self._check(a, f"argument {i}")._g.gpudata)
        try:
            with self._active():
                fn._fn(*cargs, block=b, grid=g, shared=shared)
        except (self._drv.LogicError, self._drv.LaunchError) as exc:
            raise KernelLaunchError(f"kernel {fn.name} grid={g} block={b}: {exc}") from None
