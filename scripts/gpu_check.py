"""The body of scripts/gpu_check.sh (see there): tests, analyses and benchmarks on backend="gpu",
one JSON report, a one-screen summary.  Runs from the repository root."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPRODUCE = [  # (analysis, extra arguments for a quick GPU run)
    ("dc-gunshots", ["--quick", "--no-progress"]),
    ("kde-redwood", []),
    ("kde-sim50000", ["--full"]),
    ("sccs-oxford", []),
    ("scan-grave", []),
    ("scan-ny", []),
    ("scan-nycfever", []),
    ("mixture-faithful", []),
    ("mixture-flow", ["--n-iter", "20", "--burn-in", "10"]),
]


def _run(cmd, log, timeout, env=None):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, env=env)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as exc:
        rc, out = 124, (exc.stdout or "") if isinstance(exc.stdout, str) else ""
    Path(log).write_text(out)
    return rc, out, time.perf_counter() - t0


def _nvidia_smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"nvidia-smi not available ({exc})"


def _junit(path):
    tests = []
    if not Path(path).exists():
        return tests
    for case in ET.parse(path).getroot().iter("testcase"):
        status, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                status = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = (el.get("message") or "")[:500]
                break
        tests.append(dict(name=f"{case.get('classname')}::{case.get('name')}", status=status,
                          seconds=float(case.get("time") or 0), message=message))
    return tests


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--quick", action="store_true", help="benchmarks at reduced sizes")
    ap.add_argument("--skip", nargs="*", default=[], choices=["tests", "reproduce", "bench"])
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per step")
    ap.add_argument("--dc-full", action="store_true",
                    help="run the DC analysis as the paper did (4 chains x 10,000 iterations) instead of --quick")
    args = ap.parse_args(argv)
    py = sys.executable
    from hphawkes_py._info import info_dict

    info = info_dict()
    report = dict(started=time.strftime("%Y-%m-%dT%H:%M:%S%z"), info=info, nvidia_smi=_nvidia_smi(),
                  tests=[], reproduce={}, bench={})
    if not info["gpu_usable"]:
        report["error"] = f"no usable GPU: {info['gpu_status']}"
        args.report.write_text(json.dumps(report, indent=1))
        print(f"gpu_check: {report['error']}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="hphawkes_gpu_check_"))
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if "tests" not in args.skip:
        junit = tmp / "junit.xml"
        import importlib.util

        par = ["-n", str(min(8, os.cpu_count() or 1))] if importlib.util.find_spec("xdist") else []
        rc, out, sec = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "gpu and not test_nvcc", "-rfE", *par,
                             f"--junitxml={junit}", "tests"], tmp / "pytest.log", args.timeout, env)
        report["tests"] = _junit(junit)
        report["pytest"] = dict(exit=rc, seconds=sec, tail=out[-4000:])
        print(out[-1500:], flush=True)
    if "reproduce" not in args.skip:
        for name, extra in REPRODUCE:
            if name == "dc-gunshots" and args.dc_full:
                extra = ["--full", "--no-progress"]
            cmd = [py, "-m", "hphawkes_py", "reproduce", name, "--backend", "gpu", *extra]
            if name == "dc-gunshots":
                cmd += ["--out", str(tmp / name)]
            rc, out, sec = _run(cmd, tmp / f"{name}.log", args.timeout, env)
            report["reproduce"][name] = dict(exit=rc, seconds=sec, command=" ".join(cmd[1:]), tail=out[-2500:])
            print(f"[gpu_check] reproduce {name}: exit {rc} in {sec:.1f} s", flush=True)
    if "bench" not in args.skip:
        bench_json = tmp / "bench.json"
        cmd = [py, "benchmarks/bench_gpu.py", "--out", str(bench_json)] + (["--quick"] if args.quick else [])
        rc, out, sec = _run(cmd, tmp / "bench.log", args.timeout, env)
        report["bench"] = json.loads(bench_json.read_text()) if bench_json.exists() else {}
        report["bench"]["exit"] = rc
        report["bench"]["seconds"] = sec
        report["bench"]["tail"] = out[-3000:]
    report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=1, default=float))

    # one-screen summary
    counts = {}
    for t in report["tests"]:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    print("\n==== hphawkes GPU check ====")
    print(f"device: {info.get('gpu_status')}  cc {info.get('gpu_compute_capability')}  "
          f"{info.get('gpu_memory_gib')} GiB  driver CUDA {info.get('gpu_driver_cuda_version')}")
    print(f"tests (-k gpu): {counts}")
    for t in report["tests"]:
        if t["status"] in ("failed", "error"):
            print(f"  FAIL {t['name']}: {t['message'][:160]}")
    for name, r in report["reproduce"].items():
        print(f"reproduce {name:18s} exit {r['exit']}  {r['seconds']:.1f} s")
    for name, r in report["bench"].get("results", {}).items():
        if not r.get("ok"):
            print(f"bench {name:10s} ERROR {r.get('error', '')[:150]}")
            continue
        g = r.get("gpu", r.get("gpu_float64", {}))
        key = next((k for k in ("seconds", "total_s", "windowed_loglik_s") if k in g), None)
        print(f"bench {name:10s} gpu {g.get(key, float('nan')):.4g} s ({key})  speedup vs cpu "
              f"{r.get('speedup_vs_cpu', float('nan')):.3g}")
    print(f"report: {args.report}")
    bad = counts.get("failed", 0) + counts.get("error", 0)
    bad += sum(r["exit"] != 0 for r in report["reproduce"].values())
    bad += int(report["bench"].get("exit", 0) != 0) + sum(
        not r.get("ok") for r in report["bench"].get("results", {}).values())
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
