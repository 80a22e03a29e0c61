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

// +infinity without <math.h>: NVRTC (the CuPy device) compiles without the host's C headers, so
// HUGE_VAL / INFINITY are not defined there; kernels use HP_INF.
#if defined(__HP_EMULATOR__)
#define HP_INF __builtin_huge_val()
#else
#define HP_INF __longlong_as_double(0x7ff0000000000000LL)
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

// Block-wide reduction of v over the threads of a 1-D block (any blockDim.x <= 1024; a power
// of two is fastest), written once for every element type and combining operation.  sdata must
// hold blockDim.x elements of type T in shared memory.  Must be called by every thread of the
// block (it contains __syncthreads()).  The result is returned to ALL threads, and sdata may be
// reused immediately after the call.
struct hp_op_sum {
  template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct hp_op_max {
  __device__ __forceinline__ double operator()(double a, double b) const { return fmax(a, b); }
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename T, typename Op>
__device__ __forceinline__ T hp_block_reduce(T v, T* sdata, Op op) {
  const unsigned int tid = threadIdx.x;
  const unsigned int n = blockDim.x;
  unsigned int p = 1;
  while (2 * p <= n) p *= 2;  // largest power of two <= n
  sdata[tid] = v;
  __syncthreads();
  if (tid < n - p) sdata[tid] = op(sdata[tid], sdata[tid + p]);
  if (p != n) __syncthreads();
  for (unsigned int s = p / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  const T r = sdata[0];
  __syncthreads();
  return r;
}

// Block-wide sum / maximum in float or double (overloads, so a kernel built with REAL=float
// can still reduce in double, e.g. accumulating over events).  Same contract as hp_block_reduce.
__device__ __forceinline__ double hp_block_reduce_sum(double v, double* sdata) {
  return hp_block_reduce(v, sdata, hp_op_sum());
}
__device__ __forceinline__ float hp_block_reduce_sum(float v, float* sdata) {
  return hp_block_reduce(v, sdata, hp_op_sum());
}
__device__ __forceinline__ double hp_block_reduce_max(double v, double* sdata) {
  return hp_block_reduce(v, sdata, hp_op_max());
}
__device__ __forceinline__ float hp_block_reduce_max(float v, float* sdata) {
  return hp_block_reduce(v, sdata, hp_op_max());
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
