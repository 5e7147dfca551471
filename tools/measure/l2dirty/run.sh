#!/usr/bin/env bash
# Builds and runs l2dirty.cu on the first CUDA GPU.
#
# Usage: tools/measure/l2dirty/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report), check.txt,
#         seq.csv (raw ncu --csv of the write-back sequences, with the
#         program's CASE lines; --cache-control none, so that each kernel
#         finds the L2 as the one before left it; few metrics, one pass),
#         stride.csv (raw ncu --csv of the strided kernels, one cold launch
#         each: --cache-control all).
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/l2dirty
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv
    nvcc --version | tail -2
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/l2dirty.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
timeout 120 "$BIN" check | tee "$OUTDIR/check.txt"
SEQ="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum"
timeout 240 "$NCU" --clock-control none --cache-control none --print-units base --csv \
    --kernel-name regex:^m_ --metrics "$SEQ" "$BIN" seq >"$OUTDIR/seq.csv" 2>&1
echo "ncu seq rc=$? passes: $(grep -o '[0-9]* pass' "$OUTDIR/seq.csv" | sort | uniq -c | tr '\n' ' ')"
STR="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread"
timeout 240 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --kernel-name regex:^m_ --metrics "$STR" "$BIN" stride >"$OUTDIR/stride.csv" 2>&1
echo "ncu stride rc=$?"
grep -v '^"' "$OUTDIR/seq.csv" "$OUTDIR/stride.csv" | grep -iE "error|warn" | head -5
echo "rows: $(grep -c gpu__time_duration "$OUTDIR/seq.csv") seq, $(grep -c gpu__time_duration "$OUTDIR/stride.csv") stride"
