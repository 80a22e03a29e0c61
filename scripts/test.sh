#!/usr/bin/env bash
# The whole test suite: Debian R packages (as root, if missing), .venv with the test extras,
# pytest (Python engines, GPU kernels on the CPU emulator, nvcc compile checks when nvcc exists),
# then the R package's testthat suite and the vignettes through reticulate.
# Ends with one line "tests: N passed, M failed" (pytest tests + testthat expectations);
# the exit status is non-zero if anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install_r.sh || exit 1
source scripts/_env.sh "[test]"
start=$(date +%s)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

echo "== pytest ==" >&2
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$log_dir/pytest.log"
py_status=${PIPESTATUS[0]}

echo "== R package (testthat) and vignettes ==" >&2
bash r-wrapper/run_tests.sh 2>&1 | tee "$log_dir/r.log"
r_status=${PIPESTATUS[0]}

# Counts for the closing line (0 when a runner printed none, e.g. it crashed: the exit status decides).
py_summary=$(grep -E "^[0-9]+ (passed|failed|errors?)|^=+ .*(passed|failed|errors?)" "$log_dir/pytest.log" | tail -n 1)
count() { echo "$1" | grep -oE "[0-9]+ $2" | head -n 1 | grep -oE "^[0-9]+" || echo 0; }
py_pass=$(count "$py_summary" passed); py_fail=$(( $(count "$py_summary" failed) + $(count "$py_summary" error) ))
r_line=$(grep -E "testthat: [0-9]+ expectations passed" "$log_dir/r.log" | tail -n 1)
r_pass=$(count "$r_line" "expectations passed"); r_fail=$(count "$r_line" failed)
[ $py_status -ne 0 ] && [ "$py_fail" -eq 0 ] && py_fail=1
[ $r_status -ne 0 ] && [ "$r_fail" -eq 0 ] && r_fail=1

echo "== done in $(( $(date +%s) - start )) s: pytest exit $py_status ($py_summary), R exit $r_status ==" >&2
echo "tests: $(( py_pass + r_pass )) passed, $(( py_fail + r_fail )) failed"
[ $py_status -eq 0 ] && [ $r_status -eq 0 ]
