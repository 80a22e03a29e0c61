"""Vectorizable ``exp`` for Numba kernels.

Numba on this platform has no SVML, so ``math.exp`` inside a loop compiles to
a scalar libm call and blocks SIMD vectorisation of the whole loop. The
functions here are written only with operations LLVM vectorises (multiply,
add, integer add/shift, bit casts, selects), so a loop calling them compiles to
packed AVX instructions.

Algorithm (Cody & Waite range reduction, as in fdlibm):

1. ``n = floor(x / ln 2 + 1/2)`` (a packed ``vroundpd``).
2. ``r = x - n ln2_hi - n ln2_lo`` with ``ln2_hi`` having trailing zero bits so
   ``n * ln2_hi`` is exact; ``|r| <= ln(2)/2``. Both steps are explicit
   ``llvm.fma`` calls: Numba passes a caller's ``fastmath=True`` down to the
   functions it calls, and re-association would otherwise be free to merge
   the two steps and lose the exactness of the reduction.
3. ``exp(r)`` by its Taylor polynomial of degree 12 (Horner); the truncation
   error is below ``0.347**13 / 13! < 2e-16`` relative. (Estrin's scheme with
   FMAs, a 6-deep instead of a 24-deep dependency chain, made ``exp`` alone
   1.15-1.3x faster and the fused exact likelihood 1.3x, but the exponential
   trigger loop -- the MCMC's hot pass -- 1.4x slower (more live registers);
   measured with benchmarks/bench_hawkes_loglik.py, so Horner stays.)
4. ``2**n`` built directly as the bit pattern ``(n + 1023) << 52``; the
   integer ``n`` is read from the low mantissa bits of ``n + 1.5 * 2**52``
   (exact, since ``n`` is integral), avoiding a float->int64 conversion
   that AVX2 lacks.

Every step stays correct when the caller is compiled with ``fastmath=True``
(which callers need so that LLVM vectorises their floating-point
reductions); the tests check this.

Measured maximum relative error against ``numpy.exp`` over [-708, 709]:
below 5e-16 (see ``tests/test_foundation.py``). Inputs below -708.39 (where
``2**n`` would be subnormal) return exactly 0.0: the absolute error is then
below 3e-308, irrelevant for every sum of kernel terms in this package.
Inputs above 709.43 return ``inf`` (the true value there exceeds 1.2e308); NaN propagates.

``exp_fast32`` is the float32 twin (degree-7 polynomial, error ~1 ulp).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir as llvmir
from numba import njit, types
from numba.extending import intrinsic, overload

__all__ = ["exp_fast", "exp_fast32", "exp_like", "exp_nonpos", "max_num", "count_trailing_zeros"]


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding, as an ``llvm.fma`` call (immune to re-association)."""
    if not (a == b == c and a in (types.float64, types.float32)):
        return None
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(signature.return_type)
        fnty = llvmir.FunctionType(ty, [ty, ty, ty])
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], fnty)
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _f64_as_i64(typingctx, x):
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return sig, codegen


@intrinsic
def _i64_as_f64(typingctx, x):
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return sig, codegen


@intrinsic
def _f32_as_i32(typingctx, x):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int32))

    return sig, codegen


@intrinsic
def _i32_as_f32(typingctx, x):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))

    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_MAGIC = 6755399441055744.0  # 1.5 * 2**52
_XMIN = -708.3964185322641  # below: 2**n would be subnormal -> return 0
_XMAX = 709.43  # above: 2**n would overflow (true value > 1.2e308) -> inf


@njit(cache=True)
def exp_fast(x):
    """``exp(x)`` for float64, vectorizable inside Numba loops (|rel. error| < 5e-16)."""
    xc = min(max(x, _XMIN), _XMAX)
    n = np.floor(xc * _LOG2E + 0.5)
    r = _fma(-n, _LN2_LO, _fma(-n, _LN2_HI, xc))
    p = 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = _i64_as_f64((_f64_as_i64(n + _MAGIC) + 1023) << 52)
    y = p * scale
    if x < _XMIN:
        y = 0.0
    if x > _XMAX:
        y = np.inf
    if x != x:  # NaN
        y = x
    return y


@njit(cache=True, inline="always")
def exp_nonpos(x):
    """``exp(x)`` for float64 ``x <= 0``: :func:`exp_fast`'s reduction and degree-12 Taylor
    polynomial, evaluated by Estrin's scheme (a 4-deep instead of a 12-deep chain of FMAs) and
    without the overflow test; NaN propagates.  Relative error < 5e-16 (tests/test_kde_tiled.py
    checks it against numpy.exp).  ~1.4x faster per lane than :func:`exp_fast` in the KDE's
    tiled gather, whose loop has few other live values; the Hawkes trigger loop was slower with
    it (see the module notes), so each kernel uses the one measured faster."""
    xc = max(x, _XMIN)
    n = np.floor(xc * _LOG2E + 0.5)
    r = _fma(-n, _LN2_LO, _fma(-n, _LN2_HI, xc))
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    a0 = _fma(r, 1.0, 1.0)
    a1 = _fma(r, 1.0 / 6.0, 0.5)
    a2 = _fma(r, 1.0 / 120.0, 1.0 / 24.0)
    a3 = _fma(r, 1.0 / 5040.0, 1.0 / 720.0)
    a4 = _fma(r, 1.0 / 362880.0, 1.0 / 40320.0)
    a5 = _fma(r, 1.0 / 39916800.0, 1.0 / 3628800.0)
    b0 = _fma(r2, a1, a0)
    b1 = _fma(r2, a3, a2)
    b2 = _fma(r2, a5, a4)
    c0 = _fma(r4, b1, b0)
    c1 = _fma(r4, 1.0 / 479001600.0, b2)
    p = _fma(r8, c1, c0)
    y = p * _i64_as_f64((_f64_as_i64(n + _MAGIC) + 1023) << 52)
    if x < _XMIN:
        y = 0.0
    if x != x:
        y = x
    return y


_LOG2E_F = np.float32(1.4426950408889634)
_LN2_HI_F = np.float32(0.693145751953125)
_LN2_LO_F = np.float32(1.428606765330187045e-06)
_MAGIC_F = np.float32(12582912.0)  # 1.5 * 2**23
_XMIN_F = np.float32(-87.33654)
_XMAX_F = np.float32(88.37)  # n <= 127
_C = tuple(np.float32(1.0 / f) for f in (5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0))


@njit(cache=True)
def exp_fast32(x):
    """``exp(x)`` for float32, vectorizable inside Numba loops (about 1 ulp)."""
    xc = min(max(x, _XMIN_F), _XMAX_F)
    n = np.floor(xc * _LOG2E_F + np.float32(0.5))
    r = _fma(-n, _LN2_LO_F, _fma(-n, _LN2_HI_F, xc))
    p = _C[0]
    p = p * r + _C[1]
    p = p * r + _C[2]
    p = p * r + _C[3]
    p = p * r + _C[4]
    p = p * r + _C[5]
    p = p * r + _C[6]
    p = p * r + _C[7]
    scale = _i32_as_f32((_f32_as_i32(n + _MAGIC_F) + np.int32(127)) << np.int32(23))
    y = p * scale
    if x < _XMIN_F:
        y = np.float32(0.0)
    if x > _XMAX_F:
        y = np.float32(np.inf)
    if x != x:
        y = x
    return y


def exp_like(x):  # pragma: no cover - replaced by the overload inside Numba code
    """``exp`` in the precision of ``x`` inside Numba code: :func:`exp_fast32` for float32 (twice
    the lanes per vector), :func:`exp_fast` otherwise."""
    return math.exp(x)


@overload(exp_like, inline="always")
def _exp_like_overload(x):
    if isinstance(x, types.Float) and x.bitwidth == 32:
        return lambda x: exp_fast32(x)
    return lambda x: exp_fast(x)


@intrinsic
def max_num(typingctx, a, b):
    """``max(a, b)`` as ``llvm.maxnum`` (the non-NaN operand if one is NaN).  Unlike a compare and
    select, LLVM vectorises a loop that reduces with it without fast-math flags (no SVML or
    ``nnan`` needed): a maximum over a row runs 4 (float64) or 8 (float32) lanes at a time."""
    if not (a == b and a in (types.float64, types.float32)):
        return None
    sig = a(a, b)

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(signature.return_type)
        fnty = llvmir.FunctionType(ty, [ty, ty])
        fn = builder.module.declare_intrinsic("llvm.maxnum", [ty], fnty)
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def count_trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a uint64 (``llvm.cttz``: one ``tzcnt`` instruction);
    undefined for 0, so callers test ``x != 0`` first."""
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        ty = llvmir.IntType(64)
        fnty = llvmir.FunctionType(ty, [ty, llvmir.IntType(1)])
        fn = builder.module.declare_intrinsic("llvm.cttz", [ty], fnty)
        return builder.call(fn, [args[0], llvmir.Constant(llvmir.IntType(1), 1)])

    return sig, codegen
