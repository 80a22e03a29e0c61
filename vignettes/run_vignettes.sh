#!/usr/bin/env bash
# Run every vignette: the R Markdown ones (vignettes/run_vignettes.R; HTML when pandoc exists)
# and the Python scripts under vignettes/python. Pass --quick for the reduced-data mode.
# Needs the R package installed (r-wrapper/run_tests.sh does that) and RETICULATE_PYTHON or
# the repo's .venv. Exit status non-zero if any vignette failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
py="${RETICULATE_PYTHON:-$repo/.venv/bin/python}"
export RETICULATE_PYTHON="$py"
out="$(mktemp -d "${TMPDIR:-/tmp}/hphawkes-vignettes.XXXXXX")"
status=0
Rscript --vanilla "$here/run_vignettes.R" "$@" --outdir "$out/R" || status=1
for f in "$here"/python/[a-z]*.py; do
  name="$(basename "$f" .py)"
  t0=$(date +%s)
  if "$py" "$f" "$@" --outdir "$out/python" >"$out/$name.log" 2>&1; then
    echo "[vignettes] python/$name.py ok in $(( $(date +%s) - t0 )) s" >&2
  else
    echo "[vignettes] python/$name.py FAILED:" >&2; tail -20 "$out/$name.log" >&2; status=1
  fi
done
echo "[vignettes] outputs in $out" >&2
exit $status
