"""Run the project's CUDA kernels on the CPU.

:class:`EmulatorDevice` compiles the *same* ``.cu`` source as the GPU path with the host C++
compiler (``g++ -O2 -std=c++17 -fPIC -shared``, ``-include cuda_emulator.h``), loads it with
ctypes and executes launches with CUDA semantics:

* blocks run one after another (or several at once on ``threads`` OS workers, each worker
  running one block at a time);
* the threads of a block are user-level fibers switched cooperatively at ``__syncthreads()``
  and warp intrinsics, resumed in a fixed order, so runs are deterministic and a missing
  barrier gives a reproducibly wrong answer (``schedule="reverse"`` resumes them in reverse
  order, to expose races the forward order happens to hide);
* ``__shared__`` memory is shared by the threads of a block, dynamic shared memory comes from
  ``HP_DYNAMIC_SHARED`` (filled with 0xFF bytes -- NaN / -1 -- before each block, so reads of
  unwritten shared memory show up), atomics are real atomics;
* a barrier that can never open, or threads of a block waiting at different
  ``__syncthreads()`` (divergent barrier), raise
  :class:`~hphawkes_py.gpu.device.KernelLaunchError` instead of hanging;
* a memory fault inside a kernel (out-of-bounds pointer, fiber stack overflow) raises
  ``KernelLaunchError("illegal memory access ... in block (..), thread (..)")`` like CUDA's
  illegal-address error; with ``bounds_check=True`` every buffer ends at a guard page so
  that reading or writing one element past the end is caught at once.

Rules for kernels (they also hold on real GPUs; the emulator enforces most of them):

1. Entry points are ``extern "C" __global__ void name(...)`` -- no templates or overloads;
   parameters are pointers or ``int``/``unsigned``/``long long``/``unsigned long long``/
   ``float``/``double`` (``REAL``) scalars, passed from Python as DeviceArrays and NumPy
   scalars of exactly that type.
2. ``#include "hp_cuda.h"``; use ``REAL`` for the real type; dynamic shared memory only via
   ``HP_DYNAMIC_SHARED(type, name);`` at function scope.
3. Every ``__syncthreads()`` is reached by all (non-exited) threads of the block at the same
   source line; warp intrinsics are called by all live lanes of a warp together.
4. No ``__constant__`` memory set from the host, no textures, no cooperative groups, no
   dynamic parallelism, no device-side ``malloc``; static ``__shared__`` variables are not
   re-initialised between blocks (as on a GPU, their contents are undefined at block start).
5. Do not rely on warp-synchronous execution without ``__syncwarp``/shuffles (the emulator
   runs each thread until its next barrier, exactly the schedule that breaks such code).

Each kernel's parameter types are read from the compiled code (C++ templates generate a
signature per kernel), so a launch checks the argument count, pointer vs scalar, the scalar's
exact C type and the element type of every buffer, and raises ``TypeError`` on a mismatch.

Compiled libraries are cached by content hash (source, included local headers, defines, the
shim headers, compiler version and flags) in ``$HPHAWKES_CACHE_DIR/emulator`` or
``~/.cache/hphawkes_py/emulator``; writes are atomic so parallel test processes are safe.

Environment: ``HPHAWKES_CACHE_DIR``, ``HPHAWKES_EMULATOR_THREADS`` (default number of worker
threads, 1), ``HPHAWKES_EMULATOR_STACK`` (fiber stack size in bytes, default 65536),
``HPHAWKES_EMULATOR_SCHEDULE`` (``forward``/``reverse``), ``CXX`` (compiler, default g++).
"""

from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

from .device import (
    KERNELS_DIR,
    Device,
    DeviceArray,
    Function,
    KernelCompileError,
    KernelLaunchError,
    Module,
    check_launch_config,
    check_scalar_arg,
    host_copy_source,
    define_flags,
    normalize_defines,
    read_source,
)

__all__ = ["EmulatorDevice", "EmulatorArray", "EmulatorModule", "EmulatorFunction"]

_EMU_VERSION = "3"
_SHIM = Path(__file__).resolve().parent / "cuda_emulator.h"
_CXX_FLAGS = ["-O2", "-std=c++17", "-fPIC", "-shared", "-pthread", "-fno-strict-aliasing", "-fstack-clash-protection"]

# kind code (from cuda_emulator.h) -> numpy dtype
_CODE_DTYPE = {
    "b": np.dtype(np.int8),
    "B": np.dtype(np.uint8),
    "h": np.dtype(np.int16),
    "H": np.dtype(np.uint16),
    "i": np.dtype(np.int32),
    "I": np.dtype(np.uint32),
    "l": np.dtype(np.int64),
    "L": np.dtype(np.uint64),
    "f": np.dtype(np.float32),
    "d": np.dtype(np.float64),
    "?": np.dtype(np.bool_),
}
_SCALAR_CTYPE = {
    "i": ctypes.c_int32,
    "I": ctypes.c_uint32,
    "l": ctypes.c_int64,
    "L": ctypes.c_uint64,
    "f": ctypes.c_float,
    "d": ctypes.c_double,
}
_C_NAMES = {
    "b": "signed char", "B": "unsigned char", "h": "short", "H": "unsigned short", "i": "int",
    "I": "unsigned int", "l": "long long", "L": "unsigned long long", "f": "float", "d": "double",
    "?": "bool", "v": "void", "x": "<other>",
}

_KERNEL_RE = re.compile(r"__hp_kernel_marker__\s*(?:[A-Za-z_]\w*\s+)*?void\s+([A-Za-z_]\w*)\s*\(")
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)

_compiler_id_cache: dict = {}
_memo_lock = threading.Lock()
_module_memo: dict = {}  # cache key -> (CDLL, names, signatures)
_build_locks: dict = {}

#: Number of compilations performed by this process (tests use it to check caching).
compile_count = 0


def _default_cache_dir() -> Path:
    base = os.environ.get("HPHAWKES_CACHE_DIR")
    if base:
        return Path(base) / "emulator"
    return Path.home() / ".cache" / "hphawkes_py" / "emulator"


def _compiler_id(cxx: str) -> str:
    if cxx not in _compiler_id_cache:
        try:
            out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelCompileError(
                f"the emulator needs a C++17 compiler; could not run {cxx!r}: {exc}. "
                "Install g++ or set CXX."
            ) from None
        first = (out.stdout or out.stderr).strip().splitlines()
        _compiler_id_cache[cxx] = first[0] if first else cxx
    return _compiler_id_cache[cxx]


# ----------------------------------------------------------------------------- arrays
class EmulatorArray(DeviceArray):
    """Device buffer of the emulator: host memory owned by a NumPy array."""

    __slots__ = ("_a", "shape", "dtype", "_device")

    def __init__(self, a: np.ndarray, device):
        self._a = a
        self.shape = tuple(a.shape)
        self.dtype = a.dtype
        self._device = device

    @property
    def ptr(self) -> int:
        return self._a.ctypes.data


# ----------------------------------------------------------------------------- modules
class EmulatorFunction(Function):
    def __init__(self, name, module, launcher, signature):
        super().__init__(name, module)
        self._launcher = launcher
        self.signature = signature  # list of (kind 'p'|'s', code)

    def describe(self) -> str:
        parts = []
        for kind, code in self.signature:
            parts.append(_C_NAMES.get(code, code) + ("*" if kind == "p" else ""))
        return f"{self.name}({', '.join(parts)})"


class EmulatorModule(Module):
    def __init__(self, lib, names, signatures, path, from_cache, defines):
        self._lib = lib
        self.path = path
        self.from_cache = from_cache
        self.defines = defines
        self._functions = {}
        for name in names:
            launcher = getattr(lib, f"__hp_launch_{name}")
            launcher.restype = ctypes.c_int
            launcher.argtypes = [
                ctypes.c_void_p,  # void** args
                ctypes.POINTER(ctypes.c_uint),  # grid[3]
                ctypes.POINTER(ctypes.c_uint),  # block[3]
                ctypes.c_ulonglong,  # shared bytes
                ctypes.c_int,  # workers
                ctypes.c_void_p,  # void* const* stacks
                ctypes.c_ulonglong,  # stack size
                ctypes.c_ulonglong,  # guard bytes
                ctypes.c_int,  # flags
            ]
            self._functions[name] = EmulatorFunction(name, self, launcher, signatures[name])
        err = getattr(lib, "__hp_last_error")
        err.restype = ctypes.c_char_p
        err.argtypes = []
        self._last_error = err

    @property
    def function_names(self) -> tuple:
        return tuple(self._functions)

    def function(self, name: str) -> EmulatorFunction:
        try:
            return self._functions[name]
        except KeyError:
            raise ValueError(
                f"kernel {name!r} not found in module; kernels found: {sorted(self._functions)} "
                '(entry points must be declared extern "C" __global__ void name(...))'
            ) from None


# ----------------------------------------------------------------------------- stacks
class _StackPool:
    """Fiber stacks for one Python thread: per worker, 1024 stacks each behind a guard page."""

    _libc = None

    def __init__(self, workers: int, stack_size: int, guard: bool):
        page = mmap.PAGESIZE
        self.stack_size = (stack_size + page - 1) // page * page
        self.guard = page if guard else 0
        self.stride = self.stack_size + self.guard
        self.workers = workers
        per_worker = 1024 * self.stride
        self._maps = []
        addrs = []
        for _ in range(workers):
            m = mmap.mmap(-1, per_worker, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            buf = (ctypes.c_char * per_worker).from_buffer(m)
            addr = ctypes.addressof(buf)
            if self.guard:
                libc = _StackPool._get_libc()
                for t in range(1024):
                    if libc.mprotect(ctypes.c_void_p(addr + t * self.stride), ctypes.c_size_t(page), 0) != 0:
                        self.guard = self.guard  # best effort: keep going without this guard
            self._maps.append((m, buf))
            addrs.append(addr)
        self.array = (ctypes.c_void_p * workers)(*addrs)

    @classmethod
    def _get_libc(cls):
        if cls._libc is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            libc.mprotect.restype = ctypes.c_int
            cls._libc = libc
        return cls._libc


# ----------------------------------------------------------------------------- device
class EmulatorDevice(Device):
    """CPU emulation of a CUDA device (see the module docstring).

    Parameters
    ----------
    threads : int, optional
        OS worker threads running blocks concurrently (default ``$HPHAWKES_EMULATOR_THREADS``
        or 1; 1 gives bit-reproducible results even with floating-point atomics).
    stack_size : int, optional
        Stack bytes per emulated GPU thread (default ``$HPHAWKES_EMULATOR_STACK`` or 64 KiB).
        Every stack sits behind a guard page: overflowing it crashes with SIGSEGV instead of
        corrupting memory.
    schedule : {"forward", "reverse"}
        Order in which the threads of a block are resumed after each barrier.
    poison : bool
        Fill ``empty()`` buffers and dynamic shared memory with 0xFF bytes (NaN for floats,
        -1 for signed ints) so reads of unwritten memory are visible.
    cache_dir : path, optional
        Where compiled modules are cached.
    cxx : str, optional
        C++ compiler (default ``$CXX`` or ``g++``).
    extra_flags : sequence of str
        Extra compiler flags (e.g. ``["-O0", "-g"]`` for debugging with gdb).
    bounds_check : bool
        Debug aid (default ``$HPHAWKES_EMULATOR_BOUNDS`` or False): every buffer is placed so
        that it ends exactly at an inaccessible guard page, so a kernel reading or writing
        past the end of a buffer crashes at once with SIGSEGV (run with ``python -X
        faulthandler`` to see where) instead of silently using neighbouring memory.
    """

    name = "emulator"

    emulated_block = 32  # see Device.block_size: every emulated thread is a fiber

    def __init__(self, *, threads=None, stack_size=None, schedule=None, poison=True, cache_dir=None,
                 cxx=None, extra_flags=(), bounds_check=None):
        if threads is None:
            threads = int(os.environ.get("HPHAWKES_EMULATOR_THREADS", "1"))
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive int, got {threads!r}")
        self.threads = int(threads)
        if stack_size is None:
            stack_size = int(os.environ.get("HPHAWKES_EMULATOR_STACK", str(64 * 1024)))
        if not isinstance(stack_size, (int, np.integer)) or stack_size < 16 * 1024:
            raise ValueError(f"stack_size must be an int >= 16384 bytes, got {stack_size!r}")
        self.stack_size = int(stack_size)
        if schedule is None:
            schedule = os.environ.get("HPHAWKES_EMULATOR_SCHEDULE", "forward")
        if schedule not in ("forward", "reverse"):
            raise ValueError(f"schedule must be 'forward' or 'reverse', got {schedule!r}")
        self.schedule = schedule
        self.poison = bool(poison)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
        self.cxx = cxx or os.environ.get("CXX") or "g++"
        if shutil.which(self.cxx) is None:
            raise KernelCompileError(
                f"the CUDA emulator needs a C++17 compiler but {self.cxx!r} was not found; install g++ "
                "or set the CXX environment variable"
            )
        self.extra_flags = list(extra_flags)
        if bounds_check is None:
            bounds_check = os.environ.get("HPHAWKES_EMULATOR_BOUNDS", "") not in ("", "0")
        self.bounds_check = bool(bounds_check)
        self._tls = threading.local()

    # ------------------------------------------------------------------ compile
    def module(self, source, defines=None) -> EmulatorModule:
        text, path = read_source(source)
        defs = normalize_defines(defines)
        include_dirs = [KERNELS_DIR]
        if path is not None and path.parent != KERNELS_DIR:
            include_dirs.insert(0, path.parent)
        h = hashlib.sha256()
        for part in (
            _EMU_VERSION,
            text,
            repr(sorted(defs.items())),
            _SHIM.read_text(),
            _compiler_id(self.cxx),
            self.cxx,
            " ".join(_CXX_FLAGS + self.extra_flags),
        ):
            h.update(part.encode())
            h.update(b"\0")
        # local headers included with #include "..." (one level deep is what kernels use;
        # recurse to be safe)
        seen = set()
        stack = [(text, path.parent if path is not None else None)]
        while stack:
            src, here = stack.pop()
            for inc in _INCLUDE_RE.findall(src):
                cands = ([here / inc] if here is not None else []) + [d / inc for d in include_dirs]
                for c in cands:
                    if c.is_file():
                        c = c.resolve()
                        if c not in seen:
                            seen.add(c)
                            t = c.read_text()
                            h.update(str(c.name).encode() + b"\0" + t.encode() + b"\0")
                            stack.append((t, c.parent))
                        break
        key = h.hexdigest()[:40]
        with _memo_lock:
            hit = _module_memo.get(key)
            lock = _build_locks.setdefault(key, threading.Lock())
        if hit is not None:
            lib, names, sigs, so = hit
            return EmulatorModule(lib, names, sigs, so, True, defs)
        with lock:
            with _memo_lock:
                hit = _module_memo.get(key)
            if hit is not None:
                lib, names, sigs, so = hit
                return EmulatorModule(lib, names, sigs, so, True, defs)
            so = self.cache_dir / f"{key}.so"
            from_cache = so.is_file()
            if not from_cache:
                # one builder per key across processes (pytest-xdist): the others wait for it
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                with _file_lock(self.cache_dir / f"{key}.lock"):
                    from_cache = so.is_file()
                    if not from_cache:
                        self._build(text, path, defs, include_dirs, so)
            lib = ctypes.CDLL(str(so), mode=os.RTLD_LOCAL | os.RTLD_NOW)
            names, sigs = _describe(lib)
            with _memo_lock:
                _module_memo[key] = (lib, names, sigs, so)
        return EmulatorModule(lib, names, sigs, so, from_cache, defs)

    def _build(self, text, path, defs, include_dirs, so: Path) -> None:
        global compile_count
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="build-", dir=self.cache_dir))
        try:
            if path is None:
                src_file = build / "kernel.cu"
                src_file.write_text(text)
            else:
                src_file = path
            label = str(path) if path is not None else "<source text>"
            inc_flags = []
            for d in include_dirs:
                inc_flags += ["-I", str(d)]
            common = ["-std=c++17", "-x", "c++", "-include", str(_SHIM)] + inc_flags + define_flags(defs)
            # 1) preprocess with a marker on __global__ to find the kernel names
            pre = subprocess.run(
                [self.cxx, "-E", "-P", "-D__HP_EMU_SCAN__"] + common + [str(src_file)],
                capture_output=True, text=True,
            )
            if pre.returncode != 0:
                raise KernelCompileError(
                    f"emulator: preprocessing {label} failed (defines {defs}):\n{pre.stderr.strip()}"
                )
            names = []
            for m in _KERNEL_RE.finditer(pre.stdout):
                if m.group(1) not in names:
                    names.append(m.group(1))
            # 2) translation unit = the kernel source + one launcher per kernel
            wrapper = [f'#include "{src_file}"', ""]
            for n in names:
                wrapper.append(
                    f'extern "C" int __hp_launch_{n}(void** a, const unsigned* g, const unsigned* b, '
                    "unsigned long long sh, int w, void* const* st, unsigned long long ss, "
                    "unsigned long long gd, int fl) "
                    f"{{ return ::hp_emu::launch_kernel(&{n}, a, g, b, sh, w, st, ss, gd, fl); }}"
                )
                wrapper.append(
                    f'extern "C" const char* __hp_sig_{n}() {{ return ::hp_emu::signature(&{n}); }}'
                )
            wrapper.append(f'extern "C" const char* __hp_kernels() {{ return "{",".join(names)}"; }}')
            wrapper.append('extern "C" const char* __hp_last_error() { return ::hp_emu::last_error(); }')
            wrapper_file = build / "emu_module.cpp"
            wrapper_file.write_text("\n".join(wrapper) + "\n")
            tmp_so = build / "module.so"
            cmd = (
                [self.cxx] + _CXX_FLAGS + self.extra_flags + ["-include", str(_SHIM)] + inc_flags
                + define_flags(defs) + [str(wrapper_file), "-o", str(tmp_so)]
            )
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise KernelCompileError(
                    f"emulator: compiling {label} with {self.cxx} failed (defines {defs}):\n{res.stderr.strip()}"
                )
            compile_count += 1
            os.replace(tmp_so, so)  # atomic: concurrent builders write identical content
        finally:
            shutil.rmtree(build, ignore_errors=True)

    # ------------------------------------------------------------------ memory
    def _wrap(self, a: np.ndarray) -> EmulatorArray:
        return EmulatorArray(a, self)

    def _alloc(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        if dtype == object:
            raise TypeError("cannot allocate an object array on the device")
        if not self.bounds_check:
            return np.empty(shape, dtype=dtype)
        return _guarded_empty(shape, dtype)

    def to_device(self, host_array) -> EmulatorArray:
        h = np.asarray(host_array)
        if h.dtype == object:
            raise TypeError("cannot copy an object array to the device")
        a = self._alloc(h.shape, h.dtype)
        a[...] = h
        return self._wrap(a)

    def empty(self, shape, dtype) -> EmulatorArray:
        a = self._alloc(shape, dtype)
        if self.poison and a.size:
            a.view(np.uint8).reshape(-1).fill(0xFF)
        return self._wrap(a)

    def zeros(self, shape, dtype) -> EmulatorArray:
        a = self._alloc(shape, dtype)
        a[...] = 0
        return self._wrap(a)

    def _check_array(self, arr, what="array") -> EmulatorArray:
        if not isinstance(arr, EmulatorArray):
            raise TypeError(f"{what} must be a DeviceArray of an EmulatorDevice, got {type(arr).__name__}")
        return arr

    def copy_to_device(self, dst, host_array) -> None:
        dst = self._check_array(dst, "dst")
        h = host_copy_source(dst, host_array)
        dst._a.reshape(-1)[...] = h.reshape(-1)

    def to_host(self, arr) -> np.ndarray:
        return self._check_array(arr)._a.copy()

    def synchronize(self) -> None:
        return None

    # ------------------------------------------------------------------ launch
    def _stacks(self) -> _StackPool:
        pool = getattr(self._tls, "pool", None)
        if pool is None:
            pool = _StackPool(self.threads, self.stack_size, guard=True)
            self._tls.pool = pool
        return pool

    def launch(self, fn, grid, block, args, shared_bytes=0) -> None:
        if not isinstance(fn, EmulatorFunction):
            raise TypeError(f"fn must be a Function from EmulatorDevice.module(...).function(name), got {fn!r}")
        g, b, shared = check_launch_config(grid, block, shared_bytes)
        args = list(args)
        sig = fn.signature
        if len(args) != len(sig):
            raise TypeError(
                f"kernel {fn.describe()} takes {len(sig)} arguments, got {len(args)}"
            )
        holders = []
        for i, (arg, (kind, code)) in enumerate(zip(args, sig)):
            if kind == "p":
                if not isinstance(arg, EmulatorArray):
                    raise TypeError(
                        f"{fn.describe()}: argument {i} is a pointer ({_C_NAMES.get(code, code)}*) and needs a "
                        f"DeviceArray, got {type(arg).__name__}"
                    )
                want = _CODE_DTYPE.get(code)
                if want is not None and arg.dtype != want and not (
                    code in "bB?" and arg.dtype.itemsize == 1
                ):
                    raise TypeError(
                        f"{fn.describe()}: argument {i} is {_C_NAMES[code]}* but the DeviceArray has dtype "
                        f"{arg.dtype} (expected {want})"
                    )
                holders.append(ctypes.c_void_p(arg.ptr))
            else:
                if isinstance(arg, DeviceArray):
                    raise TypeError(
                        f"{fn.describe()}: argument {i} is a scalar ({_C_NAMES.get(code, code)}), got a DeviceArray"
                    )
                check_scalar_arg(arg, i, fn.name)
                ct = _SCALAR_CTYPE.get(code)
                if ct is None:
                    raise TypeError(
                        f"{fn.describe()}: parameter {i} has C type {_C_NAMES.get(code, code)}, which kernels may "
                        "not take by value (use int, unsigned, long long, unsigned long long, float, double)"
                    )
                want = _CODE_DTYPE[code]
                if np.dtype(type(arg)) != want:
                    raise TypeError(
                        f"{fn.describe()}: argument {i} is {_C_NAMES[code]} (np.{want.name}) but got "
                        f"np.{np.dtype(type(arg)).name} {arg!r}"
                    )
                holders.append(ct(arg.item()))
        argv = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.addressof(h) for h in holders])
        pool = self._stacks()
        if pool.stack_size < self.stack_size:
            pool = self._tls.pool = _StackPool(self.threads, self.stack_size, guard=True)
        flags = (1 if self.schedule == "reverse" else 0) | (2 if self.poison else 0)
        g3 = (ctypes.c_uint * 3)(*g)
        b3 = (ctypes.c_uint * 3)(*b)
        rc = fn._launcher(
            ctypes.cast(argv, ctypes.c_void_p), g3, b3, shared, self.threads,
            ctypes.cast(pool.array, ctypes.c_void_p), pool.stack_size, pool.guard, flags,
        )
        if rc != 0:
            msg = fn.module._last_error().decode(errors="replace")
            raise KernelLaunchError(f"emulator: kernel {fn.name} grid={g} block={b}: {msg}")


class _file_lock:
    """Exclusive advisory lock on a file (no-op where fcntl is unavailable)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX
            return self
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
        return False


def _guarded_empty(shape, dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array whose last byte is followed by a PROT_NONE page."""
    page = mmap.PAGESIZE
    n = int(np.prod(shape, dtype=np.int64))
    nbytes = n * dtype.itemsize
    data_pages = max(1, -(-nbytes // page))
    m = mmap.mmap(-1, (data_pages + 1) * page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * len(m)).from_buffer(m)
    libc = _StackPool._get_libc()
    if libc.mprotect(ctypes.c_void_p(ctypes.addressof(buf) + data_pages * page), ctypes.c_size_t(page), 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed for a bounds-check guard page")
    offset = data_pages * page - nbytes
    a = np.frombuffer(buf, dtype=dtype, count=n, offset=offset).reshape(shape)
    return a


def _describe(lib):
    kernels = getattr(lib, "__hp_kernels")
    kernels.restype = ctypes.c_char_p
    names = [n for n in kernels().decode().split(",") if n]
    sigs = {}
    for n in names:
        f = getattr(lib, f"__hp_sig_{n}")
        f.restype = ctypes.c_char_p
        s = f().decode()
        sigs[n] = [(tok[0], tok[1]) for tok in s.split(",") if tok]
    return names, sigs
