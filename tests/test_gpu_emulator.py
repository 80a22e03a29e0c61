"""Tests of the CUDA emulator (hphawkes_py.gpu.emulator) with purpose-written kernels."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hphawkes_py.gpu import KernelCompileError, KernelLaunchError
from hphawkes_py.gpu import emulator as emu
from hphawkes_py.gpu.emulator import EmulatorDevice

KDIR = Path(__file__).resolve().parent / "gpu_kernels"
REALS = {"double": np.float64, "float": np.float32}


@pytest.fixture(scope="module")
def dev():
    return EmulatorDevice()


def _mod(dev, name, real="double"):
    return dev.module(KDIR / f"{name}.cu", defines={"REAL": real})


# ------------------------------------------------------------------ reductions
@pytest.mark.parametrize("real", ["double", "float"])
@pytest.mark.parametrize("block", [256, 1024, 96])
def test_block_reduction_sum_matches_numpy(dev, real, block):
    dt = REALS[real]
    x = np.random.default_rng(1).standard_normal(100_000).astype(dt)
    mod = _mod(dev, "reduce", real)
    nblocks = 37
    part = dev.zeros(nblocks, dt)
    dev.launch(mod.function("block_sum"), nblocks, block, [dev.to_device(x), np.int64(x.size), part],
               shared_bytes=block * x.itemsize)
    got = dev.to_host(part).astype(np.float64).sum()
    want = x.astype(np.float64).sum()
    tol = 1e-9 if real == "double" else 2e-2
    assert got == pytest.approx(want, abs=tol)


def test_block_reduction_static_shared_broadcast(dev):
    x = np.random.default_rng(2).random(100_000)
    mod = _mod(dev, "reduce")
    nb, bs = 20, 256
    part, bc = dev.zeros(nb, np.float64), dev.zeros(nb * bs, np.float64)
    dev.launch(mod.function("block_sum_static"), nb, bs, [dev.to_device(x), np.int32(x.size), part, bc])
    p = dev.to_host(part)
    assert p.sum() == pytest.approx(x.sum(), rel=1e-12)
    # every thread received its block's sum
    np.testing.assert_array_equal(dev.to_host(bc).reshape(nb, bs), np.repeat(p[:, None], bs, axis=1))
    # the per-block partial sums follow the grid-stride pattern exactly
    idx = np.arange(x.size)
    want = np.bincount((idx % (nb * bs)) // bs, weights=x, minlength=nb)
    np.testing.assert_allclose(p, want, rtol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    ["block_sum_static", pytest.param("block_sum_racy", marks=pytest.mark.xfail(strict=True, reason=(
        "deliberately broken kernel (no __syncthreads in the tree loop): the emulator must expose the race")))],
)
def test_reduction_kernels_against_numpy(dev, kernel):
    """The racy kernel must FAIL this comparison (strict xfail): a wrong kernel is caught."""
    x = np.random.default_rng(3).standard_normal(100_000)
    mod = _mod(dev, "reduce")
    nb, bs = 16, 256
    part = dev.zeros(nb, np.float64)
    args = [dev.to_device(x), np.int32(x.size), part]
    if kernel == "block_sum_static":
        args.append(dev.zeros(nb * bs, np.float64))
    dev.launch(mod.function(kernel), nb, bs, args)
    np.testing.assert_allclose(dev.to_host(part).sum(), x.sum(), rtol=1e-10)


def test_missing_syncthreads_gives_wrong_answer_deterministically():
    # Default (forward) schedule: thread 0 runs its whole loop before thread 1.. wrote their
    # partial sums, so the missing barrier is exposed on every run.  (The reverse schedule
    # happens to execute this particular tree in a valid order: it is meant for races of
    # the opposite direction.)
    dev = EmulatorDevice(schedule="forward")
    x = np.ones(4096)
    mod = _mod(dev, "reduce")
    results = []
    for _ in range(2):
        part = dev.zeros(4, np.float64)
        dev.launch(mod.function("block_sum_racy"), 4, 1024, [dev.to_device(x), np.int32(x.size), part])
        results.append(dev.to_host(part))
    np.testing.assert_array_equal(results[0], results[1])  # deterministic
    assert not np.allclose(results[0], 1024.0)  # and wrong: each block should sum to 1024


def test_block_max(dev):
    x = np.random.default_rng(4).standard_normal(50_000)
    mod = _mod(dev, "reduce")
    part = dev.empty(10, np.float64)
    dev.launch(mod.function("block_max"), 10, 128, [dev.to_device(x), np.int32(x.size), part],
               shared_bytes=128 * 8)
    assert dev.to_host(part).max() == x.max()


# ------------------------------------------------------------------ grid-stride loops, math
@pytest.mark.parametrize("real", ["double", "float"])
def test_grid_stride_axpy(dev, real):
    dt = REALS[real]
    rng = np.random.default_rng(5)
    n = 100_003
    x, y = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
    a = dt(1.7)
    dy = dev.to_device(y)
    mod = _mod(dev, "saxpy", real)
    dev.launch(mod.function("axpy"), 13, 128, [a, dev.to_device(x), dy, np.int64(n)])
    want = a * x + y
    np.testing.assert_allclose(dev.to_host(dy), want, rtol=1e-6 if real == "float" else 1e-15)


@pytest.mark.parametrize("real", ["double", "float"])
def test_math_functions(dev, real):
    from scipy.special import gammaln
    from scipy.stats import norm
    from scipy.special import erfc

    dt = REALS[real]
    x = np.linspace(-3, 3, 1001).astype(dt)
    n = x.size
    out = dev.zeros(8 * n, dt)
    dev.launch(_mod(dev, "saxpy", real).function("mathfun"), 4, 64, [dev.to_device(x), out, np.int32(n)])
    o = dev.to_host(out).reshape(n, 8).astype(np.float64)
    v = x.astype(np.float64)
    av = np.abs(v) + 0.5
    i = np.arange(n)
    rtol = 1e-12 if real == "double" else 2e-5
    np.testing.assert_allclose(o[:, 0], np.exp(-v * v) + np.log(av) + np.log1p(av), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(o[:, 1], erfc(v) + norm.cdf(v), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(o[:, 2], 1 / np.sqrt(av) + np.sqrt(av) + v * v + 1, rtol=rtol)
    np.testing.assert_allclose(o[:, 3], np.maximum(v, 0) + np.minimum(v, 0) + np.floor(v) + np.ceil(v), atol=rtol)
    np.testing.assert_allclose(o[:, 4], gammaln(av) + av**1.5 + 2.0**v, rtol=rtol)
    np.testing.assert_array_equal(o[:, 5], np.rint(4 * v) + np.rint((4 * x).astype(np.float32)))
    np.testing.assert_allclose(o[:, 6], np.minimum(i, 7) + np.maximum(i, 7) + np.minimum(v, 0.25)
                               + np.maximum(v, 0.25), rtol=1e-6)
    f = v.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(
        o[:, 7], 2 * np.exp(f) + 2 * np.log(av) + erfc(f) + norm.cdf(f) + 1 / np.sqrt(av), rtol=1e-5)


# ------------------------------------------------------------------ atomics
@pytest.mark.parametrize("threads", [1, 2])
def test_atomics_under_contention(threads):
    dev = EmulatorDevice(threads=threads)
    mod = _mod(dev, "atomics")
    nblocks, bs, k = 200, 256, 5
    total = nblocks * bs
    ci, cu, cull = dev.zeros(k, np.int32), dev.zeros(k, np.uint32), dev.zeros(k, np.uint64)
    cf, cd = dev.zeros(k, np.float32), dev.zeros(k, np.float64)
    imax, imin = dev.to_device(np.array([-1], np.int32)), dev.to_device(np.array([2**31 - 1], np.int32))
    umax = dev.zeros(1, np.uint64)
    dev.launch(mod.function("atomic_counters"), nblocks, bs, [ci, cu, cull, cf, cd, imax, imin, umax, np.int32(k)])
    per = np.bincount(np.arange(total) % k, minlength=k)
    np.testing.assert_array_equal(dev.to_host(ci), per)
    np.testing.assert_array_equal(dev.to_host(cu), 2 * per)
    np.testing.assert_array_equal(dev.to_host(cull), 3 * per)
    np.testing.assert_array_equal(dev.to_host(cf), 0.5 * per)  # exact: all partial sums representable
    np.testing.assert_array_equal(dev.to_host(cd), 0.25 * per)
    assert dev.to_host(imax)[0] == total - 1
    assert dev.to_host(imin)[0] == 0
    assert dev.to_host(umax)[0] == 3 * (total - 1)

    counter, ucounter, slot = dev.zeros(1, np.int32), dev.zeros(1, np.uint64), dev.zeros(1, np.int32)
    dev.launch(mod.function("atomic_cas_counter"), (10, 3), (32, 4), [counter, ucounter, slot])
    assert dev.to_host(counter)[0] == 30 * 128
    assert dev.to_host(ucounter)[0] == 2 * 30 * 128
    assert dev.to_host(slot)[0] == 7


@pytest.mark.parametrize("real", ["double", "float"])
def test_atomic_max_real(dev, real):
    dt = REALS[real]
    x = np.random.default_rng(6).standard_normal(20_000).astype(dt)
    out = dev.to_device(np.array([-np.inf], dt))
    dev.launch(_mod(dev, "atomics", real).function("atomic_max_real"), 16, 64, [dev.to_device(x), np.int32(x.size), out])
    assert dev.to_host(out)[0] == x.max()


# ------------------------------------------------------------------ indices, shared memory, barriers
@pytest.mark.parametrize("grid,block", [((3, 2, 2), (4, 3, 2)), ((5, 4), (8, 8)), (7, 33), ((2, 1, 3), (1, 1, 64))])
def test_grid_and_block_indices(dev, grid, block):
    g = tuple(grid) + (1,) * (3 - len(grid)) if isinstance(grid, tuple) else (grid, 1, 1)
    b = tuple(block) + (1,) * (3 - len(block)) if isinstance(block, tuple) else (block, 1, 1)
    nb, nt = int(np.prod(g)), int(np.prod(b))
    out = dev.zeros(nb * nt * 9, np.int32)
    dev.launch(_mod(dev, "indices").function("write_indices"), grid, block, [out])
    o = dev.to_host(out).reshape(g[2], g[1], g[0], b[2], b[1], b[0], 9)
    tz, ty, tx = np.meshgrid(np.arange(b[2]), np.arange(b[1]), np.arange(b[0]), indexing="ij")
    for bz in range(g[2]):
        for by in range(g[1]):
            for bx in range(g[0]):
                blk = o[bz, by, bx]
                np.testing.assert_array_equal(blk[..., 0], tx)
                np.testing.assert_array_equal(blk[..., 1], ty)
                np.testing.assert_array_equal(blk[..., 2], tz)
                assert (blk[..., 3] == bx).all() and (blk[..., 4] == by).all() and (blk[..., 5] == bz).all()
    assert (o[..., 6] == b[0] * 10000 + b[1] * 100 + b[2]).all()
    assert (o[..., 7] == g[0] * 10000 + g[1] * 100 + g[2]).all()
    assert (o[..., 8] == 32).all()


@pytest.mark.parametrize("real", ["double", "float"])
def test_dynamic_shared_memory(dev, real):
    dt = REALS[real]
    bs, n = 64, 1000
    x = np.arange(n, dtype=dt)
    y = dev.zeros(n, dt)
    nb = (n + bs - 1) // bs
    dev.launch(_mod(dev, "indices", real).function("reverse_chunks"), nb, bs, [dev.to_device(x), y, np.int32(n)],
               shared_bytes=bs * (x.itemsize + 4))
    want = np.full(n, -1, dt)
    for b in range(nb):
        lo = b * bs
        for t in range(bs):
            i, j = lo + t, lo + bs - 1 - t
            if i < n:
                want[i] = x[j] if j < n else -1
    np.testing.assert_array_equal(dev.to_host(y), want)


def test_unwritten_dynamic_shared_is_poisoned(dev):
    out = dev.zeros(64, np.float64)
    dev.launch(_mod(dev, "indices").function("read_unwritten_shared"), 2, 32, [out], shared_bytes=32 * 8)
    assert np.isnan(dev.to_host(out)).all()


def test_syncthreads_votes(dev):
    rng = np.random.default_rng(7)
    pred = (rng.random((6, 128)) < np.array([0, 1, 0.5, 0.01, 0.99, 0.5])[:, None]).astype(np.int32)
    out = dev.zeros(18, np.int32)
    dev.launch(_mod(dev, "indices").function("sync_votes"), 6, 128, [dev.to_device(pred), out])
    o = dev.to_host(out).reshape(6, 3)
    np.testing.assert_array_equal(o[:, 0], pred.sum(1))
    np.testing.assert_array_equal(o[:, 1], pred.all(1))
    np.testing.assert_array_equal(o[:, 2], pred.any(1))


def test_divergent_barrier_is_reported_not_hung(dev):
    with pytest.raises(KernelLaunchError, match="divergent __syncthreads"):
        dev.launch(_mod(dev, "indices").function("divergent_barrier"), 1, 32, [dev.zeros(32, np.int32)])
    # the device stays usable
    test_syncthreads_votes(dev)


def test_exited_threads_count_as_arrived(dev):
    out = dev.zeros(128, np.int32)
    dev.launch(_mod(dev, "indices").function("early_exit_then_sync"), 1, 128, [out, np.int32(100)])
    o = dev.to_host(out)
    np.testing.assert_array_equal(o[:100], 99 - np.arange(100))


# ------------------------------------------------------------------ warp intrinsics
@pytest.mark.parametrize("block", [32, 256, 1024, 96])
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_warp_shuffle_reduction(block, schedule):
    dev = EmulatorDevice(schedule=schedule)
    x = np.random.default_rng(8).standard_normal(100_000)
    part = dev.zeros(9, np.float64)
    dev.launch(_mod(dev, "warp").function("warp_reduce_sum"), 9, block, [dev.to_device(x), np.int64(x.size), part])
    assert dev.to_host(part).sum() == pytest.approx(x.sum(), abs=1e-9)


def test_warp_ops(dev):
    bs = 64
    x = np.random.default_rng(9).integers(0, 120, bs).astype(np.int32)
    out = dev.zeros(6 * bs, np.int32)
    dev.launch(_mod(dev, "warp").function("warp_ops"), 1, bs, [dev.to_device(x), out])
    o = dev.to_host(out).reshape(bs, 6)
    lanes = np.arange(bs)
    w = lanes // 32
    np.testing.assert_array_equal(o[:, 0], x[w * 32 + 3])
    up = np.where(lanes % 32 >= 1, x[np.maximum(lanes - 1, 0)], x)
    np.testing.assert_array_equal(o[:, 1], up)
    np.testing.assert_array_equal(o[:, 2], x[lanes ^ 1])
    for k in range(2):
        bits = x[32 * k: 32 * k + 32] & 1
        mask = int(sum(int(b) << i for i, b in enumerate(bits)))
        assert (o[32 * k: 32 * k + 32, 3].astype(np.uint32) == np.uint32(mask)).all()
        assert (o[32 * k: 32 * k + 32, 4] == int((x[32 * k: 32 * k + 32] > 100).any())).all()
    assert (o[:, 5] == 1).all()


# ------------------------------------------------------------------ argument checking, errors
def test_argument_mismatch_raises_typeerror(dev):
    mod = _mod(dev, "saxpy")
    fn = mod.function("axpy")  # axpy(double a, const double* x, double* y, long long n)
    x, y = dev.to_device(np.ones(10)), dev.zeros(10, np.float64)
    good = [np.float64(2), x, y, np.int64(10)]
    dev.launch(fn, 1, 32, good)
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        dev.launch(fn, 1, 32, good[:3])
    with pytest.raises(TypeError, match="Python float"):
        dev.launch(fn, 1, 32, [2.0, x, y, np.int64(10)])
    with pytest.raises(TypeError, match="Python int"):
        dev.launch(fn, 1, 32, [np.float64(2), x, y, 10])
    with pytest.raises(TypeError, match="long long"):
        dev.launch(fn, 1, 32, [np.float64(2), x, y, np.int32(10)])
    with pytest.raises(TypeError, match="double"):
        dev.launch(fn, 1, 32, [np.float32(2), x, y, np.int64(10)])
    with pytest.raises(TypeError, match="needs a DeviceArray"):
        dev.launch(fn, 1, 32, [np.float64(2), np.float64(1), y, np.int64(10)])
    with pytest.raises(TypeError, match="dtype float32"):
        dev.launch(fn, 1, 32, [np.float64(2), dev.zeros(10, np.float32), y, np.int64(10)])
    with pytest.raises(TypeError, match="scalar"):
        dev.launch(fn, 1, 32, [x, x, y, np.int64(10)])
    with pytest.raises(ValueError, match="1024"):
        dev.launch(fn, 1, 1025, good)
    with pytest.raises(ValueError, match="shared_bytes"):
        dev.launch(fn, 1, 32, good, shared_bytes=100_000)
    with pytest.raises(ValueError, match="not found"):
        mod.function("no_such_kernel")


def test_compile_error_has_compiler_message(dev):
    src = textwrap.dedent("""
        #include "hp_cuda.h"
        extern "C" __global__ void bad(REAL* x) {
          x[threadIdx.x] = undeclared_variable_xyz;
        }
    """)
    with pytest.raises(KernelCompileError, match="undeclared_variable_xyz"):
        dev.module(src)


def test_source_text_and_defines(dev):
    src = textwrap.dedent("""
        #include "hp_cuda.h"
        extern "C" __global__ void fill(REAL* x, int n) {
          HP_GRID_STRIDE_LOOP(i, n) { x[i] = (REAL)SCALE * i; }
        }
    """)
    for real, dt in REALS.items():
        mod = dev.module(src, defines={"REAL": real, "SCALE": 3})
        fn = mod.function("fill")
        out = dev.empty(50, dt)
        dev.launch(fn, 2, 8, [out, np.int32(50)])
        np.testing.assert_array_equal(dev.to_host(out), 3 * np.arange(50, dtype=dt))
        with pytest.raises(TypeError):
            dev.launch(fn, 2, 8, [dev.empty(50, np.float64 if dt is np.float32 else np.float32), np.int32(50)])


def test_memory_api(dev):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    d = dev.to_device(a)
    assert d.shape == (3, 4) and d.dtype == np.int64 and d.size == 12 and d.nbytes == 96
    a[0, 0] = 99  # to_device copied
    assert dev.to_host(d)[0, 0] == 0
    dev.copy_to_device(d, np.ones((3, 4), np.int64))
    np.testing.assert_array_equal(dev.to_host(d), 1)
    with pytest.raises(TypeError):
        dev.copy_to_device(d, np.ones((3, 4), np.float64))
    with pytest.raises(ValueError):
        dev.copy_to_device(d, np.ones(5, np.int64))
    z = dev.zeros((2, 2), np.float32)
    np.testing.assert_array_equal(dev.to_host(z), 0)
    assert np.isnan(dev.to_host(dev.empty(4, np.float64))).all()  # poisoned
    dev.synchronize()


# ------------------------------------------------------------------ cache
def test_module_cache_no_recompile(tmp_path):
    src = '#include "hp_cuda.h"\nextern "C" __global__ void k(REAL* x) { x[threadIdx.x] = 1; }\n// %s\n' % tmp_path
    dev = EmulatorDevice(cache_dir=tmp_path)
    before = emu.compile_count
    m1 = dev.module(src, {"REAL": "float"})
    assert emu.compile_count == before + 1 and not m1.from_cache
    m2 = dev.module(src, {"REAL": "float"})
    assert emu.compile_count == before + 1 and m2.from_cache
    m3 = dev.module(src, {"REAL": "double"})  # other defines: new build
    assert emu.compile_count == before + 2 and not m3.from_cache
    assert len(list(tmp_path.glob("*.so"))) == 2
    # a fresh process finds the .so on disk
    code = (
        "from hphawkes_py.gpu import emulator as e\n"
        f"m = e.EmulatorDevice(cache_dir={str(tmp_path)!r}).module({src!r}, {{'REAL': 'float'}})\n"
        "print(m.from_cache, e.compile_count)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["True", "0"]


def test_parallel_processes_share_cache(tmp_path):
    src = '#include "hp_cuda.h"\nextern "C" __global__ void k2(int* x) { x[threadIdx.x] = 2; }\n// %s\n' % tmp_path
    code = (
        "import numpy as np\nfrom hphawkes_py.gpu import emulator as e\n"
        f"d = e.EmulatorDevice(cache_dir={str(tmp_path)!r})\n"
        f"m = d.module({src!r})\n"
        "a = d.zeros(4, np.int32); d.launch(m.function('k2'), 1, 4, [a]); print(d.to_host(a).sum(), e.compile_count)\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1]) for _ in range(4)]
    outs = [p.communicate()[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0] * 4
    assert [o.split()[0] for o in outs] == ["8"] * 4
    assert sum(int(o.split()[1]) for o in outs) == 1  # one process compiled, the others waited
    assert len(list(tmp_path.glob("*.so"))) == 1
    assert not list(tmp_path.glob("build-*"))


def test_stack_size_option():
    dev = EmulatorDevice(stack_size=256 * 1024)
    src = textwrap.dedent("""
        #include "hp_cuda.h"
        extern "C" __global__ void big_local(double* out) {
          double buf[16000];   // 128 KB of locals: needs a bigger fiber stack than the default
          for (int i = 0; i < 16000; ++i) buf[i] = i * (threadIdx.x + 1);
          __syncthreads();
          double s = 0;
          for (int i = 0; i < 16000; ++i) s += buf[i];
          out[threadIdx.x] = s;
        }
    """)
    out = dev.zeros(8, np.float64)
    dev.launch(dev.module(src).function("big_local"), 1, 8, [out])
    np.testing.assert_array_equal(dev.to_host(out), (np.arange(8) + 1) * 15999 * 16000 / 2)
    with pytest.raises(ValueError):
        EmulatorDevice(stack_size=100)


# ------------------------------------------------------------------ ucontext fallback
def test_ucontext_fallback_scheduler():
    """The portable ucontext fiber switch (used off x86-64) gives the same results."""
    dev = EmulatorDevice(extra_flags=["-DHP_EMU_USE_UCONTEXT"])
    x = np.random.default_rng(10).standard_normal(30_000)
    part = dev.zeros(8, np.float64)
    dev.launch(_mod(dev, "reduce").function("block_sum"), 8, 128, [dev.to_device(x), np.int64(x.size), part],
               shared_bytes=128 * 8)
    assert dev.to_host(part).sum() == pytest.approx(x.sum(), abs=1e-10)
    part = dev.zeros(8, np.float64)
    dev.launch(_mod(dev, "warp").function("warp_reduce_sum"), 8, 96, [dev.to_device(x), np.int64(x.size), part])
    assert dev.to_host(part).sum() == pytest.approx(x.sum(), abs=1e-10)


# ------------------------------------------------------------------ PyCudaDevice against a fake PyCUDA
def _fake_pycuda(monkeypatch, count=1):
    """Install a minimal stand-in for pycuda (driver, gpuarray, compiler) that records calls."""
    import types

    calls = {"modules": [], "launches": []}
    drv = types.ModuleType("pycuda.driver")

    class LogicError(Exception):
        pass

    class CompileError(Exception):
        pass

    class Ctx:
        def push(self):
            calls.setdefault("push", 0)
            calls["push"] += 1

    class Context:
        @staticmethod
        def pop():
            calls["push"] -= 1

        @staticmethod
        def synchronize():
            pass

    class Dev:
        @staticmethod
        def count():
            return count

        def __init__(self, i):
            self.i = i

        def name(self):
            return "Fake GPU"

        def retain_primary_context(self):
            return Ctx()

    drv.LogicError, drv.CompileError, drv.LaunchError = LogicError, CompileError, RuntimeError
    drv.Context, drv.Device, drv.init = Context, Dev, (lambda: None)

    def memcpy_htod(dst, h):
        dst[...] = h.reshape(dst.shape)

    drv.memcpy_htod = memcpy_htod
    ga = types.ModuleType("pycuda.gpuarray")

    class GPUArray:
        def __init__(self, a):
            self.a = a
            self.shape, self.dtype = a.shape, a.dtype
            self.gpudata = a

        def get(self):
            return self.a.copy()

    ga.to_gpu = lambda a: GPUArray(a.copy())
    ga.empty = lambda shape, dtype: GPUArray(np.empty(shape, dtype))
    ga.zeros = lambda shape, dtype: GPUArray(np.zeros(shape, dtype))
    comp = types.ModuleType("pycuda.compiler")

    class SourceModule:
        def __init__(self, src, **kw):
            if "syntax error" in src:
                raise CompileError("nvcc: syntax error here")
            calls["modules"].append(kw)

        def get_function(self, name):
            if name != "k":
                raise LogicError("named symbol not found")

            def fn(*args, **kw):
                calls["launches"].append((args, kw))

            return fn

    comp.SourceModule = SourceModule
    pkg = types.ModuleType("pycuda")
    pkg.driver, pkg.gpuarray, pkg.compiler = drv, ga, comp
    for name, mod in [("pycuda", pkg), ("pycuda.driver", drv), ("pycuda.gpuarray", ga), ("pycuda.compiler", comp)]:
        monkeypatch.setitem(sys.modules, name, mod)
    return calls


def test_pycuda_device_with_fake_pycuda(monkeypatch):
    from hphawkes_py.gpu.device import KERNELS_DIR
    from hphawkes_py.gpu.pycuda_device import PyCudaDevice

    calls = _fake_pycuda(monkeypatch)
    dev = PyCudaDevice()
    assert dev.name == "pycuda:Fake GPU"
    mod = dev.module(KDIR / "saxpy.cu", defines={"REAL": "float", "N": 3})
    kw = calls["modules"][0]
    assert kw["no_extern_c"] is True
    assert str(KERNELS_DIR) in kw["include_dirs"] and str(KDIR) in kw["include_dirs"]
    assert kw["options"] == ["-DN=3", "-DREAL=float"]
    assert dev.module(KDIR / "saxpy.cu", defines={"REAL": "float", "N": 3}) is mod  # cached
    fn = mod.function("k")
    with pytest.raises(ValueError, match="not found"):
        mod.function("nope")
    x = dev.to_device(np.arange(4.0))
    z = dev.zeros((2, 2), np.int32)
    assert x.shape == (4,) and z.dtype == np.int32 and z.nbytes == 16
    dev.launch(fn, (3, 2), 64, [x, np.int32(4), np.float32(1.5)], shared_bytes=256)
    args, kw = calls["launches"][0]
    assert kw == {"block": (64, 1, 1), "grid": (3, 2, 1), "shared": 256}
    assert args[0] is x._g.gpudata and isinstance(args[1], np.int32)
    with pytest.raises(TypeError, match="Python int"):
        dev.launch(fn, 1, 32, [x, 4])
    dev.copy_to_device(x, np.ones(4))
    np.testing.assert_array_equal(dev.to_host(x), 1.0)
    with pytest.raises(TypeError):
        dev.copy_to_device(x, np.ones(4, np.float32))
    with pytest.raises(KernelCompileError, match="syntax error"):
        dev.module("// syntax error\n__global__ void k() {}")
    dev.synchronize()
    assert calls["push"] == 0  # every context push was popped


def test_pycuda_device_unavailable_reasons(monkeypatch):
    from hphawkes_py._backend import BackendUnavailableError
    from hphawkes_py.gpu.pycuda_device import PyCudaDevice

    monkeypatch.setitem(sys.modules, "pycuda", None)
    monkeypatch.setitem(sys.modules, "pycuda.driver", None)
    with pytest.raises(BackendUnavailableError, match=r"pip install 'hphawkes_py\[gpu\]'"):
        PyCudaDevice()
    _fake_pycuda(monkeypatch, count=0)
    with pytest.raises(BackendUnavailableError, match="no CUDA device"):
        PyCudaDevice()


# ------------------------------------------------------------------ memory faults
OOB_SRC = textwrap.dedent("""
    #include "hp_cuda.h"
    extern "C" __global__ void twice(const REAL* x, REAL* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i <= n) y[i] = 2 * x[i];   // BUG: should be i < n
    }
    extern "C" __global__ void recurse(int* out, int depth) {
      volatile char pad[4096];
      pad[0] = (char)depth;
      if (depth > 0) { recurse(out, depth - 1); }
      out[threadIdx.x] = pad[0];
    }
""")


def test_out_of_bounds_caught_with_bounds_check():
    dev = EmulatorDevice(bounds_check=True)
    fn = dev.module(OOB_SRC).function("twice")
    x, y = dev.to_device(np.arange(1000.0)), dev.empty(1000, np.float64)
    dev.launch(fn, 4, 256, [x, y, np.int32(999)])  # in bounds
    np.testing.assert_array_equal(dev.to_host(y), 2 * np.arange(1000.0))
    with pytest.raises(KernelLaunchError, match=r"illegal memory access .* thread \(232,0,0\)"):
        dev.launch(fn, 4, 256, [x, y, np.int32(1000)])  # thread 1000 = block 3, thread 232
    # still usable afterwards
    dev.launch(fn, 4, 256, [x, y, np.int32(999)])


def test_fiber_stack_overflow_is_reported():
    dev = EmulatorDevice(stack_size=32 * 1024)
    fn = dev.module(OOB_SRC).function("recurse")
    out = dev.zeros(4, np.int32)
    dev.launch(fn, 1, 4, [out, np.int32(2)])
    with pytest.raises(KernelLaunchError, match="stack overflow"):
        dev.launch(fn, 1, 4, [out, np.int32(100)])
    dev.launch(fn, 1, 4, [out, np.int32(2)])


def test_concurrent_launches_from_python_threads():
    """Several Python threads share one device and module (e.g. MCMC chains in a thread pool)."""
    from concurrent.futures import ThreadPoolExecutor

    dev = EmulatorDevice()
    mod = _mod(dev, "reduce")
    bad = _mod(dev, "indices").function("divergent_barrier")

    def work(seed):
        x = np.random.default_rng(seed).standard_normal(20_000)
        part = dev.zeros(8, np.float64)
        for _ in range(5):
            dev.launch(mod.function("block_sum"), 8, 128, [dev.to_device(x), np.int64(x.size), part],
                       shared_bytes=128 * 8)
        if seed % 2:
            with pytest.raises(KernelLaunchError, match="divergent"):
                dev.launch(bad, 1, 32, [dev.zeros(32, np.int32)])
        return dev.to_host(part).sum() - x.sum()

    with ThreadPoolExecutor(4) as ex:
        diffs = list(ex.map(work, range(8)))
    assert np.abs(diffs).max() < 1e-9
