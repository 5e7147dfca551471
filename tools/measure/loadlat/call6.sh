#!/usr/bin/env bash
# Call 6 of loadlat (`./loadlat mid`): calls 4 and 5 found half the SMs
# slow (38,000 cycles from the load's issue to the store's) in the stride
# kernel at large strides with 8 blocks an SM. Is that time the load's
# (its data late) or the store's (its issue held back)? A third clock read
# between them, once the loaded value has been used: float stride 32 and
# double 24 rw, three launches each (the split differs launch to launch);
# the store alone (wo, no load); float 32 rw with 2 blocks an SM; float 16
# and 8 rw.
# Usage: tools/measure/loadlat/call6.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (with the SASS of traced_mid), mid.csv, mid_per_sm.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
{
    echo "---- SASS of traced_mid: the three clock reads around the load, the add and the store"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /traced_mid/)} p && /CS2R|LDG|STG|FADD|DADD|Function/'
} >>"$ENV" 2>&1
timeout 400 "$BIN" mid "$OUTDIR" >"$OUTDIR/mid.csv" 2>>"$ENV"
echo "mid rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/mid.csv"
grep -A12 'traced_mid' "$ENV" | head -40
tail -3 "$ENV"
