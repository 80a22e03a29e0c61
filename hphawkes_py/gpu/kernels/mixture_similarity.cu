// mixture_similarity.cu -- posterior similarity counts of a mixture's label draws (the CPU twin is
// hphawkes_py/mixture/partitions.py's posterior_similarity; the engine is mixture/similarity.py).
// For the rows r0 .. r0 + R - 1 of the m x m matrix, out[a, j] = #{s : Z[s, r0 + a] == Z[s, j]},
// the number of the S draws in which events r0 + a and j share a cluster: integer counts, exact
// on any device and launch configuration. One thread per (row, column) entry; neighbouring threads
// read neighbouring columns of a draw (coalesced), the row's label is the same for a whole warp.
#include "hp_cuda.h"

extern "C" __global__ void psm_counts(const int* Z, int S, int m, int r0, int R, int* out) {
  HP_GRID_STRIDE_LOOP(t, (long long)R * m) {
    const long long i = r0 + t / m, j = t % m;
    int c = 0;
    for (int s = 0; s < S; ++s) {
      const int* z = Z + (long long)s * m;
      c += (z[i] == z[j]) ? 1 : 0;
    }
    out[t] = c;
  }
}
