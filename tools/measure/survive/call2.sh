#!/usr/bin/env bash
# Call 2 of survive (SURVIVE_CALL2=1, see survive.cu): the probe beside
# three streams at 2 blocks an SM (the stride kernel double 24, float 32,
# and the double 24 load alone), each stream also timed alone.
# Usage: tools/measure/survive/call2.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, survive2.csv, run output (stream times) in run.log (the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build survive "${1:-}"
SURVIVE_CALL2=1 timeout 300 "$BIN" "$OUTDIR/survive2.csv"
echo "survive call 2 rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
