// Test kernels: 3-D grid/block indices, dynamic shared memory, barrier counting.
#include "hp_cuda.h"

// out[(linear block) * nthreads + (linear thread)] = packed indices
extern "C" __global__ void write_indices(int* out) {
  unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  int* o = out + 9 * ((long long)b * nthreads + t);
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
  o[3] = blockIdx.x; o[4] = blockIdx.y; o[5] = blockIdx.z;
  o[6] = blockDim.x * 10000 + blockDim.y * 100 + blockDim.z;
  o[7] = gridDim.x * 10000 + gridDim.y * 100 + gridDim.z;
  o[8] = warpSize;
}

// Reverse each block-sized chunk through dynamic shared memory (two arrays carved from it).
extern "C" __global__ void reverse_chunks(const REAL* __restrict__ x, REAL* __restrict__ y, int n) {
  HP_DYNAMIC_SHARED(REAL, buf);
  int* ibuf = (int*)(buf + blockDim.x);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : (REAL)0;
  ibuf[threadIdx.x] = i;
  __syncthreads();
  int j = blockDim.x - 1 - threadIdx.x;
  if (i < n && ibuf[j] < n) y[i] = buf[j];
  else if (i < n) y[i] = (REAL)-1;
}

// Reads dynamic shared memory that nobody wrote (poisoned by the emulator).
extern "C" __global__ void read_unwritten_shared(REAL* out) {
  HP_DYNAMIC_SHARED(REAL, buf);
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[threadIdx.x];
}

// __syncthreads_count / _and / _or.
extern "C" __global__ void sync_votes(const int* __restrict__ pred, int* out) {
  int p = pred[blockIdx.x * blockDim.x + threadIdx.x];
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = c;
    out[3 * blockIdx.x + 1] = a;
    out[3 * blockIdx.x + 2] = o;
  }
}

// BROKEN on purpose: __syncthreads() inside a branch only some threads take (a divergent
// barrier; undefined on a GPU, reported as a deadlock by the emulator).
extern "C" __global__ void divergent_barrier(int* out) {
  if (threadIdx.x < 16) {
    __syncthreads();
    out[threadIdx.x] = 1;
  } else {
    out[threadIdx.x] = 2;
    __syncthreads();
    __syncthreads();
  }
}

// Early return of some threads before a barrier (exited threads count as arrived).
extern "C" __global__ void early_exit_then_sync(int* out, int n) {
  __shared__ int s[128];
  int t = threadIdx.x;
  if (t >= n) return;
  s[t] = t;
  __syncthreads();
  out[t] = s[n - 1 - t];
}
