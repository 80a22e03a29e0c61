"""Overhead of the CUDA emulator: launches per second and emulated threads per second.

    python benchmarks/bench_emulator.py [--json out.json] [--threads N]

Kernels: an empty-ish kernel (one store per thread), and the block tree reduction of
hp_cuda.h (log2(blockDim)+2 barriers per block), so the numbers show the cost of a launch,
of a fiber, and of a barrier.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hphawkes_py.gpu.emulator import EmulatorDevice

SRC = r"""
#include "hp_cuda.h"
extern "C" __global__ void touch(REAL* x, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (REAL)i;
}
extern "C" __global__ void reduce(const REAL* x, long long n, REAL* partial) {
  HP_DYNAMIC_SHARED(REAL, s);
  REAL acc = 0;
  HP_GRID_STRIDE_LOOP(i, n) { acc += x[i]; }
  REAL r = hp_block_reduce_sum(acc, s);
  if (threadIdx.x == 0) partial[blockIdx.x] = r;
}
"""


def _time(fn, min_time=1.0):
    fn()  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_time:
            return n / dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", default=None)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    dev = EmulatorDevice(threads=args.threads)
    mod = dev.module(SRC, {"REAL": "double"})
    touch, reduce = mod.function("touch"), mod.function("reduce")
    rows = []

    x1 = dev.zeros(32, np.float64)
    rate = _time(lambda: dev.launch(touch, 1, 32, [x1, np.int64(32)]))
    rows.append(("touch", "1 x 32", rate, rate * 32))

    for blocks, bs in [(1000, 256), (100, 1024)]:
        n = blocks * bs
        x = dev.zeros(n, np.float64)
        rate = _time(lambda: dev.launch(touch, blocks, bs, [x, np.int64(n)]))
        rows.append(("touch", f"{blocks} x {bs}", rate, rate * n))

    data = dev.to_device(np.ones(1_000_000))
    for blocks, bs in [(1000, 256), (100, 1024)]:
        part = dev.zeros(blocks, np.float64)
        rate = _time(lambda: dev.launch(reduce, blocks, bs, [data, np.int64(1_000_000), part], shared_bytes=8 * bs))
        rows.append(("reduce 1e6", f"{blocks} x {bs}", rate, rate * blocks * bs))

    print(f"emulator, {args.threads} worker thread(s)")
    print(f"{'kernel':<12} {'grid x block':>14} {'launches/s':>12} {'threads/s':>14}")
    for k, cfg, r, t in rows:
        print(f"{k:<12} {cfg:>14} {r:>12.1f} {t:>14.3g}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                [{"kernel": k, "config": c, "launches_per_s": r, "threads_per_s": t} for k, c, r, t in rows],
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
