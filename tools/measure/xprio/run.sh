#!/usr/bin/env bash
# Builds and runs xprio.cu (an L2 slice's hits beside read streams from its
# own partition's SMs and from the other's) on an H200.
#
# Usage: tools/measure/xprio/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/xprio/out.
# Writes into OUTDIR: env.txt, pages.csv, sms.csv, probe.csv (xprio.cu) and
# summary.txt (summary.py).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build xprio "${1:-}"
cuobjdump --dump-sass "$BIN" | awk '/Function :/ {p = 1} p && /Function|CS2R|LDG/' | head -60 >>"$ENV" 2>&1
timeout 500 "$BIN" "$OUTDIR"
echo "xprio rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
gzip -9 "$OUTDIR/pages.csv"
python3 "$HERE/summary.py" "$OUTDIR" | tee "$OUTDIR/summary.txt"
