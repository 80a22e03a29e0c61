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
   error is below ``0.347**13 / 13! < 2e-16`` relative. Horner's scheme, not
   Estrin's: Estrin's shorter dependency chain needs more live registers, and
   the exponential trigger loop -- the MCMC's hot pass -- has few to spare
   (benchmarks/bench_hawkes_loglik.py compares the two).
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

__all__ = ["exp_fast", "exp_fast32", "exp_like", "exp_nonpos", "exp2_mul", "ndtr_fast", "ndtr_monotone", "fdiv", "fsub", "fadd", "max_num", "count_trailing_zeros"]


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
def fdiv(typingctx, a, b):
    """``a / b`` as a bare IEEE division: Numba's ``/`` checks for a zero divisor to raise
    ZeroDivisionError (the default error model), and that branch keeps LLVM from vectorising the loop."""
    if not (a == b and a in (types.float64, types.float32)):
        return None
    sig = a(a, b)

    def codegen(context, builder, signature, args):
        return builder.fdiv(args[0], args[1])

    return sig, codegen


def _exact_binop(op):
    """An intrinsic ``a op b`` (op ``"fsub"`` or ``"fadd"``) that a caller's ``fastmath=True`` cannot
    re-associate with its neighbours.

    Numba's fast-math pass gives every floating-point instruction that has no flags all of them, and
    with ``reassoc`` on the instructions of ``(t_n^hi - t_m^hi) + (t_n^lo - t_m^lo)`` LLVM regroups
    the sum as ``(t_n^hi + t_n^lo) - (t_m^hi + t_m^lo)`` (hoisting ``t_n^hi + t_n^lo`` out of the loop
    over m): that rounds each time to float32 before the difference and undoes the split of
    ``times.split_time`` (off by ~1e-2 hours at t ~ 1e5 hours). The instruction here carries the one
    flag ``nsz`` (signed zeros may be ignored: harmless for a time difference, whose sign of zero
    nothing reads), so the pass leaves it alone, and LLVM only regroups instructions that all carry
    ``reassoc``."""

    def impl(typingctx, a, b):
        if not (a == b and a in (types.float64, types.float32)):
            return None
        sig = a(a, b)

        def codegen(context, builder, signature, args):
            return getattr(builder, op)(args[0], args[1], flags=("nsz",))

        return sig, codegen

    impl.__name__ = f"_{op}_exact"  # each intrinsic needs its own name in Numba's registry
    return intrinsic(impl)


#: ``a - b`` rounded once, never re-associated by a caller's fast-math (see :func:`_exact_binop`).
fsub = _exact_binop("fsub")
#: ``a + b`` rounded once, never re-associated by a caller's fast-math (see :func:`_exact_binop`).
fadd = _exact_binop("fadd")


@intrinsic
def _select(typingctx, cond, a, b):
    """``a if cond else b`` as one LLVM ``select``: no branch in Numba's IR, so a kernel that inlines
    several of these functions does not trip Numba's SSA check on the phi nodes of ternaries."""
    if not (isinstance(cond, types.Boolean) and isinstance(a, (types.Float, types.Integer))
            and isinstance(b, (types.Float, types.Integer))):
        return None
    out = typingctx.unify_types(a, b)  # as the ternary would (a float32 x beside float64 values)
    if out is None:
        return None

    def codegen(context, builder, signature, args):
        va = context.cast(builder, args[1], a, out)
        vb = context.cast(builder, args[2], b, out)
        return builder.select(args[0], va, vb)

    return out(cond, a, b), codegen


def _bitcast(src, dst):
    """An intrinsic that reinterprets the bits of a ``src`` value as a ``dst`` value of the same width
    (one LLVM ``bitcast``: no conversion, no memory round trip)."""

    def impl(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(dst))

        return dst(src), codegen

    impl.__name__ = f"_{src}_as_{dst}"  # each intrinsic needs its own name in Numba's registry
    return intrinsic(impl)


_f64_as_i64 = _bitcast(types.float64, types.int64)
_i64_as_f64 = _bitcast(types.int64, types.float64)
_f32_as_i32 = _bitcast(types.float32, types.int32)
_i32_as_f32 = _bitcast(types.int32, types.float32)


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
    """``exp(x)`` for float64 ``x <= 0``: :func:`exp_fast`'s reduction (``n`` rounded by adding
    1.5 * 2**52, cheaper than the floor) and degree-12 Taylor polynomial, evaluated by Estrin's
    scheme (a 4-deep chain of FMAs where Horner's is 12 deep) and without the overflow test; NaN
    propagates.  Relative error < 5e-16 (tests/test_kde_tiled.py checks it against numpy.exp).
    Estrin's scheme pays in loops with few other live values, such as the KDE's tiled gather; the
    Hawkes trigger loop keeps :func:`exp_fast` (see the module notes)."""
    xc = max(x, _XMIN)
    # n = x / ln 2 rounded to nearest by the magic-number addition: t's low mantissa bits then hold
    # n itself, so neither a floor nor a second addition is needed to build 2**n
    t = _fma(xc, _LOG2E, _MAGIC)
    n = t - _MAGIC
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
    y = p * _i64_as_f64((_f64_as_i64(t) + 1023) << 52)
    # selects, not branches: a function that inlines this twice (two targets per pass in the KDE
    # gather) otherwise trips Numba's SSA check
    return _select(x != x, x, _select(x < _XMIN, 0.0, y))


# 2**f = 1 + f q(f) on |f| <= 1/2: q of degree 10 interpolated at its 11 Chebyshev nodes in 50-digit
# arithmetic (mpmath) and rounded to float64; max |p(f) / 2**f - 1| = 2.0e-17 before evaluation
# rounding (degree 10 in all would give 5.7e-16)
_EXP2_C = (1.0, 0.6931471805599453, 0.24022650695910097, 0.0555041086648216, 0.009618129107606888,
           0.0013333558146416936, 0.0001540353044173605, 1.525273382983612e-05, 1.321544258792169e-06,
           1.0178062445845774e-07, 7.072585949269223e-09, 4.4549605981865186e-10)
_E2C0, _E2C1, _E2C2, _E2C3, _E2C4, _E2C5, _E2C6, _E2C7, _E2C8, _E2C9, _E2C10, _E2C11 = _EXP2_C


@njit(cache=True, inline="always")
def exp2_mul_inrange(a, b):
    """``2**(a b)`` for float64 ``-1022 <= a b <= 0`` (:func:`exp2_mul`'s value there); outside that
    range the result is meaningless, with no test spent on it: for kernels whose caller discards
    every value outside (the KDE's truncated sums, whose kept pairs have ``a b >= -cutoff^2 log2(e) / 2``).
    The two selects of :func:`exp2_mul` were ~8 % of the KDE pair loop."""
    t = _fma(a, b, _MAGIC)
    n = t - _MAGIC
    f = _fma(a, b, -n)
    f2 = f * f
    f4 = f2 * f2
    f8 = f4 * f4
    a0 = _fma(f, _E2C1, _E2C0)
    a1 = _fma(f, _E2C3, _E2C2)
    a2 = _fma(f, _E2C5, _E2C4)
    a3 = _fma(f, _E2C7, _E2C6)
    a4 = _fma(f, _E2C9, _E2C8)
    a5 = _fma(f, _E2C11, _E2C10)
    b0 = _fma(f2, a1, a0)
    b1 = _fma(f2, a3, a2)
    b2 = _fma(f2, a5, a4)
    p = _fma(f8, b2, _fma(f4, b1, b0))
    return p * _i64_as_f64((_f64_as_i64(t) + 1023) << 52)


@njit(cache=True, inline="always")
def exp2_mul(a, b):
    """``2**(a b)`` for float64 ``a b <= 0``: ``exp(x)`` at ``x = a b ln 2`` with less work than
    :func:`exp_nonpos`, for kernels whose exponent is a product (the KDE's ``d^2 x (-log2(e) /
    (2 h^2))``).  The product is never rounded: ``t = fma(a, b, 1.5 2^52)`` holds n = round(a b) in its
    low bits, ``f = fma(a, b, -n)`` (|f| <= 1/2) is the remainder with one rounding, and ``2**f`` is a
    degree-11 Chebyshev interpolant by Estrin's scheme -- 14 multiplies/FMAs per value where
    ``exp_nonpos(a * b * ...)`` takes 19, and no ln 2 reduction steps.  Relative error < 5e-16
    (tests/test_kde_tiled.py checks it against ``numpy.exp2``).  Below -1022 (where ``2**n`` would be
    subnormal) it returns 0 (absolute error < 2.3e-308); NaN propagates."""
    n = _fma(a, b, _MAGIC) - _MAGIC
    v = exp2_mul_inrange(a, b)
    # below -1022 (and for infinite or NaN products) the bits of fma(a, b, 1.5 2^52) are no exponent:
    # the selects drop them (n < -1022 there too: n is the product itself once it is beyond 2^51 in size)
    return _select(n != n, n, _select(n < -1022.0, 0.0, v))


# Cephes' rational approximations of erf and erfc (S. L. Moshier, Cephes Math Library 2.9, ndtr.c):
# erf(x) = x T(x^2) / U(x^2) on |x| < 1, erfc(x) = exp(-x^2) P(x) / Q(x) on [1, 8) and
# exp(-x^2) R(x) / S(x) beyond; U, Q, S have a leading coefficient 1.
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_SQRTH = 0.70710678118654752440


@njit(cache=True, inline="always")
def _ndtr_x(z):
    # x = z / sqrt 2; beyond |x| = 40 erfc(x) = 0 in float64: clamping keeps +-inf out of the
    # ratios (inf / inf)
    return max(min(z * _SQRTH, 40.0), -40.0)


@njit(cache=True, inline="always")
def _erf_ratio(x, s):
    """erf(x) = x T(s) / U(s) with s = x^2, valid for |x| <= 1: (numerator, denominator)."""
    tn = (((_ERF_T[0] * s + _ERF_T[1]) * s + _ERF_T[2]) * s + _ERF_T[3]) * s + _ERF_T[4]
    td = ((((s + _ERF_U[0]) * s + _ERF_U[1]) * s + _ERF_U[2]) * s + _ERF_U[3]) * s + _ERF_U[4]
    return x * tn, td


@njit(cache=True, inline="always")
def _erfc_pq(a):
    """erfc(a) exp(a^2) = P(a) / Q(a) for 1 <= a < 8: (numerator, denominator)."""
    P, Q = _ERFC_P, _ERFC_Q
    pn = (((((((P[0] * a + P[1]) * a + P[2]) * a + P[3]) * a + P[4]) * a + P[5]) * a + P[6]) * a + P[7]) * a + P[8]
    pd = (((((((a + Q[0]) * a + Q[1]) * a + Q[2]) * a + Q[3]) * a + Q[4]) * a + Q[5]) * a + Q[6]) * a + Q[7]
    return pn, pd


@njit(cache=True, inline="always")
def _erfc_rs(a):
    """erfc(a) exp(a^2) = R(a) / S(a) for a >= 8: (numerator, denominator)."""
    R, S = _ERFC_R, _ERFC_S
    rn = ((((R[0] * a + R[1]) * a + R[2]) * a + R[3]) * a + R[4]) * a + R[5]
    rd = (((((a + S[0]) * a + S[1]) * a + S[2]) * a + S[3]) * a + S[4]) * a + S[5]
    return rn, rd


@njit(cache=True, inline="always")
def _phi_tail(x, q):
    """Phi from q = erfc(|x|) exp(x^2) (x = z / sqrt 2, |x| >= 1)."""
    half_erfc = 0.5 * exp_nonpos(-(x * x)) * q
    upper = 1.0 - half_erfc
    return upper if x > 0.0 else half_erfc


@njit(cache=True, inline="always")
def ndtr_fast(z):
    """Standard normal CDF ``Phi(z)`` for float64, vectorizable inside Numba loops.

    Cephes' ``ndtr``: ``1/2 + erf(z/sqrt 2)/2`` for ``|z| < sqrt 2``, ``erfc(|z|/sqrt 2)/2`` (or one
    minus it) beyond, with Cephes' rational approximations.  Every branch's numerator and
    denominator are computed and the right pair selected before ONE division, and ``exp(-x^2)`` is
    :func:`exp_nonpos`, so a loop over ``z`` compiles to packed instructions (``math.erfc`` is a
    scalar libm call, ~25 ns).  Absolute error < 3e-16; relative error < 5e-15 down to ``z = -37``,
    and 0 below, as libm's (``tests/test_kde_tiled.py`` compares with ``scipy.special.ndtr``).
    NaN propagates.  For many ``z`` in monotone order :func:`ndtr_monotone` is ~2x cheaper.
    """
    x = _ndtr_x(z)
    a = abs(x)
    s = x * x
    tn, td = _erf_ratio(x, s)
    pn, pd = _erfc_pq(a)
    rn, rd = _erfc_rs(a)
    # every candidate is computed first and the selects pick among plain values: LLVM if-converts
    # those into blend instructions, while arithmetic inside a conditional branch blocks vectorisation
    small = a < 1.0
    tail = a >= 8.0
    num = rn if tail else pn
    den = rd if tail else pd
    num = tn if small else num
    den = td if small else den
    q = fdiv(num, den)  # den >= 1 on every branch
    central = 0.5 + 0.5 * q
    y = _phi_tail(x, q)
    y = central if small else y
    if z != z:
        y = z
    return y


@njit(cache=True, inline="always")
def _ndtr_branch(x):
    # 0: x <= -8, 1: -8 < x <= -1, 2: |x| < 1, 3: 1 <= x < 8, 4: x >= 8 (ndtr_fast's branches)
    return int(x > -8.0) + int(x > -1.0) + int(x >= 1.0) + int(x >= 8.0)


@njit(cache=True, fastmath={"contract"})
def ndtr_monotone(v):
    """``v[i] = Phi(v[i])`` in place for finite ``v`` sorted in either direction.

    The same values as :func:`ndtr_fast`, but each branch of it runs only over the stretch of ``v``
    where it applies (the branches are contiguous in a sorted array: found by bisection), so each
    element costs one rational function where :func:`ndtr_fast` evaluates three (the CDF tables of
    the KDE's edge masses are sorted).
    """
    n = v.shape[0]
    for i in range(n):
        v[i] = _ndtr_x(v[i])
    start = 0
    while start < n:
        br = _ndtr_branch(v[start])
        lo = start + 1
        hi = n
        while lo < hi:  # first index past the stretch of this branch
            mid = (lo + hi) // 2
            if _ndtr_branch(v[mid]) == br:
                lo = mid + 1
            else:
                hi = mid
        # loops over a view from 0: an index of unknown sign (range(start, lo)) gets Numba's
        # negative-index wraparound, which keeps LLVM from vectorising
        seg = v[start:lo]
        if br == 2:
            for i in range(seg.shape[0]):
                x = seg[i]
                tn, td = _erf_ratio(x, x * x)
                seg[i] = 0.5 + 0.5 * fdiv(tn, td)
        elif br == 0 or br == 4:
            for i in range(seg.shape[0]):
                x = seg[i]
                rn, rd = _erfc_rs(abs(x))
                seg[i] = _phi_tail(x, fdiv(rn, rd))
        else:
            for i in range(seg.shape[0]):
                x = seg[i]
                pn, pd = _erfc_pq(abs(x))
                seg[i] = _phi_tail(x, fdiv(pn, pd))
        start = lo


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
    # selects, not branches (see exp_nonpos)
    return _select(x != x, x, _select(x > _XMAX_F, np.float32(np.inf), _select(x < _XMIN_F, np.float32(0.0), y)))


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
