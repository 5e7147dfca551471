#!/usr/bin/env bash
# Builds and runs latspread.cu on an H200 (CUDA events and clock64 only,
# no profiler): one CSV line per case.
#
# Usage: tools/measure/latspread/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, latspread.csv, sass.txt (the disassembly: the clock64
# reads stand after the loaded value's first use).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build latspread "${1:-}"
cuobjdump -sass "$BIN" >"$OUTDIR/sass.txt" 2>&1
timeout 200 "$BIN" >"$OUTDIR/latspread.csv" 2>&1
echo "rc=$? rows: $(($(wc -l <"$OUTDIR/latspread.csv") - 1))"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader >>"$ENV"
cat "$OUTDIR/latspread.csv"
echo "== done ($(date -u '+%H:%M:%S'))"
