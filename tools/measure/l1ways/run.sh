#!/usr/bin/env bash
# Builds and runs l1ways.cu (the L1's sets and ways, one thread's pointer
# chase) on an H200.
#
# Usage: tools/measure/l1ways/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/l1ways/out.
# Writes into OUTDIR:
#   env.txt      date, GPU, driver, clocks, nvcc version, ptxas report
#   l1ways.csv   R,op,smem,stride_bytes,n,cycles_per_load,chain_ok
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build l1ways "${1:-}"
timeout 300 "$BIN" | tee "$OUTDIR/l1ways.csv" | grep -v '^R' 
echo "l1ways rc=$? rows=$(grep -c '^R,c' "$OUTDIR/l1ways.csv")"
