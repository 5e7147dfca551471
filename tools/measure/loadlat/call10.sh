#!/usr/bin/env bash
# Call 10 of loadlat (`./loadlat hit DIR`): calls 4-8 found the stride
# kernel's SMs split at 8 blocks an SM into the L2's two partitions' halves
# (../race calls 5-6), a slow half's loads and stores waiting 4-5 times
# longer while its partition's slices take requests in 11% of their
# cycles. Where do its requests wait? Each warp first reads a line of a
# 256 KiB buffer every warp reads (an L2 hit, past the L1), timed apart
# from the kernel's own load and store: float stride 32 and double 24 at 8
# blocks an SM (three launches each), float 32 at 2 blocks, float stride 1.
# Usage: tools/measure/loadlat/call10.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, hit.csv, hit_per_sm.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
timeout 300 "$BIN" hit "$OUTDIR" >"$OUTDIR/hit.csv" 2>>"$ENV"
echo "hit rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/hit.csv"
tail -3 "$ENV"
