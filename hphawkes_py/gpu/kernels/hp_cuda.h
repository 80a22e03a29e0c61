// hp_cuda.h -- common prelude of every hphawkes_py CUDA kernel.
//
// Compiles both with nvcc (real GPUs, PyCUDA) and with the CPU emulator (g++ with
// cuda_emulator.h force-included).  Rules for kernels (see hphawkes_py/gpu/emulator.py):
//   * entry points:  extern "C" __global__ void name(...)   (no templates, no overloads);
//     parameters are pointers or int / unsigned / long long / unsigned long long / float /
//     double (REAL) scalars only.
//   * the real type is REAL (-DREAL=float or -DREAL=double; double by default).
//   * dynamic shared memory: HP_DYNAMIC_SHARED(type, name); at function scope, inside the
//     kernel (never `extern __shared__` directly).  Like CUDA's extern shared arrays, every
//     HP_DYNAMIC_SHARED of a kernel starts at the same address (carve sub-arrays by pointer
//     arithmetic), and nvcc rejects the same name with two different types in one file.
//   * every __syncthreads() must be reached by all live threads of the block.
//   * warp intrinsics (__shfl_*_sync, __ballot_sync, ...) only with all live lanes of the
//     warp converged (full-warp use).
#ifndef HP_CUDA_H
#define HP_CUDA_H

#ifndef REAL
#define REAL double
#endif

#if defined(__HP_EMULATOR__)
// A pointer into the per-block dynamic shared-memory buffer (64-byte aligned).
#define HP_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(hp_emu_dynamic_shared())
#else
#define HP_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
#endif

// Grid-stride loop over [0, n): `HP_GRID_STRIDE_LOOP(i, n) { y[i] = ... }` (i is long long).
#define HP_GRID_STRIDE_LOOP(i, n)                                                     \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)(n); \
       i += (long long)blockDim.x * gridDim.x)

// Block-stride loop over [0, n) for "one block per row" kernels (i is long long).
#define HP_BLOCK_STRIDE_LOOP(i, n) \
  for (long long i = threadIdx.x; i < (long long)(n); i += blockDim.x)

// Block-wide sum of v over the threads of a 1-D block (any blockDim.x <= 1024; a power of
// two is fastest).  sdata must hold blockDim.x REALs of shared memory.  Must be called by
// every thread of the block (it contains __syncthreads()).  The result is returned to ALL
// threads, and sdata may be reused immediately after the call.
__device__ __forceinline__ REAL hp_block_reduce_sum(REAL v, REAL* sdata) {
  const unsigned int tid = threadIdx.x;
  const unsigned int n = blockDim.x;
  unsigned int p = 1;
  while (2 * p <= n) p *= 2;  // largest power of two <= n
  sdata[tid] = v;
  __syncthreads();
  if (tid < n - p) sdata[tid] += sdata[tid + p];
  if (p != n) __syncthreads();
  for (unsigned int s = p / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  const REAL r = sdata[0];
  __syncthreads();
  return r;
}

// Block-wide maximum; same contract as hp_block_reduce_sum.
__device__ __forceinline__ REAL hp_block_reduce_max(REAL v, REAL* sdata) {
  const unsigned int tid = threadIdx.x;
  const unsigned int n = blockDim.x;
  unsigned int p = 1;
  while (2 * p <= n) p *= 2;
  sdata[tid] = v;
  __syncthreads();
  if (tid < n - p) sdata[tid] = fmax(sdata[tid], sdata[tid + p]);
  if (p != n) __syncthreads();
  for (unsigned int s = p / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = fmax(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  const REAL r = sdata[0];
  __syncthreads();
  return r;
}

// Atomic maximum for REAL (float or double) through compare-and-swap; returns the old value.
__device__ __forceinline__ double hp_atomic_max_double(double* addr, double v) {
  unsigned long long* a = reinterpret_cast<unsigned long long*>(addr);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    if (__longlong_as_double((long long)assumed) >= v) break;
    old = atomicCAS(a, assumed, (unsigned long long)__double_as_longlong(v));
  } while (assumed != old);
  return __longlong_as_double((long long)old);
}
__device__ __forceinline__ float hp_atomic_max_float(float* addr, float v) {
  unsigned int* a = reinterpret_cast<unsigned int*>(addr);
  unsigned int old = *a, assumed;
  do {
    assumed = old;
    if (__uint_as_float(assumed) >= v) break;
    old = atomicCAS(a, assumed, __float_as_uint(v));
  } while (assumed != old);
  return __uint_as_float(old);
}
__device__ __forceinline__ double hp_atomic_max_real(double* addr, double v) { return hp_atomic_max_double(addr, v); }
__device__ __forceinline__ float hp_atomic_max_real(float* addr, float v) { return hp_atomic_max_float(addr, v); }

#endif  // HP_CUDA_H
