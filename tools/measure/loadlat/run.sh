#!/usr/bin/env bash
# Builds and runs loadlat.cu on the first CUDA GPU.
# Usage: tools/measure/loadlat/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, GPU, clocks before and after, versions, ptxas report,
#         the timed kernels' SASS around the clock reads), loadlat.csv, and
#         ncu.csv: Nsight Compute on one launch of each plain kernel (cold,
#         --cache-control all, --clock-control none): time, achieved
#         occupancy, active cycles, DRAM bytes and throughput; life.csv
#         (./loadlat life: warps' and blocks' lives, blocks resident per SM).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build loadlat "${1:-}"
need_ncu
{
    echo "---- SASS of the timed kernels: the clock reads (CS2R) around the load and store"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $0; p = (f ~ /timed/)} p && /CS2R|LDG|STG|FADD|DADD|Function/'
} >>"$ENV" 2>&1
"$BIN" >"$OUTDIR/loadlat.csv" 2>>"$ENV"
echo "run rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
"$NCU" --version >>"$ENV" 2>&1
"$NCU" --clock-control none --cache-control all --kernel-name regex:plain --csv \
    --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__warps_launched.sum \
    "$BIN" once >"$OUTDIR/ncu.csv" 2>>"$ENV"
echo "ncu rc=$?" >>"$ENV"
"$BIN" life >"$OUTDIR/life.csv" 2>>"$ENV"
echo "life rc=$?" >>"$ENV"
cat "$OUTDIR/life.csv"
cat "$OUTDIR/loadlat.csv"
tail -40 "$ENV"
