#!/usr/bin/env bash
# Build the documentation site into docs/_build/html, with Sphinx warnings as errors:
#   bash scripts/docs.sh [--clean] [--no-gallery]
# 1. creates .venv and installs the package with its [docs] extra (as scripts/test.sh does with
#    [test]); HPHAWKES_DOCS_PYTHON=/path/to/python uses that interpreter instead and installs nothing;
# 2. renders the R package's help pages (scripts/r_reference.sh) into docs/_build/r-extra/r,
#    published as r/ in the site (skipped with a message when R or the script is missing);
# 3. runs Sphinx: the API reference from each namespace's __all__, the tables of the performance
#    and GPU pages from benchmarks/results/*.json, and the gallery (examples/plot_*.py, each run;
#    an example whose source has not changed since the last build is not rerun).
# --clean removes everything generated first (a cold build); --no-gallery skips running the examples.
# Exit status non-zero on any Sphinx warning, a failing example or a failing R reference.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
clean=0; gallery=1
for arg in "$@"; do
  case "$arg" in
    --clean) clean=1 ;;
    --no-gallery) gallery=0 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "docs.sh: unknown option $arg (use --clean, --no-gallery)" >&2; exit 2 ;;
  esac
done
start=$(date +%s)
if [ -n "${HPHAWKES_DOCS_PYTHON:-}" ]; then
  PY="$HPHAWKES_DOCS_PYTHON"
else
  source scripts/_env.sh "[docs]"
  PY=.venv/bin/python
fi
if [ "$clean" = 1 ]; then
  rm -rf docs/_build docs/auto_examples docs/api/generated docs/sg_execution_times.rst
fi

echo "== R reference ==" >&2
rm -rf docs/_build/r-extra
if [ ! -f scripts/r_reference.sh ]; then
  echo "[docs] scripts/r_reference.sh not found: the site is built without the R reference" >&2
elif ! command -v Rscript >/dev/null; then
  echo "[docs] Rscript not found (bash scripts/install_r.sh): the site is built without the R reference" >&2
else
  bash scripts/r_reference.sh docs/_build/r-extra/r || { echo "[docs] scripts/r_reference.sh failed" >&2; exit 1; }
fi

echo "== Sphinx ==" >&2
export MPLBACKEND=Agg
[ "$gallery" = 0 ] && export HPHAWKES_DOCS_NO_GALLERY=1
# -E: every page is read again, so a warning in a page that did not change still fails the build
# (the gallery's examples are rerun only when their source changed)
"$PY" -m sphinx -b html -E -W --keep-going -q docs docs/_build/html
status=$?
echo "== docs: exit $status in $(( $(date +%s) - start )) s; open docs/_build/html/index.html ==" >&2
exit $status
