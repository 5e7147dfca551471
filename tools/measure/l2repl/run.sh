#!/usr/bin/env bash
# Builds and runs l2repl.cu on the first CUDA GPU.
# Usage: tools/measure/l2repl/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         timed load), repl.csv (see l2repl.cu).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build l2repl "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|CS2R|LDG|STG|REDUX|S2R' | head -40 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/repl.csv"
echo "repl rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
tail -3 "$ENV"
