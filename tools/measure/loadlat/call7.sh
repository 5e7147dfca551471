#!/usr/bin/env bash
# Call 7 of loadlat (`./loadlat stcost`): call 6 found the SMs' way out
# full of stores at 8 blocks an SM, and the slow SMs' stores (into lines
# the L2 has likely lost) waiting longest. What does a store cost when its
# line is in the L2 (loaded just before, clean) and when it is not? One
# store a line, 4 bytes of a sector or all 32, over 8-64 MiB of lines
# (64k-512k lines, a quarter of a wave to two waves of 8 blocks an SM), each case seven
# times after a 512 MiB sweep of the L2 (and, where present, a load of the
# same sectors): the store kernel's time and its warps' wait to issue.
# Usage: tools/measure/loadlat/call7.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (with the SASS of st_timed), stcost.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
{
    echo "---- SASS of st_timed: the clock reads around the store(s)"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /st_timed/)} p && /CS2R|STG|Function/'
} >>"$ENV" 2>&1
timeout 300 "$BIN" stcost >"$OUTDIR/stcost.csv" 2>>"$ENV"
echo "stcost rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/stcost.csv"
tail -3 "$ENV"
