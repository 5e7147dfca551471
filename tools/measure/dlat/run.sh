#!/usr/bin/env bash
# Builds and runs dlat.cu on the first CUDA GPU.
# Usage: tools/measure/dlat/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         timed loads), cv.csv, chase.csv, clean.csv, loaded.csv, pair.csv (see dlat.cu), and
#         summary.txt (tools/measure/dlat/summary.py of the three).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build dlat "${1:-}"
cuobjdump --dump-sass "$BIN" | awk '/Function :/ {p = 1} p && /Function|CS2R|LDG|STG|BAR/' >>"$ENV" 2>&1
for m in cv chase clean loaded pair; do
    timeout 120 "$BIN" $m "$OUTDIR/$m.csv"
    echo "$m rc=$?" >>"$ENV"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
python3 "$HERE/summary.py" "$OUTDIR" | tee "$OUTDIR/summary.txt"
tail -5 "$ENV"
