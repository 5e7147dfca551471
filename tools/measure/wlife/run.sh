#!/usr/bin/env bash
# Builds and runs wlife.cu on the first CUDA GPU.
#
# Usage: tools/measure/wlife/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, SASS of the kernels),
#         sreg.csv, blocks.csv, blocks_raw.csv, blocks_run2.csv (blocks.csv of a
#         second run).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build wlife "${1:-}"
cuobjdump -sass "$BIN" 2>&1 | grep -E "Function|CS2R|S2R|S2UR|IADD|BAR|EXIT" | head -80 >>"$ENV"
timeout 60 "$BIN" sreg | tee "$OUTDIR/sreg.csv"
timeout 240 "$BIN" blocks "$OUTDIR"
cat "$OUTDIR/blocks.csv"
# A second run, to see how far the figures move between launches.
rm -f "$OUTDIR/blocks_run2.csv"
mkdir -p "$TMP/r2" && timeout 240 "$BIN" blocks "$TMP/r2" && cp "$TMP/r2/blocks.csv" "$OUTDIR/blocks_run2.csv"
cat "$OUTDIR/blocks_run2.csv"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader >>"$ENV"
