"""The CuPy device and the device registry without a GPU.

A fake ``cupy`` module stands in for CuPy: its ``RawModule`` compiles the source with the CPU
emulator and its kernels launch there, so ``CupyDevice`` -- argument conversion, compile options,
buffers, launches -- is exercised end to end by the real method engines, and the error paths
(CuPy missing, no driver, no device, compile errors, a forced API) are checked message by message.
On a machine with a GPU the same engines run on real CuPy through ``tests/engines.py``.
"""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import hphawkes_py as hp
import hphawkes_py.gpu as hpgpu
from hphawkes_py import BackendUnavailableError
from hphawkes_py.gpu.device import KernelCompileError

from engines import needs_emulator


class _RuntimeError(RuntimeError):
    pass


class _DriverError(RuntimeError):
    pass


class _CompileException(RuntimeError):
    pass


def make_fake_cupy(count=1, fail_count=None):
    """A module with the parts of CuPy's API that CupyDevice uses, backed by the emulator."""
    from hphawkes_py.gpu.emulator import EmulatorDevice

    emu = EmulatorDevice()
    cp = types.ModuleType("cupy")
    cp.__version__ = "0.0-fake"
    cp.compiled = []  # (options, backend) of each RawModule, for the tests

    class FakeArray:
        def __init__(self, a):
            self._emu = a
            self.shape = a.shape
            self.dtype = a.dtype

        def get(self):
            return emu.to_host(self._emu)

        def set(self, h):
            emu.copy_to_device(self._emu, h)

    class RawKernel:
        max_threads_per_block = 1024
        attributes = {"num_regs": 32, "max_threads_per_block": 1024}

        def __init__(self, fn):
            self._fn = fn

        def __call__(self, grid, block, args, shared_mem=0):
            emu.launch(self._fn, grid, block, [a._emu if isinstance(a, FakeArray) else a for a in args],
                       shared_bytes=shared_mem)

    class RawModule:
        def __init__(self, code, options=(), backend="nvrtc"):
            self.code, self.options = code, options
            cp.compiled.append((tuple(options), backend))
            self._mod = None

        def compile(self):
            defines = {}
            for o in self.options:
                if o.startswith("-D"):
                    k, _, v = o[2:].partition("=")
                    defines[k] = v or None
            try:
                self._mod = emu.module(self.code, defines)
            except KernelCompileError as exc:
                raise _CompileException(str(exc)) from None

        def get_function(self, name):
            if self._mod is None:
                self.compile()
            try:
                return RawKernel(self._mod.function(name))
            except ValueError as exc:
                raise _DriverError(str(exc)) from None

    class Device:
        def __init__(self, i):
            self.id = i

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def synchronize(self):
            pass

    def get_count():
        if fail_count is not None:
            raise fail_count
        return count

    runtime = types.SimpleNamespace(
        getDeviceCount=get_count, CUDARuntimeError=_RuntimeError,
        getDeviceProperties=lambda i: {"name": b"Fake GPU", "major": 9, "minor": 0,
                                       "totalGlobalMem": 80 * 2**30, "multiProcessorCount": 132},
        driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000)
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=Device,
                                    driver=types.SimpleNamespace(CUDADriverError=_DriverError),
                                    compiler=types.SimpleNamespace(CompileException=_CompileException))
    cp.RawModule = RawModule
    cp.asarray = lambda a: FakeArray(emu.to_device(np.ascontiguousarray(a)))
    cp.empty = lambda shape, dtype: FakeArray(emu.empty(shape, dtype))
    cp.zeros = lambda shape, dtype: FakeArray(emu.zeros(shape, dtype))
    return cp


@pytest.fixture
def fresh_registry(monkeypatch):
    """An empty device registry and GPU status cache, restored afterwards."""
    monkeypatch.setattr(hpgpu, "_devices", {})
    monkeypatch.delenv("HPHAWKES_DISABLE_GPU", raising=False)
    hpgpu.gpu_status.cache_clear()
    yield monkeypatch
    hpgpu.gpu_status.cache_clear()


@pytest.fixture
def fake_cupy(fresh_registry):
    cp = make_fake_cupy()
    fresh_registry.setitem(sys.modules, "cupy", cp)
    fresh_registry.setenv("HPHAWKES_GPU", "cupy")
    return cp


@needs_emulator
def test_cupy_device_is_found_described_and_reported(fake_cupy):
    ok, api, why = hpgpu.gpu_status()
    assert ok and api == "cupy" and "Fake GPU" in why
    dev = hpgpu.get_device("gpu")
    assert type(dev).__name__ == "CupyDevice" and dev is hpgpu.get_device("cupy")
    d = dev.describe()
    assert d["compute_capability"] == "9.0" and d["memory_gib"] == 80.0 and d["api"] == "cupy"
    table = hp.backends().set_index("backend")
    assert table.loc["gpu", "available"] and table.loc["gpu", "api"] == "cupy"
    assert table.loc["gpu", "device"] == "Fake GPU" and table.loc["gpu", "is_auto"]


@needs_emulator
def test_cupy_device_runs_the_method_engines_like_the_cpu_engine(fake_cupy):
    """The Hawkes and scan engines through CupyDevice (kernels on the emulator) against the CPU."""
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 1, (60, 2))
    t = np.sort(rng.uniform(0, 10, 60))
    p = dict(mu0=1.0, tau_x=0.1, tau_t=1.0, theta=0.5, omega=1.0, h=0.1)
    ll_gpu = hp.hawkes.log_likelihood(x, t, p, backend="gpu", exact=True)
    ll_cpu = hp.hawkes.log_likelihood(x, t, p, backend="cpu", exact=True)
    assert ll_gpu == pytest.approx(ll_cpu, rel=1e-12)
    # every module was compiled through RawModule with REAL defined and the kernels folder included
    opts = [o for o, _ in fake_cupy.compiled]
    assert opts and all(any(s.startswith("-DREAL=") for s in o) for o in opts)
    assert all(any(s.startswith("-I") and s.endswith("kernels") for s in o) for o in opts)

    coords = rng.uniform(0, 10, (25, 2))
    pop = rng.integers(5, 20, 25)
    cases = rng.binomial(pop, 0.3)
    kw = dict(n_replicates=19, seed=3, progress=False)
    a = hp.scan.bernoulli(coords, cases, pop - cases, backend="gpu", **kw)
    b = hp.scan.bernoulli(coords, cases, pop - cases, backend="cpu", **kw)
    np.testing.assert_array_equal(a.null_llr, b.null_llr)


@needs_emulator
def test_cupy_device_buffers_and_launch_checks(fake_cupy):
    dev = hpgpu.get_device("cupy")
    h = np.arange(6, dtype=np.float64).reshape(2, 3)
    d = dev.to_device(h)
    assert d.shape == (2, 3) and d.dtype == np.float64
    np.testing.assert_array_equal(dev.to_host(d), h)
    dev.copy_to_device(d, h[::-1])
    np.testing.assert_array_equal(dev.to_host(d), h[::-1])
    with pytest.raises(TypeError, match="host dtype float32"):
        dev.copy_to_device(d, h.astype(np.float32))
    with pytest.raises(ValueError, match="host array has 5 elements"):
        dev.copy_to_device(d, np.zeros(5))
    src = 'extern "C" __global__ void axpy(int n, double a, double* y) { int i = threadIdx.x; if (i < n) y[i] += a; }'
    fn = dev.module(src).function("axpy")
    y = dev.to_device(np.ones(4))
    dev.launch(fn, 1, 32, [np.int32(4), np.float64(2.5), y])
    np.testing.assert_array_equal(dev.to_host(y), np.full(4, 3.5))
    with pytest.raises(TypeError, match="Python float"):
        dev.launch(fn, 1, 32, [np.int32(4), 2.5, y])
    with pytest.raises(ValueError, match="not found in module"):
        dev.module(src).function("nope")
    with pytest.raises(KernelCompileError, match="nvrtc failed"):
        dev.module('extern "C" __global__ void broken( { }')


def test_cupy_missing_names_the_fix(fresh_registry):
    fresh_registry.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    fresh_registry.setenv("HPHAWKES_GPU", "cupy")
    ok, api, why = hpgpu.gpu_status()
    assert not ok and api is None
    assert "CuPy is not installed" in why and "pip install 'hphawkes_py[cupy]'" in why
    with pytest.raises(BackendUnavailableError, match="backend='gpu' cannot run: cupy: CuPy is not installed"):
        hp._backend.resolve_backend("gpu")
    assert hp._backend.resolve_backend("auto") == "cpu"


@pytest.mark.parametrize("count, fail, match", [
    (0, None, "no CUDA device was found"),
    (1, _RuntimeError("cudaErrorInsufficientDriver"), "could not reach the NVIDIA driver"),
])
def test_cupy_without_driver_or_device(fresh_registry, count, fail, match):
    fresh_registry.setitem(sys.modules, "cupy", make_fake_cupy(count=count, fail_count=fail))
    fresh_registry.setenv("HPHAWKES_GPU", "cupy")
    ok, _, why = hpgpu.gpu_status()
    assert not ok and match in why
    with pytest.raises(BackendUnavailableError, match=match):
        hpgpu.get_device("cupy")


def test_forced_api_must_be_known(fresh_registry):
    fresh_registry.setenv("HPHAWKES_GPU", "opencl")
    ok, _, why = hpgpu.gpu_status()
    assert not ok and "HPHAWKES_GPU='opencl' is not one of ('pycuda', 'cupy')" in why


def test_gpu_status_tries_pycuda_then_cupy(fresh_registry):
    """Without HPHAWKES_GPU both APIs are tried in order, and each says why it failed."""
    fresh_registry.delenv("HPHAWKES_GPU", raising=False)
    fresh_registry.setitem(sys.modules, "pycuda", None)
    fresh_registry.setitem(sys.modules, "pycuda.driver", None)
    fresh_registry.setitem(sys.modules, "cupy", None)
    ok, _, why = hpgpu.gpu_status()
    assert not ok
    assert why.index("pycuda: PyCUDA is not installed") < why.index("cupy: CuPy is not installed")


def test_nothing_gpu_specific_is_imported_by_the_package():
    """Importing every method on a machine without a GPU loads neither PyCUDA nor CuPy."""
    import subprocess

    code = ("import sys, hphawkes_py as hp\n"
            "for m in ('hawkes', 'kde', 'sccs', 'scan', 'mixture', 'cli'):\n"
            "    __import__('hphawkes_py.' + m)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pycuda', 'cupy')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_kernels_use_no_host_header_macros():
    """NVRTC (the CuPy device) compiles without <math.h>: HUGE_VAL, INFINITY, NAN and M_PI are
    undefined there (mixture.cu used HUGE_VAL and failed on the first real GPU); use HP_INF."""
    import re

    from hphawkes_py.gpu.device import KERNELS_DIR

    for f in sorted(KERNELS_DIR.glob("*.cu")) + sorted(KERNELS_DIR.glob("*.h")):
        text = re.sub(r"//[^\n]*", "", f.read_text())
        for macro in ("HUGE_VAL", "INFINITY", "NAN", "M_PI"):
            assert not re.search(rf"\b{macro}\b", text), f"{f.name} uses {macro}"
        assert not re.search(r"#include\s*<", text), f"{f.name} includes a system header"


@needs_emulator
def test_block_size_is_occupancy_aware(fake_cupy):
    """Block sizes come from the compiled kernel (registers) and the shared memory per thread; the
    emulator keeps its blocks small."""
    dev = hpgpu.get_device("cupy")
    fn = dev.module('extern "C" __global__ void k(double* y) { y[threadIdx.x] = 0; }').function("k")
    assert dev.block_size(fn, 256) == 256
    fn._fn.max_threads_per_block = 384  # a register-heavy kernel
    assert dev.block_size(fn, 512) == 384 and dev.block_size(fn, 1024, shared_bytes_per_thread=256) == 192
    emu = hpgpu.get_device("emulator")
    efn = emu.module('extern "C" __global__ void k(double* y) { y[threadIdx.x] = 0; }').function("k")
    assert emu.block_size(efn, 256) == 32
