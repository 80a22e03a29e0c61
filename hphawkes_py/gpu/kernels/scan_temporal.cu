// scan_temporal.cu -- the purely temporal and seasonal scans (hphawkes_py/scan/temporal.py): the
// largest window log likelihood ratio of every Monte Carlo replicate; and (below) the spatial
// variation in temporal trends scan (hphawkes_py/scan/svtt.py).
//
// One thread per replicate. The host gives the windows in the CPU engine's order (t1 ascending,
// then length ascending; hphawkes_py/scan/cpu_temporal.py) with their constants computed once by
// the CPU engine's own code (window_constants), and the replicates' cumulative counts on the
// extended series (cum[t * R + r] = cases of units 0 .. t-1; coalesced across the threads):
//   Poisson (model 0):   e = mu, a = log mu, b = log(C - mu);
//                        LLR = (klogk[c] + klogk[C-c]) - (c a + (C-c) b), of interest when c > mu
//                        (high, and c >= min_cases) or c < mu (low);
//   Bernoulli (model 1): e = C n, a = -(klogk[n] + klogk[N-n]) - l0, n persons in the window;
//                        LLR = ((klogk[c] + klogk[n-c]) + (klogk[C-c] + klogk[N-n-C+c])) + a,
//                        of interest when c N > C n (high, c >= min_cases) or c N < C n (low).
// The additions are the CPU engine's in its order, products rounded separately (no fused
// multiply-add): the maxima are the CPU engine's bit for bit; windows marked e <= 0 are skipped.
#include "hp_cuda.h"

#if defined(__HP_EMULATOR__)
#define TS_MUL(a, b) ((a) * (b))
#else
#define TS_MUL(a, b) __dmul_rn((a), (b))
#endif

extern "C" __global__ void scan_temporal(int model, const int* cum, const long long* wt1, const long long* wt2,
                                         const long long* wn, const double* we, const double* wa, const double* wb,
                                         long long n_windows, const double* klogk, long long C, long long N,
                                         long long min_cases, int want_high, int want_low, int R, double* best,
                                         long long* arg) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  double m = 0.0;
  long long a = -1;
  for (long long w = 0; w < n_windows; ++w) {
    const double e = we[w];
    if (!(e > 0.0)) continue;  // no window here (mu outside (0, C), or no persons / all of them)
    const long long c = (long long)(cum[(wt2[w] + 1) * R + r] - cum[wt1[w] * R + r]);
    double v = 0.0;
    if (model == 0) {
      const double cf = (double)c;
      const bool ok = (want_high && cf > e && c >= min_cases) || (want_low && cf < e);
      if (ok) v = (klogk[c] + klogk[C - c]) - (TS_MUL(cf, wa[w]) + TS_MUL((double)(C - c), wb[w]));
    } else {
      const long long n = wn[w];
      const double lhs = TS_MUL((double)c, (double)N);
      const bool ok = (want_high && lhs > e && c >= min_cases) || (want_low && lhs < e);
      if (ok) v = ((klogk[c] + klogk[n - c]) + (klogk[C - c] + klogk[N - n - C + c])) + wa[w];
    }
    if (v > m) {
      m = v;
      a = w;
    }
  }
  best[r] = m;
  arg[r] = a;
}

// ---------------------------------------------------------------------------------------------
// Spatial variation in temporal trends (hphawkes_py/scan/svtt.py): one thread per (centre,
// replicate), block x = centre, threads (and grid y) = replicates. The thread grows its centre's
// circle along the neighbour list, keeps the circle's cases and expected cases per time unit in its
// own rows of the scratch arrays cin / min (T each), and at every window end fits the log-linear
// trends inside and outside by SaTScan's Newton-Raphson and takes the LLR against the global trend
// (the CPU engine's svtt_llr in hphawkes_py/scan/cpu_temporal.py, same operations and order).
// best[centre * R + r]: the centre's best LLR for replicate r (0 when none).

#define TR_CONVERGED 0
#define TR_UNDEFINED 1
#define TR_NEG_INF 2
#define TR_POS_INF 3
#define TR_NOT_CONVERGED 4

__device__ void tr_sums(const double* m, int T, double beta, double* s0, double* s1, double* s2) {
  double a = 0.0, b = 0.0, c = 0.0;
  for (int t = 0; t < T; ++t) {
    const double w = TS_MUL(m[t], exp(TS_MUL(beta, (double)t)));
    a += w;
    b += TS_MUL((double)t, w);
    c += TS_MUL((double)(t * t), w);
  }
  *s0 = a;
  *s1 = b;
  *s2 = c;
}

__device__ int tr_fit(const double* c, const double* m, int T, double* alpha, double* beta_out) {
  double C = 0.0, stc = 0.0;
  for (int t = 0; t < T; ++t) {
    C += c[t];
    stc += TS_MUL((double)t, c[t]);
  }
  *alpha = 0.0;
  *beta_out = 0.0;
  if (C < 2) return TR_UNDEFINED;
  if (c[0] == C) return TR_NEG_INF;
  if (c[T - 1] == C) return TR_POS_INF;
  double scm = 0.0, stcm = 0.0, st = 0.0, st2 = 0.0;
  for (int t = 0; t < T; ++t) {
    scm += c[t] - m[t];
    stcm += TS_MUL((double)t, c[t] - m[t]);
    st += t;
    st2 += t * t;
  }
  double beta = ((TS_MUL((double)T, stcm) - TS_MUL(scm, st)) / (TS_MUL((double)T, st2) - TS_MUL(st, st))) / (C / T);
  double s0, s1, s2;
  bool good = false;
  for (int k = 0; k < 1000; ++k) {
    tr_sums(m, T, beta, &s0, &s1, &s2);
    if (TS_MUL(stc, s1) - TS_MUL(C, s2) < -1) {
      good = true;
      break;
    }
    beta += 0.1;
  }
  if (!good) return TR_NOT_CONVERGED;
  const double limit = log(1.7976931348623157e308);
  for (long long k = 0; k < 1000000; ++k) {
    tr_sums(m, T, beta, &s0, &s1, &s2);
    const double f = TS_MUL(stc, s0) - TS_MUL(C, s1);
    const double s = TS_MUL(stc, s1) - TS_MUL(C, s2);
    const double nb = s != 0 ? beta - f / s : beta + 0.1;
    if (fabs(nb - beta) < 1e-5) {
      tr_sums(m, T, nb, &s0, &s1, &s2);
      *alpha = log(C / s0);
      *beta_out = nb;
      return TR_CONVERGED;
    }
    beta = TS_MUL(nb, (double)T) < limit ? nb : beta + 0.1;
  }
  return TR_NOT_CONVERGED;
}

__device__ double tr_loglik(const double* c, const double* m, int T, double alpha, double beta) {
  double a = 0.0, b = 0.0;
  for (int t = 0; t < T; ++t) {
    if (m[t] != 0) {
      a += TS_MUL(c[t], log(m[t]) + alpha + TS_MUL(beta, (double)t));
      b += TS_MUL(m[t], exp(alpha + TS_MUL(beta, (double)t)));
    }
  }
  return a - b;
}

__device__ double tr_spatial(double n, double u, double N, double U) {
  if (n != N && n != 0) return TS_MUL(n, log(n / u)) + TS_MUL(N - n, log((N - n) / (U - u)));
  if (n == 0) return TS_MUL(N - n, log((N - n) / (U - u)));
  return TS_MUL(n, log(n / u));
}

__device__ double tr_side(const double* c, const double* m, int T, int st, double alpha, double beta, double beta_g,
                          double n, double u, double N, double U) {
  if (st == TR_NEG_INF || st == TR_POS_INF) return tr_spatial(n, u, N, U);
  double s0, s1, s2;
  tr_sums(m, T, beta_g, &s0, &s1, &s2);
  const double alpha_g = n != 0 ? log(n / s0) : 0.0;
  return tr_loglik(c, m, T, alpha, beta) - tr_loglik(c, m, T, alpha_g, beta_g);
}

extern "C" __global__ void scan_svtt(const long long* offsets, const int* neighbors, const unsigned char* boundary,
                                     const int* cases, const double* measure, const double* call,
                                     const double* mall, int L, int T, double beta_g, int want_high, int want_low,
                                     int R, double* scratch, double* best) {
  const int i = blockIdx.x;
  const int r = blockIdx.y * blockDim.x + threadIdx.x;
  if (r >= R) return;
  double* cin = scratch + ((long long)i * R + r) * 4 * T;
  double* min_ = cin + T;
  double* cout_ = cin + 2 * T;
  double* mout = cin + 3 * T;
  for (int t = 0; t < T; ++t) {
    cin[t] = 0.0;
    min_[t] = 0.0;
  }
  double N = 0.0, U = 0.0;
  for (int t = 0; t < T; ++t) {
    N += call[t * R + r];
    U += mall[t];
  }
  double b = 0.0;
  for (long long j = offsets[i]; j < offsets[i + 1]; ++j) {
    const int z = neighbors[j];
    for (int t = 0; t < T; ++t) {
      cin[t] += (double)cases[((long long)z * T + t) * R + r];
      min_[t] += measure[(long long)z * T + t];
    }
    if (boundary[j] == 0) continue;
    double n = 0.0, u = 0.0;
    for (int t = 0; t < T; ++t) {
      n += cin[t];
      u += min_[t];
    }
    if (n <= 1 || N - n <= 1) continue;
    double ai, bi;
    const int sti = tr_fit(cin, min_, T, &ai, &bi);
    if (sti == TR_UNDEFINED || sti == TR_NOT_CONVERGED) continue;
    bool up, down;
    if (sti == TR_POS_INF) {
      up = true;
      down = false;
    } else if (sti == TR_NEG_INF) {
      up = false;
      down = true;
    } else {
      up = bi - beta_g > 1e-10;
      down = beta_g - bi > 1e-10;
    }
    if (!((want_high && up) || (want_low && down))) continue;
    for (int t = 0; t < T; ++t) {
      cout_[t] = call[t * R + r] - cin[t];
      mout[t] = mall[t] - min_[t];
    }
    double ao, bo;
    const int sto = tr_fit(cout_, mout, T, &ao, &bo);
    if (sto == TR_UNDEFINED || sto == TR_NOT_CONVERGED) continue;
    const double v = tr_side(cin, min_, T, sti, ai, bi, beta_g, n, u, N, U) +
                     tr_side(cout_, mout, T, sto, ao, bo, beta_g, N - n, U - u, N, U);
    if (v > b) b = v;
  }
  best[(long long)i * R + r] = b;
}
