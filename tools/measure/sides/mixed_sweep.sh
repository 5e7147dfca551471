#!/usr/bin/env bash
# Builds mixed.cu and runs its `sweep` cases (how an SM's hits wait with the
# number of miss warps beside them, on the same or other schedulers).
# Usage: tools/measure/sides/mixed_sweep.sh [OUTDIR]
# Writes: env.txt, mixed_sweep.csv (the columns of mixed.csv).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build mixed "${1:-}"
timeout 300 "$BIN" "$OUTDIR/mixed_sweep.csv" sweep
echo "mixed sweep rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
tail -4 "$ENV"
