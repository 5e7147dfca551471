#!/usr/bin/env bash
# Call 8 of loadlat (`./loadlat mid OUTDIR occ`): call 6 found that at 8
# blocks an SM a store of the stride kernel waits thousands of cycles to
# issue, with its load (rw) or without (wo), and 90 cycles at 2 blocks.
# From how many store lines asked for per SM does the wait begin? Call 6's
# cases again, then wo (float 32, double 24) and rw (float 32) with unused
# dynamic shared memory leaving 8 down to 1 blocks an SM.
# Usage: tools/measure/loadlat/call8.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, mid.csv, mid_per_sm.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
timeout 500 "$BIN" mid "$OUTDIR" occ >"$OUTDIR/mid.csv" 2>>"$ENV"
echo "mid rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/mid.csv"
tail -3 "$ENV"
