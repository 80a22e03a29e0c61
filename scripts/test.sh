#!/usr/bin/env bash
# The whole test suite: Debian R packages (as root, if missing), .venv with the test extras,
# pytest (Python engines, GPU kernels on the CPU emulator, nvcc compile checks when nvcc exists),
# then the R package's testthat suite through reticulate. Exit status is non-zero if anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install_r.sh || exit 1
source scripts/_env.sh "[test]"
start=$(date +%s)
echo "== pytest ==" >&2
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
py_status=$?
echo "== R package (testthat) ==" >&2
bash r-wrapper/run_tests.sh
r_status=$?
echo "== done in $(( $(date +%s) - start )) s: pytest exit $py_status, R tests exit $r_status ==" >&2
[ $py_status -eq 0 ] && [ $r_status -eq 0 ]
