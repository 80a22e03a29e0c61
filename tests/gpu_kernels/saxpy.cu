// Test kernel: grid-stride loop y[i] = a * x[i] + y[i].
#include "hp_cuda.h"

extern "C" __global__ void axpy(REAL a, const REAL* __restrict__ x, REAL* __restrict__ y, long long n) {
  HP_GRID_STRIDE_LOOP(i, n) { y[i] = a * x[i] + y[i]; }
}

// A fused transformation using the math functions kernels rely on.
extern "C" __global__ void mathfun(const REAL* __restrict__ x, REAL* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    REAL v = x[i];
    REAL av = fabs(v) + (REAL)0.5;
    out[8 * i + 0] = exp(-v * v) + log(av) + log1p(av);
    out[8 * i + 1] = erfc(v) + normcdf(v);
    out[8 * i + 2] = rsqrt(av) + sqrt(av) + fma(v, v, (REAL)1);
    out[8 * i + 3] = fmax(v, (REAL)0) + fmin(v, (REAL)0) + floor(v) + ceil(v);
    out[8 * i + 4] = lgamma(av) + pow(av, (REAL)1.5) + exp2(v);
    out[8 * i + 5] = (REAL)__double2int_rn((double)(4 * v)) + (REAL)__float2int_rn((float)(4 * v));
    out[8 * i + 6] = (REAL)min(i, 7) + (REAL)max(i, 7) + min(v, (REAL)0.25) + max(v, (REAL)0.25);
    out[8 * i + 7] = (REAL)(expf((float)v) + logf((float)av) + erfcf((float)v) + normcdff((float)v) +
                            rsqrtf((float)av) + __expf((float)v) + __logf((float)av));
  }
}
