#!/usr/bin/env bash
# Builds and runs wlife.cu on the first CUDA GPU.
#
# Usage: tools/measure/wlife/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, SASS of the kernels),
#         sreg.csv, blocks.csv, blocks_raw.csv, blocks_run2.csv (blocks.csv of a
#         second run).
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/wlife
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv
    nvcc --version | tail -2
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/wlife.cu" 2>&1
    echo "build rc=$?"
    cuobjdump -sass "$BIN" 2>&1 | grep -E "Function|CS2R|S2R|S2UR|IADD|BAR|EXIT" | head -80
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
timeout 60 "$BIN" sreg | tee "$OUTDIR/sreg.csv"
timeout 240 "$BIN" blocks "$OUTDIR"
cat "$OUTDIR/blocks.csv"
# A second run, to see how far the figures move between launches.
mkdir -p "$TMP/r2" && timeout 240 "$BIN" blocks "$TMP/r2" && cp "$TMP/r2/blocks.csv" "$OUTDIR/blocks_run2.csv"
cat "$OUTDIR/blocks_run2.csv"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader >>"$ENV"
