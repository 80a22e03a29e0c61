#!/usr/bin/env bash
# The main job: the DC gunshot spatiotemporal Hawkes analysis (Holbrook et al. 2021) on the bundled
# no-holiday data, into ./hphawkes-dc-gunshots/. Extra arguments go to `hphawkes reproduce dc-gunshots`
# (e.g. --full for the paper's 4 chains x 10,000 iterations, --out DIR, --backend gpu).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/_env.sh ""
exec .venv/bin/hphawkes reproduce dc-gunshots "$@"
