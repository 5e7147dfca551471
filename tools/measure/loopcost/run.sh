#!/usr/bin/env bash
# Builds and runs loopcost.cu on an H200.
#
# Usage: tools/measure/loopcost/run.sh [OUTDIR] [second]
#   (OUTDIR default $OUT, else out/ beside this script; `second`: the
#   second call's kernels)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report), sass.txt (the
#         SASS of every kernel), loopcost.csv (a line per kernel: cycles
#         per trip of one warp alone).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loopcost "${1:-}"
cuobjdump -sass "$BIN" | grep -vE "^\s*/\* [0-9a-f]{4} \*/\s+0x" >"$OUTDIR/sass.txt"
timeout 120 "$BIN" ${2:-} >"$OUTDIR/loopcost.csv" 2>&1
cat "$OUTDIR/loopcost.csv"
