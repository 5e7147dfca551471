#!/usr/bin/env bash
# Builds and runs survive.cu on an H200.
# Usage: tools/measure/survive/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         loads), survive.csv (see survive.cu), run output in run.log (the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build survive "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|CS2R|LDG|STG|REDUX' | head -60 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/survive.csv"
echo "survive rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
tail -3 "$ENV"
