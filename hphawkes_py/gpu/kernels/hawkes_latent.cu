// hawkes_latent.cu -- the Hawkes model with latent structure: rates with per-source weights and the
// log-likelihood's gradient in the event locations and per-event log-rates (the CPU twin and the
// notation are in hphawkes_py/hawkes/cpu_latent.py). x is (N, 3) row-major (zeros beyond D); the
// index ranges of every event's sums come from the host. One thread per event, each a sequential
// loop in a fixed order: results do not depend on the launch configuration. REAL is double.
#include "hp_cuda.h"

__device__ __forceinline__ REAL hl_r2(const REAL* x, long long n, long long m, REAL* d) {
  d[0] = x[3 * m] - x[3 * n];
  d[1] = x[3 * m + 1] - x[3 * n + 1];
  d[2] = x[3 * m + 2] - x[3 * n + 2];
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

// S_n = sum_{m in [lo_s[n], hi_s[n])} wb_m e_nm (when do_s), G_n = sum_{m in [lo_g[n], ts[n])} wg_m u_nm (when do_g).
extern "C" __global__ void latent_rows(const REAL* x, const REAL* t, const long long* lo_s, const long long* hi_s,
                                       const long long* lo_g, const long long* ts, const REAL* wb, const REAL* wg,
                                       REAL ax, REAL at, REAL bh, REAL om, int do_s, int do_g, int N, REAL* S,
                                       REAL* G) {
  REAL d[3];
  HP_GRID_STRIDE_LOOP(n, N) {
    if (do_s) {
      REAL s = 0;
      for (long long m = lo_s[n]; m < hi_s[n]; ++m) {
        const REAL r2 = hl_r2(x, n, m, d);
        const REAL dt = t[n] - t[m];
        s += wb[m] * exp(-(ax * r2 + at * dt * dt));
      }
      S[n] = s;
    }
    if (do_g) {
      REAL g = 0;
      for (long long m = lo_g[n]; m < ts[n]; ++m) {
        const REAL r2 = hl_r2(x, n, m, d);
        g += wg[m] * exp(-(bh * r2 + om * (t[n] - t[m])));
      }
      G[n] = g;
    }
  }
}

// LB_k, LG_k (N x 3) and (AB_k, AB2_k, AG_k, AG2_k) (N x 4) of the module notes; v = 1 / lambda;
// need: bits 1 locations, 2 background log-rates, 4 trigger log-rates (the loops not needed are skipped).
extern "C" __global__ void latent_columns(const REAL* x, const REAL* t, const long long* lo_s,
                                          const long long* hi_s, const long long* lo_g, const long long* ts,
                                          const long long* src_s_lo, const long long* src_s_hi,
                                          const long long* src_g_lo, const long long* src_g_hi, const REAL* wb,
                                          const REAL* wg, const REAL* v, REAL ax, REAL at, REAL bh, REAL om, int need, int N,
                                          REAL* lb, REAL* lg, REAL* a) {
  REAL d[3];
  HP_GRID_STRIDE_LOOP(k, N) {
    REAL b0 = 0, b1 = 0, b2 = 0, g0 = 0, g1 = 0, g2 = 0, ab = 0, ab2 = 0, ag = 0, ag2 = 0;
    const REAL vk = v[k];
    const bool loc = (need & 1) != 0;
    for (long long m = lo_s[k]; loc && m < hi_s[k]; ++m) {  // k as target of its own sums
      const REAL r2 = hl_r2(x, k, m, d);
      const REAL dt = t[k] - t[m];
      const REAL c = wb[m] * vk * exp(-(ax * r2 + at * dt * dt));
      b0 += c * d[0];
      b1 += c * d[1];
      b2 += c * d[2];
    }
    for (long long m = lo_g[k]; loc && m < ts[k]; ++m) {
      const REAL r2 = hl_r2(x, k, m, d);
      const REAL c = wg[m] * vk * exp(-(bh * r2 + om * (t[k] - t[m])));
      g0 += c * d[0];
      g1 += c * d[1];
      g2 += c * d[2];
    }
    for (long long n = src_s_lo[k]; (need & 3) && n < src_s_hi[k]; ++n) {  // k as source in the others' sums
      const REAL r2 = hl_r2(x, k, n, d);
      const REAL dt = t[n] - t[k];
      const REAL ev = exp(-(ax * r2 + at * dt * dt)) * v[n];
      const REAL c = wb[k] * ev;
      b0 += c * d[0];
      b1 += c * d[1];
      b2 += c * d[2];
      ab += ev;
      ab2 += ev * ev;
    }
    for (long long n = src_g_lo[k]; (need & 5) && n < src_g_hi[k]; ++n) {
      const REAL r2 = hl_r2(x, k, n, d);
      const REAL uv = exp(-(bh * r2 + om * (t[n] - t[k]))) * v[n];
      const REAL c = wg[k] * uv;
      g0 += c * d[0];
      g1 += c * d[1];
      g2 += c * d[2];
      ag += uv;
      ag2 += uv * uv;
    }
    lb[3 * k] = b0;
    lb[3 * k + 1] = b1;
    lb[3 * k + 2] = b2;
    lg[3 * k] = g0;
    lg[3 * k + 1] = g1;
    lg[3 * k + 2] = g2;
    a[4 * k] = ab;
    a[4 * k + 1] = ab2;
    a[4 * k + 2] = ag;
    a[4 * k + 3] = ag2;
  }
}
