#!/usr/bin/env bash
# The R package's checks, against the project's Python (RETICULATE_PYTHON; default: the repo's
# .venv/bin/python). Exit status non-zero if anything failed.
#   1. man/ and NAMESPACE are what roxygen2 generates from R/ (check_man.sh);
#   2. R CMD build + R CMD check --no-manual of the package, examples included (they run against
#      the project's Python): any ERROR or WARNING fails (NOTEs are printed, they do not fail);
#   3. the testthat suite on the package that R CMD check installed (run here rather than by
#      R CMD check, to print one summary line of counts);
#   4. the R code blocks of README.md and docs/ (scripts/r_doc_blocks.R);
#   5. the vignettes (R and Python) in quick mode.
#   bash r-wrapper/run_tests.sh                              # everything
#   HPHAWKES_SKIP_VIGNETTES=1 bash r-wrapper/run_tests.sh   # without the vignettes
#   HPHAWKES_SKIP_RCHECK=1 bash r-wrapper/run_tests.sh      # without 1 and 2 (R CMD INSTALL instead)
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
# The examples skip themselves when Python or hphawkes_py is missing; here they must run.
if ! Rscript --vanilla -e 'quit(status = !reticulate::py_module_available("hphawkes_py"))' >/dev/null 2>&1; then
  echo "[r-tests] hphawkes_py does not import in RETICULATE_PYTHON=$RETICULATE_PYTHON" >&2; exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/hphawkes-rcheck.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
m_status=0
c_status=0
if [ -z "${HPHAWKES_SKIP_RCHECK:-}" ]; then
  bash "$here/check_man.sh"
  m_status=$?
  echo "[r-tests] R CMD build + R CMD check --no-manual (python: $RETICULATE_PYTHON)" >&2
  t0=$(date +%s)
  # --no-tests: the suite runs below, once; _R_CHECK_FORCE_SUGGESTS_=false: knitr and rmarkdown
  # serve the vignettes only.
  if (cd "$work" && R CMD build --no-build-vignettes --no-manual "$here" >build.log 2>&1); then
    (cd "$work" && _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual --no-build-vignettes \
       --no-tests hphawkes_*.tar.gz >check.log 2>&1)
    log="$work/hphawkes.Rcheck/00check.log"
    status_line="$(grep '^Status:' "$log" 2>/dev/null | tail -1)"
    if [ -z "$status_line" ] || grep -Eq 'ERROR|WARNING' <<<"$status_line"; then
      c_status=1
      cat "$work/check.log" >&2
      [ -f "$work/hphawkes.Rcheck/hphawkes-Ex.Rout" ] && tail -40 "$work/hphawkes.Rcheck/hphawkes-Ex.Rout" >&2
      echo "[r-tests] FAILED: R CMD check: ${status_line:-no status}" >&2
    else
      grep -B1 -A12 'NOTE$' "$log" >&2 || true
      echo "[r-tests] R CMD check: ${status_line#Status: } in $(( $(date +%s) - t0 )) s" >&2
    fi
  else
    c_status=1
    cat "$work/build.log" >&2
    echo "[r-tests] FAILED: R CMD build" >&2
  fi
fi
# The package for testthat and the vignettes: the one R CMD check installed, else install it.
lib="$work/hphawkes.Rcheck"
if [ ! -f "$lib/hphawkes/DESCRIPTION" ]; then
  lib="$work/lib"
  mkdir -p "$lib"
  echo "[r-tests] R CMD INSTALL -> $lib (python: $RETICULATE_PYTHON)" >&2
  if ! R CMD INSTALL --no-multiarch --no-docs --no-byte-compile -l "$lib" "$here" >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    echo "[r-tests] FAILED: R CMD INSTALL" >&2; exit 1
  fi
fi
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
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
# The R code the README and the documentation show, run as written.
Rscript --vanilla "$repo/scripts/r_doc_blocks.R" "$repo"
d_status=$?
v_status=0
if [ -z "${HPHAWKES_SKIP_VIGNETTES:-}" ] && [ -f "$repo/vignettes/run_vignettes.sh" ]; then
  bash "$repo/vignettes/run_vignettes.sh" --quick
  v_status=$?
fi
echo "[r-tests] done in $(( $(date +%s) - start )) s: man exit $m_status, R CMD check exit $c_status, testthat exit $t_status, doc blocks exit $d_status, vignettes exit $v_status" >&2
[ $m_status -eq 0 ] && [ $c_status -eq 0 ] && [ $t_status -eq 0 ] && [ $d_status -eq 0 ] && [ $v_status -eq 0 ]
