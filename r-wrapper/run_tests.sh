#!/usr/bin/env bash
# Install the R package hphawkes into a private library, run its testthat suite against the
# project's Python (RETICULATE_PYTHON; default: the repo's .venv/bin/python), then execute the
# vignettes (R and Python) in quick mode. Exit status non-zero if anything failed.
#   bash r-wrapper/run_tests.sh              # everything
#   HPHAWKES_SKIP_VIGNETTES=1 bash r-wrapper/run_tests.sh   # testthat only
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
export RETICULATE_PYTHON="${RETICULATE_PYTHON:-$repo/.venv/bin/python}"
export HPHAWKES_R_NO_SKIP="${HPHAWKES_R_NO_SKIP:-1}"   # a missing Python module is a failure here
if ! command -v Rscript >/dev/null; then
  echo "[r-tests] Rscript not found: install r-base-core (scripts/install_r.sh)" >&2; exit 1
fi
if [ ! -x "$RETICULATE_PYTHON" ]; then
  echo "[r-tests] Python not found at RETICULATE_PYTHON=$RETICULATE_PYTHON" >&2; exit 1
fi
lib="$(mktemp -d "${TMPDIR:-/tmp}/hphawkes-rlib.XXXXXX")"
trap 'rm -rf "$lib"' EXIT
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
start=$(date +%s)
echo "[r-tests] R CMD INSTALL -> $lib (python: $RETICULATE_PYTHON)" >&2
if ! R CMD INSTALL --no-multiarch --no-docs --no-byte-compile -l "$lib" "$here" >"$lib.install.log" 2>&1; then
  cat "$lib.install.log" >&2; rm -f "$lib.install.log"
  echo "[r-tests] FAILED: R CMD INSTALL" >&2; exit 1
fi
rm -f "$lib.install.log"
HPHAWKES_RWRAPPER="$here" Rscript --vanilla -e '
  suppressPackageStartupMessages(library(testthat))
  options(testthat.progress.max_fails = 10000L)
  res <- testthat::test_dir(file.path(Sys.getenv("HPHAWKES_RWRAPPER"), "tests", "testthat"),
                            package = "hphawkes", load_package = "installed",
                            reporter = ProgressReporter$new(show_praise = FALSE),
                            stop_on_failure = FALSE)
  df <- as.data.frame(res)
  n_fail <- sum(df$failed) + sum(df$error)
  cat(sprintf("\n[r-tests] testthat: %d expectations passed, %d failed, %d tests errored, %d skipped (%d tests)\n",
              sum(df$passed), sum(df$failed), sum(df$error), sum(df$skipped), nrow(df)))
  quit(status = if (n_fail > 0) 1 else 0)
'
t_status=$?
v_status=0
if [ -z "${HPHAWKES_SKIP_VIGNETTES:-}" ] && [ -f "$repo/vignettes/run_vignettes.sh" ]; then
  bash "$repo/vignettes/run_vignettes.sh" --quick
  v_status=$?
fi
echo "[r-tests] done in $(( $(date +%s) - start )) s: testthat exit $t_status, vignettes exit $v_status" >&2
[ $t_status -eq 0 ] && [ $v_status -eq 0 ]
