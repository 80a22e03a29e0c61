// sccs.cu -- cyclic coordinate descent kernels for the Bayesian self-controlled case series
// (Suchard, Simpson, Zorych, Ryan & Madigan 2013).  The CCD state stays on the device:
//   eta[i]   = x_i'b                      (rows, grouped by stratum)
//   texp[i]  = time_i * exp(eta_i)
//   denom[s] = sum_{i in s} texp[i]        (stratum denominators)
//   wn[s]    = w_s * n_s                   (weighted event counts; w = bootstrap/CV weights)
// Per coordinate j only the two sums (G, H) come back and the step delta goes down.
//
// The non-zeros of column j are sorted by row, so they form "runs", one per stratum the
// column touches; the host precomputes run_start (first non-zero of each run, plus a
// sentinel) and run_stratum.  One thread handles one run (a few non-zeros), which keeps the
// non-linear per-stratum ratio N/D inside a thread: no segmented scan, no W materialised.
#include "hp_cuda.h"

// Fused gradient/Hessian reduction over the runs [run_begin, run_end) of one column:
//   G = sum_s wn_s N1_s / D_s,   H = sum_s wn_s (N2_s / D_s - (N1_s / D_s)^2)
// with N1_s = sum texp_i x_ij, N2_s = sum texp_i x_ij^2 over the column's rows in s.
// out[2*slot] += G, out[2*slot+1] += H (one atomic per block).  The other slot is zeroed here
// for the next call (launches are ordered on the stream), so no host->device copy is needed
// per coordinate: the host alternates slot = 0, 1, 0, ... and reads back two numbers.
// Dynamic shared memory: blockDim.x REALs.
extern "C" __global__ void sccs_grad_hess(int slot, long long run_begin, long long run_end,
                                          const long long* __restrict__ run_start,
                                          const int* __restrict__ run_stratum,
                                          const int* __restrict__ row_idx,
                                          const REAL* __restrict__ values, int binary,
                                          const REAL* __restrict__ texp,
                                          const REAL* __restrict__ denom,
                                          const REAL* __restrict__ wn, REAL* out) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  REAL g = 0, h = 0;
  for (long long r = run_begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; r < run_end;
       r += (long long)blockDim.x * gridDim.x) {
    const int s = run_stratum[r];
    const REAL w = wn[s];
    if (w == (REAL)0) continue;
    REAL n1 = 0, n2 = 0;
    const long long k1 = run_start[r + 1];
    if (binary) {
      for (long long k = run_start[r]; k < k1; ++k) n1 += texp[row_idx[k]];
      n2 = n1;
    } else {
      for (long long k = run_start[r]; k < k1; ++k) {
        const REAL v = texp[row_idx[k]] * values[k];
        n1 += v;
        n2 += v * values[k];
      }
    }
    const REAL d = denom[s];
    const REAL ratio = n1 / d;
    g += w * ratio;
    h += w * (n2 / d - ratio * ratio);
  }
  const REAL bg = hp_block_reduce_sum(g, sdata);
  const REAL bh = hp_block_reduce_sum(h, sdata);
  if (threadIdx.x == 0) {
    atomicAdd(&out[2 * slot], bg);
    atomicAdd(&out[2 * slot + 1], bh);
    if (blockIdx.x == 0) {
      out[2 * (1 - slot)] = 0;
      out[2 * (1 - slot) + 1] = 0;
    }
  }
}

// Sparse update after a step delta on one column (non-zeros [nz_begin, nz_end)): eta and
// texp of the touched rows (rows are distinct within a column: plain stores), and the
// stratum denominators by atomics (several rows of one stratum may be touched).
extern "C" __global__ void sccs_update(long long nz_begin, long long nz_end, REAL delta,
                                       const int* __restrict__ row_idx,
                                       const REAL* __restrict__ values, int binary,
                                       const int* __restrict__ row_stratum,
                                       const REAL* __restrict__ logtime, REAL* eta, REAL* texp,
                                       REAL* denom) {
  for (long long k = nz_begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nz_end;
       k += (long long)blockDim.x * gridDim.x) {
    const int r = row_idx[k];
    const REAL e = eta[r] + (binary ? delta : delta * values[k]);
    eta[r] = e;
    const REAL nv = exp(e + logtime[r]);  // recomputed from eta: no drift in texp
    const REAL old = texp[r];
    texp[r] = nv;
    atomicAdd(&denom[row_stratum[r]], nv - old);
  }
}

// Resynchronise texp and denom from eta and compute the per-stratum log-likelihood
//   ll_s = sum_i y_i (eta_i + log t_i) - n_s log D_s   (0 when n_s = 0),
// and out[0] += sum_s w_s ll_s (one atomic per block).  One thread per stratum (strata are
// short: a handful of rows).  Dynamic shared memory: blockDim.x REALs.
extern "C" __global__ void sccs_resync(int n_strata, const long long* __restrict__ stratum_ptr,
                                       const REAL* __restrict__ y,
                                       const REAL* __restrict__ logtime,
                                       const REAL* __restrict__ eta, REAL* texp, REAL* denom,
                                       const REAL* __restrict__ n_events,
                                       const REAL* __restrict__ weights, REAL* ll_s, REAL* out) {
  HP_DYNAMIC_SHARED(REAL, sdata);
  REAL acc = 0;
  for (long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x; s < n_strata;
       s += (long long)blockDim.x * gridDim.x) {
    REAL d = 0, num = 0;
    for (long long i = stratum_ptr[s]; i < stratum_ptr[s + 1]; ++i) {
      const REAL lin = eta[i] + logtime[i];
      const REAL v = exp(lin);
      texp[i] = v;
      d += v;
      num += y[i] * lin;
    }
    denom[s] = d;
    const REAL ll = n_events[s] != (REAL)0 ? num - n_events[s] * log(d) : (REAL)0;
    ll_s[s] = ll;
    acc += weights[s] * ll;
  }
  const REAL b = hp_block_reduce_sum(acc, sdata);
  if (threadIdx.x == 0) atomicAdd(&out[0], b);
}
