// Test kernels: atomics under contention.
#include "hp_cuda.h"

// Every thread adds into counters[tid % ncounters] for each type; records the max/min global id.
extern "C" __global__ void atomic_counters(int* ci, unsigned int* cu, unsigned long long* cull, float* cf,
                                           double* cd, int* imax, int* imin, unsigned long long* umax,
                                           int ncounters) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  int k = gid % ncounters;
  atomicAdd(&ci[k], 1);
  atomicAdd(&cu[k], 2u);
  atomicAdd(&cull[k], 3ull);
  atomicAdd(&cf[k], 0.5f);
  atomicAdd(&cd[k], 0.25);
  atomicMax(imax, gid);
  atomicMin(imin, gid);
  atomicMax(umax, (unsigned long long)gid * 3ull);
}

// Lock-free increment through atomicCAS, and a ticket counter through atomicExch.
extern "C" __global__ void atomic_cas_counter(int* counter, unsigned long long* ucounter, int* exch_slot) {
  int old = *counter, assumed;
  do {
    assumed = old;
    old = atomicCAS(counter, assumed, assumed + 1);
  } while (old != assumed);
  unsigned long long uo = *ucounter, ua;
  do {
    ua = uo;
    uo = atomicCAS(ucounter, ua, ua + 2ull);
  } while (uo != ua);
  atomicExch(exch_slot, 7);
}

// REAL atomic maximum through CAS (hp_atomic_max_real).
extern "C" __global__ void atomic_max_real(const REAL* __restrict__ x, int n, REAL* out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    hp_atomic_max_real(out, x[i]);
}
