// hawkes_marked.cu -- the Hawkes models with marks and types: the ETAS triggering sums G_n and the
// multitype rows S_n, G_{n,k} (the CPU twins and the notation are in hphawkes_py/hawkes/cpu_etas.py
// and cpu_multitype.py). One thread per event, each a sequential loop over the sources in
// increasing order: results do not depend on the launch configuration. REAL is double.
#include "hp_cuda.h"

// G_n = sum_{j < ts[n]} w_j exp(-(p log(1 + dt/c) + spatial_j)); spatial_j = r^2/(2 sigma_j) (kind 0)
// or q log(1 + r^2/sigma_j) (kind 1). x is (N, 2) row-major.
extern "C" __global__ void etas_rows(const REAL* x, const REAL* t, const long long* ts, const REAL* w,
                                     const REAL* sigma, REAL c, REAL p, REAL q, int kind, int N, REAL* out) {
  HP_GRID_STRIDE_LOOP(n, N) {
    REAL g = 0;
    const REAL x0 = x[2 * n], x1 = x[2 * n + 1], tn = t[n];
    for (long long j = 0; j < ts[n]; ++j) {
      const REAL d0 = x0 - x[2 * j], d1 = x1 - x[2 * j + 1];
      const REAL r2 = d0 * d0 + d1 * d1;
      const REAL sp = (kind == 0) ? 0.5 * r2 / sigma[j] : q * log1p(r2 / sigma[j]);
      g += w[j] * exp(-(p * log1p((tn - t[j]) / c) + sp));
    }
    out[n] = g;
  }
}

// S_n (same-type background smoother, m = n included) when do_s; G (N x K row-major) when do_g.
// x is (N, 3) row-major (zeros beyond D), k the types.
extern "C" __global__ void multitype_rows(const REAL* x, const REAL* t, const long long* ts, const long long* k,
                                          REAL ax, REAL at, REAL bh, REAL om, int do_s, int do_g, int K, int N,
                                          REAL* S, REAL* G) {
  HP_GRID_STRIDE_LOOP(n, N) {
    const long long kn = k[n];
    if (do_s) {
      REAL s = 0;
      for (long long m = 0; m < N; ++m) {
        if (k[m] != kn) continue;
        const REAL d0 = x[3 * n] - x[3 * m], d1 = x[3 * n + 1] - x[3 * m + 1], d2 = x[3 * n + 2] - x[3 * m + 2];
        const REAL dt = t[n] - t[m];
        s += exp(-(ax * (d0 * d0 + d1 * d1 + d2 * d2) + at * dt * dt));
      }
      S[n] = s;
    }
    if (do_g) {
      for (int j = 0; j < K; ++j) G[(long long)K * n + j] = 0;
      for (long long m = 0; m < ts[n]; ++m) {
        const REAL d0 = x[3 * n] - x[3 * m], d1 = x[3 * n + 1] - x[3 * m + 1], d2 = x[3 * n + 2] - x[3 * m + 2];
        G[(long long)K * n + k[m]] += exp(-(bh * (d0 * d0 + d1 * d1 + d2 * d2) + om * (t[n] - t[m])));
      }
    }
  }
}
