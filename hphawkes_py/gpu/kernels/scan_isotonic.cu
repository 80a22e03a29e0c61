// scan_isotonic.cu -- the isotonic spatial scan (SaTScan's IsotonicScan=1, SpatialMonotoneData) of the purely
// spatial discrete Poisson and Bernoulli models: the CUDA engine of hphawkes_py/scan/isotonic.py.
//
// One thread per (centre, replicate): block x = centre, threads (and grid y) = replicates. A thread walks its
// centre's neighbour list (CSR offsets / neighbors: the centre's largest circle), each location a step of its
// own (cases read from counts laid out locations x replicates, counts[loc * R + r], coalesced across the block;
// the measure, expected cases or persons, per location), and pools the last step into the one before while the
// inner one is not of interest (high: at least 2 cases and c1 m2 > m1 c2; low: c1 m2 < m1 c2). The cases outside
// the circle enter as one more step, pooled the same way; the LLR is the sum of the steps' log likelihoods less
// ll0, and the outside step is then taken away: the cluster's last neighbour comes back with its LLR (0 and -1
// when everything pooled into the outside). The steps live in the thread's local arrays of KMAX entries (at
// least the longest list plus one; the host defines it). Products are rounded separately (no fused
// multiply-add), as on the CPU, so the pooling takes the same decisions; the logarithms are the device's.
#include "hp_cuda.h"

#if defined(__HP_EMULATOR__)
#define ISO_MUL(a, b) ((a) * (b))
#else
#define ISO_MUL(a, b) __dmul_rn((a), (b))
#endif

#ifndef KMAX
#define KMAX 1024
#endif

__device__ __forceinline__ bool iso_of_interest(double c1, double m1, double c2, double m2, bool high) {
  if (m1 == 0.0) return false;
  if (high) return c1 >= 2.0 && ISO_MUL(c1, m2) > ISO_MUL(m1, c2);
  return ISO_MUL(c1, m2) < ISO_MUL(m1, c2);
}

__device__ __forceinline__ double iso_step_ll(double c, double m, int bernoulli) {
  if (bernoulli) {
    if (c != 0.0 && c != m) return ISO_MUL(c, log(c / m)) + ISO_MUL(m - c, log(1.0 - (c / m)));
    if (c == 0.0) return ISO_MUL(m - c, log(1.0 - (c / m)));
    return ISO_MUL(c, log(c / m));
  }
  return c != 0.0 ? ISO_MUL(c, log(c / m)) : 0.0;
}

__device__ __forceinline__ int iso_pool(double* sc, double* sm, long long* sl, int ns, bool high) {
  while (ns > 1) {
    const double c1 = sc[ns - 2], m1 = sm[ns - 2], c2 = sc[ns - 1], m2 = sm[ns - 1];
    if (iso_of_interest(c1, m1, c2, m2, high)) break;
    sc[ns - 2] = c1 + c2;
    sm[ns - 2] = m1 + m2;
    sl[ns - 2] = sl[ns - 1];
    --ns;
  }
  return ns;
}

extern "C" __global__ void scan_isotonic(const long long* offsets, const int* neighbors, const int* counts,
                                         const double* measure, int R, double C, double M, double ll0,
                                         int bernoulli, int want_high, int want_low, double* best,
                                         long long* entry) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;
  double sc[KMAX], sm[KMAX];
  long long sl[KMAX];
  const long long start = offsets[i];
  const long long k = offsets[i + 1] - start;
  double top = 0.0;
  long long at = -1;
  for (int d = 0; d < 2; ++d) {
    const bool high = d == 0;
    if ((high && !want_high) || (!high && !want_low)) continue;
    int ns = 0;
    double gc = 0.0, gm = 0.0;  // whole numbers of cases: exact in double
    for (long long t = 0; t < k; ++t) {
      const long long loc = neighbors[start + t];
      const double c = (double)counts[loc * R + r];
      gc += c;
      gm += measure[loc];
      sc[ns] = c;
      sm[ns] = measure[loc];
      sl[ns] = t;
      ns = iso_pool(sc, sm, sl, ns + 1, high);
    }
    const bool rest = gc != C;
    if (rest) {  // the cases outside the circle: one more step
      sc[ns] = C - gc;
      sm[ns] = M - gm;
      sl[ns] = k;
      ns = iso_pool(sc, sm, sl, ns + 1, high);
    }
    double ll = 0.0;
    for (int s = 0; s < ns; ++s) ll += iso_step_ll(sc[s], sm[s], bernoulli);
    if (rest) --ns;
    if (ns > 0 && ll - ll0 > top) {
      top = ll - ll0;
      at = start + sl[ns - 1];
    }
  }
  best[i * R + r] = top;
  entry[i * R + r] = at;
}
