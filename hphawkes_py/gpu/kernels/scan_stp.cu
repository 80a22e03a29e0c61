// scan_stp.cu -- space-time permutation scan statistic (Kulldorff et al. 2005).
//
// One thread per (centre, replicate): block x = centre, threads (and grid y) = replicates,
// as the Bernoulli scan (scan.cu).  For each temporal window w the thread grows the circle of
// the centre (CSR neighbour lists, nearest first, cut at the distance and case limits) and
// accumulates the cylinder's observed count from the per-location day-prefix sums of its own
// replicate, laid out [location][day + 1][replicate] so that the reads are coalesced across
// the block.  The expected count mu = C_Z C_D / C uses the permutation-invariant marginals.
// Kulldorff's Poisson GLR (high rates) is evaluated where a tie group of equidistant locations
// is complete:  LLR = c log(c/mu) + (C - c) log((C - c)/(C - mu)),  c > mu,  c >= min_cases.
// The order of the comparisons is that of the CPU engine (hphawkes_py/scan/stp_cpu.py): the
// first (entry, window) reaching the maximum wins, so both report the same cylinder.
#include "hp_cuda.h"

__device__ __forceinline__ double stp_llr(double c, double mu, double total) {
  if (c <= mu) return 0.0;
  double out = c * log(c / mu);
  const double rest = total - c;
  if (rest > 0.0) out += rest * log(rest / (total - mu));
  return out;
}

extern "C" __global__ void stp_scan(const long long* nbr_ptr, const long long* nbr_idx,
                                    const signed char* evaluate, const long long* cz,
                                    const double* cd_window, const double* log_cd_window,
                                    const double* klogk, const long long* win_start,
                                    const long long* win_end, int W, const int* cum, int T1, int R,
                                    double total, int min_cases, int want_best, double* best,
                                    long long* best_size, long long* best_window, double* rep_max) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;  // no __syncthreads below
  const long long j0 = nbr_ptr[i];
  const long long j1 = nbr_ptr[i + 1];
  const double log_total = log(total);
  double m = 0.0;
  long long arg_j = -1, arg_w = -1;
  for (int w = 0; w < W; ++w) {
    const long long s = win_start[w];
    const long long e1 = win_end[w] + 1;
    const double cdw = cd_window[w];
    const double log_cdw = log_cd_window[w] - log_total;
    long long c = 0, cases_z = 0;
    for (long long j = j0; j < j1; ++j) {
      const long long z = nbr_idx[j];
      cases_z += cz[z];
      const long long base = z * (long long)T1;
      c += (long long)cum[(base + e1) * R + r] - (long long)cum[(base + s) * R + r];
      if (evaluate[j] == 0 || c < min_cases || cases_z == 0) continue;
      // c > mu makes the second GLR term <= 0: LLR <= c log c - c log mu, no logarithm needed
      // (as the CPU engine; the margin keeps rounding from hiding a larger exact LLR)
      const double bound = klogk[c] - (double)c * (log((double)cases_z) + log_cdw);
      if (bound * (1.0 + 1e-12) + 1e-12 <= m) continue;
      const double llr = stp_llr((double)c, (double)cases_z * cdw / total, total);
      // the CPU engine visits entries outer, windows inner: (j, w) lexicographic order decides ties
      if (llr > m || (llr == m && llr > 0.0 && (j < arg_j || (j == arg_j && w < arg_w)))) {
        m = llr;
        arg_j = j;
        arg_w = w;
      }
    }
  }
  if (want_best) {
    best[i * R + r] = m;
    best_size[i * R + r] = arg_j < 0 ? 0 : arg_j - j0 + 1;
    best_window[i * R + r] = arg_w;
  }
  hp_atomic_max_double(&rep_max[r], m);
}
