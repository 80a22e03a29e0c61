// mixture.cu -- hot steps of the truncated Dirichlet-process Gaussian mixture
// (Suchard, Wang, Chan, Frelinger, Cron & West 2010): weighted log component densities for
// every (point, component) pair, label draws from host-supplied uniforms, responsibilities,
// and per-component sufficient statistics.
//
// Layouts (structure of arrays, coalesced over points):
//   Xt    : p x n, column-major data (Xt[a * n + i] = x_ia), standardised units.
//   comp  : k x stride packed component parameters, for component j at comp + j * stride:
//             [0, p)            mu_j
//             [p, p + p(p+1)/2) U_j packed lower triangle row by row (U_j' U_j = Sigma_j^{-1})
//             p + p(p+1)/2      c_j = log pi_j - p/2 log(2 pi) - 1/2 log|Sigma_j|
//           stride is padded to an even number of REALs.
//   dens  : k x m, log densities of the m points of the current chunk (dens[j * m + i]).
// Points of a chunk are rows row0 .. row0 + m - 1 of the data.
#include "hp_cuda.h"

// Size of the per-thread point/difference arrays: the host compiles one module per value,
// rounded up from p (so any number of columns is supported; large p spills to local memory).
#ifndef MIX_MAX_P
#define MIX_MAX_P 32
#endif
#define MIX_TILE 16

// One thread per point, one block per (point block, tile of `ktile` components).  When the
// tile's parameters fit in shared memory (`staged` = 1, the host decides from the 48 KiB limit)
// they are staged there once per block; otherwise (large p) every thread reads them from global
// memory, where they are shared through the cache.  Every thread evaluates
// c_j - 1/2 || U_j (x_i - mu_j) ||^2 for its point against each component of the tile.
extern "C" __global__ void mix_logdens(const REAL* __restrict__ Xt, long long n, int p, long long row0, int m,
                                       int k, const REAL* __restrict__ comp, int stride, int ktile, int staged,
                                       REAL* __restrict__ dens) {
  HP_DYNAMIC_SHARED(REAL, sh);
  const int j0 = blockIdx.y * ktile;
  const int nk = min(ktile, k - j0);
  const REAL* base = comp + (long long)j0 * stride;
  if (staged) {
    for (int t = threadIdx.x; t < nk * stride; t += blockDim.x) sh[t] = base[t];
    __syncthreads();
    base = sh;
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;  // after the only barrier
  REAL x[MIX_MAX_P];
  REAL d[MIX_MAX_P];
  for (int a = 0; a < p; ++a) x[a] = Xt[(long long)a * n + row0 + i];
  const int ntri = p * (p + 1) / 2;
  for (int jj = 0; jj < nk; ++jj) {
    const REAL* c = base + (long long)jj * stride;
    for (int a = 0; a < p; ++a) d[a] = x[a] - c[a];
    const REAL* U = c + p;
    REAL q = 0;
    int off = 0;
    for (int r = 0; r < p; ++r) {
      REAL t = 0;
      for (int a = 0; a <= r; ++a) t += U[off + a] * d[a];
      off += r + 1;
      q += t * t;
    }
    dens[(long long)(j0 + jj) * m + i] = c[p + ntri] - (REAL)0.5 * q;
  }
}

// The two passes of a log-sum-exp over `count` values x[t * stride] (one point's components, or
// one component's stored draws), in double whatever REAL is: the maximum mx, then
// sum_t exp(x_t - mx); the log-sum-exp is mx + log(sum).
__device__ __forceinline__ double mix_strided_max(const REAL* __restrict__ x, long long stride, int count) {
  double mx = -HP_INF;
  for (int t = 0; t < count; ++t) mx = fmax(mx, (double)x[(long long)t * stride]);
  return mx;
}

__device__ __forceinline__ double mix_strided_sum_exp(const REAL* __restrict__ x, long long stride, int count,
                                                      double mx) {
  double s = 0.0;
  for (int t = 0; t < count; ++t) s += exp((double)x[(long long)t * stride] - mx);
  return s;
}

// One thread per point: log-sum-exp over the k components, then the categorical draw
// z_i = first j with sum_{l<=j} exp(d_il - max) > u_i * total (the same rule as the CPU
// engine and the NumPy reference, so equal uniforms give equal labels).
extern "C" __global__ void mix_sample(const REAL* __restrict__ dens, int m, int k, const double* __restrict__ u,
                                      long long row0, int* __restrict__ z, double* __restrict__ ll) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const double mx = mix_strided_max(dens + i, m, k);
  const double s = mix_strided_sum_exp(dens + i, m, k, mx);
  ll[row0 + i] = mx + log(s);
  const double target = u[row0 + i] * s;
  double acc = 0.0;
  int zi = -1, last = 0;
  for (int j = 0; j < k; ++j) {
    const double e = exp((double)dens[(long long)j * m + i] - mx);
    if (e > 0.0) last = j;
    acc += e;
    if (acc > target) {
      zi = j;
      break;
    }
  }
  z[row0 + i] = zi < 0 ? last : zi;
}

// One thread per point: responsibilities in place (dens <- exp(dens - logsumexp)) and the
// point's log-likelihood (BEM E-step), or only the log-likelihood when write_resp == 0.
extern "C" __global__ void mix_normalise(REAL* __restrict__ dens, int m, int k, long long row0,
                                         double* __restrict__ ll, int write_resp) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const double mx = mix_strided_max(dens + i, m, k);
  const double lse = mx + log(mix_strided_sum_exp(dens + i, m, k, mx));
  ll[row0 + i] = lse;
  if (write_resp) {
    for (int j = 0; j < k; ++j) {
      const long long o = (long long)j * m + i;
      dens[o] = (REAL)exp((double)dens[o] - lse);
    }
  }
}

// Sufficient statistics T[j, f] += sum_i w_ij phi_f(x_i) over the m points of the chunk, with
// phi = [1, x_1..x_p, x_a x_b (a <= b)] (feature f multiplies the columns fa[f], fb[f]; -1 = 1)
// and w_ij = resp[j * m + i] (mode 1, BEM) or [z_{row0+i} == j] (mode 0, Gibbs).
// A tiled product: a 16 x 16 block owns a (component, feature) tile and walks over tiles of 16
// points staged in shared memory; gridDim.z splits the points and partial tiles are added
// with one double atomicAdd per output per block.  Accumulation is in double whatever REAL is.
extern "C" __global__ void mix_stats(const REAL* __restrict__ Xt, long long n, int p, long long row0, int m,
                                     int k, const REAL* __restrict__ resp, const int* __restrict__ z, int mode,
                                     const int* __restrict__ fa, const int* __restrict__ fb, int F,
                                     double* __restrict__ T) {
  __shared__ double Rt[MIX_TILE][MIX_TILE + 1];  // [component][point]
  __shared__ double Ft[MIX_TILE][MIX_TILE + 1];  // [point][feature]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int f0 = blockIdx.x * MIX_TILE, j0 = blockIdx.y * MIX_TILE;
  const int per = (m + gridDim.z - 1) / gridDim.z;
  const int lo = blockIdx.z * per;
  const int hi = min(m, lo + per);
  double acc = 0.0;
  for (int i0 = lo; i0 < hi; i0 += MIX_TILE) {
    // component ty, point i0 + tx
    {
      const int j = j0 + ty, i = i0 + tx;
      double w = 0.0;
      if (j < k && i < hi) {
        if (mode == 1)
          w = (double)resp[(long long)j * m + i];
        else
          w = (z[row0 + i] == j) ? 1.0 : 0.0;
      }
      Rt[ty][tx] = w;
    }
    // point i0 + ty, feature f0 + tx
    {
      const int i = i0 + ty, f = f0 + tx;
      double v = 0.0;
      if (f < F && i < hi) {
        const int a = fa[f], b = fb[f];
        v = 1.0;
        if (a >= 0) v *= (double)Xt[(long long)a * n + row0 + i];
        if (b >= 0) v *= (double)Xt[(long long)b * n + row0 + i];
      }
      Ft[ty][tx] = v;
    }
    __syncthreads();
    for (int t = 0; t < MIX_TILE; ++t) acc += Rt[ty][t] * Ft[t][tx];
    __syncthreads();
  }
  const int j = j0 + ty, f = f0 + tx;
  if (j < k && f < F && lo < hi) atomicAdd(&T[(long long)j * F + f], acc);
}

// Gibbs statistics from hard labels in O(n F) work (mix_stats in mode 0 does O(n k F): a dense
// product with the one-hot label matrix).  A block owns `ft` features of every component in
// shared memory (k x ft doubles, zeroed first), its threads walk a share (gridDim.y) of the
// chunk's points and add phi_f(x_i) to row z_i with shared-memory atomics, and the block's
// partial sums are added to T once, with one global atomicAdd per non-zero entry.
extern "C" __global__ void mix_stats_labels(const REAL* __restrict__ Xt, long long n, int p, long long row0, int m,
                                            int k, const int* __restrict__ z, const int* __restrict__ fa,
                                            const int* __restrict__ fb, int F, int ft, double* __restrict__ T) {
  HP_DYNAMIC_SHARED(double, acc);  // acc[j * ft + q]: component j, feature f0 + q
  const int f0 = blockIdx.x * ft;
  const int nf = min(ft, F - f0);
  for (int t = threadIdx.x; t < k * ft; t += blockDim.x) acc[t] = 0.0;
  __syncthreads();
  const int per = (m + gridDim.y - 1) / gridDim.y;
  const int lo = blockIdx.y * per;
  const int hi = min(m, lo + per);
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const int j = z[row0 + i];
    for (int q = 0; q < nf; ++q) {
      const int a = fa[f0 + q], b = fb[f0 + q];
      double v = 1.0;
      if (a >= 0) v *= (double)Xt[(long long)a * n + row0 + i];
      if (b >= 0) v *= (double)Xt[(long long)b * n + row0 + i];
      atomicAdd(&acc[j * ft + q], v);
    }
  }
  __syncthreads();
  for (int t = threadIdx.x; t < k * nf; t += blockDim.x) {
    const int j = t / nf, q = t - (t / nf) * nf;
    const double v = acc[j * ft + q];
    if (v != 0.0) atomicAdd(&T[(long long)j * F + f0 + q], v);
  }
}

// Partial sums of x[0..n) (the per-point log-likelihoods): block b writes partial[b]; the host
// adds the gridDim.x partials (a fixed grid, so the result does not vary between runs).
extern "C" __global__ void mix_sum(const double* __restrict__ x, long long n, double* __restrict__ partial) {
  HP_DYNAMIC_SHARED(double, sdata);
  double acc = 0.0;
  HP_GRID_STRIDE_LOOP(i, n) acc += x[i];
  const double t = hp_block_reduce_sum(acc, sdata);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// Component probabilities of the posterior predictive: the prediction mixture has S x k terms
// (term s * k + j is component j of stored draw s; dens holds their log densities, K x m).
// out[j * m + i] = log sum_s exp(dens[(s k + j) m + i]), max-shifted (-inf when every term of
// component j is -inf, e.g. zero weight).  One thread per (component, point), points fastest:
// coalesced reads of dens and writes of out.
extern "C" __global__ void mix_group_logsumexp(const REAL* __restrict__ dens, int m, int S, int k,
                                               double* __restrict__ out) {
  HP_GRID_STRIDE_LOOP(t, (long long)m * k) {
    const long long j = t / m, i = t - j * m;
    const REAL* x = dens + j * m + i;  // term s of component j at x[s * k * m]
    const double mx = mix_strided_max(x, (long long)k * m, S);
    out[t] = mx > -HP_INF ? mx + log(mix_strided_sum_exp(x, (long long)k * m, S, mx)) : -HP_INF;
  }
}
