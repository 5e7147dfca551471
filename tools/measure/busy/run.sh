#!/usr/bin/env bash
# Builds and runs busy.cu on the first CUDA GPU.
# Usage: tools/measure/busy/run.sh [OUTDIR [MODE...]]   (default $OUT, else out/ beside this script;
#        modes lat mix stream act unless named, e.g. `run.sh "$OUT" split`)
# Writes: env.txt (date, GPU, clocks, versions, ptxas report, the SASS of the
#         streaming and timed loads), lat.csv, mix.csv, stream.csv, act.csv (see busy.cu) and
#         summary.txt (tools/measure/busy/summary.py of the two).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build busy "${1:-}"
cuobjdump --dump-sass "$BIN" | awk '/Function :/ {p = 1} p && /Function|CS2R|LDG|STG|BAR/' >>"$ENV" 2>&1
shift || true
modes=${*:-lat mix stream act}
for m in $modes; do
    timeout 240 "$BIN" $m "$OUTDIR/$m.csv"
    echo "$m rc=$?" >>"$ENV"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
[ $# -eq 0 ] && python3 "$HERE/summary.py" "$OUTDIR" | tee "$OUTDIR/summary.txt"
tail -5 "$ENV"
