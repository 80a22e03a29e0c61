#!/usr/bin/env bash
# Build the peer R package hpHawkes (Holbrook, Loeffler, Flaxman & Suchard 2021) from source into a
# private R library, for benchmarks/bench_hawkes_hphawkes.py.
#
# Usage:
#   bash benchmarks/peers/build_hphawkes.sh HAWKES_SRC RCPPXSIMD_SRC RLIB
#
#   HAWKES_SRC     a checkout of https://github.com/suchard-group/hawkes (R package hpHawkes)
#   RCPPXSIMD_SRC  a checkout of https://github.com/OHDSI/RcppXsimd (xsimd headers + CPU detection)
#   RLIB           the private R library to install both into (created if missing); the benchmark
#                  finds it through HPHAWKES_R_LIB=RLIB
#
# Neither checkout is modified: each is copied to a temporary folder, hpHawkes is patched there and
# both are installed with `R CMD INSTALL -l RLIB`. Nothing is downloaded by this script.
#
# System prerequisites (Debian 12): r-base-dev r-cran-rcpp r-cran-rcppparallel libtbb-dev r-cran-bh
# r-cran-mvtnorm r-cran-truncnorm (RcppParallel is built against the system oneTBB).
#
# The patch: oneTBB 2021 removed tbb::task_scheduler_init. hpHawkes' createEngine() builds one and
# destroys it at the end of the same block, so it never limits anything; the thread count is enforced
# by the tbb::global_control that the engine itself (NewHawkes.hpp) holds. The two lines are deleted.
set -euo pipefail

if [ "$#" -ne 3 ]; then
    sed -n '5,12p' "$0" >&2
    exit 2
fi
HAWKES_SRC=$(cd "$1" && pwd)
XSIMD_SRC=$(cd "$2" && pwd)
RLIB=$3
mkdir -p "$RLIB"
RLIB=$(cd "$RLIB" && pwd)

for pkg in Rcpp RcppParallel BH mvtnorm truncnorm; do
    Rscript -e "if (!requireNamespace('$pkg', quietly = TRUE)) quit(status = 1)" \
        || { echo "R package $pkg is missing (Debian: apt-get install r-cran-$(echo $pkg | tr A-Z a-z))" >&2; exit 1; }
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$XSIMD_SRC" "$WORK/RcppXsimd"
cp -r "$HAWKES_SRC" "$WORK/hpHawkes"
rm -rf "$WORK/RcppXsimd/.git" "$WORK/hpHawkes/.git"

(cd "$WORK/hpHawkes" && patch -p1 --forward) <<'PATCH'
--- a/src/hpHawkes.cpp
+++ b/src/hpHawkes.cpp
@@ -77,8 +77,6 @@
   if (tbb > 0) {
     threads = tbb;
     flags |= hph::Flags::TBB;
-    std::shared_ptr<tbb::task_scheduler_init> task{nullptr};
-    task = std::make_shared<tbb::task_scheduler_init>(threads);
   }
 #endif
 
PATCH

export R_LIBS="$RLIB${R_LIBS:+:$R_LIBS}"
R CMD INSTALL --no-test-load -l "$RLIB" "$WORK/RcppXsimd"
R CMD INSTALL -l "$RLIB" "$WORK/hpHawkes"

# Record which sources were built (the benchmark writes it into its result file).
{ git -C "$HAWKES_SRC" rev-parse HEAD 2>/dev/null || echo unknown; } > "$RLIB/hpHawkes.source"
{ git -C "$XSIMD_SRC" rev-parse HEAD 2>/dev/null || echo unknown; } > "$RLIB/RcppXsimd.source"

Rscript -e "library(hpHawkes, lib.loc = '$RLIB'); cat('hpHawkes', as.character(packageVersion('hpHawkes', lib.loc = '$RLIB')), 'installed in $RLIB\n'); cat('AVX:', RcppXsimd::supportsAVX(), ' AVX-512:', RcppXsimd::supportsAVX512(), '\n')"
