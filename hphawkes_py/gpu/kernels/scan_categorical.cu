// scan_categorical.cu -- the scans of cases in categories: the ordinal model (Jung, Kulldorff & Klassen
// 2007) and the multinomial model (Jung, Kulldorff & Richard 2010), as SaTScan's
// OrdinalLikelihoodCalculator computes them.
//
// One thread per (centre, replicate): block x = centre, threads (and grid y) = replicates, as in
// scan_permutation.cu. Every thread walks its centre's neighbour list (CSR offsets / neighbors /
// boundary), adds the locations' cases per category (laid out locations x categories x replicates:
// counts[(loc * K + k) * R + r] is coalesced across the block) and at every window end computes the
// window's log likelihood: the probabilities p_k inside and q_k outside, pooled under the ordinal
// model's order restriction (ordinal = 1: high clusters when want_high, low when want_low, the
// larger of the two with both), or free (ordinal = 0: multinomial). Every logarithm it needs is
// that of a whole number, read from the host's table logs[] (so no logarithm is computed here).
// The best window's log likelihood (SaTScan's maximizing value) and its entry come back; the host
// turns them into LLRs (hphawkes_py/scan/_categorical.py, _statistics). The operations are those of
// the CPU engine (_categorical.py: _table_log_likelihood, _window_value) in the same order, products
// rounded separately, so both engines give the same maximizing values bit for bit.
#include "hp_cuda.h"

#if defined(__HP_EMULATOR__)
#define PC_MUL(a, b) ((a) * (b))
#else
#define PC_MUL(a, b) __dmul_rn((a), (b))
#endif

// SaTScan's "no maximizing value": minus the largest double
#define PC_NONE (-1.7976931348623157e308)

#ifndef KMAX
#define KMAX 16
#endif

// whether a category's ratio p/q is infinite in SaTScan's comparison (q = 0)
__device__ __forceinline__ bool pc_infinite(long long dR, long long tot) { return dR == 0 || tot == 0; }

// SaTScan's order test on the pooled ranges of categories k and i: p/q = (c/W)/(d/U), so the ratios
// compare as c_k d_i against c_i d_k in whole numbers, exactly
__device__ __forceinline__ bool pc_breaks(int restrict_to, long long ck, long long dk, bool zk, long long ci,
                                          long long di, bool zi) {
  if (restrict_to == 1) return (zk && zi) || (!zk && zi) || (!zk && !zi && ck * di <= ci * dk);
  return (zk && zi) || (zk && !zi) || (!zk && !zi && ck * di >= ci * dk);
}

// the window's log likelihood, its categories pooled as SaTScan pools them under restrict_to
// (0 none, 1 high, 2 low); logs[x] = log x for the whole numbers up to the total
__device__ double pc_log_likelihood(const long long* c, const long long* tot, const double* logs, int K, long long W,
                                    long long U, int restrict_to, long long* cR, long long* dR) {
  for (int k = 0; k < K; ++k) {
    cR[k] = c[k];
    dR[k] = tot[k] - c[k];
    if (restrict_to == 0) continue;
    for (int i = k - 1;
         i >= 0 && pc_breaks(restrict_to, cR[k], dR[k], pc_infinite(dR[k], tot[k]), cR[i], dR[i],
                             pc_infinite(dR[i], tot[i]));
         --i) {
      long long cs = 0, ds = 0;
      for (int j = i; j <= k; ++j) {
        cs += c[j];
        ds += tot[j] - c[j];
      }
      for (int j = i; j <= k; ++j) {
        cR[j] = cs;
        dR[j] = ds;
      }
    }
  }
  const double lw = logs[W], lu = logs[U];
  double ll = 0.0;
  for (int j = 0; j < K; ++j) {
    const long long d = tot[j] - c[j];
    const double share = logs[tot[j]] - logs[cR[j] + dR[j]];
    if (c[j] > 0) ll += PC_MUL((double)c[j], (logs[cR[j]] - lw) + share);
    if (d > 0) ll += PC_MUL((double)d, (logs[dR[j]] - lu) + share);
  }
  return ll;
}

__device__ double pc_window_value(const long long* c, const long long* tot, const double* logs, int K, long long C,
                                  int ordinal, int want_high, int want_low, long long* cR, long long* dR) {
  long long W = 0;
  for (int k = 0; k < K; ++k) W += c[k];
  const long long U = C - W;
  if (W == 0 || U == 0) return PC_NONE;
  if (!ordinal) return pc_log_likelihood(c, tot, logs, K, W, U, 0, cR, dR);
  double v = PC_NONE;
  if (want_high) v = pc_log_likelihood(c, tot, logs, K, W, U, 1, cR, dR);
  if (want_low) {
    const double lo = pc_log_likelihood(c, tot, logs, K, W, U, 2, cR, dR);
    v = lo > v ? lo : v;
  }
  return v;
}

extern "C" __global__ void scan_categorical(const long long* offsets, const int* neighbors,
                                            const unsigned char* boundary, const int* counts, const long long* tot,
                                            const double* logs, int K, int ordinal, int want_high, int want_low,
                                            int R, double* best_mv, long long* best_entry) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  long long c[KMAX], cR[KMAX], dR[KMAX];
  long long C = 0;
  for (int k = 0; k < K; ++k) {
    c[k] = 0;
    C += tot[k];
  }
  double mv = PC_NONE;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const long long loc = neighbors[j];
    for (int k = 0; k < K; ++k) c[k] += counts[(loc * K + k) * R + r];
    if (boundary[j] == 0) continue;  // inside a tie group: not a window end
    const double v = pc_window_value(c, tot, logs, K, C, ordinal, want_high, want_low, cR, dR);
    if (v > mv) {
      mv = v;
      arg = j;
    }
  }
  best_mv[i * R + r] = mv;
  best_entry[i * R + r] = arg;
}

// The space-time scans' cylinders (hphawkes_py/scan/cpu_categorical_space_time.py, _max_cylinders): one thread per
// (centre, replicate) walks its centre's circles once per interval [t1s[a], t2s[a]], adding every location's cases
// per category on those days from the cumulative counts from the end (cum, laid out locations x (T1) days x
// categories x replicates: cum[((loc * T1 + t) * K + k) * R + r], coalesced across the block); n_cum (locations x
// T1) are all the cases, the same in every replicate. Not scored, as on the CPU: a window end whose cylinder holds
// the cases of the one scored last; a cylinder without cases on its first day (or, when the interval one day
// shorter at the end is scanned, its last day), which holds those of a shorter one; a cylinder of W cases whose
// bound[W] (no window of W cases has a larger value) is not above the replicate's best so far; a cylinder whose
// Pearson chi-square X2 is at most the replicate's best less ll0 (the LLR of either model is at most X2, and X2
// needs no logarithm); for the ordinal model, a cylinder whose multinomial log likelihood (never below the
// order-restricted one; margin for rounding) is not above it. Block row q scans centre centres[q]; the replicate's
// best starts at floor[r] (a value one of its cylinders attains: the pilot's), and the larger of it and the
// largest window value of the centre's cylinders comes back (the host turns it into an LLR).
extern "C" __global__ void scan_categorical_cylinders(const long long* offsets, const int* neighbors,
                                                      const unsigned char* boundary, const long long* n_cum,
                                                      const int* cum, const long long* t1s, const long long* t2s,
                                                      int I, int T1, long long t_end_min, const long long* tot,
                                                      const double* logs, double ll0, int K, int ordinal,
                                                      int want_high, int want_low, const double* bound, int nb,
                                                      double margin, const long long* centres, const double* floor,
                                                      int R, double* best_mv) {
  const long long q = blockIdx.x;
  const long long i = centres[q];
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  long long c[KMAX], cR[KMAX], dR[KMAX];
  long long C = 0;
  for (int k = 0; k < K; ++k) C += tot[k];
  double top = floor[r];
  const long long end = offsets[i + 1];
  for (int a = 0; a < I; ++a) {
    const long long t1 = t1s[a], t2 = t2s[a], e = t2 + 1;
    const bool trim_start = t1 < t2, trim_end = t1 < t2 && t2 - 1 >= t_end_min;
    long long n = 0, n_first = 0, n_last = 0, scored = -1;
    for (int k = 0; k < K; ++k) c[k] = 0;
    for (long long j = offsets[i]; j < end; ++j) {
      const long long loc = neighbors[j];
      const long long dn = n_cum[loc * T1 + t1] - n_cum[loc * T1 + e];
      if (dn != 0) {
        n += dn;
        n_first += n_cum[loc * T1 + t1] - n_cum[loc * T1 + t1 + 1];
        n_last += n_cum[loc * T1 + t2] - n_cum[loc * T1 + e];
        for (int k = 0; k < K; ++k)
          c[k] += (long long)cum[((loc * T1 + t1) * K + k) * R + r] - (long long)cum[((loc * T1 + e) * K + k) * R + r];
      }
      if (boundary[j] == 0 || n == scored || n == 0 || n == C) continue;
      scored = n;
      if ((trim_start && n_first == 0) || (trim_end && n_last == 0)) continue;
      if (n < nb && top >= bound[n]) continue;
      double x2 = 0.0;
      for (int k = 0; k < K; ++k) {
        if (tot[k] == 0) continue;
        const double d = (double)c[k] - (double)n * (double)tot[k] / (double)C;
        x2 += d * d * ((double)C / (double)tot[k]);
      }
      if (x2 * ((double)C / ((double)n * (double)(C - n))) <= top - ll0 - margin) continue;
      if (ordinal && pc_log_likelihood(c, tot, logs, K, n, C - n, 0, cR, dR) + margin <= top) continue;
      const double v = pc_window_value(c, tot, logs, K, C, ordinal, want_high, want_low, cR, dR);
      if (v > top) top = v;
    }
  }
  best_mv[q * R + r] = top;
}
