#!/usr/bin/env bash
# Builds and runs victim.cu on the first CUDA GPU.
# Usage: tools/measure/victim/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         loads and stores), victim.csv (see victim.cu).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build victim "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|CS2R|LDG|STG|REDUX|S2R' | head -40 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/victim.csv"
echo "victim rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
tail -3 "$ENV"
