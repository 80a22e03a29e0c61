#!/usr/bin/env bash
# Validate a machine with an NVIDIA GPU, offline, in one command:
#   bash scripts/gpu_check.sh REPORT.json [--wheels DIR] [--quick] [--dc-full] [--no-install]
#                             [--skip tests|reproduce|bench ...] [--timeout SECONDS]
# 1. installs missing dependencies from a folder of wheels (--wheels DIR; no index is contacted)
#    and the package itself with `pip install --no-deps --no-build-isolation -e .` (falls back to
#    running from the source tree when that cannot be done);
# 2. runs every engine test on backend="gpu" (the emulator tests' GPU rows, `pytest -k gpu`), every
#    `reproduce` analysis in quick mode on the GPU, and the GPU benchmarks (benchmarks/bench_gpu.py);
# 3. writes one JSON report (device, driver, CUDA, each test, each analysis, each benchmark figure)
#    to REPORT.json and prints a one-screen summary.  Exit status 0 only if everything passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
REPORT=""; WHEELS=""; INSTALL=1; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --wheels) WHEELS="$2"; shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    --timeout) EXTRA+=("$1" "$2"); shift 2 ;;
    --skip)  # one or more of tests, reproduce, bench
      EXTRA+=("$1"); shift
      while [ $# -gt 0 ] && [[ "$1" =~ ^(tests|reproduce|bench)$ ]]; do EXTRA+=("$1"); shift; done ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    --*) EXTRA+=("$1"); shift ;;
    *) REPORT="$1"; shift ;;
  esac
done
[ -n "$REPORT" ] || { echo "usage: bash scripts/gpu_check.sh REPORT.json [--wheels DIR] [--quick] [--no-install]" >&2; exit 2; }
if [ -n "$WHEELS" ]; then
  ls "$WHEELS"/*.whl >/dev/null 2>&1 || { echo "gpu_check: no wheels in $WHEELS" >&2; exit 2; }
  echo "[gpu_check] installing wheels from $WHEELS (offline)" >&2
  "$PY" -m pip install -q --no-index --no-deps --find-links "$WHEELS" "$WHEELS"/*.whl >&2 \
    || { echo "gpu_check: installing the wheels in $WHEELS failed" >&2; exit 2; }
fi
if [ "$INSTALL" = 1 ]; then
  if ! "$PY" -m pip install -q --no-deps --no-build-isolation -e . >&2; then
    echo "[gpu_check] pip install -e . failed; running from the source tree (PYTHONPATH)" >&2
    export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  fi
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
exec "$PY" scripts/gpu_check.py "$REPORT" "${EXTRA[@]}"
