"""Benchmark of the Hawkes likelihood engine (CPU), written to benchmarks/results/hawkes_loglik.json.

Sections
--------
1. Exact log-likelihood (every pair, as the paper's Table 1) on N = 75,000 uniform random 2-D
   events, at 1 and 2 threads: wall time, ordered pairs (n, m) per second and per core. The
   engine evaluates the background kernel once per unordered pair (symmetry) and the trigger
   kernel once per earlier pair, so it performs N^2 exp evaluations for the N^2 ordered pairs
   the paper's loop visits; both counts are reported.
2. The paper's loop (row-parallel over n, every m, background + trigger for each ordered pair)
   compiled twice in this run: with ``exp_fast`` and with plain ``math.exp`` (scalar libm call,
   no vectorisation). Timed on the first ``--rows`` rows against all N (rates are per pair).
3. Windowed (default) log-likelihood on the DC no-holiday gunshot data (54,582 events,
   tau_x = 1.6 km, tau_t = 336 h, h = 0.07 km, omega = 2 / h, theta = 0.1, mu0 = 0.5): full
   evaluation, and one h/omega MCMC move (set_trigger into slot 1 + sum_log_intensity).
4. Peak memory of a windowed log-likelihood at N = 200,000 (separate process, ru_maxrss).
5. Assembly check: packed AVX instructions in the inner loops (fresh compile in a subprocess),
   for every temporal kernel's trigger loop.
7. Roofline of the exact likelihood (needs section 1): the measured vector FMA peak of one core
   (independent FMA chains on L1-resident data: double-precision lane-FMAs per second, beside
   the nominal 2 FMA pipes x 4 lanes x clock), the throughput of ``exp_fast`` alone on an
   L1-resident array (exp per second per core: the ceiling of any loop that evaluates one exp
   per pair), the FMA-slot cost of one exp (peak / exp rate) and the exact N = 75,000
   likelihood's exp per second per core as a fraction of both: how far the O(N^2) pass is from
   the arithmetic roofline of this CPU.
6. Temporal kernels: one exact trigger pass (an h move: set_trigger into slot 1) on N = 8,000
   uniform events with the exponential, power-law (p = 2.5) and sum-of-two-exponentials ("exp2")
   kernels, float64 and float32, 1 and 2 threads: trigger pairs per second and the ratio to the
   exponential kernel.

Timings are the minimum over ``--repeat`` runs; the machine (2 cores) is shared, so numbers are
noisy upwards. Run: ``.venv/bin/python benchmarks/bench_hawkes_loglik.py [--quick]``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

from hphawkes_py._fastmath import exp_fast
from hphawkes_py.hawkes.engine import make_engine

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "hawkes_loglik.json"


# ---------------------------------------------------------------- the paper's loop, two exps
@njit(parallel=True, fastmath=True)
def _paper_loop_fast(x0, x1, t, rows, ax, at, bh, om):
    N = t.shape[0]
    tot = 0.0
    for n in prange(rows):
        s = 0.0
        g = 0.0
        for m in range(N):
            d0 = x0[m] - x0[n]
            d1 = x1[m] - x1[n]
            r2 = d0 * d0 + d1 * d1
            dt = t[n] - t[m]
            s += exp_fast(-(ax * r2 + at * dt * dt))
            g += exp_fast(-(bh * r2 + om * dt)) if dt > 0.0 else 0.0
        tot += math.log(s + g)
    return tot


@njit(parallel=True, fastmath=True)
def _paper_loop_mathexp(x0, x1, t, rows, ax, at, bh, om):
    N = t.shape[0]
    tot = 0.0
    for n in prange(rows):
        s = 0.0
        g = 0.0
        for m in range(N):
            d0 = x0[m] - x0[n]
            d1 = x1[m] - x1[n]
            r2 = d0 * d0 + d1 * d1
            dt = t[n] - t[m]
            s += math.exp(-(ax * r2 + at * dt * dt))
            g += math.exp(-(bh * r2 + om * dt)) if dt > 0.0 else 0.0
        tot += math.log(s + g)
    return tot


_LAST_CPU = [math.inf]


def _best(fn, repeat):
    """Minimum wall time over ``repeat`` runs; the minimum process CPU time is left in _LAST_CPU[0]
    (CPU seconds summed over threads: pairs per CPU-second is a per-core rate that a loaded,
    shared machine distorts much less than wall time)."""
    best = math.inf
    best_cpu = math.inf
    out = None
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    _LAST_CPU[0] = best_cpu
    return best, out


def bench_exact(N, repeat, threads_list):
    rng = np.random.default_rng(2021)
    x = rng.uniform(0.0, 1.0, (N, 2))
    t = np.sort(rng.uniform(0.0, 1.0, N))
    p = dict(mu0=1.0, tau_x=0.1, tau_t=0.1, theta=1.0, omega=1.0, h=0.1)
    rows = []
    for th in threads_list:
        eng = make_engine(x, t, exact=True, threads=th)

        def full():
            eng._bg_params = None  # force a full recomputation (S and G, fused loop)
            eng._slot_params = [None, None]
            return eng.log_likelihood(**p)

        full()  # warm-up / compile
        n0 = eng.pair_evaluations
        wall, ll = _best(full, repeat)
        cpu_s = _LAST_CPU[0]
        exps = (eng.pair_evaluations - n0) // repeat
        k = [0]

        def trig():
            k[0] += 1
            eng.set_trigger(0.1 + 1e-9 * k[0], 1.0, slot=1)  # new h: the MCMC h/omega move
            return eng.sum_log_intensity(1.0, 1.0, slot=1)

        wall_tr, _ = _best(trig, repeat)
        cpu_tr = _LAST_CPU[0]
        rows.append(dict(threads=th, N=N, wall_s=wall, cpu_s=cpu_s, log_likelihood=ll,
                         ordered_pairs_per_cpu_s=N * N / cpu_s, trigger_pairs_per_cpu_s=N * (N - 1) / 2 / cpu_tr,
                         ordered_pairs_per_s=N * N / wall, ordered_pairs_per_s_per_core=N * N / wall / th,
                         exp_evaluations=exps, exp_per_s_per_core=exps / wall / th,
                         trigger_only_wall_s=wall_tr,
                         trigger_pairs_per_s_per_core=N * (N - 1) / 2 / wall_tr / th))
        print(f"exact N={N} threads={th}: wall {wall:.2f} s, {N*N/wall/th/1e6:.0f} M ordered pairs/s/core (wall), "
              f"{N*N/cpu_s/1e6:.0f} M ordered pairs per CPU-second, {exps/wall/th/1e6:.0f} M exp/s/core; "
              f"trigger-only {wall_tr:.2f} s ({N*(N-1)/2/cpu_tr/1e6:.0f} M pairs per CPU-second)", flush=True)
    return rows, (x, t, p)


def bench_paper_loop(data, rows_n, repeat, threads_list):
    x, t, p = data
    N = t.size
    args = (np.ascontiguousarray(x[:, 0]), np.ascontiguousarray(x[:, 1]), t, rows_n,
            0.5 / p["tau_x"] ** 2, 0.5 / p["tau_t"] ** 2, 0.5 / p["h"] ** 2, p["omega"])
    out = []
    for th in threads_list:
        numba.set_num_threads(th)
        r = {"threads": th, "rows": rows_n, "N": N}
        for name, fn in (("exp_fast", _paper_loop_fast), ("math.exp", _paper_loop_mathexp)):
            fn(*args[:3], 64, *args[4:])  # compile
            wall, _ = _best(lambda: fn(*args), repeat)
            r[f"{name}_pairs_per_s_per_core"] = rows_n * N / wall / th
            r[f"{name}_pairs_per_cpu_s"] = rows_n * N / _LAST_CPU[0]
        r["ratio_exp_fast_over_math_exp"] = r["exp_fast_pairs_per_s_per_core"] / r["math.exp_pairs_per_s_per_core"]
        out.append(r)
        print(f"paper loop threads={th}: exp_fast {r['exp_fast_pairs_per_s_per_core']/1e6:.0f} M pairs/s/core, "
              f"math.exp {r['math.exp_pairs_per_s_per_core']/1e6:.0f} M pairs/s/core "
              f"(x{r['ratio_exp_fast_over_math_exp']:.1f}); per CPU-second: {r['exp_fast_pairs_per_cpu_s']/1e6:.0f} M "
              f"vs {r['math.exp_pairs_per_cpu_s']/1e6:.0f} M", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return out


def bench_dc(repeat, threads):
    from hphawkes_py.datasets import load_dc_gunshots

    df = load_dc_gunshots("no_holidays")
    x = df[["x_km", "y_km"]].to_numpy()
    t = df["t_hours"].to_numpy()
    N = t.size
    p = dict(mu0=0.5, tau_x=1.6, tau_t=336.0, theta=0.1, omega=2.0, h=0.07)
    eng = make_engine(x, t, threads=threads)
    t0 = time.perf_counter()
    ll = eng.log_likelihood(**p)
    first = time.perf_counter() - t0

    def full():
        eng._bg_params = None
        eng._slot_params = [None, None]
        return eng.log_likelihood(**p)

    wall_full, _ = _best(full, repeat)
    cpu_full = _LAST_CPU[0]
    pairs_full = eng.pair_evaluations
    kb = [0]

    def background():  # a tau_x/tau_t move: only S is recomputed (windowed)
        kb[0] += 1
        eng.set_background(p["tau_x"] * (1 + 1e-7 * kb[0]), p["tau_t"])

    background()  # warm-up (compile / cache load of the background-only kernel)
    wall_bg, _ = _best(background, repeat)
    cpu_bg = _LAST_CPU[0]
    eng.set_background(p["tau_x"], p["tau_t"])
    k = [0]
    n0 = eng.pair_evaluations

    def move():
        k[0] += 1
        eng.set_trigger(p["h"] * (1 + 1e-3 * (k[0] % 7)), p["omega"] * (1 + 1e-3 * (k[0] % 5)), slot=1)
        return eng.sum_log_intensity(p["mu0"], p["theta"], slot=1)

    move()
    wall_move, _ = _best(move, max(repeat, 20))
    cpu_move = _LAST_CPU[0]
    pairs_move = (eng.pair_evaluations - n0) // (k[0])
    t0 = time.perf_counter()
    for _ in range(200):
        eng.sum_log_intensity(p["mu0"] * 1.01, p["theta"])
        eng.integral(p["mu0"] * 1.01, p["theta"], p["omega"])
    wall_lin = (time.perf_counter() - t0) / 200
    # the same likelihood with every pair evaluated: the window must not change it (bound: 1e-13 per lambda_n)
    ex = make_engine(x, t, exact=True, threads=threads)
    c0, t0 = time.process_time(), time.perf_counter()
    ll_exact = ex.log_likelihood(**p)
    wall_exact, cpu_exact = time.perf_counter() - t0, time.process_time() - c0
    lam_w = p["mu0"] * eng.background_sums() + p["theta"] * eng.trigger_sums()
    lam_e = p["mu0"] * ex.background_sums() + p["theta"] * ex.trigger_sums()
    print(f"DC exact: {wall_exact:.2f} s ({cpu_exact:.2f} CPU-s), {ex.pair_evaluations} terms; "
          f"|ll_exact - ll_windowed| / |ll| = {abs(ll_exact - ll) / abs(ll):.1e}, "
          f"max |lambda_w - lambda| / lambda = {np.max(np.abs(lam_w - lam_e) / lam_e):.1e}", flush=True)
    res = dict(N=N, threads=threads, params=p, log_likelihood=ll, first_call_s=first,
               exact_log_likelihood=ll_exact, exact_s=wall_exact, exact_cpu_s=cpu_exact,
               exact_pair_terms=ex.pair_evaluations,
               max_rel_lambda_diff_windowed_vs_exact=float(np.max(np.abs(lam_w - lam_e) / lam_e)),
               full_windowed_s=wall_full, background_only_s=wall_bg, background_only_cpu_s=cpu_bg,
               full_windowed_cpu_s=cpu_full, pair_terms_full=pairs_full // (repeat + 1),
               h_omega_move_s=wall_move, h_omega_move_cpu_s=cpu_move, mu0_theta_move_s=wall_lin,
               trigger_pairs_per_move=pairs_move, exact_trigger_pairs=N * (N - 1) // 2,
               exact_background_pairs=N * (N - 1) // 2)
    print(f"DC windowed N={N}: full {wall_full:.3f} s ({cpu_full:.3f} CPU-s), background {wall_bg:.3f} s ({cpu_bg:.3f} CPU-s), h/omega move "
          f"{wall_move*1e3:.2f} ms ({cpu_move*1e3:.2f} CPU-ms; {pairs_move} trigger terms vs {N*(N-1)//2} exact), "
          f"mu0/theta move {wall_lin*1e3:.2f} ms", flush=True)
    return res


_MEM_SCRIPT = r"""
import resource, time, numpy as np
from hphawkes_py.hawkes.engine import make_engine
N = {N}
rng = np.random.default_rng(1)
x = rng.uniform(0, 20, (N, 2)); t = np.sort(rng.uniform(0, 200000.0, N))
e = make_engine(x, t)
t0 = time.perf_counter()
ll = e.log_likelihood(0.5, 1.6, 336.0, 0.1, 2.0, 0.07)
wall = time.perf_counter() - t0
e.self_excitation(0.5, 0.1)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, wall, ll)
"""


def bench_memory(N):
    out = subprocess.run([sys.executable, "-c", _MEM_SCRIPT.format(N=N)], capture_output=True, text=True, check=True)
    rss, wall, ll = out.stdout.split()[-3:]
    print(f"memory N={N}: peak RSS {float(rss):.0f} MB, windowed log-likelihood {float(wall):.2f} s", flush=True)
    return dict(N=N, peak_rss_mb=float(rss), wall_s=float(wall), log_likelihood=float(ll))


_ASM_SCRIPT = r"""
import re, json, numpy as np
from hphawkes_py.hawkes import cpu
from hphawkes_py.hawkes.engine import make_engine

rng = np.random.default_rng(0)
for dt in (np.float64, np.float32):
    x = rng.uniform(0, 1, (64, 2)); t = np.sort(rng.uniform(0, 1, 64))
    e = make_engine(x, t, exact=True, dtype=dt); e.log_likelihood(1, .1, .1, 1, 1, .1)
    e.set_background(.2, .2); e.set_trigger(.3, .3)
    e2 = make_engine(x, t, exact=True, dtype=dt, kernel="exp2"); e2.log_likelihood(1, .1, .1, 1, 1, .1, omega2=.1, w=.5)
    e2.set_background(.2, .2); e2.set_trigger(.3, .3, omega2=.1, w=.5)
out = {}
for f in (cpu._bg_loop, cpu._tr_loop, cpu._fu_loop):
    for sig in f.signatures:
        asm = f.inspect_asm(sig)
        kp = "" if f is cpu._bg_loop else ",kp=" + str(sig[10 if f is cpu._tr_loop else 12])
        key = f.__name__ + "[D=" + str(sig[0].count) + "," + str(sig[1].dtype) + kp + "]"
        out[key] = dict(
            zmm=len(re.findall(r"%zmm", asm)), ymm=len(re.findall(r"%ymm", asm)),
            packed_fma_pd=len(re.findall(r"vfn?madd\w*pd\s+%[yz]mm", asm)),
            packed_fma_ps=len(re.findall(r"vfn?madd\w*ps\s+%[yz]mm", asm)),
            packed_pd=len(re.findall(r"\sv\w+pd\s+%[yz]mm", asm)),
            packed_ps=len(re.findall(r"\sv\w+ps\s+%[yz]mm", asm)),
            libm_exp_calls=len(re.findall(r"call\w*\s+\S*exp", asm)))
print(json.dumps(out))
"""


def bench_kernels(N, repeat, threads_list):
    """Section 6: one exact trigger pass per temporal kernel (see the module notes)."""
    rng = np.random.default_rng(2021)
    x = rng.uniform(0.0, 1.0, (N, 2))
    t = np.sort(rng.uniform(0.0, 1.0, N))
    kernels = [("exponential", "exponential", {}), ("power-law", ("power-law", 2.5), {}),
               ("exp2", "exp2", dict(omega2=0.1, w=0.7))]
    rows = []
    for dtype in (np.float64, np.float32):
        for th in threads_list:
            rates = {}
            for name, kernel, kw in kernels:
                eng = make_engine(x, t, exact=True, threads=th, kernel=kernel, dtype=dtype)
                eng.set_background(0.1, 0.1)
                k = [0]

                def trig():
                    k[0] += 1
                    eng.set_trigger(0.1 + 1e-9 * k[0], 1.0, slot=1, **kw)

                trig()  # compile
                wall, _ = _best(trig, repeat)
                rates[name] = N * (N - 1) / 2 / wall
            for name in rates:
                rows.append(dict(kernel=name, dtype=np.dtype(dtype).name, threads=th, N=N,
                                 trigger_pairs_per_s=rates[name],
                                 ratio_to_exponential=rates[name] / rates["exponential"]))
            print(f"kernels {np.dtype(dtype).name} threads={th}: "
                  + ", ".join(f"{n} {r / 1e6:.0f} M pairs/s ({r / rates['exponential']:.2f}x)" for n, r in rates.items()),
                  flush=True)
    return rows


@njit(cache=True, fastmath={"contract"})
def _fma_chains(acc, a, b, reps):
    """8 dependent FMAs per element of an L1-resident array: 16 independent 4-lane chains cover
    the FMA latency, so the loop runs at the FMA pipes' throughput."""
    for _ in range(reps):
        for i in range(acc.shape[0]):
            v = acc[i]
            v = v * a + b
            v = v * a + b
            v = v * a + b
            v = v * a + b
            v = v * a + b
            v = v * a + b
            v = v * a + b
            v = v * a + b
            acc[i] = v


@njit(cache=True)
def _exp_loop(x, y, reps):
    for _ in range(reps):
        for i in range(x.shape[0]):
            y[i] = exp_fast(x[i])


def _cpu_mhz():
    try:
        with open("/proc/cpuinfo") as f:
            vals = [float(line.split(":")[1]) for line in f if line.lower().startswith("cpu mhz")]
        return max(vals) if vals else None
    except OSError:
        return None


def bench_roofline(exact_rows, repeat):
    """Section 7 (see the module notes); one thread, minimum over ``repeat`` runs."""
    old = numba.get_num_threads()
    acc = np.full(64, 0.5)
    _fma_chains(acc, 0.999, 1e-3, 1)
    reps = 200_000
    best = _best(lambda: _fma_chains(acc, 0.999, 1e-3, reps), max(repeat, 3))[0]
    fma_lane_per_s = 8 * acc.size * reps / best
    x = np.random.default_rng(0).uniform(-30.0, 0.0, 2048)
    y = np.empty_like(x)
    _exp_loop(x, y, 1)
    ereps = 20_000
    best_e = _best(lambda: _exp_loop(x, y, ereps), max(repeat, 3))[0]
    exp_per_s = x.size * ereps / best_e
    mhz = _cpu_mhz()
    out = dict(threads=1, fma_lane_ops_per_s_measured=fma_lane_per_s,
               fma_lane_ops_per_s_nominal=(2 * 4 * mhz * 1e6) if mhz else None, cpu_mhz=mhz,
               exp_fast_per_s=exp_per_s, fma_slots_per_exp=fma_lane_per_s / exp_per_s)
    rows = []
    for r in exact_rows or []:
        per_core = r["exp_per_s_per_core"]
        rows.append(dict(threads=r["threads"], N=r["N"], wall_s=r["wall_s"], exp_per_s_per_core=per_core,
                         fraction_of_exp_ceiling=per_core / exp_per_s,
                         fraction_of_fma_peak=per_core * out["fma_slots_per_exp"] / fma_lane_per_s))
    out["exact"] = rows
    print(f"roofline: FMA peak {fma_lane_per_s / 1e9:.1f} G lane-FMA/s/core measured"
          + (f" ({out['fma_lane_ops_per_s_nominal'] / 1e9:.1f} nominal at {mhz:.0f} MHz)" if mhz else "")
          + f", exp_fast {exp_per_s / 1e6:.0f} M/s/core = {out['fma_slots_per_exp']:.1f} FMA slots per exp", flush=True)
    for r in rows:
        print(f"roofline: exact N={r['N']} threads={r['threads']}: {r['exp_per_s_per_core'] / 1e6:.0f} M exp/s/core = "
              f"{100 * r['fraction_of_exp_ceiling']:.0f} % of the exp ceiling", flush=True)
    numba.set_num_threads(old)
    return out


def asm_check():
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        out = subprocess.run([sys.executable, "-c", _ASM_SCRIPT], capture_output=True, text=True, check=True, env=env)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    for k, v in res.items():
        print(f"asm {k}: {v}")
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=75_000)
    ap.add_argument("--rows", type=int, default=4_000, help="rows of the paper's loop timed")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="N = 20,000, 1 repeat (smoke run)")
    ap.add_argument("--skip", nargs="*", default=(), choices=("exact", "paper", "dc", "memory", "asm", "kernels", "roofline"))
    a = ap.parse_args(argv)
    if a.quick:
        a.N, a.repeat, a.rows = 20_000, 1, 1_000
    threads_list = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    res = dict(machine=dict(**machine_info(), cpu_count=os.cpu_count(),
                            numba=numba.__version__, numba_threads=numba.config.NUMBA_NUM_THREADS,
                            load_average=os.getloadavg()),
               note="2-core machine shared with other jobs: timings are minima over repeats and still noisy upwards")
    data = None
    if "exact" not in a.skip:
        res["exact"], data = bench_exact(a.N, a.repeat, threads_list)
    if "roofline" not in a.skip:
        res["roofline"] = bench_roofline(res.get("exact"), a.repeat)
    if "paper" not in a.skip:
        if data is None:
            rng = np.random.default_rng(2021)
            data = (rng.uniform(0, 1, (a.N, 2)), np.sort(rng.uniform(0, 1, a.N)),
                    dict(mu0=1.0, tau_x=0.1, tau_t=0.1, theta=1.0, omega=1.0, h=0.1))
        res["paper_loop"] = bench_paper_loop(data, a.rows, a.repeat, threads_list)
    if "dc" not in a.skip:
        res["dc_windowed"] = bench_dc(a.repeat, None)
    if "memory" not in a.skip:
        res["memory"] = bench_memory(200_000)
    if "asm" not in a.skip:
        res["asm"] = asm_check()
    if "kernels" not in a.skip:
        res["kernels"] = bench_kernels(4_000 if a.quick else 8_000, max(a.repeat, 3), threads_list)
    res["machine"]["load_average_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    old = {}
    if RESULTS.exists():
        try:
            old = json.loads(RESULTS.read_text())
        except ValueError:
            old = {}
    old.update(res)
    RESULTS.write_text(json.dumps(old, indent=2, default=float))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
