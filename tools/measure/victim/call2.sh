#!/usr/bin/env bash
# Call 2 of victim: a set of 8 MiB read, then other lines read, written
# whole, or written 8 bytes of each 32-byte sector (VICTIM_POLLUTE=1, see
# victim.cu), then the set probed: does a partly written line take more of
# the L2 than a line read or written whole?
# Usage: tools/measure/victim/call2.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, pollute.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build victim "${1:-}"
VICTIM_POLLUTE=1 timeout 300 "$BIN" "$OUTDIR/pollute.csv"
echo "victim call 2 rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
