#!/usr/bin/env bash
# Install R and the Debian R packages the R wrapper needs, when running as root and they are missing.
# (CRAN is not used: everything comes from Debian. roxygen2 generates r-wrapper/man; see r-wrapper/check_man.sh.)
set -uo pipefail
PKGS="r-base-core r-base-dev r-cran-reticulate r-cran-coda r-cran-ggplot2 r-cran-testthat r-cran-knitr r-cran-rmarkdown r-cran-roxygen2"
missing=()
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "[setup] installing Debian packages: ${missing[*]} (a few minutes the first time)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || { echo "[setup] apt-get install failed" >&2; exit 1; }
else
  echo "[setup] missing Debian packages: ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
