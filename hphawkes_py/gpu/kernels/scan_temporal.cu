// scan_temporal.cu -- the purely temporal and seasonal scans (hphawkes_py/scan/temporal.py): the
// largest window log likelihood ratio of every Monte Carlo replicate.
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
