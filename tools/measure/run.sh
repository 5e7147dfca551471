#!/usr/bin/env bash
# Builds and runs the memory-subsystem microbenchmarks (microbench.cu) on the
# first CUDA GPU, then times the empty and seed kernels under Nsight Compute.
#
# Usage: tools/measure/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/out.
# Writes into OUTDIR:
#   env.txt           nvidia-smi, nvcc and ncu versions, clocks before/after
#   build.log         nvcc command and ptxas resource report
#   sass.txt          disassembly of the benchmark kernels
#   microbench.txt    all results (R,section,name,value,unit,detail) + summary
#   smi_clocks.csv    nvidia-smi clock/power samples (100 ms) during the run
#   ncu_time.csv      ncu: gpu__time_duration of empty and seed kernels
#   ncu_metrics.csv   ncu: SM clock, DRAM bytes, L2 hit rate of the same
#   ncu_summary.txt   per-kernel medians of both ncu runs
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
BIN=$(mktemp -d)/microbench

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE
    nvcc --version
} >"$OUTDIR/env.txt" 2>&1

echo "== build"
{
    echo "nvcc -O3 -arch=sm_90 -Xptxas -v -o microbench microbench.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/microbench.cu"
} >"$OUTDIR/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    cat "$OUTDIR/build.log"
    echo "BUILD FAILED rc=$rc"
    exit 1
fi
echo "build ok: $(grep -c "Compiling entry" "$OUTDIR/build.log") kernels, spills: $(grep -c "[1-9][0-9]* bytes spill" "$OUTDIR/build.log")"
cuobjdump --dump-sass "$BIN" >"$OUTDIR/sass.txt" 2>&1

echo "== run"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -lms 100 >"$OUTDIR/smi_clocks.csv" 2>&1 &
SMI_PID=$!
timeout 400 "$BIN" 2>&1 | tee "$OUTDIR/microbench.txt"
mb_rc=$?
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
echo "microbench rc=$mb_rc"

{
    echo "---- after run"
    nvidia-smi -q -d CLOCK,PERFORMANCE
} >>"$OUTDIR/env.txt" 2>&1

echo "== ncu"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
    "$NCU" --version >>"$OUTDIR/env.txt" 2>&1
    timeout 150 "$NCU" --clock-control none --cache-control none --print-units base --csv \
        --metrics gpu__time_duration.sum "$BIN" ncu >"$OUTDIR/ncu_time.csv" 2>&1
    echo "ncu (time) rc=$?"
    timeout 150 "$NCU" --clock-control none --cache-control none --print-units base --csv \
        --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
        "$BIN" ncu >"$OUTDIR/ncu_metrics.csv" 2>&1
    echo "ncu (metrics) rc=$?"
    {
        echo "# ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum"
        python3 "$HERE/ncu_summary.py" "$OUTDIR/ncu_time.csv"
        echo
        echo "# ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct"
        python3 "$HERE/ncu_summary.py" "$OUTDIR/ncu_metrics.csv"
    } >"$OUTDIR/ncu_summary.txt" 2>&1
    grep -v '^"' "$OUTDIR/ncu_time.csv" | grep -iE "error|warn" | head -5
    grep -v '^"' "$OUTDIR/ncu_metrics.csv" | grep -iE "error|warn" | head -5
else
    echo "ncu not found" | tee "$OUTDIR/ncu_summary.txt"
fi

echo "== results"
sed -n '/---- summary/,$p' "$OUTDIR/microbench.txt"
cut -d, -f1-9 "$OUTDIR/ncu_summary.txt"
exit $mb_rc
