// kde.cu -- kernels of hphawkes_py.kde (Zhang, Zhu & Huang 2017 adaptive KDE with edge correction).
//
// kde_edge_mass : one block per point near the window boundary; the threads stride over the bands of
//                 identical raster rows within reach of the point, each adds (1-D normal mass of the
//                 band's y-range) x (sum of 1-D normal masses of the band's runs of inside cells), and
//                 the block reduces in shared memory.  Exact cell integrals of the untruncated kernel.
// kde_gather    : one thread per target (sample point or cell centre); sources sorted by
//                 (bandwidth class, grid cell) in structure-of-arrays layout; per class the target
//                 visits the grid rows within the class reach and, in each row, the chord of the disc
//                 (one contiguous range of sources).  Gather formulation: no atomics.
// kde_relabel_exceed : all Monte Carlo relabellings of a relative risk in one launch (see below).
#include "hp_cuda.h"

__device__ __forceinline__ REAL kde_ndtr(REAL z) {
  return (REAL)0.5 * erfc(-z * (REAL)0.70710678118654752440);
}

extern "C" __global__ void kde_edge_mass(const REAL* __restrict__ px, const REAL* __restrict__ py,
                                         const REAL* __restrict__ bws, const long long* __restrict__ idx,
                                         REAL x0, REAL y0, REAL cs, int nrows,
                                         const long long* __restrict__ band_r0,
                                         const long long* __restrict__ band_r1,
                                         const long long* __restrict__ band_ptr,
                                         const long long* __restrict__ runs_c0,
                                         const long long* __restrict__ runs_c1,
                                         const long long* __restrict__ row_band, REAL reach,
                                         REAL* __restrict__ out) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  const long long j = idx[blockIdx.x];
  const REAL x = px[j], y = py[j], b = bws[j];
  const REAL R = reach * b;
  int r_top = nrows - 1 - (int)floor((y + R - y0) / cs);
  int r_bot = nrows - 1 - (int)floor((y - R - y0) / cs);
  if (r_top < 0) r_top = 0;
  if (r_bot > nrows - 1) r_bot = nrows - 1;
  REAL acc = 0;
  if (r_top <= r_bot) {
    const long long g0 = row_band[r_top], g1 = row_band[r_bot];
    for (long long g = g0 + threadIdx.x; g <= g1; g += blockDim.x) {
      const long long lo = band_ptr[g], hi = band_ptr[g + 1];
      if (lo == hi) continue;
      const REAL ylo = y0 + (REAL)(nrows - band_r1[g]) * cs;
      const REAL yhi = y0 + (REAL)(nrows - band_r0[g]) * cs;
      const REAL my = kde_ndtr((yhi - y) / b) - kde_ndtr((ylo - y) / b);
      if (my == (REAL)0) continue;
      // first run ending at or right of x - R (runs sorted and disjoint)
      long long a = lo, z = hi;
      while (a < z) {
        const long long mid = (a + z) / 2;
        if (x0 + (REAL)runs_c1[mid] * cs < x - R) a = mid + 1; else z = mid;
      }
      REAL mx = 0;
      for (long long r = a; r < hi; ++r) {
        const REAL xa = x0 + (REAL)runs_c0[r] * cs;
        if (xa > x + R) break;
        const REAL xb = x0 + (REAL)runs_c1[r] * cs;
        mx += kde_ndtr((xb - x) / b) - kde_ndtr((xa - x) / b);
      }
      acc += my * mx;
    }
  }
  const REAL total = hp_block_reduce_sum(acc, sdata);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

extern "C" __global__ void kde_gather(const REAL* __restrict__ tgt, long long ntargets, int loo,
                                      const REAL* __restrict__ src, long long nsrc, REAL gx0, REAL gy0,
                                      const REAL* __restrict__ cls_real, const long long* __restrict__ cls_int,
                                      int ncls, REAL* __restrict__ out) {
  // packed so that one index costs two uploads: targets (tx | ty), sources (sx | sy | sinv2 | scoef
  // | scut2), classes (cell side | reach) and (nx | ny | base | cell_ptr)
  const REAL* tx = tgt;
  const REAL* ty = tgt + ntargets;
  const REAL* sx = src;
  const REAL* sy = src + nsrc;
  const REAL* sinv2 = src + 2 * nsrc;
  const REAL* scoef = src + 3 * nsrc;
  const REAL* scut2 = src + 4 * nsrc;
  const REAL* cls_s = cls_real;
  const REAL* cls_reach = cls_real + ncls;
  const long long* cls_nx = cls_int;
  const long long* cls_ny = cls_int + ncls;
  const long long* cls_base = cls_int + 2 * ncls;
  const long long* cell_ptr = cls_int + 3 * ncls;
  HP_GRID_STRIDE_LOOP(t, ntargets) {
    const REAL x = tx[t], y = ty[t];
    const long long me = loo ? t : -1;  // leave-one-out: the targets are the sources, same order
    REAL acc = 0;
    for (int k = 0; k < ncls; ++k) {
      const REAL s = cls_s[k], reach = cls_reach[k];
      const long long nx = cls_nx[k], ny = cls_ny[k];
      const REAL fy0 = floor((y - reach - gy0) / s), fy1 = floor((y + reach - gy0) / s);
      const REAL fx0 = floor((x - reach - gx0) / s), fx1 = floor((x + reach - gx0) / s);
      if (fy1 < (REAL)0 || fx1 < (REAL)0 || fy0 > (REAL)(ny - 1) || fx0 > (REAL)(nx - 1)) continue;
      const long long gya = fy0 > (REAL)0 ? (long long)fy0 : 0;
      const long long gyb = fy1 < (REAL)(ny - 1) ? (long long)fy1 : ny - 1;
      const REAL r2 = reach * reach;
      for (long long gy = gya; gy <= gyb; ++gy) {
        const REAL ylo = gy0 + (REAL)gy * s;
        REAL dy = ylo - y;
        const REAL dy2 = y - (ylo + s);
        if (dy2 > dy) dy = dy2;
        if (dy < (REAL)0) dy = 0;
        const REAL rem = r2 - dy * dy;
        if (rem < (REAL)0) continue;
        const REAL hw = sqrt(rem);
        const REAL fa = floor((x - hw - gx0) / s), fb = floor((x + hw - gx0) / s);
        const long long xa = fa > (REAL)0 ? (long long)fa : 0;
        const long long xb = fb < (REAL)(nx - 1) ? (long long)fb : nx - 1;
        if (xa > xb) continue;
        const long long row = cls_base[k] + gy * nx;
        const long long j1 = cell_ptr[row + xb + 1];
        for (long long j = cell_ptr[row + xa]; j < j1; ++j) {
          const REAL ddx = x - sx[j], ddy = y - sy[j];
          const REAL d2 = ddx * ddx + ddy * ddy;
          if (d2 < scut2[j] && j != me) acc += scoef[j] * exp(-d2 * sinv2[j]);
        }
      }
    }
    out[t] = acc;
  }
}

// kde_relabel_exceed : Monte Carlo relabelling of a case-control pattern, ALL relabellings in one
//                 launch.  One thread per target; for each relabelling r the smaller group is
//                 picks[r*k .. r*k+k) (indices into the resident pooled points); the thread sums that
//                 group's kernels at the target (every member: the group is small), takes the other
//                 group as total - part (the pooled total does not depend on the labels), forms the
//                 log relative risk log(l1/n1) - log(l0/n0) in double, and counts rho_r >= rho_obs
//                 (false for NaN).  exceed[t] is written once: no atomics.
extern "C" __global__ void kde_relabel_exceed(const REAL* __restrict__ tx, const REAL* __restrict__ ty,
                                              long long ntargets, const REAL* __restrict__ px,
                                              const REAL* __restrict__ py, const REAL* __restrict__ pinv2,
                                              const REAL* __restrict__ pcoef, const REAL* __restrict__ pcut2,
                                              const int* __restrict__ picks, int nrep, int k,
                                              const double* __restrict__ total,
                                              const double* __restrict__ rho_obs, int small_is_case,
                                              double log_n1, double log_n0, long long* __restrict__ exceed) {
  HP_GRID_STRIDE_LOOP(t, ntargets) {
    const REAL x = tx[t], y = ty[t];
    const double tot = total[t], obs = rho_obs[t];
    long long count = 0;
    for (int r = 0; r < nrep; ++r) {
      const int* pk = picks + (long long)r * k;
      REAL part = 0;
      for (int i = 0; i < k; ++i) {
        const int j = pk[i];
        const REAL ddx = x - px[j], ddy = y - py[j];
        const REAL d2 = ddx * ddx + ddy * ddy;
        if (d2 < pcut2[j]) part += pcoef[j] * exp(-d2 * pinv2[j]);
      }
      double small = (double)part;
      double rest = tot - small;
      if (rest < 0.0) rest = 0.0;
      const double l1 = small_is_case ? small : rest;
      const double l0 = small_is_case ? rest : small;
      if (l1 > 0.0 && l0 > 0.0) {
        const double rho = (log(l1) - log_n1) - (log(l0) - log_n0);
        if (rho >= obs) ++count;
      }
    }
    exceed[t] = count;
  }
}
