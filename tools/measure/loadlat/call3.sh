#!/usr/bin/env bash
# Call 3 of loadlat (`./loadlat window`): call 2 found that the stride
# kernel's store stretches the tail of its loads' latency at large strides
# with 8 blocks an SM. Is it the DRAM's writes, or the stores' way through
# the L2? The same loads, with the store back into the loaded line (rw),
# without a store (ro), and with the store moved into an 8 MiB window that
# the L2 keeps (win: the same requests into the L2, no DRAM writes), at 256
# MiB, float strides 16 and 32 and double 16, 24, 32, with 8 and 2 blocks
# an SM.
# Usage: tools/measure/loadlat/call3.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (as run.sh, with the SASS of timed_s and timed_w), window.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
{
    echo "---- SASS of timed_s and timed_w: the clock reads (CS2R) around the load and the store or compare"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /timed_[sw]/)} p && /CS2R|LDG|STG|FSETP|DSETP|Function/'
} >>"$ENV" 2>&1
timeout 300 "$BIN" window >"$OUTDIR/window.csv" 2>>"$ENV"
echo "window rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/window.csv"
