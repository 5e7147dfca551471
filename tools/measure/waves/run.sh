#!/usr/bin/env bash
# Builds and runs waves.cu on the first CUDA GPU (an H200: it stops on any
# other): seed 002's stride kernel at 256 MiB, each block's exit time, per
# wave; and the plain kernel's warm time beside the recording one's.
#
# Usage: tools/measure/waves/run.sh [OUTDIR [MIB|blocks]]   (default $OUT, else ./out;
# 256 MiB, or MIB: `run.sh $OUT 1024`, five cases at 1 GiB; `run.sh $OUT blocks`:
# every block's SM, entry and exit in one launch of four cases, without and
# with each store acknowledged first, gzipped, and the four kernels' warm times;
# `run.sh $OUT side`: which SMs are near which L2 lines, then two of those cases)
# Writes: env.txt, waves.csv, time.csv (waves_1024mib.csv, time_1024mib.csv
# for 1024), resolution.txt (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build waves "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
if [ "${2:-}" = blocks ] || [ "${2:-}" = side ]; then
    timeout 300 "$BIN" "$2" "$OUTDIR"
    echo "waves blocks rc=$?"
    gzip -9 -f "$OUTDIR"/blocks_e*.csv "$OUTDIR"/blocks_fence_*.csv
    cat "$OUTDIR"/blocks_time.csv
    ls -l "$OUTDIR"
    campaign_end
    exit 0
fi
timeout 300 "$BIN" run "$OUTDIR" ${2:-}
echo "waves rc=$?"
cat "$OUTDIR/resolution.txt"
campaign_end
cat "$OUTDIR"/time_*mib.csv 2>/dev/null
