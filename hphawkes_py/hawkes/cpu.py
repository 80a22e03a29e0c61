"""Numba CPU engine for the Hawkes likelihood (the O(N^2) core).

Layout and loops
----------------
* Structure of arrays: the coordinates are D separate contiguous columns (a tuple of D arrays,
  whose length selects the kernels' compiled specialisation), times are (t_hi, t_lo) in the
  kernel dtype (t_lo = 0 in float64; see ``times.split_time`` for why float32 needs the split)
  plus a float64 copy used only for the window binary searches, so the windows do not depend on
  the kernel precision.
* Inner loops over m are written once, generic in D: a tuple of D coordinate columns makes Numba
  compile one specialisation per D, and two overloads generate the row's coordinates and the
  squared distance as straight-line code for that literal D, so LLVM sees the same body as a
  hand-written copy per D. They call ``exp_fast``/``exp_fast32`` (vectorizable) and are compiled
  with ``fastmath=True`` so the running sums vectorize (packed AVX-512/AVX2 ``vfmadd...pd`` on ymm/zmm; the benchmark checks the
  assembly). Inputs are validated finite, so fastmath's no-NaN/no-inf assumptions hold;
  ``exp_fast`` is written to stay exact under fastmath.
* Background S is a symmetric pair sum. Each unordered pair {m < n} is evaluated once, in row n:
  the term is added to the row's running sum and scattered into a per-chunk buffer at m (a
  contiguous, vectorizable read-modify-write; no atomics). Rows are handed out as pairs
  (p, N-1-p) cyclically over C chunks, so every chunk does the same work both for the full
  triangle and for windows, and the per-chunk buffers (C x N doubles) are summed at the end in
  chunk order. This halves the exp evaluations of S compared with row-parallel N^2. C depends on
  N only (:func:`scatter_chunks`), never on the thread count: which chunk adds a pair's term, and
  so the rounding of every S_n, is then the same for any number of threads, and results are
  bit-identical for threads = 1, 2, 3, ... (the threads share out whole chunks).
* Trigger G is not symmetric (only earlier events excite): row-parallel over n, m in
  [lo_n, ts_n) where ts_n is the first event tied with n (ties do not excite) and lo_n the
  window start (0 when exact). Rows are paired (p, N-1-p) for balance.
* Windowed trigger passes (``set_trigger``, the MCMC's h and omega moves) run from a cached pair
  list instead (see "Trigger sums from a pair list" below): the same window and terms, evaluated in
  one vectorized loop across rows, then added per row in m order.
* ``sum_log_intensity`` takes one log per 16 rates (the log of their product, when no partial product
  can overflow or go subnormal), not one per rate.
* ``log_likelihood`` with both S and G out of date runs one fused loop (both kernels per pair
  on the overlap of the two ranges), so the exact likelihood touches each pair's data once.
* float32: kernel arithmetic in float32 (``exp_fast32``), every sum accumulated in float64.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._backend import threads_context
from .._fastmath import exp_like, fadd, fsub
from .compensator import ExponentialIntegralTail
from .engine import Engine
from .kernels import phi0
from .times import split_time, tie_starts, time_grid

__all__ = ["CpuEngine"]

_BLK = np.uint64(256)
_FLUSH = 128  # row pairs of a chunk between flushes of its scatter buffer
#: Most chunks of the symmetric background pass: divisible by 1, 2, 3, 4, 6, 8, 12, 16 and 24, so
#: up to 24 threads share the chunks evenly (more threads than chunks idle in that pass).
MAX_SCATTER_CHUNKS = 48
#: The chunks' float64 scatter buffers hold at most this many values (128 MiB), unless 2 chunks need more.
SCATTER_BUFFER_VALUES = 2**24
#: The windowed trigger pass's time window (48 bytes a pair in float64: r2, dt, the term, t_m, t_n, n, m)
#: holds at most this many pairs (96 MiB, before the space-time cut filters them); beyond it the row loop runs.
MAX_PAIRS = 2**21
#: The pair list is built for Dmax = PAIR_HEADROOM * Delta_G and kept while Delta_G <= Dmax < PAIR_SHRINK * Delta_G;
#: its space-time cut is made for bh / PAIR_HEADROOM, omega / PAIR_HEADROOM and the limit plus
#: (1 + D) log(PAIR_HEADROOM) (what those changes add to it), and kept while it holds the current
#: cut's pairs (with the relative margin PAIR_CUT_MARGIN) and bh0 >= bh / PAIR_SHRINK.
PAIR_HEADROOM = 1.25
PAIR_SHRINK = 2.0
PAIR_CUT_MARGIN = 1e-5
#: Rows per block of the pair-list trigger pass (a block's terms stay in cache between its two steps).
PAIR_BLOCK_ROWS = 2048


def scatter_chunks(N: int) -> int:
    """C, the number of chunks of the symmetric background pass for N events: a function of N only,
    so that the order in which each S_n is summed, hence every bit of it, does not depend on the
    thread count. C = min(48, 2^24 // N), at least 2: memory C x N doubles stays under 128 MiB
    (except at least 2 x N).

    Examples
    --------
    >>> from hphawkes_py.hawkes.cpu import scatter_chunks
    >>> scatter_chunks(1000), scatter_chunks(1_000_000), scatter_chunks(50_000_000)
    (48, 16, 2)
    """
    return int(min(MAX_SCATTER_CHUNKS, max(2, SCATTER_BUFFER_VALUES // max(int(N), 1))))




@njit(cache=True, inline="always")
def _lower_bound(a, v, lo, hi):
    """First index i in [lo, hi) with a[i] >= v (a sorted), hi if none."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _lower_bound_back(a, v, hi):
    """First index i in [0, hi) with a[i] >= v (a sorted), hi if none, found by galloping down
    from hi: O(log(hi - answer)) probes near hi instead of O(log N) scattered ones (windows are short)."""
    r = hi  # invariant: a[i] >= v for every i in [r, hi)
    step = 1
    while True:
        j = r - step
        if j < 0:
            return _lower_bound(a, v, 0, r)
        if a[j] < v:
            return _lower_bound(a, v, j + 1, r)
        r = j
        step *= 2


# --------------------------------------------------------------------------------------------
# One pair loop per kernel, generic in the dimension D.
#
# The coordinates come as a tuple ``xs`` of D columns, so Numba compiles (and caches) one
# specialisation per D from the same source: D is part of the argument *type*. The two helpers
# below are overloads that generate, for that literal D, straight-line code -- the row's
# coordinates hoisted into scalars before the loop and the squared distance summed as
# ((d0 d0 + d1 d1) + d2 d2) -- so LLVM sees the same loop body as a hand-written copy per D and
# vectorizes it (packed vfmadd...pd/ps on ymm/zmm; benchmarks/bench_hawkes_loglik.py checks the
# assembly). Background: exp(-(ax r2 + at dt^2)), symmetric scatter into buf. Trigger:
# exp(-(bh r2 + om dt)) with dt = t_n - t_m > 0 (or the power-law / sum-of-exponentials term, see _trig_cut;
# the spatial power law replaces bh r2 by sq log1p(bh r2), see _spat).
#
# The loops take the row's point as (a, tn, tln) -- the coordinates as a tuple of scalars and the
# split time -- so the same loops serve events (``_coords(xs, n), th[n], tl[n]``) and query points
# off the data (forecasts).
#
# The unsigned index avoids Numba's negative-index wraparound selects, so loads and stores
# vectorize. Sums run in blocks of _BLK terms in the kernel dtype (so float32 loops vectorize
# too: mixing float32 terms into a float64 sum blocks LLVM's vectorizer) and each block sum is
# added to a float64 accumulator: float32 rounding error <= _BLK * 2^-24 relative per block.
# The scatter target ``buf`` has the kernel dtype as well and is flushed into float64 every
# _FLUSH rows (see the drivers).
# --------------------------------------------------------------------------------------------
_GENERATED: dict = {}


def _generate(kind: str, D: int):
    """Source of ``coords(xs, n)`` (the row's D coordinates as scalars) or ``sqdist(xs, a, m)``
    for a literal D, compiled once per (kind, D)."""
    key = (kind, D)
    if key not in _GENERATED:
        if kind == "coords":
            src = "def coords(xs, n):\n    return (" + "".join(f"xs[{d}][n], " for d in range(D)) + ")\n"
        else:
            lines = ["def sqdist(xs, a, m):"]
            for d in range(D):
                lines.append(f"    d{d} = xs[{d}][m] - a[{d}]")
            lines.append("    return " + " + ".join(f"d{d} * d{d}" for d in range(D)))
            src = "\n".join(lines) + "\n"
        ns: dict = {}
        exec(compile(src, f"<hawkes {kind} D={D}>", "exec"), ns)  # noqa: S102 - generated from D only
        _GENERATED[key] = ns[kind]
    return _GENERATED[key]


def _coords(xs, n):  # pragma: no cover - replaced by the overload inside Numba code
    return tuple(c[n] for c in xs)


def _sqdist(xs, a, m):  # pragma: no cover - replaced by the overload inside Numba code
    return sum((c[m] - v) ** 2 for c, v in zip(xs, a))


def _trig_exponent(q, om, dt, kp):  # pragma: no cover - replaced by the overload inside Numba code
    return q + (om * dt if kp is None else kp * math.log1p(om * dt))


@overload(_trig_exponent, inline="always")
def _trig_exponent_ol(q, om, dt, kp):
    """The exponent E = q + time term of a trigger pair term exp(-E), q the spatial part (:func:`_spat`),
    the temporal kernel chosen at compile time by the type of ``kp``: None -> exponential (om dt,
    vectorizes); a float p -> power law (p log(1 + om dt))."""
    if isinstance(kp, (types.NoneType, types.Omitted)):
        return lambda q, om, dt, kp: q + om * dt
    return lambda q, om, dt, kp: q + kp * math.log1p(om * dt)


def _trig_cut(q, om, dt, kp, lim):  # pragma: no cover - replaced by the overload inside Numba code
    if isinstance(kp, tuple):
        return kp[0] * math.exp(-(q + om * dt)) + kp[2] * math.exp(-(q + kp[1] * dt))
    e = _trig_exponent(q, om, dt, kp)
    return math.exp(-e) if e < lim else 0.0


@overload(_trig_cut, inline="always")
def _trig_cut_ol(q, om, dt, kp, lim):
    """One trigger pair term exp(-E) (E from :func:`_trig_exponent`), 0 when E reaches ``lim`` (finite, of
    the kernel dtype): the space-time cut of bound (3) (``windows.trigger_limit``); the comparison is a
    select, so the loops still vectorize. A tuple ``kp`` = (c1, om2, c2) is the sum of two exponentials
    c1 exp(-(q + om dt)) + c2 exp(-(q + om2 dt)) (two exp_fast, vectorizes), which has no space-time cut
    (``lim`` unused)."""
    if isinstance(kp, types.BaseTuple):
        return lambda q, om, dt, kp, lim: kp[0] * exp_like(-(q + om * dt)) + kp[2] * exp_like(-(q + kp[1] * dt))

    def cut(q, om, dt, kp, lim):
        e = _trig_exponent(q, om, dt, kp)
        return exp_like(-e) if e < lim else lim - lim
    return cut


def _spat(r2, bh, sq):  # pragma: no cover - replaced by the overload inside Numba code
    if sq is None:
        return bh * r2
    return sq * math.log1p(bh * r2)


@overload(_spat, inline="always")
def _spat_ol(r2, bh, sq):
    """The spatial part Q of a trigger pair term exp(-(Q + time term)), chosen at compile time by the
    type of ``sq``: None -> Gaussian, Q = bh r2 (bh = 1/(2h^2); the very expression of the Gaussian-only
    loops, so their results are unchanged); a float q -> spatial power law, Q = q log1p(bh r2)
    (bh = 1/h^2)."""
    if isinstance(sq, (types.NoneType, types.Omitted)):
        return lambda r2, bh, sq: bh * r2
    return lambda r2, bh, sq: sq * math.log1p(bh * r2)


@overload(_coords, inline="always")
def _coords_ol(xs, n):
    return _generate("coords", xs.count)


@overload(_sqdist, inline="always")
def _sqdist_ol(xs, a, m):
    return _generate("sqdist", xs.count)


@njit(cache=True, fastmath=True)
def _bg_loop(xs, th, tl, a, tn, tln, lo, hi, ax, at, buf):
    acc = 0.0
    m0 = np.uint64(lo)
    mh = np.uint64(hi)
    while m0 < mh:
        me = min(m0 + _BLK, mh)
        blk = ax - ax  # zero of the kernel dtype
        for m in range(m0, me):
            r2 = _sqdist(xs, a, m)
            dt = fadd(fsub(th[m], tn), fsub(tl[m], tln))
            v = exp_like(-(ax * r2 + at * (dt * dt)))
            blk += v
            buf[m] += v
        acc += blk
        m0 = me
    return acc


@njit(cache=True, fastmath=True)
def _tr_loop(xs, th, tl, a, tn, tln, lo, hi, bh, om, kp, sq, lim):
    acc = 0.0
    m0 = np.uint64(lo)
    mh = np.uint64(hi)
    while m0 < mh:
        me = min(m0 + _BLK, mh)
        blk = bh - bh
        for m in range(m0, me):
            r2 = _sqdist(xs, a, m)
            dt = fadd(fsub(tn, th[m]), fsub(tln, tl[m]))
            blk += _trig_cut(_spat(r2, bh, sq), om, dt, kp, lim)
        acc += blk
        m0 = me
    return acc


@njit(cache=True, fastmath=True)
def _fu_loop(xs, th, tl, a, tn, tln, lo, hi, ax, at, bh, om, kp, sq, lim, buf):
    accs = 0.0
    accg = 0.0
    m0 = np.uint64(lo)
    mh = np.uint64(hi)
    while m0 < mh:
        me = min(m0 + _BLK, mh)
        blks = ax - ax
        blkg = ax - ax
        for m in range(m0, me):
            r2 = _sqdist(xs, a, m)
            dt = fadd(fsub(tn, th[m]), fsub(tln, tl[m]))
            v = exp_like(-(ax * r2 + at * (dt * dt)))
            blks += v
            buf[m] += v
            blkg += _trig_cut(_spat(r2, bh, sq), om, dt, kp, lim)
        accs += blks
        accg += blkg
        m0 = me
    return accs, accg


@njit(cache=True)
def _bg_row(xs, th, tl, n, lo, hi, ax, at, buf):
    if lo >= hi:
        return 0.0
    return _bg_loop(xs, th, tl, _coords(xs, n), th[n], tl[n], lo, hi, ax, at, buf)


@njit(cache=True)
def _tr_row(xs, th, tl, n, lo, hi, bh, om, kp, sq, lim):
    if lo >= hi:
        return 0.0
    return _tr_loop(xs, th, tl, _coords(xs, n), th[n], tl[n], lo, hi, bh, om, kp, sq, lim)


@njit(cache=True)
def _fu_row(xs, th, tl, n, lo, hi, ax, at, bh, om, kp, sq, lim, buf):
    if lo >= hi:
        return 0.0, 0.0
    return _fu_loop(xs, th, tl, _coords(xs, n), th[n], tl[n], lo, hi, ax, at, bh, om, kp, sq, lim, buf)


@njit(cache=True, fastmath=True)
def _flush(b, sb):
    """b += sb (float64 += kernel dtype); sb = 0. Bounds the float32 rounding of the scatter sums."""
    for i in range(np.uint64(0), np.uint64(b.shape[0])):
        b[i] += sb[i]
        sb[i] = 0


# --------------------------------------------------------------------------------------------
# Parallel drivers.
# --------------------------------------------------------------------------------------------
@njit(parallel=True, cache=True, nogil=True)
def _trigger_kernel(xs, th, tl, tw, ts, bh, om, kp, sq, lim, delta, scale, out):
    """G_n = scale * sum_{m in [lo_n, ts_n)} exp(-(bh r2 + om dt)) (or the other kernels' terms, see
    _trig_cut and _spat), terms with exponent >= lim left out; returns #terms evaluated."""
    N = tw.shape[0]
    npair = (N + 1) // 2
    cnt = 0
    for p in prange(npair):
        for k in range(2):
            n = np.int64(p) if k == 0 else np.int64(N - 1) - np.int64(p)
            if k == 1 and n == np.int64(p):
                break
            hi = ts[n]
            lo = 0
            if delta < np.inf:
                lo = _lower_bound_back(tw, tw[n] - delta, hi)
            out[n] = scale * _tr_row(xs, th, tl, n, lo, hi, bh, om, kp, sq, lim)
            cnt += hi - lo
    return cnt


@njit(parallel=True, cache=True, nogil=True)
def _symmetric_kernel(xs, th, tl, tw, ts, ax, at, delta_s, bh, om, kp, sq, lim, delta_g, with_trigger, nchunks,
                      scale_s, scale_g, out_s, out_g):
    """S_n = scale_s * (1 + sum_{m != n, |t_n - t_m| <= delta_s} exp(...)) by the symmetric scatter
    (module notes) and, with ``with_trigger``, G in the same pass: fused loop on the overlap of the
    background range [loS, n) and the trigger range [loG, ts_n); background-only / trigger-only
    loops on the rest. Returns #terms evaluated."""
    N = tw.shape[0]
    buf = np.zeros((nchunks, N))
    counts = np.zeros(nchunks, np.int64)
    npair = (N + 1) // 2
    for c in prange(nchunks):
        b = buf[c]
        sb = np.zeros_like(th)
        cnt = 0
        it = 0
        for p in range(c, npair, nchunks):
            for k in range(2):
                n = np.int64(p) if k == 0 else np.int64(N - 1) - np.int64(p)
                if k == 1 and n == np.int64(p):
                    break
                los = 0
                if delta_s < np.inf:
                    los = _lower_bound_back(tw, tw[n] - delta_s, n)
                if not with_trigger:
                    b[n] += _bg_row(xs, th, tl, n, los, n, ax, at, sb) + 1.0
                    cnt += n - los
                    continue
                tsn = ts[n]
                log = 0
                if delta_g < np.inf:
                    log = _lower_bound_back(tw, tw[n] - delta_g, tsn)
                f = max(los, log)
                s, g = _fu_row(xs, th, tl, n, f, tsn, ax, at, bh, om, kp, sq, lim, sb)
                # background only: [los, min(log, n)) and [max(tsn, los), n)
                s += _bg_row(xs, th, tl, n, los, min(log, n), ax, at, sb)
                s += _bg_row(xs, th, tl, n, max(tsn, los), n, ax, at, sb)
                # trigger only: [log, min(tsn, los))
                g += _tr_row(xs, th, tl, n, log, min(tsn, los), bh, om, kp, sq, lim)
                b[n] += s + 1.0
                out_g[n] = scale_g * g
                cnt += (n - los) + (tsn - log)
            it += 1
            if it == _FLUSH:
                _flush(b, sb)
                it = 0
        _flush(b, sb)
        counts[c] = cnt
    for n in prange(N):
        s = 0.0
        for c in range(nchunks):
            s += buf[c, n]
        out_s[n] = scale_s * s
    return counts.sum()


@njit(parallel=True, cache=True, nogil=True)
def _query_kernel(xs, th, tl, qs, qh, ql, lo_s, hi_s, lo_g, hi_g, ax, at, bh, om, kp, sq, lim, nchunks, scale_s,
                  scale_g, out_s, out_g):
    """Sq, Gq at query points (columns ``qs``) at time qh + ql over fixed event ranges (see
    ``Engine.query_sums``). The background loop's scatter goes to a discarded per-chunk buffer:
    one loop serves events and query points."""
    Q = qs[0].shape[0]
    N = th.shape[0]
    scratch = np.zeros((nchunks, N), th.dtype)
    for c in prange(nchunks):
        sb = scratch[c]
        for g in range(c, Q, nchunks):
            q = _coords(qs, g)
            s = 0.0
            if lo_s < hi_s:
                s = _bg_loop(xs, th, tl, q, qh, ql, lo_s, hi_s, ax, at, sb)
            e = 0.0
            if lo_g < hi_g:
                e = _tr_loop(xs, th, tl, q, qh, ql, lo_g, hi_g, bh, om, kp, sq, lim)
            out_s[g] = scale_s * s
            out_g[g] = scale_g * e
    return Q * ((hi_s - lo_s) + (hi_g - lo_g))


# --------------------------------------------------------------------------------------------
# Trigger sums from a pair list (windowed engines).
#
# In the windowed likelihood the trigger row of event n holds the few earlier events within
# Delta_G (a couple per event on the DC data), too few for the row loop above to vectorize: it pays
# a row's set-up, its branches and one scalar exp per pair. The pair list keeps, for a time cut-off
# Dmax >= Delta_G and a space-time cut (bh0, om0, lim0) (below), the pairs (n, m) with
# lo_n <= m < ts_n (lo_n the first m with t_m >= t_n - Dmax) whose trigger exponent
# E0 = Q(r2; bh0) + T(dt; om0) is below lim0, rows consecutive (CSR: row n at [ptr_n, ptr_{n+1}),
# m ascending), as its squared distance r2 and time difference dt (computed once, as the row loop
# computes them), t_m, t_n, n and m. A trigger pass is then, over the pairs of a block of rows:
#   1. v_k = trigger term (r2_k, dt_k), 0 if its exponent reaches lim (the row loop's _trig_cut):
#      one flat loop, vectorized across rows;
#   2. v_k = 0 unless t_m >= t_n - Delta_G: the row loop's window exactly (its first m is the first
#      with t_m >= t_n - Delta_G); compiled without fastmath, so t_n - Delta_G is rounded as there;
#   3. acc_n += v_k in k order (a scatter with no branch), G_n = scale * acc_n.
# The pairs left out of the list are those whose term the row loop sets to 0 (E >= lim): Q and T
# grow with bh and om, so E0 <= E whenever bh >= bh0 and om >= om0, and lim <= lim0; the list is kept
# while that holds with a relative margin PAIR_CUT_MARGIN (far above the float32 rounding of E), else
# rebuilt (as when it holds many more pairs than the current cut needs). acc_n is then the row loop's
# sum for a row of at most _BLK terms (its zeros add nothing); the few rows with more pairs in the
# list are summed again in the row loop's blocks of _BLK consecutive m. Only the rows with pairs in
# the list are visited (most rows have none once the space-time cut applies: their G is 0, written
# once per list into each G buffer). Rows are independent (no sum
# crosses rows), so G_n does not depend on the thread count or on the blocks. The row loop may let
# LLVM add a row of 8 terms and more in interleaved partial sums, so such rows can differ in the
# last bits between the two paths.
# --------------------------------------------------------------------------------------------
class _PairList:
    """The pairs (n, m) of the windowed trigger pass for the cut-offs ``dmax`` and ``cut`` =
    (bh0, om0, lim0) (see the notes above)."""

    def __init__(self, dmax, cut, lo, ptr, r2, dt, twm, twn, row, mi, long_rows, dtype):
        self.dmax, self.cut, self.lo, self.ptr = dmax, cut, lo, ptr
        self.active = np.flatnonzero(np.diff(ptr)).astype(np.int64)  # rows with pairs: the others' G is 0
        self.r2, self.dt, self.twm, self.twn, self.row, self.mi = r2, dt, twm, twn, row, mi
        self.long_rows = long_rows            # rows holding more than _BLK pairs
        self.v = np.empty(r2.shape[0], dtype)  # the terms of the current pass
        self.acc = np.empty(ptr.shape[0] - 1, dtype)


@njit(cache=True, nogil=True)
def _pair_rows(tw, ts, dmax, lo):
    """lo[n] = first m < ts[n] with tw[m] >= tw[n] - dmax (ts[n] if none); returns the number of pairs."""
    total = 0
    for n in range(tw.shape[0]):
        hi = ts[n]
        first = _lower_bound_back(tw, tw[n] - dmax, hi)
        lo[n] = first
        total += hi - first
    return total


@njit(cache=True, fastmath=True)
def _pair_r2_loop(xs, a, lo, hi, k0, r2):
    # the expression of _tr_loop, compiled as there (LLVM fuses its multiply-adds alike)
    for m in range(np.uint64(lo), np.uint64(hi)):
        r2[np.uint64(k0) + (m - np.uint64(lo))] = _sqdist(xs, a, m)


@njit(parallel=True, cache=True, nogil=True)
def _pair_fill(xs, th, tl, tw, ts, lo, ptr, r2, dt, twm, twn, row, mi):
    """Every pair's r2, dt, t_m, t_n, n and m (rows given by lo, ts and ptr). dt is computed without
    fastmath: re-associated, (t_n^hi - t_m^hi) + (t_n^lo - t_m^lo) would lose the float32 split of the
    times (``times.split_time``)."""
    for n in prange(ts.shape[0]):
        if lo[n] < ts[n]:
            _pair_r2_loop(xs, _coords(xs, n), lo[n], ts[n], ptr[n], r2)
            for m in range(lo[n], ts[n]):
                k = ptr[n] + (m - lo[n])
                dt[k] = (th[n] - th[m]) + (tl[n] - tl[m])
                twm[k] = tw[m]
                twn[k] = tw[n]
                row[k] = n
                mi[k] = m


@njit(cache=True)
def _pair_keep(r2, dt, bh0, om0, kp, sq, lim0, keep):
    """keep[k] = the exponent of pair k at (bh0, om0), in float64, is below lim0."""
    for k in range(r2.shape[0]):
        keep[k] = _trig_exponent(_spat(np.float64(r2[k]), bh0, sq), om0, np.float64(dt[k]), kp) < lim0


@njit(cache=True, fastmath=True)
def _pair_terms(r2, dt, k0, k1, bh, om, kp, sq, lim, v):
    """Step 1: v[k] = trigger term of pair k for k in [k0, k1) (one flat, vectorized loop)."""
    for k in range(np.uint64(k0), np.uint64(k1)):
        v[k] = _trig_cut(_spat(r2[k], bh, sq), om, dt[k], kp, lim)


@njit(cache=True)
def _pair_block(pl_ptr, act, r2, dt, twm, twn, row, v, acc, bh, om, kp, sq, lim, delta, scale, out, a0, a1):
    """Steps 1-3 for the active rows act[a0:a1) (the rows with pairs in the list; their pairs are
    contiguous); compiled without fastmath (steps 2 and 3 keep their rounding and order). Returns
    #terms evaluated (the block's pairs)."""
    k0 = pl_ptr[act[a0]]
    k1 = pl_ptr[act[a1 - 1] + 1]
    _pair_terms(r2, dt, k0, k1, bh, om, kp, sq, lim, v)
    zero = bh - bh
    for k in range(k0, k1):
        v[k] = v[k] if twm[k] >= twn[k] - delta else zero
    for i in range(a0, a1):
        acc[act[i]] = zero
    for k in range(k0, k1):
        acc[row[k]] += v[k]
    for i in range(a0, a1):
        n = act[i]
        out[n] = scale * np.float64(acc[n])
    return k1 - k0


@njit(cache=True)
def _pair_long_row(tw, ts, lo, ptr, mi, v, zero, delta, n, scale, out):
    """G_n of a row with more than _BLK pairs, from the masked terms: added in m order in the row
    loop's blocks of _BLK consecutive m from the window's first m, each block in the kernel dtype,
    into a float64 sum (pairs missing from the list hold 0 in the row loop, adding nothing)."""
    cut = tw[n] - delta
    w0 = lo[n]
    while w0 < ts[n] and tw[w0] < cut:
        w0 += 1
    acc = 0.0
    blk = zero
    b_end = w0 + np.int64(_BLK)
    for k in range(ptr[n], ptr[n + 1]):
        m = mi[k]
        if m < w0:
            continue
        while m >= b_end:
            acc += blk
            blk = zero
            b_end += np.int64(_BLK)
        blk += v[k]
    acc += blk
    out[n] = scale * acc


@njit(cache=True, nogil=True)
def _pair_trigger_serial(tw, ts, lo, ptr, act, r2, dt, twm, twn, row, mi, v, acc, long_rows, bh, om, kp, sq, lim,
                         delta, scale, out, rows):
    """Trigger sums of the active rows from the pair list on one thread (no parallel region to start:
    the MCMC chains run one thread each); the other rows of ``out`` are left as they are (0, see
    ``CpuEngine._k_trigger``). ``rows``: active rows per block. Returns #terms evaluated."""
    A = act.shape[0]
    cnt = 0
    for a0 in range(0, A, rows):
        cnt += _pair_block(ptr, act, r2, dt, twm, twn, row, v, acc, bh, om, kp, sq, lim, delta, scale, out, a0,
                           min(a0 + rows, A))
    for i in range(long_rows.shape[0]):
        _pair_long_row(tw, ts, lo, ptr, mi, v, bh - bh, delta, long_rows[i], scale, out)
    return cnt


@njit(parallel=True, cache=True, nogil=True)
def _pair_trigger_parallel(tw, ts, lo, ptr, act, r2, dt, twm, twn, row, mi, v, acc, long_rows, bh, om, kp, sq, lim,
                           delta, scale, out, rows):
    """:func:`_pair_trigger_serial` with the blocks of rows shared out to the threads (same results)."""
    A = act.shape[0]
    nb = (A + rows - 1) // rows
    counts = np.zeros(nb, np.int64)
    for b in prange(nb):
        a0 = b * rows
        counts[b] = _pair_block(ptr, act, r2, dt, twm, twn, row, v, acc, bh, om, kp, sq, lim, delta, scale, out, a0,
                                min(a0 + rows, A))
    for i in prange(long_rows.shape[0]):
        _pair_long_row(tw, ts, lo, ptr, mi, v, bh - bh, delta, long_rows[i], scale, out)
    return counts.sum()


# O(N) kernels run serially: starting a parallel region costs more than the N logs of one pass.
#: sum_n log(lambda_n) takes one log per _LOG_BLOCK rates (the log of their product) when every rate
#: of the block is in [_LOG_LO, _LOG_HI]: a product of 16 such rates stays within [2^-992, 2^992], so
#: no partial product overflows or goes subnormal, and its rounding (< 16 ulp relative, i.e. < 2e-15
#: absolute in its log) is below the rounding of the 16 logs it replaces. A block holding a rate
#: outside the range (0, inf and NaN included) takes the 16 logs, as written.
_LOG_BLOCK = 16
_LOG_LO = 2.0**-62
_LOG_HI = 2.0**62


@njit(cache=True, nogil=True)
def _sum_log_kernel(S, G, mu0, theta):
    """sum_n log(mu0 S_n + theta G_n), one log per block of 16 rates (see _LOG_BLOCK)."""
    N = S.shape[0]
    acc = 0.0
    n = 0
    while n + _LOG_BLOCK <= N:
        # four interleaved partial products: independent multiplications
        p0 = p1 = p2 = p3 = 1.0
        ok = True
        for j in range(0, _LOG_BLOCK, 4):
            i = n + j
            a0 = mu0 * S[i] + theta * G[i]
            a1 = mu0 * S[i + 1] + theta * G[i + 1]
            a2 = mu0 * S[i + 2] + theta * G[i + 2]
            a3 = mu0 * S[i + 3] + theta * G[i + 3]
            ok = ok & (a0 >= _LOG_LO) & (a0 <= _LOG_HI) & (a1 >= _LOG_LO) & (a1 <= _LOG_HI) \
                & (a2 >= _LOG_LO) & (a2 <= _LOG_HI) & (a3 >= _LOG_LO) & (a3 <= _LOG_HI)
            p0 *= a0
            p1 *= a1
            p2 *= a2
            p3 *= a3
        if ok:
            acc += math.log((p0 * p1) * (p2 * p3))
        else:
            for i in range(n, n + _LOG_BLOCK):
                acc += math.log(mu0 * S[i] + theta * G[i])
        n += _LOG_BLOCK
    for i in range(n, N):
        acc += math.log(mu0 * S[i] + theta * G[i])
    return acc


@njit(cache=True, nogil=True)
def _pi_kernel(S, G, mu0, theta, out):
    for n in range(S.shape[0]):
        xi = theta * G[n]
        out[n] = xi / (mu0 * S[n] + xi)


class CpuEngine(Engine):
    """Numba multi-core engine (see the module docstring for the loop design)."""

    backend = "cpu"

    def __init__(self, x, t, *, dtype=np.float64, threads=None, exact=False, window=None, kernel_p=0.0,
                 kernel=None, spatial_kernel=None):
        super().__init__(x, t, dtype=dtype, threads=threads, exact=exact, window=window, kernel_p=kernel_p,
                         kernel=kernel, spatial_kernel=spatial_kernel)
        # the trigger's time term is chosen at compile time by the type of kp (None: exponential), its
        # spatial term by the type of sq (None: Gaussian, else the spatial power-law exponent)
        self._kp = None if self.kernel_p == 0.0 else self.dtype.type(self.kernel_p)
        self._sq = None if self.spatial_q == 0.0 else self.dtype.type(self.spatial_q)
        dt = self.dtype
        # Centre coordinates: only differences matter, and centring keeps float32 differences accurate.
        self._xmean = x.mean(axis=0) if self.N else np.zeros(self.D)
        xc = x - self._xmean
        # one contiguous column per dimension; the tuple's length D selects the kernels' specialisation
        self._x = tuple(np.ascontiguousarray(xc[:, d], dtype=dt) for d in range(self.D))
        self._tgrid = time_grid(t, dt)
        self._th, self._tl = split_time(t, dt, grid=self._tgrid)
        self._tw = np.ascontiguousarray(t, dtype=np.float64)
        self._ts = tie_starts(self._tw)
        self._S = np.zeros(self.N)
        self._G = [np.zeros(self.N), np.zeros(self.N)]
        self._pair_list = None  # the windowed trigger pass's pairs (_PairList), built on first use
        self._zeroed = [None, None]  # per G buffer: the pair list for which its rows without pairs are 0
        self._tail = ExponentialIntegralTail(self._tw, self.window)

    def _nchunks(self):
        """Chunks of the query loop: one per thread (each query point's sums are the same in any chunk)."""
        return max(1, numba.get_num_threads())

    def _loop_consts(self, consts):
        """(bh, om, kp, scale) of the trigger loops from :meth:`Engine._trigger_consts`: ``kp`` is
        None (exponential), the power-law exponent, or (c1, om2, c2) for the sum of two exponentials."""
        dt = self.dtype.type
        bh, om, c1, om2, c2, scale = consts
        kp = (dt(c1), dt(om2), dt(c2)) if self.exp2 else self._kp
        return dt(bh), dt(om), kp, scale

    def _k_background(self, tau_x, tau_t, delta):
        dt = self.dtype.type
        with threads_context(self.threads):
            cnt = _symmetric_kernel(
                self._x, self._th, self._tl, self._tw, self._ts,
                dt(0.5 / tau_x**2), dt(0.5 / tau_t**2), float(delta), dt(1.0), dt(1.0), self._kp, self._sq,
                self._limit(math.inf), 0.0, False,
                scatter_chunks(self.N), phi0(self.D, tau_x) * phi0(1, tau_t), 1.0, self._S, self._S)
        self._pairs += int(cnt)

    def _pairs_for(self, delta, bh, om, kp, lim):
        """The pair list for the time cut-off ``delta`` and the space-time cut (``bh``, ``om``, ``lim``;
        float64, lim = inf: none), or None (then the row loop runs): kept while it holds every pair of
        the current cuts and not too many more (see the notes above), else rebuilt, so that a chain's
        small moves of h and omega reuse it. None when exact (delta = inf) or when the time window
        holds more than MAX_PAIRS pairs."""
        if not math.isfinite(delta) or self.N >= 2**31:
            return None
        pl = self._pair_list
        if pl is not None and delta <= pl.dmax < PAIR_SHRINK * delta and self._cut_holds(pl.cut, bh, om, lim):
            return pl
        self._pair_list = None  # freed before a new one is allocated
        dmax = PAIR_HEADROOM * delta
        lo = np.empty(self.N, np.int64)
        P = _pair_rows(self._tw, self._ts, dmax, lo)
        if P > MAX_PAIRS:
            return None
        ptr = np.zeros(self.N + 1, np.int64)
        np.cumsum(self._ts - lo, out=ptr[1:])
        r2, dtv = np.empty(P, self.dtype), np.empty(P, self.dtype)
        twm, twn, row, mi = np.empty(P), np.empty(P), np.empty(P, np.int32), np.empty(P, np.int32)
        with threads_context(self.threads):
            _pair_fill(self._x, self._th, self._tl, self._tw, self._ts, lo, ptr, r2, dtv, twm, twn, row, mi)
        cut = None
        if math.isfinite(lim):
            cut = (bh / PAIR_HEADROOM, om / PAIR_HEADROOM, lim + (1 + self.D) * math.log(PAIR_HEADROOM))
            keep = np.empty(P, np.bool_)
            _pair_keep(r2, dtv, cut[0], cut[1], None if kp is None else float(kp), self._sq, cut[2], keep)
            r2, dtv, twm, twn, row, mi = (a[keep] for a in (r2, dtv, twm, twn, row, mi))
            ptr[1:] = np.cumsum(np.bincount(row, minlength=self.N))
        long_rows = np.flatnonzero(np.diff(ptr) > int(_BLK)).astype(np.int64)
        self._zeroed = [None, None]  # G buffers whose rows without pairs are 0 for this list: none yet
        self._pair_list = _PairList(dmax, cut, lo, ptr, r2, dtv, twm, twn, row, mi, long_rows, self.dtype)
        return self._pair_list

    @staticmethod
    def _cut_holds(cut, bh, om, lim):
        """Whether a list made for the space-time cut ``cut`` holds every pair of (bh, om, lim), and
        not far more (bh0 >= bh / PAIR_SHRINK)."""
        if cut is None:
            return not math.isfinite(lim)
        if not math.isfinite(lim):
            return False
        bh0, om0, lim0 = cut
        return (bh >= bh0 * (1.0 + PAIR_CUT_MARGIN) and om >= om0 * (1.0 + PAIR_CUT_MARGIN)
                and lim <= lim0 * (1.0 - PAIR_CUT_MARGIN) and bh0 * PAIR_SHRINK >= bh)

    def _k_trigger(self, h, rates, delta, phys, limit=math.inf):
        bh, om, kp, scale = self._loop_consts(self._trigger_consts(h, rates))
        lim = self._limit(limit)
        pl = self._pairs_for(float(delta), float(bh), float(om), kp, float(limit))
        if pl is not None:
            if self._zeroed[phys] is not pl:
                # the list's pass writes only the rows with pairs; a row without any has no term left
                # by the cuts (its G is 0), which the buffer must hold once per list
                self._G[phys][:] = 0.0
                self._zeroed[phys] = pl
            args = (self._tw, self._ts, pl.lo, pl.ptr, pl.active, pl.r2, pl.dt, pl.twm, pl.twn, pl.row, pl.mi, pl.v,
                    pl.acc,
                    pl.long_rows, bh, om, kp, self._sq, lim, float(delta), scale, self._G[phys], PAIR_BLOCK_ROWS)
            if self.threads == 1:
                cnt = _pair_trigger_serial(*args)
            else:
                with threads_context(self.threads):
                    cnt = _pair_trigger_parallel(*args)
        else:
            self._zeroed[phys] = None  # every row written, for these cuts
            with threads_context(self.threads):
                cnt = _trigger_kernel(self._x, self._th, self._tl, self._tw, self._ts, bh, om, kp, self._sq, lim,
                                      float(delta), scale, self._G[phys])
        self._pairs += int(cnt)

    def _k_both(self, tau_x, tau_t, delta_s, h, rates, delta_g, phys, limit_g=math.inf):
        dt = self.dtype.type
        bh, om, kp, scale = self._loop_consts(self._trigger_consts(h, rates))
        self._zeroed[phys] = None  # every row written, for these cuts
        with threads_context(self.threads):
            cnt = _symmetric_kernel(
                self._x, self._th, self._tl, self._tw, self._ts,
                dt(0.5 / tau_x**2), dt(0.5 / tau_t**2), float(delta_s),
                bh, om, kp, self._sq, self._limit(limit_g), float(delta_g), True, scatter_chunks(self.N),
                phi0(self.D, tau_x) * phi0(1, tau_t), scale, self._S, self._G[phys])
        self._pairs += int(cnt)

    def _k_sum_log(self, mu0, theta, phys):
        return _sum_log_kernel(self._S, self._G[phys], mu0, theta)  # serial: no thread setting

    def _k_pi(self, mu0, theta, phys):
        out = np.empty(self.N)
        _pi_kernel(self._S, self._G[phys], mu0, theta, out)
        return out

    def _k_S(self):
        return self._S.copy()

    def _k_set_S(self, S):
        self._S[:] = S

    def _k_G(self, phys):
        return self._G[phys].copy()

    def _k_trigger_integral(self, omega):
        return self._tail(omega)

    def _k_query(self, points, time, ranges, ax, at, scale_s, consts):
        dt = self.dtype.type
        bh, om, kp, scale_g = self._loop_consts(consts)
        pc = points - self._xmean
        qs = tuple(np.ascontiguousarray(pc[:, d], dtype=self.dtype) for d in range(self.D))
        qh, ql = split_time(np.array([time]), self.dtype, grid=self._tgrid)
        out_s = np.empty(points.shape[0])
        out_g = np.empty(points.shape[0])
        with threads_context(self.threads):
            cnt = _query_kernel(self._x, self._th, self._tl, qs, qh[0], ql[0], *ranges, dt(ax), dt(at), bh,
                                om, kp, self._sq, self._limit(math.inf), self._nchunks(), scale_s, scale_g, out_s,
                                out_g)
        self._pairs += int(cnt)
        return out_s, out_g
