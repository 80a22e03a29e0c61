// Test kernels: warp shuffles and votes (emulated with a warp-level barrier).
#include "hp_cuda.h"

// Block sum with __shfl_down_sync within warps, then across warps through shared memory.
extern "C" __global__ void warp_reduce_sum(const REAL* __restrict__ x, long long n, REAL* __restrict__ partial) {
  __shared__ REAL warp_sums[32];
  REAL v = 0;
  HP_GRID_STRIDE_LOOP(i, n) { v += x[i]; }
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  unsigned lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
  if (lane == 0) warp_sums[wid] = v;
  __syncthreads();
  unsigned nw = (blockDim.x + warpSize - 1) / warpSize;
  if (wid == 0) {
    v = lane < nw ? warp_sums[lane] : (REAL)0;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// out[5*t + ...]: broadcast from lane 3, shfl_up by 1, xor 1, ballot of odd values, any/all.
extern "C" __global__ void warp_ops(const int* __restrict__ x, int* out) {
  int t = threadIdx.x;
  int v = x[t];
  out[6 * t + 0] = __shfl_sync(0xffffffffu, v, 3);
  out[6 * t + 1] = __shfl_up_sync(0xffffffffu, v, 1);
  out[6 * t + 2] = __shfl_xor_sync(0xffffffffu, v, 1);
  out[6 * t + 3] = (int)__ballot_sync(0xffffffffu, v & 1);
  out[6 * t + 4] = __any_sync(0xffffffffu, v > 100);
  out[6 * t + 5] = __all_sync(0xffffffffu, v >= 0);
}
