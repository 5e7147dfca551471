#!/usr/bin/env bash
# Call 5 of loadlat (`./loadlat trace OUTDIR more`): call 4 found that with
# its stores (rw) the stride kernel's loads at float stride 32 and double
# 24 are slow on one fixed half of the SMs (66 of 132, a mean 38,000
# cycles against 10,000) which then run a quarter of the others' warps,
# where without stores (ro) or with them in an 8 MiB window (win) every SM
# is alike within 30%. Call 4's cases again, then: float stride 32 rw again
# (the same half, launch after launch?), with the array moved by 1 MiB and
# by 96 KiB + 128 B (the SMs' half, or the data's?), float strides 12-28
# and double 12-32 rw (from which stride on?).
# Usage: tools/measure/loadlat/call5.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, trace_summary.csv, trace_series.csv, trace_per_sm.csv,
# trace_raw.csv (call 4's cases only).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
timeout 500 "$BIN" trace "$OUTDIR" more 2>>"$ENV"
echo "trace rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/trace_summary.csv"
tail -5 "$ENV"
