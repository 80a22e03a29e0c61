// hawkes.cu -- spatiotemporal Hawkes likelihood kernels (Holbrook et al. 2021).
//
// Events are sorted by time. Coordinates are structure-of-arrays (x0, x1, x2: unused columns
// alias x0), times are split t = th + tl in REAL (tl = 0 for double; see
// hphawkes_py/hawkes/engine.py:split_time) plus a double copy tw used only for the window
// binary searches, so the windows do not depend on REAL.
//
//   hawkes_background : S_n = scale * sum_{m: |t_n - t_m| <= delta} exp(-(ax r2 + at dt^2))  (m = n included)
//   hawkes_trigger    : G_n = scale * sum_{m in [lo_n, ts_n)} exp(-(bh r2 + om (t_n - t_m))), terms with
//                       exponent >= lim (the space-time cut) left out
//                       (power-law kernel, kp > 1: exp(-(bh r2 + kp log(1 + om (t_n - t_m)))); sum of two
//                       exponentials, c2 > 0: c1 exp(-(bh r2 + om dt)) + c2 exp(-(bh r2 + om2 dt)))
//                       ts_n = first event tied with n (ties do not excite), lo_n = window start.
//                       Spatial power law, sq > 0: the spatial part bh r2 becomes sq log1p(bh r2)
//                       (bh = 1/h^2 then; the Gaussian branch, sq = 0, is the unchanged code)
//   hawkes_sum_log    : one partial sum of log(mu0 S_n + theta G_n) per block (double)
//   hawkes_pi         : pi_n = theta G_n / (mu0 S_n + theta G_n)
//   hawkes_trigger_integral : one partial sum of 1 - exp(-omega (T1 - t_m)) per block (double)
//   hawkes_query      : background and trigger sums at query points off the data (forecasts)
//   hawkes_gradient_sums : the weighted pair sums of the log-likelihood gradient (see below)
//
// One block per event (grid-stride over events when N exceeds the grid), a block-strided loop
// over the event's range with coalesced loads of consecutive m, and a shared-memory tree
// reduction (hp_block_reduce_sum). The per-event ranges are found by a binary search in the
// kernel (every thread does the same O(log N) search; the loads are broadcast), so nothing of
// size N crosses the bus per parameter change. Row sums are accumulated in REAL (float, like the
// paper's GPU code, or double); the reductions over events are done in double.
// delta < 0 means "no window" (exact).
#include "hp_cuda.h"

__device__ __forceinline__ int hk_lower_bound(const double* a, double v, int lo, int hi) {
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (a[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

__device__ __forceinline__ int hk_upper_bound(const double* a, double v, int lo, int hi) {
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (a[mid] <= v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

__device__ __forceinline__ REAL hk_r2(const REAL* x0, const REAL* x1, const REAL* x2, int D,
                                      int m, REAL a0, REAL a1, REAL a2) {
  const REAL d0 = x0[m] - a0;
  REAL r2 = d0 * d0;
  if (D > 1) { const REAL d1 = x1[m] - a1; r2 += d1 * d1; }
  if (D > 2) { const REAL d2 = x2[m] - a2; r2 += d2 * d2; }
  return r2;
}

// The one pair loop of every kernel: the block's threads stride over m in [lo, hi) and sum the
// pair term of the point (a0, a1, a2) at time tn + tln (an event's or a query point's), then the
// block reduces. TRIGGER = 0: background term exp(-(a r2 + b dt^2)); TRIGGER = 1: trigger term
// exp(-(a r2 + b (tn - t_m))) (exponential kernel, kp = 0, c2 = 0) or
// exp(-(a r2 + kp log(1 + b (tn - t_m)))) (power-law kernel with exponent kp > 1) or
// c1 exp(-(a r2 + b dt)) + c2 exp(-(a r2 + b2 dt)) (sum of two exponentials, c2 > 0, c1 + c2 = 1;
// the branch is uniform over the launch, so no divergence); the callers' ranges hold only strictly
// earlier m. sq > 0 (trigger only): the spatial power law, a r2 replaced by sq log1p(a r2) in each
// of those terms (a separate uniform branch, so the Gaussian code, sq = 0, is unchanged).
// lim (trigger only): the space-time cut of bound (3) (windows.trigger_limit), a term whose
// exponent reaches it is 0, as in the CPU engine (no cut for the sum of two exponentials: the
// caller passes the largest REAL).
template <int TRIGGER>
__device__ __forceinline__ REAL hk_pair_sum(const REAL* x0, const REAL* x1, const REAL* x2,
                                            const REAL* th, const REAL* tl, int D, int lo, int hi,
                                            REAL a0, REAL a1, REAL a2, REAL tn, REAL tln,
                                            REAL a, REAL b, REAL kp, REAL c1, REAL b2, REAL c2, REAL sq,
                                            REAL lim, REAL* sdata) {
  REAL acc = 0;
  for (int m = lo + (int)threadIdx.x; m < hi; m += blockDim.x) {
    const REAL r2 = hk_r2(x0, x1, x2, D, m, a0, a1, a2);
    if (TRIGGER && sq > (REAL)0) {
      const REAL dt = (tn - th[m]) + (tln - tl[m]);
      const REAL q = sq * log1p(a * r2);
      if (c2 > (REAL)0) {
        acc += c1 * exp(-(q + b * dt)) + c2 * exp(-(q + b2 * dt));
      } else {
        const REAL e = q + (kp > (REAL)0 ? kp * log1p(b * dt) : b * dt);
        acc += e < lim ? exp(-e) : (REAL)0;
      }
    } else if (TRIGGER) {
      const REAL dt = (tn - th[m]) + (tln - tl[m]);
      if (c2 > (REAL)0) {
        const REAL q = a * r2;
        acc += c1 * exp(-(q + b * dt)) + c2 * exp(-(q + b2 * dt));
      } else {
        const REAL e = a * r2 + (kp > (REAL)0 ? kp * log1p(b * dt) : b * dt);
        acc += e < lim ? exp(-e) : (REAL)0;
      }
    } else {
      const REAL dt = (th[m] - tn) + (tl[m] - tln);
      acc += exp(-(a * r2 + b * (dt * dt)));
    }
  }
  return hp_block_reduce_sum(acc, sdata);
}

template <int TRIGGER>
__device__ __forceinline__ void hk_event_sums(const REAL* x0, const REAL* x1, const REAL* x2,
                                              const REAL* th, const REAL* tl, const double* tw,
                                              int N, int D, REAL a, REAL b, REAL kp, REAL c1, REAL b2,
                                              REAL c2, REAL sq, REAL lim, double delta, double scale,
                                              REAL* out, REAL* sdata) {
  for (int n = blockIdx.x; n < N; n += gridDim.x) {
    int lo = 0, hi = N;
    if (TRIGGER) {
      hi = hk_lower_bound(tw, tw[n], 0, n);  // first event tied with n
      if (delta >= 0.0) lo = hk_lower_bound(tw, tw[n] - delta, 0, hi);
    } else if (delta >= 0.0) {
      lo = hk_lower_bound(tw, tw[n] - delta, 0, n);
      hi = hk_upper_bound(tw, tw[n] + delta, n + 1, N);
    }
    const REAL s = hk_pair_sum<TRIGGER>(x0, x1, x2, th, tl, D, lo, hi, x0[n], D > 1 ? x1[n] : (REAL)0,
                                        D > 2 ? x2[n] : (REAL)0, th[n], tl[n], a, b, kp, c1, b2, c2, sq, lim,
                                        sdata);
    if (threadIdx.x == 0) out[n] = (REAL)(scale * (double)s);
  }
}

extern "C" __global__ void hawkes_background(const REAL* x0, const REAL* x1, const REAL* x2,
                                             const REAL* th, const REAL* tl, const double* tw,
                                             int N, int D, REAL ax, REAL at, double delta,
                                             double scale, REAL* S) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  hk_event_sums<0>(x0, x1, x2, th, tl, tw, N, D, ax, at, (REAL)0, (REAL)1, (REAL)0, (REAL)0, (REAL)0, (REAL)0, delta,
                   scale, S, sdata);
}

extern "C" __global__ void hawkes_trigger(const REAL* x0, const REAL* x1, const REAL* x2,
                                          const REAL* th, const REAL* tl, const double* tw,
                                          int N, int D, REAL bh, REAL om, REAL kp, REAL c1, REAL om2,
                                          REAL c2, REAL sq, REAL lim, double delta, double scale, REAL* G) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  hk_event_sums<1>(x0, x1, x2, th, tl, tw, N, D, bh, om, kp, c1, om2, c2, sq, lim, delta, scale, G, sdata);
}

// Conditional-intensity sums at query points (q0, q1, q2)[g], g < Q, all at one time qh + ql:
// Sq_g = scale_s * sum_{m in [lo_s, hi_s)} background term, Gq_g = scale_g * sum_{m in [lo_g, hi_g)}
// trigger term. The ranges (the same for every point) come from the host; one block per point.
extern "C" __global__ void hawkes_query(const REAL* x0, const REAL* x1, const REAL* x2,
                                        const REAL* th, const REAL* tl, int D,
                                        const REAL* q0, const REAL* q1, const REAL* q2, int Q,
                                        REAL qh, REAL ql, int lo_s, int hi_s, int lo_g, int hi_g,
                                        REAL ax, REAL at, REAL bh, REAL om, REAL kp, REAL c1, REAL om2,
                                        REAL c2, REAL sq, REAL lim, double scale_s, double scale_g, REAL* Sq,
                                        REAL* Gq) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  for (int g = blockIdx.x; g < Q; g += gridDim.x) {
    const REAL a0 = q0[g];
    const REAL a1 = D > 1 ? q1[g] : (REAL)0;
    const REAL a2 = D > 2 ? q2[g] : (REAL)0;
    const REAL s = hk_pair_sum<0>(x0, x1, x2, th, tl, D, lo_s, hi_s, a0, a1, a2, qh, ql, ax, at, (REAL)0, (REAL)1,
                                  (REAL)0, (REAL)0, (REAL)0, (REAL)0, sdata);
    const REAL e = hk_pair_sum<1>(x0, x1, x2, th, tl, D, lo_g, hi_g, a0, a1, a2, qh, ql, bh, om, kp, c1, om2, c2,
                                  sq, lim, sdata);
    if (threadIdx.x == 0) {
      Sq[g] = (REAL)(scale_s * (double)s);
      Gq[g] = (REAL)(scale_g * (double)e);
    }
  }
}

extern "C" __global__ void hawkes_sum_log(const REAL* S, const REAL* G, int N, double mu0,
                                          double theta, double* partial) {
  HP_DYNAMIC_SHARED(double, hk_sdd);
  double acc = 0.0;
  HP_GRID_STRIDE_LOOP(i, N) { acc += log(mu0 * (double)S[i] + theta * (double)G[i]); }
  const double s = hp_block_reduce_sum(acc, hk_sdd);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void hawkes_pi(const REAL* S, const REAL* G, int N, double mu0,
                                     double theta, double* out) {
  HP_GRID_STRIDE_LOOP(i, N) {
    const double xi = theta * (double)G[i];
    out[i] = xi / (mu0 * (double)S[i] + xi);
  }
}

extern "C" __global__ void hawkes_trigger_integral(const double* tw, int N, double T1,
                                                   double omega, double* partial) {
  HP_DYNAMIC_SHARED(double, hk_sdd);
  double acc = 0.0;
  HP_GRID_STRIDE_LOOP(i, N) { acc += -expm1(-omega * (T1 - tw[i])); }
  const double s = hp_block_reduce_sum(acc, hk_sdd);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// hawkes_gradient_sums: the weighted pair sums of the log-likelihood gradient, per event row, as
// hphawkes_py/hawkes/cpu_gradient.py defines them (the CPU kernel's twin; gradient.py turns them into
// the partial derivatives). Background row n, over m with |t_n - t_m| <= delta_s (every m when
// delta_s < 0; m = n included, term 1), e = exp(-(ax r2 + at dt^2)):
//   out_s[3n..3n+2] = (sum e, sum e r2, sum e dt^2)
// Trigger row n, over m in [lo_n, ts_n) (t_n - t_m <= delta_g; ties excluded), u the pair term without
// its constant factor; tkind 0 exponential, 1 power law (exponent p), 2 sum of two exponentials;
// skind 0 Gaussian (spatial part bh r2, weight b = r2), 1 spatial power law (q log1p(bh r2),
// b = z / (1 + z), z = bh r2):
//   out_g[5n..5n+4] = (sum u, sum u a(dt), sum u2, sum u2 dt, sum u b)
// with a(dt) = dt (exponential kernels) or dt / (1 + om dt) (power law); for tkind 2, u and u2 are
// the two exponentials and the last sum weighs them by c1, c2. Pair terms in REAL (as the engines),
// sums in double (as the CPU kernel); one block per row, block-strided m, tree reductions.
extern "C" __global__ void hawkes_gradient_sums(const REAL* x0, const REAL* x1, const REAL* x2,
                                                const REAL* th, const REAL* tl, const double* tw,
                                                int N, int D, int with_background, REAL ax, REAL at,
                                                double delta_s, int with_trigger, REAL bh, REAL om,
                                                REAL om2, REAL c1, REAL c2, REAL p, REAL q, int tkind,
                                                int skind, double delta_g, double* out_s, double* out_g) {
  HP_DYNAMIC_SHARED(double, hk_sdd);
  for (int n = blockIdx.x; n < N; n += gridDim.x) {
    const REAL a0 = x0[n];
    const REAL a1 = D > 1 ? x1[n] : (REAL)0;
    const REAL a2 = D > 2 ? x2[n] : (REAL)0;
    const REAL tn = th[n], tln = tl[n];
    if (with_background) {
      int lo = 0, hi = N;
      if (delta_s >= 0.0) {
        lo = hk_lower_bound(tw, tw[n] - delta_s, 0, n);
        hi = hk_upper_bound(tw, tw[n] + delta_s, n + 1, N);
      }
      double s0 = 0.0, sr = 0.0, st = 0.0;
      for (int m = lo + (int)threadIdx.x; m < hi; m += blockDim.x) {
        const REAL r2 = hk_r2(x0, x1, x2, D, m, a0, a1, a2);
        const REAL dt = (th[m] - tn) + (tl[m] - tln);
        const REAL dt2 = dt * dt;
        const REAL e = exp(-(ax * r2 + at * dt2));
        s0 += (double)e;
        sr += (double)(e * r2);
        st += (double)(e * dt2);
      }
      s0 = hp_block_reduce_sum(s0, hk_sdd);
      sr = hp_block_reduce_sum(sr, hk_sdd);
      st = hp_block_reduce_sum(st, hk_sdd);
      if (threadIdx.x == 0) {
        out_s[3 * (long long)n] = s0;
        out_s[3 * (long long)n + 1] = sr;
        out_s[3 * (long long)n + 2] = st;
      }
    }
    if (!with_trigger) continue;
    const int hi = hk_lower_bound(tw, tw[n], 0, n);  // first event tied with n
    const int lo = delta_g >= 0.0 ? hk_lower_bound(tw, tw[n] - delta_g, 0, hi) : 0;
    double ga = 0.0, gat = 0.0, gb = 0.0, gbt = 0.0, gr = 0.0;
    for (int m = lo + (int)threadIdx.x; m < hi; m += blockDim.x) {
      const REAL r2 = hk_r2(x0, x1, x2, D, m, a0, a1, a2);
      const REAL dt = (tn - th[m]) + (tln - tl[m]);
      REAL sq, b;
      if (skind == 0) {
        sq = bh * r2;
        b = r2;
      } else {
        const REAL z = bh * r2;
        sq = q * log1p(z);
        b = z / ((REAL)1 + z);
      }
      if (tkind == 0) {
        const REAL u = exp(-(sq + om * dt));
        ga += (double)u;
        gat += (double)(u * dt);
        gr += (double)(u * b);
      } else if (tkind == 1) {
        const REAL od = om * dt;
        const REAL u = exp(-(sq + p * log1p(od)));
        ga += (double)u;
        gat += (double)(u * (dt / ((REAL)1 + od)));
        gr += (double)(u * b);
      } else {
        const REAL u1 = exp(-(sq + om * dt));
        const REAL u2 = exp(-(sq + om2 * dt));
        ga += (double)u1;
        gat += (double)(u1 * dt);
        gb += (double)u2;
        gbt += (double)(u2 * dt);
        gr += (double)((c1 * u1 + c2 * u2) * b);
      }
    }
    ga = hp_block_reduce_sum(ga, hk_sdd);
    gat = hp_block_reduce_sum(gat, hk_sdd);
    gb = hp_block_reduce_sum(gb, hk_sdd);
    gbt = hp_block_reduce_sum(gbt, hk_sdd);
    gr = hp_block_reduce_sum(gr, hk_sdd);
    if (threadIdx.x == 0) {
      double* o = out_g + 5 * (long long)n;
      o[0] = ga;
      o[1] = gat;
      o[2] = gb;
      o[3] = gbt;
      o[4] = gr;
    }
  }
}
