#!/usr/bin/env bash
# Build SaTScan's batch (command-line) binary from its public sources, as the peer that hp.scan's
# tests and benchmarks compare against (tests/test_scan_normal.py, benchmarks/bench_scan_satscan.py).
#
# Usage:
#   bash benchmarks/peers/build_satscan.sh SATSCAN_SRC [OUT]
#
#   SATSCAN_SRC  a checkout (or bare git directory) of https://github.com/scanstatistics/satscan
#                (SaTScan 10.3.2 is its commit 0cd87a67, "#66698 - updated release date")
#   OUT          the folder the binary is written to, as OUT/SaTScan (default /work/scratch/satscan);
#                the tests look for /work/scratch/satscan/SaTScan
#
# The sources are not modified: the tree at HEAD is copied to a temporary folder and built there.
# Nothing is downloaded by this script and nothing of SaTScan enters the project.
#
# System prerequisites (Debian 12): g++ make libboost-dev libboost-thread-dev libboost-regex-dev
# libboost-program-options-dev libboost-filesystem-dev libboost-chrono-dev libboost-timer-dev
# libboost-system-dev.
#
# Environment: JOBS (parallel compilations, default 2); OPTIMIZATION (default -O3, SaTScan's own). On a
# busy machine OPTIMIZATION=-O0 compiles several times faster; on x86-64 without -ffast-math or FMA
# the floating-point results are the same at any level (SSE2 arithmetic, no contraction), only slower.
#
# Differences from SaTScan's own scripts/linux/makescript.sh: a 64-bit build (-m64, theirs is -m32),
# and Boost's compiled parts (thread, regex, program_options, chrono, timer, system, filesystem) are
# linked from the system's Boost instead of compiled from a Boost source tree (their Makefile lists
# those .cpp files under BOOSTDIR). Both change how SaTScan is built, not what it computes.
set -euo pipefail

if [ "$#" -lt 1 ] || [ "$#" -gt 2 ]; then
    sed -n '5,12p' "$0" >&2
    exit 2
fi
SRC=$(cd "$1" && pwd)
OUT=${2:-/work/scratch/satscan}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
JOBS=${JOBS:-2}
OPTIMIZATION=${OPTIMIZATION:--O3}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -d "$SRC/.git" ]; then GIT=(git -C "$SRC"); else GIT=(git --git-dir="$SRC"); fi
# only what the batch binary is built from (a snapshot may lack the large documents and installers)
"${GIT[@]}" archive HEAD -- Makefile calculation batch_application newmat shapelib xbase zlib | tar -x -C "$WORK"
REV=$("${GIT[@]}" rev-parse HEAD)
S=$WORK

echo "building xbase ..."
(cd "$S/xbase/xbase_2.0.0/xbase" && make -s COMPILATION=-m64 CC=g++ DEBUG= libxbase.a >/dev/null)
echo "building newmat ..."
(cd "$S/newmat/newmat10" && make -s -j"$JOBS" -f nm_gnu.mak libnewmat.a CXX=g++ CXXFLAGS="-O2 -m64" >/dev/null)
echo "building shapelib ..."
(cd "$S/shapelib/shapelib_1.2.10" && make -s libshape.a CXX=g++ CXXFLAGS="-O2 -m64" >/dev/null)
echo "building zlib ..."
# SaTScan's own zlib Makefile: its libz.a carries minizip's zip.o and ioapi.o, which SaTScan links
(cd "$S/zlib/zlib-1.3.1" && make -s -j"$JOBS" libz.a CC=gcc CFLAGS="-O3 -m64 -DHAVE_HIDDEN" >/dev/null)

# SaTScan's Makefile, less the Boost sources it compiles (the system libraries stand in for them)
grep -v 'BOOSTDIR)/libs/' "$S/Makefile" > "$S/Makefile.system-boost"
echo "building SaTScan (a few minutes) ..."
(cd "$S" && make -s -j"$JOBS" -f Makefile.system-boost SaTScan SATSCAN="$S" BOOSTDIR=/usr/include COMPILATION=-m64 \
    DEBUG= OPTIMIZATION="$OPTIMIZATION" CC=g++ PLAT_DEFINES=-DBOOST_NO_INCLASS_MEMBER_INITIALIZATION \
    LFLAGS="-m64 -L$S/xbase/xbase_2.0.0/xbase -L$S/newmat/newmat10 -L$S/shapelib/shapelib_1.2.10 -L$S/zlib/zlib-1.3.1 \
-Wl,-Bstatic -lxbaseg -lnewmat -lshape -lz -Wl,-Bdynamic -lboost_thread -lboost_regex -lboost_program_options \
-lboost_chrono -lboost_timer -lboost_filesystem -lboost_system -lm -lrt -lpthread" 2>&1 | grep -v -i 'warning\|note:\|^ \|^In \|~\|\^' || true)
test -x "$S/SaTScan"
strip "$S/SaTScan"
cp "$S/SaTScan" "$OUT/SaTScan"
echo "$REV" > "$OUT/SOURCE_COMMIT"
# how the binary was built, read by the benchmarks: an unoptimised SaTScan is slower, and a ratio against
# it is not a ratio against the SaTScan users run
echo "OPTIMIZATION=$OPTIMIZATION" > "$OUT/BUILD_FLAGS"
echo "SaTScan $("$OUT/SaTScan" --version 2>&1 | head -1) -> $OUT/SaTScan (source commit $REV)"
