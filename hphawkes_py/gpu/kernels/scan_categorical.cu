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
// larger of the two with both), or free (ordinal = 0: multinomial). The best window's log
// likelihood (SaTScan's maximizing value) and its entry come back; the host turns them into LLRs
// (hphawkes_py/scan/_categorical.py, _statistics). The operations are those of the CPU engine
// (_categorical.py: _probabilities, _log_likelihood, _maximizing_value) in the same order, products
// rounded separately; the logarithms are the device's (within an ulp of the host's).
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

__device__ __forceinline__ bool pc_breaks_order(int restrict_to, double pk, double qk, double pi, double qi) {
  if (restrict_to == 1)
    return (qk == 0.0 && qi == 0.0) || (qk != 0.0 && qi == 0.0) || (qk != 0.0 && qi != 0.0 && pk / qk <= pi / qi);
  return (qk == 0.0 && qi == 0.0) || (qk == 0.0 && qi != 0.0) || (qk != 0.0 && qi != 0.0 && pk / qk >= pi / qi);
}

// p and q of the window with counts c (K), pooled under restrict_to (0 none, 1 high, 2 low);
// false when the window has no case inside or none outside
__device__ bool pc_probabilities(const double* c, const double* tot, int K, int restrict_to, double* P, double* Q) {
  double W = 0.0;
  for (int k = 0; k < K; ++k) W += c[k];
  if (W == 0.0) return false;
  double U = 0.0;
  for (int k = 0; k < K; ++k) U += tot[k] - c[k];
  if (U == 0.0) return false;
  for (int k = 0; k < K; ++k) {
    P[k] = c[k] / W;
    Q[k] = (tot[k] - c[k]) / U;
    if (restrict_to == 0) continue;
    for (int i = k - 1; i >= 0 && pc_breaks_order(restrict_to, P[k], Q[k], P[i], Q[i]); --i) {
      double span = 0.0, dP = 0.0, dQ = 0.0;
      for (int j = i; j <= k; ++j) span += tot[j];
      for (int j = i; j <= k; ++j) dP += c[j];
      dP /= W;
      for (int j = i; j <= k; ++j) dQ += tot[j] - c[j];
      dQ /= U;
      if (span != 0.0) {
        for (int j = i; j <= k; ++j) {
          P[j] = PC_MUL(dP, tot[j] / span);
          Q[j] = PC_MUL(dQ, tot[j] / span);
        }
      } else {
        for (int j = i; j <= k; ++j) P[j] = Q[j] = 0.0;
      }
    }
  }
  return true;
}

__device__ double pc_log_likelihood(const double* c, const double* tot, int K, const double* P, const double* Q) {
  double ll = 0.0;
  for (int k = 0; k < K; ++k) {
    if (P[k] != 0.0) ll += PC_MUL(c[k], log(P[k]));
    if (Q[k] != 0.0) ll += PC_MUL(tot[k] - c[k], log(Q[k]));
  }
  return ll;
}

__device__ double pc_maximizing_value(const double* c, const double* tot, int K, int ordinal, int want_high,
                                      int want_low, double* P, double* Q) {
  if (!ordinal) return pc_probabilities(c, tot, K, 0, P, Q) ? pc_log_likelihood(c, tot, K, P, Q) : PC_NONE;
  bool have = false;
  double v = 0.0;
  if (want_high && pc_probabilities(c, tot, K, 1, P, Q)) {
    v = pc_log_likelihood(c, tot, K, P, Q);
    have = true;
  }
  if (want_low && pc_probabilities(c, tot, K, 2, P, Q)) {
    const double lo = pc_log_likelihood(c, tot, K, P, Q);
    v = have ? (lo > v ? lo : v) : lo;
    have = true;
  }
  return have ? v : PC_NONE;
}

extern "C" __global__ void scan_categorical(const long long* offsets, const int* neighbors,
                                            const unsigned char* boundary, const int* counts, const double* tot,
                                            int K, int ordinal, int want_high, int want_low, int R,
                                            double* best_mv, long long* best_entry) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  double c[KMAX], P[KMAX], Q[KMAX];
  for (int k = 0; k < K; ++k) c[k] = 0.0;
  double mv = PC_NONE;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const long long loc = neighbors[j];
    for (int k = 0; k < K; ++k) c[k] += (double)counts[(loc * K + k) * R + r];
    if (boundary[j] == 0) continue;  // inside a tie group: not a window end
    const double v = pc_maximizing_value(c, tot, K, ordinal, want_high, want_low, P, Q);
    if (v > mv) {
      mv = v;
      arg = j;
    }
  }
  best_mv[i * R + r] = mv;
  best_entry[i * R + r] = arg;
}
