#!/usr/bin/env bash
# Fail when the committed man/*.Rd or NAMESPACE differ from what roxygen2 generates from the
# roxygen comments in R/. Regenerates them in a temporary copy of the package (from scratch:
# man/ and NAMESPACE removed first, so a stale or hand-written page is caught too) and diffs.
#   bash r-wrapper/check_man.sh          # exit 0: up to date; 1: out of date (diff printed)
# To update the committed files: Rscript -e 'roxygen2::roxygenise("r-wrapper")'
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! Rscript --vanilla -e 'quit(status = !requireNamespace("roxygen2", quietly = TRUE))' >/dev/null 2>&1; then
  echo "[check-man] roxygen2 is not installed: apt-get install r-cran-roxygen2 (scripts/install_r.sh)" >&2
  exit 1
fi
tmp="$(mktemp -d "${TMPDIR:-/tmp}/hphawkes-man.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/hphawkes"
cp -R "$here/DESCRIPTION" "$here/R" "$tmp/hphawkes/"
# Loading the package for roxygen must not start Python (it does not: imports are delayed).
if ! Rscript --vanilla -e 'roxygen2::roxygenise(commandArgs(TRUE)[1])' "$tmp/hphawkes" >"$tmp/roxygen.log" 2>&1; then
  cat "$tmp/roxygen.log" >&2
  echo "[check-man] FAILED: roxygen2 could not process R/" >&2
  exit 1
fi
if grep -q "Warning\|✖" "$tmp/roxygen.log"; then
  cat "$tmp/roxygen.log" >&2
  echo "[check-man] FAILED: roxygen2 warned (see above)" >&2
  exit 1
fi
status=0
diff -ru --label committed/man --label generated/man "$here/man" "$tmp/hphawkes/man" >&2 || status=1
diff -u --label committed/NAMESPACE --label generated/NAMESPACE "$here/NAMESPACE" "$tmp/hphawkes/NAMESPACE" >&2 || status=1
if [ $status -ne 0 ]; then
  have="$(Rscript --vanilla -e 'cat(format(packageVersion("roxygen2")))')"
  want="$(sed -n 's/^RoxygenNote: *//p' "$here/DESCRIPTION")"
  echo "[check-man] FAILED: r-wrapper/man or NAMESPACE is out of date with the roxygen comments in R/." >&2
  echo "[check-man] Regenerate: Rscript -e 'roxygen2::roxygenise(\"r-wrapper\")' (roxygen2 $have here; files made with $want)" >&2
  exit 1
fi
echo "[check-man] man/ and NAMESPACE match the roxygen comments in R/" >&2
