#!/usr/bin/env bash
# The whole test suite: Debian R packages (as root, if missing), .venv with the test and docs extras,
# pytest (Python engines, GPU kernels on the CPU emulator, nvcc compile checks when nvcc exists, the
# docstring examples), the R package (man/ up to date, R CMD check, testthat, vignettes) and the
# documentation site (Sphinx, warnings as errors, gallery executed).
# Ends with one line "tests: N passed, M failed" (pytest tests + testthat expectations + the R check and
# docs build as one check each); the exit status is non-zero if anything failed.
#
#   bash scripts/test.sh            # everything (CI)
#   bash scripts/test.sh --fast     # developer tier: pytest -m "not slow and not emulator and not oracle
#                                   # and not r" on 2 workers; no R, no docs (about 90 s on 2 cores, warm)
#   bash scripts/test.sh [--fast] -- PYTEST_ARGS...   # extra arguments for pytest
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
[ "${1:-}" = "--" ] && shift
workers="${HPHAWKES_TEST_WORKERS:-2}"
# pytest rewrites the asserts of every test module on each run unless it may cache the result as .pyc
# (about half of a collection's time); the caches are git-ignored.
unset PYTHONDONTWRITEBYTECODE
if [ $fast -eq 0 ]; then bash scripts/install_r.sh || exit 1; fi
source scripts/_env.sh "[test,docs]"
start=$(date +%s)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

if [ $fast -eq 1 ]; then
  echo "== pytest (fast tier) ==" >&2
  .venv/bin/python -m pytest -q -p no:cacheprovider -n "$workers" \
    -m "not slow and not emulator and not oracle and not r" "$@" 2>&1 | tee "$log_dir/pytest.log"
else
  echo "== pytest ==" >&2
  .venv/bin/python -m pytest -q -p no:cacheprovider -n "$workers" --durations=40 "$@" 2>&1 | tee "$log_dir/pytest.log"
fi
py_status=${PIPESTATUS[0]}

r_status=0; docs_status=0; r_line=""
if [ $fast -eq 0 ]; then
  echo "== R package (man/, R CMD check, testthat) and vignettes ==" >&2
  bash r-wrapper/run_tests.sh 2>&1 | tee "$log_dir/r.log"
  r_status=${PIPESTATUS[0]}
  r_line=$(grep -E "testthat: [0-9]+ expectations passed" "$log_dir/r.log" | tail -n 1)
  echo "== documentation site (scripts/docs.sh) ==" >&2
  HPHAWKES_DOCS_PYTHON=.venv/bin/python bash scripts/docs.sh > "$log_dir/docs.log" 2>&1
  docs_status=$?
  tail -n 15 "$log_dir/docs.log" >&2
fi

# Counts for the closing line (0 when a runner printed none, e.g. it crashed: the exit status decides).
py_summary=$(grep -E "^[0-9]+ (passed|failed|errors?)|^=+ .*(passed|failed|errors?)" "$log_dir/pytest.log" | tail -n 1)
count() { echo "$1" | grep -oE "[0-9]+ $2" | head -n 1 | grep -oE "^[0-9]+" || echo 0; }
py_pass=$(count "$py_summary" passed); py_fail=$(( $(count "$py_summary" failed) + $(count "$py_summary" error) ))
r_pass=$(count "$r_line" "expectations passed"); r_fail=$(count "$r_line" failed)
[ $py_status -ne 0 ] && [ "$py_fail" -eq 0 ] && py_fail=1
[ $r_status -ne 0 ] && [ "$r_fail" -eq 0 ] && r_fail=1
docs_pass=0; docs_fail=0
if [ $fast -eq 0 ]; then if [ $docs_status -eq 0 ]; then docs_pass=1; else docs_fail=1; fi; fi

echo "== done in $(( $(date +%s) - start )) s: pytest exit $py_status ($py_summary), R exit $r_status, docs exit $docs_status ==" >&2
echo "tests: $(( py_pass + r_pass + docs_pass )) passed, $(( py_fail + r_fail + docs_fail )) failed"
[ $py_status -eq 0 ] && [ $r_status -eq 0 ] && [ $docs_status -eq 0 ]
