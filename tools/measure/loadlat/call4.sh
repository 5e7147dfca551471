#!/usr/bin/env bash
# Call 4 of loadlat (`./loadlat trace`): calls 2 and 3 found the stride
# kernel's loads at 256 MiB with a long tail (p99 up to 8.5 times the
# median) once its stores reach the DRAM. Is that tail local (some warps of
# an SM served out of turn: overtaken by warps that issued after them) or
# global (phases of the whole kernel in which every load waits)? Each
# warp's load is recorded with its SM, its SM's cycle counter and the
# GPU's globaltimer: float stride 32 without store (ro), stored back (rw)
# and stored into an 8 MiB window (win); double stride 24 ro and rw; float
# stride 32 rw with 2 blocks an SM; float stride 8 rw.
# Usage: tools/measure/loadlat/call4.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (as run.sh, with the SASS of traced), trace_summary.csv,
# trace_series.csv, trace_per_sm.csv, trace_raw.csv (loadlat.cu says what
# each holds).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
{
    echo "---- SASS of traced: the clock and globaltimer reads around the load and the store or compare"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /traced/)} p && /CS2R|S2UR|S2R|GLOBALTIMER|LDG|STG|FSETP|DSETP|Function/'
} >>"$ENV" 2>&1
timeout 400 "$BIN" trace "$OUTDIR" 2>>"$ENV"
echo "trace rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/trace_summary.csv"
tail -5 "$ENV"
