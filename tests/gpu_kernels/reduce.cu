// Test kernels: block tree reductions (correct, and deliberately racy).
#include "hp_cuda.h"

// partial[b] = sum of x[i] over the indices block b visits in a grid-stride loop.
extern "C" __global__ void block_sum(const REAL* __restrict__ x, long long n, REAL* __restrict__ partial) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  REAL acc = 0;
  HP_GRID_STRIDE_LOOP(i, n) { acc += x[i]; }
  REAL s = hp_block_reduce_sum(acc, sdata);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Same, static shared memory of 256 entries; also writes the broadcast result of every thread.
extern "C" __global__ void block_sum_static(const REAL* __restrict__ x, int n, REAL* __restrict__ partial,
                                           REAL* __restrict__ broadcast) {
  __shared__ REAL sdata[256];
  REAL acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += x[i];
  REAL s = hp_block_reduce_sum(acc, sdata);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
  broadcast[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// BROKEN on purpose: the tree reduction lacks the __syncthreads() inside the loop.
extern "C" __global__ void block_sum_racy(const REAL* __restrict__ x, int n, REAL* __restrict__ partial) {
  __shared__ REAL sdata[1024];
  REAL acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += x[i];
  sdata[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
    // missing: __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sdata[0];
}

// Block maximum.
extern "C" __global__ void block_max(const REAL* __restrict__ x, int n, REAL* __restrict__ partial) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  REAL m = -HUGE_VAL;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) m = fmax(m, x[i]);
  REAL r = hp_block_reduce_max(m, sdata);
  if (threadIdx.x == 0) partial[blockIdx.x] = r;
}
