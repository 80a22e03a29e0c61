#!/usr/bin/env bash
# Run every vignette: the R Markdown ones (vignettes/run_vignettes.R; HTML when pandoc exists)
# and the Python scripts under vignettes/python (run alongside the R ones: both are dominated
# by single-threaded imports and JIT-cache loads). Pass --quick for the reduced-data mode.
# Needs the R package installed (r-wrapper/run_tests.sh does that) and RETICULATE_PYTHON or
# the repo's .venv. HPHAWKES_SKIP_PY_VIGNETTES=1 skips the Python scripts.
# Exit status non-zero if any vignette failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
py="${RETICULATE_PYTHON:-$repo/.venv/bin/python}"
export RETICULATE_PYTHON="$py"
out="$(mktemp -d "${TMPDIR:-/tmp}/hphawkes-vignettes.XXXXXX")"
run_python() {
  local status=0 f name t0
  for f in "$here"/python/[a-z]*.py; do
    name="$(basename "$f" .py)"
    t0=$(date +%s)
    if "$py" "$f" "$@" --outdir "$out/python" >"$out/$name.log" 2>&1; then
      echo "[vignettes] python/$name.py ok in $(( $(date +%s) - t0 )) s" >&2
    else
      echo "[vignettes] python/$name.py FAILED (log $out/$name.log):" >&2; tail -20 "$out/$name.log" >&2; status=1
    fi
  done
  return $status
}
py_pid=""
if [ -z "${HPHAWKES_SKIP_PY_VIGNETTES:-}" ]; then
  run_python "$@" &
  py_pid=$!
fi
status=0
Rscript --vanilla "$here/run_vignettes.R" "$@" --outdir "$out/R" || status=1
if [ -n "$py_pid" ]; then wait "$py_pid" || status=1; fi
echo "[vignettes] outputs in $out" >&2
exit $status
