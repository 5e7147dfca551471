#!/usr/bin/env bash
# Builds and runs sides.cu on the first CUDA GPU.
# Usage: tools/measure/sides/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         loads and stores), sides.csv (see sides.cu).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build sides "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'LDG|STG|CS2R' | head -20 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/sides.csv"
echo "sides rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
tail -3 "$ENV"
