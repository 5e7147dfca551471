#!/usr/bin/env bash
# Builds and runs the address-translation measurements (tlb.cu) on the first
# CUDA GPU, then times the seed and stride kernels under Nsight Compute with
# and without cache flushing.
#
# Usage: tools/measure/tlb/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/tlb/out.
# Writes into OUTDIR:
#   env.txt                  date, nvidia-smi, nvcc/ncu versions, build log
#   tlb.txt                  pointer-chase results (R,size,case,loads,cyc,ns,detail)
#   ncu_flush.csv            ncu --cache-control all  (gpu__time_duration.sum)
#   ncu_noflush.csv          ncu --cache-control none (gpu__time_duration.sum)
#   ncu_metrics_flush.csv    same, plus DRAM bytes and L2 hit rate, flushed
#   ncu_metrics_noflush.csv  same, not flushed
#   ncu_summary.txt          per-kernel medians of the four ncu runs
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
BIN=$(mktemp -d)/tlb

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
    nvcc --version
    echo "---- build: nvcc -O3 -arch=sm_90 -Xptxas -v -o tlb tlb.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/tlb.cu" 2>&1
    echo "build rc=$?"
} >"$OUTDIR/env.txt" 2>&1
if [ ! -x "$BIN" ]; then
    cat "$OUTDIR/env.txt"
    echo "BUILD FAILED"
    exit 1
fi

echo "== chase"
timeout 300 "$BIN" 2>&1 | tee "$OUTDIR/tlb.txt"
rc=$?
echo "tlb rc=$rc"

echo "== ncu"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
    "$NCU" --version >>"$OUTDIR/env.txt" 2>&1
    M2=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
    for cc in all none; do
        [ $cc = all ] && tag=flush || tag=noflush
        timeout 100 "$NCU" --clock-control none --cache-control $cc --print-units base --csv \
            --metrics gpu__time_duration.sum "$BIN" ncu >"$OUTDIR/ncu_$tag.csv" 2>&1
        echo "ncu $cc rc=$?"
        timeout 100 "$NCU" --clock-control none --cache-control $cc --print-units base --csv \
            --metrics $M2 "$BIN" ncu >"$OUTDIR/ncu_metrics_$tag.csv" 2>&1
        echo "ncu metrics $cc rc=$?"
    done
    {
        for tag in flush noflush; do
            [ $tag = flush ] && cc=all || cc=none
            echo "# ncu --clock-control none --cache-control $cc --metrics gpu__time_duration.sum ./tlb ncu"
            python3 "$HERE/../ncu_summary.py" "$OUTDIR/ncu_$tag.csv"
            echo
            echo "# ncu --clock-control none --cache-control $cc --metrics $M2 ./tlb ncu"
            python3 "$HERE/../ncu_summary.py" "$OUTDIR/ncu_metrics_$tag.csv"
            echo
        done
    } >"$OUTDIR/ncu_summary.txt" 2>&1
    cat "$OUTDIR/ncu_summary.txt"
    grep -hv '^"' "$OUTDIR"/ncu_*.csv | grep -iE "error|warn" | head -5
else
    echo "ncu not found"
fi
exit $rc
