#!/usr/bin/env bash
# Call 2 of loadlat (`./loadlat spread`): how widely each warp's load latency
# spreads in seed 002's stride kernel at large strides, with its store (rw)
# and without (ro), at 4 and 256 MiB, with 8 and with 2 blocks an SM (unused
# dynamic shared memory): is the long tail the stores' doing (the DRAM's
# write drains, DEVIATIONS.md 23), and does it go with the lines lost
# between a load and its store (DEVIATIONS.md 38)?
# Usage: tools/measure/loadlat/call2.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (as run.sh, with the SASS of timed_s), spread.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
{
    echo "---- SASS of timed_s: the clock reads (CS2R) around the load and the store or compare"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /timed_s/)} p && /CS2R|LDG|STG|FSETP|DSETP|ISETP|Function/'
} >>"$ENV" 2>&1
timeout 300 "$BIN" spread >"$OUTDIR/spread.csv" 2>>"$ENV"
echo "spread rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/spread.csv"
