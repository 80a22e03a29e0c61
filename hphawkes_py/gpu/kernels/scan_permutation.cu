// scan_permutation.cu -- the scans whose null permutes the observations' values: the normal model
// (Kulldorff, Huang & Konty 2009), SaTScan's weighted normal model, and the exponential model for
// survival data (Huang, Kulldorff & Gregorio 2007).
//
// One thread per (centre, replicate): block x = centre, threads (and grid y) = replicates, as in
// scan.cu. Every thread walks its centre's neighbour list (CSR offsets / neighbors / boundary,
// read at the same index by the whole block), adds the locations' two sums s1, s2 (laid out
// locations x replicates: s1[loc * R + r] is coalesced across the block) and, for the normal
// models, the locations' observation counts n_loc; at every window end it tests whether the window
// is of interest and keeps SaTScan's maximizing value of the best one:
//   normal (model 0):          s1, s2 = sums of x and x^2;    mv = -sigma1^2 (expanded sums);
//   weighted normal (model 1): s1, s2 = sums of w x and w;    mv = u^2/u2 + (U-u)^2/(U2-u2);
//   exponential (model 2):     s1, s2 = deaths and calibrated time (c, mu);
//                              mv = c log(c/mu) + (C-c) log((C-c)/(C-mu)).
// The host turns the maximizing values into LLRs (hphawkes_py/scan/normal.py, _statistics), the
// same function for both engines. The operations are those of the CPU engine (normal.py:
// _of_interest, _maximizing_value) in the same order, products rounded separately (no fused
// multiply-add), so the normal models' maximizing values are the CPU engine's bit for bit; the
// exponential model's logarithms are the device's (within an ulp of the host's).
#include "hp_cuda.h"

#if defined(__HP_EMULATOR__)
#define PM_MUL(a, b) ((a) * (b))
#else
#define PM_MUL(a, b) __dmul_rn((a), (b))
#endif

// SaTScan's "no maximizing value": minus the largest double
#define PM_NONE (-1.7976931348623157e308)

__device__ __forceinline__ bool pm_of_interest(int model, long long n, double u, double u2, long long N, double U,
                                               double U2, long long min_high, long long min_low, int want_high,
                                               int want_low) {
  if (u == 0.0) return false;
  if (model == 1) {
    const double m = u / u2;
    const double M = U / U2;
    return (want_high && n >= min_high && m > M) || (want_low && n >= min_low && m < M);
  }
  const double a = PM_MUL((double)n, U);
  const double b = PM_MUL(u, (double)N);
  if (model == 2) return (want_high && n >= min_high && a > b) || (want_low && n >= min_low && a < b);
  return (want_high && n >= min_high && a < b) || (want_low && n >= min_low && a > b);
}

__device__ __forceinline__ double pm_maximizing_value(int model, long long n, double u, double u2, long long N,
                                                      double U, double U2) {
  if (model == 2) {
    if (n != N && n != 0)
      return PM_MUL((double)n, log((double)n / u)) + PM_MUL((double)(N - n), log((double)(N - n) / (U - u)));
    if (n == 0) return PM_MUL((double)(N - n), log((double)(N - n) / (U - u)));
    return PM_MUL((double)n, log((double)n / u));
  }
  if (n == 0 || n == N) return PM_NONE;
  if (model == 1) return PM_MUL(u, u) / u2 + PM_MUL(U - u, U - u) / (U2 - u2);
  const double mi = u / (double)n;
  const double mo = (U - u) / (double)(N - n);
  double s = u2 - PM_MUL(PM_MUL(2.0, u), mi);
  s = s + PM_MUL((double)n, PM_MUL(mi, mi));
  s = s + (U2 - u2);
  s = s - PM_MUL(PM_MUL(2.0, U - u), mo);
  s = s + PM_MUL((double)(N - n), PM_MUL(mo, mo));
  const double var = PM_MUL(1.0 / (double)N, s);
  return var > 0.0 ? -var : PM_NONE;
}

extern "C" __global__ void scan_permutation(int model, const long long* offsets, const int* neighbors,
                                            const unsigned char* boundary, const long long* n_loc,
                                            const double* s1, const double* s2, long long N, double U, double U2,
                                            long long min_high, long long min_low, int want_high, int want_low,
                                            int R, double* best_mv, long long* best_entry) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  double u = 0.0, u2 = 0.0, mv = PM_NONE;
  long long n = 0, arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const int loc = neighbors[j];
    n += n_loc[loc];
    u += s1[(long long)loc * R + r];
    u2 += s2[(long long)loc * R + r];
    if (boundary[j] == 0) continue;  // inside a tie group: not a window end
    double v = PM_NONE;
    if (model == 2) {
      const long long c = (long long)u;
      if (pm_of_interest(model, c, u2, 0.0, N, U, U2, min_high, min_low, want_high, want_low))
        v = pm_maximizing_value(model, c, u2, 0.0, N, U, U2);
    } else if (pm_of_interest(model, n, u, u2, N, U, U2, min_high, min_low, want_high, want_low)) {
      v = pm_maximizing_value(model, n, u, u2, N, U, U2);
    }
    if (v > mv) {
      mv = v;
      arg = j;
    }
  }
  best_mv[i * R + r] = mv;
  best_entry[i * R + r] = arg;
}

// The space-time normal scan's replicates (hphawkes_py/scan/cpu_normal_space_time.py, _max_q_cylinders): one
// thread per (centre, replicate) walks every interval a = [t1s[a], t2s[a]] of every circle of its centre and
// keeps the largest between-group sum of squares Q of a cylinder of interest,
//   unweighted: Q = (u - n Ubar)^2 N / (n (N - n)),   weighted: Q = (u - v Ubar)^2 W / (v (W - v)),
// the cylinder's sums the difference of the circle's cumulative sums from the end of the study period at its first
// day and at the day after its last, added location by location (laid out locations x (T + 1) days x replicates:
// c1[(loc * T1 + t) * R + r], coalesced across the block; c2 the weights' sums, weighted only); n_cum (L, T1)
// the observations. A location without observations on the days any interval reads is skipped, and so is a
// window end whose cylinder holds the observations of the one scored last (the same for every replicate: no
// divergence). The operations are the CPU engine's in the same order, products rounded separately: the same Q
// bit for bit. The host turns Q into LLRs.
extern "C" __global__ void scan_normal_cylinders(int weighted, const long long* offsets, const int* neighbors,
                                                 const unsigned char* boundary, const long long* n_cum,
                                                 const double* c1, const double* c2, const long long* t1s,
                                                 const long long* t2s, int I, int T1, long long d0,
                                                 long long dlast, long long N, double Ubar, double W, double S0,
                                                 long long min_high, long long min_low, int want_high,
                                                 int want_low, int R, double* best) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  double top = 0.0;
  const long long end = offsets[i + 1];
  for (int a = 0; a < I; ++a) {
    const long long t1 = t1s[a], e = t2s[a] + 1;
    long long n = 0, scored = -1;
    // the circle's sums from its first and from its last day on, over the locations with observations on the
    // days any interval reads (d0 .. dlast - 1), in walk order: the CPU's per-day sums of the circle, so the
    // cylinder's sums (their differences) are the CPU's bit for bit
    double u1 = 0.0, ue = 0.0, v1 = 0.0, ve = 0.0;
    for (long long k = offsets[i]; k < end; ++k) {
      const long long loc = neighbors[k];
      if (n_cum[loc * T1 + d0] != n_cum[loc * T1 + dlast]) {
        n += n_cum[loc * T1 + t1] - n_cum[loc * T1 + e];
        u1 += c1[(loc * T1 + t1) * R + r];
        ue += c1[(loc * T1 + e) * R + r];
        if (weighted) {
          v1 += c2[(loc * T1 + t1) * R + r];
          ve += c2[(loc * T1 + e) * R + r];
        }
      }
      if (boundary[k] == 0 || n == scored || n == 0 || n == N) continue;
      scored = n;
      const bool hi = want_high && n >= min_high, lo = want_low && n >= min_low;
      if (!(hi || lo)) continue;
      const double u = u1 - ue, v = v1 - ve;
      double dev, q;
      if (weighted) {
        dev = u - PM_MUL(v, Ubar);
        q = PM_MUL(PM_MUL(dev, dev), W) / PM_MUL(v, W - v);
      } else {
        dev = u - PM_MUL((double)n, Ubar);
        q = PM_MUL(PM_MUL(dev, dev), (double)N / PM_MUL((double)n, (double)(N - n)));
      }
      if (u != 0.0 && q < S0 && ((hi && dev > 0.0) || (lo && dev < 0.0)) && q > top) top = q;
    }
  }
  best[i * R + r] = top;
}
