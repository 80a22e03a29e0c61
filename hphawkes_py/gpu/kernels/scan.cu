// scan.cu -- Kulldorff's Bernoulli spatial scan statistic (Larew et al. 2010 on the GPGPU).
//
// One thread per (centre, replicate): block x = centre, threads (and grid y) = replicates.
// The neighbour list of a centre (locations sorted by distance, cut at the maximum window
// population; flattened CSR: offsets / neighbors / boundary) is read by every thread
// of the block at the same index (broadcast); the Bernoulli window's persons are summed from
// the per-location lpop as the circle grows (one int64 per location on the device instead of
// one per CSR entry: the entries are ~10^7 at 5,000 locations), and the case counts are laid out
// locations x replicates so that cases[loc * R + r] is coalesced across the block.
// Each thread accumulates the window's cases as the circle grows and evaluates the
// Bernoulli log likelihood ratio at every window end from a table of k log k (counts are
// integers):
//   LLR = klogk[c] + klogk[n-c] + klogk[C-c] + klogk[N-n-C+c] - klogk[n] - klogk[N-n] - L0
// (L0: the null log likelihood), zero unless the case proportion inside is higher
// (want_high) or lower (want_low) than outside.  The maximum over centres of each replicate
// is combined with an atomic maximum on the (non-negative) double; with want_best the
// per-centre best LLR and the entry where that window ends are written too (observed data).
//
// The discrete Poisson model (poisson != 0) uses the same walk: mexp[j] is the window's
// expected count E (the total is C), loge[j] = log E, logce[j] = log(C - E), and
//   LLR = klogk[c] + klogk[C-c] - c log E - (C-c) log(C-E),
// high when c > E; high-rate windows need at least min_cases cases (both models).
//
// Arithmetic is double whatever REAL is: the LLR is a difference of terms of size N log N
// (1.4e7 for a million persons), which float cannot resolve.  The order of the additions
// is exactly that of the CPU engine (hphawkes_py/scan/cpu.py), so both give identical LLRs.
#include "hp_cuda.h"

#if defined(__HP_EMULATOR__)
#define SCAN_MUL(a, b) ((a) * (b))
#else
#define SCAN_MUL(a, b) __dmul_rn((a), (b))
#endif

extern "C" __global__ void scan_windows(const long long* offsets, const int* neighbors,
                                       const long long* lpop, const double* mexp, const double* loge,
                                       const double* logce,
                                       const unsigned char* boundary, const int* cases, const double* klogk,
                                       long long n_cases, long long n_total, double l0, int want_high,
                                       int want_low, long long min_cases, int poisson, int R, int want_best,
                                       double* best, long long* best_entry, double* rep_max) {
  const long long i = blockIdx.x;  // centre
  const int r = blockIdx.y * blockDim.x + threadIdx.x;  // replicate
  if (r >= R) return;  // no __syncthreads below: early exit is safe
  const long long C = n_cases;
  const long long N = n_total;
  const double Nf = (double)N;
  const double Cf = (double)C;
  int c = 0;
  long long n = 0;  // Bernoulli: persons in the window, exact integer sums of lpop
  double m = 0.0;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const int loc = neighbors[j];
    c += cases[(long long)loc * R + r];
    if (!poisson) n += lpop[loc];
    if (boundary[j] == 0) continue;  // inside a tie group: not a window end
    double llr, lhs, rhs;
    if (poisson) {
      // log E and log(C - E) come from the host (identical to the CPU engine's); the products
      // are rounded separately (no fused multiply-add) to match the CPU engine bit for bit
      llr = (klogk[c] + klogk[C - c]) - (SCAN_MUL((double)c, loge[j]) + SCAN_MUL((double)(C - c), logce[j]));
      lhs = (double)c;
      rhs = mexp[j];
    } else {
      const double q = -(klogk[n] + klogk[N - n]) - l0;
      const double t = (klogk[c] + klogk[n - c]) + (klogk[C - c] + klogk[N - n - C + c]);
      llr = t + q;
      lhs = (double)c * Nf;
      rhs = Cf * (double)n;
    }
    const bool ok = (want_high && lhs > rhs && c >= min_cases) || (want_low && lhs < rhs);
    if (ok && llr > m) {
      m = llr;
      arg = j;
    }
  }
  if (want_best) {
    best[i * R + r] = m;
    best_entry[i * R + r] = arg;
  }
  hp_atomic_max_double(&rep_max[r], m);
}

// Space-time permutation (Kulldorff et al. 2005): cylinders = circle x interval of days.
// One thread per (centre, replicate) as above; the running counts per day of the growing circle,
// S[t], live in a global scratch buffer laid out (centre of the launch, day, replicate) so that
// the threads of a block touch consecutive words. cases[(loc * T + t) * R + r]; wsize[j] = C_Z,
// the circle's cases over the whole period; dcum = prefix sums of the cases per day. A cylinder
// [t1, t2] has mu = C_Z (dcum[t2+1] - dcum[t1]) / C expected cases and the Poisson LLR; the same
// operations in the same order as the CPU engine (hphawkes_py/scan/cpu_space_time.py, _scan_cylinders).
extern "C" __global__ void scan_space_time(const long long* offsets, const int* neighbors,
                                          const double* wsize, const unsigned char* boundary,
                                          const int* cases, const double* dcum, const double* klogk,
                                          const long long* strata_c, int stratified,
                                          long long n_cases, int T, int max_t, int t_end_min,
                                          long long min_cases, int want_high, int want_low, int R,
                                          long long centre0, int* scratch, int want_best, double* best,
                                          long long* best_arg, double* rep_max) {
  const long long il = blockIdx.x;  // centre within this launch
  const long long i = centre0 + il;
  const int r = blockIdx.y * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const long long C = n_cases;
  const double Cf = (double)C;
  int* S = scratch + il * (long long)T * R;
  for (int t = 0; t < T; ++t) S[(long long)t * R + r] = 0;
  double m = 0.0;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const long long base = (long long)neighbors[j] * T * R;
    for (int t = 0; t < T; ++t) S[(long long)t * R + r] += cases[base + (long long)t * R + r];
    if (boundary[j] == 0) continue;
    const double cz = wsize[j];
    for (int t2 = t_end_min; t2 < T; ++t2) {
      int acc = 0;
      const int lo = t2 - max_t > -1 ? t2 - max_t : -1;
      for (int t1 = t2; t1 > lo; --t1) {
        acc += S[(long long)t1 * R + r];
        // time-stratified: scored against the cases of the cylinder's own days (strata_c: their prefix
        // sums; dcum then holds the same sums, so mu = E_Z C_I / C)
        const long long Ct = stratified ? strata_c[t2 + 1] - strata_c[t1] : C;
        const double Ctf = (double)Ct;
        const double mu = cz * (dcum[t2 + 1] - dcum[t1]) / Cf;
        if (!(mu > 0.0 && mu < Ctf)) continue;
        const double la = log(mu);
        const double lb = log(Ctf - mu);
        const double llr = (klogk[acc] + klogk[Ct - acc]) -
                           (SCAN_MUL((double)acc, la) + SCAN_MUL((double)(Ct - acc), lb));
        const double cfl = (double)acc;
        const bool ok = (want_high && cfl > mu && acc >= min_cases) || (want_low && cfl < mu);
        if (ok && llr > m) {
          m = llr;
          arg = (j * T + t1) * T + t2;
        }
      }
    }
  }
  if (want_best) {
    best[i * R + r] = m;
    best_arg[i * R + r] = arg;
  }
  hp_atomic_max_double(&rep_max[r], m);
}

// Space-time Bernoulli: the cylinders of scan_space_time, cases and controls per location and day.
// persons[loc * T + t] = cases + controls there (int: N < 2^31). Persons do not depend on the
// replicate, so the growing circle's persons per day are kept ONCE per block (its own slice of
// pscratch, T ints, added to cooperatively by the block's threads between two barriers and then
// read by all of them: broadcast loads), not once per thread; the cases per day live in scratch as
// in scan_space_time. A cylinder with c cases among n persons (C of N in all) gets the Bernoulli
// LLR of scan_windows (same additions), high when c N > C n. The high-rate skip of the CPU engine
// (a bound over the replicates of a batch) is not used here: each thread evaluates its own
// cylinders, so the maxima are the same. Threads past the last replicate stay to the end (they
// take part in the barriers and the person sums) but evaluate nothing.
extern "C" __global__ void scan_space_time_bernoulli(const long long* offsets, const int* neighbors,
                                                    const unsigned char* boundary, const int* cases,
                                                    const int* persons, const double* klogk,
                                                    const long long* strata_c, const long long* strata_p,
                                                    int stratified, long long n_cases,
                                                    long long n_total, double l0, int T, int max_t, int t_end_min,
                                                    long long min_cases, int want_high, int want_low, int R,
                                                    long long centre0, int* scratch, int* pscratch, int want_best,
                                                    double* best, long long* best_arg, double* rep_max) {
  const long long il = blockIdx.x;
  const long long i = centre0 + il;
  const int r = blockIdx.y * blockDim.x + threadIdx.x;
  const bool active = r < R;
  const long long C = n_cases;
  const long long N = n_total;
  int* S = scratch + il * (long long)T * R;
  int* P = pscratch + (il * (long long)gridDim.y + blockIdx.y) * (long long)T;
  for (int t = threadIdx.x; t < T; t += blockDim.x) P[t] = 0;
  if (active) {
    for (int t = 0; t < T; ++t) S[(long long)t * R + r] = 0;
  }
  double m = 0.0;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const long long loc = neighbors[j];
    const long long base = loc * T * R;
    __syncthreads();  // every thread is done reading P for the previous circle
    for (int t = threadIdx.x; t < T; t += blockDim.x) P[t] += persons[loc * T + t];
    if (active) {
      for (int t = 0; t < T; ++t) S[(long long)t * R + r] += cases[base + (long long)t * R + r];
    }
    __syncthreads();  // P holds this circle's persons per day
    if (!active || boundary[j] == 0) continue;
    for (int t2 = t_end_min; t2 < T; ++t2) {
      int acc = 0;
      long long n = 0;
      const int lo = t2 - max_t > -1 ? t2 - max_t : -1;
      for (int t1 = t2; t1 > lo; --t1) {
        acc += S[(long long)t1 * R + r];
        n += P[t1];
        // time-stratified: the cases, persons and null log likelihood of the cylinder's own days
        long long Ct = C, Nt = N;
        double l0t = l0;
        if (stratified) {
          Ct = strata_c[t2 + 1] - strata_c[t1];
          Nt = strata_p[t2 + 1] - strata_p[t1];
          l0t = klogk[Ct] + klogk[Nt - Ct] - klogk[Nt];
        }
        if (n == 0 || n == Nt) continue;
        const double q = -(klogk[n] + klogk[Nt - n]) - l0t;
        const double t = (klogk[acc] + klogk[n - acc]) + (klogk[Ct - acc] + klogk[Nt - n - Ct + acc]);
        const double llr = t + q;
        const double lhs = (double)acc * (double)Nt;
        const double rhs = (double)Ct * (double)n;
        const bool ok = (want_high && lhs > rhs && acc >= min_cases) || (want_low && lhs < rhs);
        if (ok && llr > m) {
          m = llr;
          arg = (j * T + t1) * T + t2;
        }
      }
    }
  }
  if (!active) return;
  if (want_best) {
    best[i * R + r] = m;
    best_arg[i * R + r] = arg;
  }
  hp_atomic_max_double(&rep_max[r], m);
}

// Space-time discrete Poisson with expectations per location and day (populations that change over
// time, covariates): emu[loc * T + t] are location loc's expected cases on day t (their total is C), and
// a cylinder's mu is their sum over its circle and days, so it cannot be E_Z times a day's share as in
// scan_space_time. As persons in scan_space_time_bernoulli, the growing circle's expectations per day
// do not depend on the replicate: they are kept once per block (its own T doubles of pscratch, added to
// by the block's threads between two barriers), summed in entry order and, for a cylinder, from t2 back
// to t1, the additions of the CPU engine (cpu_space_time._scan_cylinders with emu). The LLR and the rate
// tests are those of scan_space_time.
extern "C" __global__ void scan_space_time_dated(const long long* offsets, const int* neighbors,
                                                const unsigned char* boundary, const int* cases, const double* emu,
                                                const double* klogk, long long n_cases, int T, int max_t,
                                                int t_end_min, long long min_cases, int want_high, int want_low,
                                                int R, long long centre0, int* scratch, double* pscratch,
                                                int want_best, double* best, long long* best_arg,
                                                double* rep_max) {
  const long long il = blockIdx.x;
  const long long i = centre0 + il;
  const int r = blockIdx.y * blockDim.x + threadIdx.x;
  const bool active = r < R;
  const long long C = n_cases;
  const double Cf = (double)C;
  int* S = scratch + il * (long long)T * R;
  double* P = pscratch + (il * (long long)gridDim.y + blockIdx.y) * (long long)T;
  for (int t = threadIdx.x; t < T; t += blockDim.x) P[t] = 0.0;
  if (active) {
    for (int t = 0; t < T; ++t) S[(long long)t * R + r] = 0;
  }
  double m = 0.0;
  long long arg = -1;
  const long long end = offsets[i + 1];
  for (long long j = offsets[i]; j < end; ++j) {
    const long long loc = neighbors[j];
    const long long base = loc * T * R;
    __syncthreads();  // every thread is done reading P for the previous circle
    for (int t = threadIdx.x; t < T; t += blockDim.x) P[t] += emu[loc * T + t];
    if (active) {
      for (int t = 0; t < T; ++t) S[(long long)t * R + r] += cases[base + (long long)t * R + r];
    }
    __syncthreads();  // P holds this circle's expectations per day
    if (!active || boundary[j] == 0) continue;
    for (int t2 = t_end_min; t2 < T; ++t2) {
      int acc = 0;
      double mu = 0.0;
      const int lo = t2 - max_t > -1 ? t2 - max_t : -1;
      for (int t1 = t2; t1 > lo; --t1) {
        acc += S[(long long)t1 * R + r];
        mu += P[t1];
        if (!(mu > 0.0 && mu < Cf)) continue;
        const double la = log(mu);
        const double lb = log(Cf - mu);
        const double llr = (klogk[acc] + klogk[C - acc]) -
                           (SCAN_MUL((double)acc, la) + SCAN_MUL((double)(C - acc), lb));
        const double cfl = (double)acc;
        const bool ok = (want_high && cfl > mu && acc >= min_cases) || (want_low && cfl < mu);
        if (ok && llr > m) {
          m = llr;
          arg = (j * T + t1) * T + t2;
        }
      }
    }
  }
  if (!active) return;
  if (want_best) {
    best[i * R + r] = m;
    best_arg[i * R + r] = arg;
  }
  hp_atomic_max_double(&rep_max[r], m);
}
