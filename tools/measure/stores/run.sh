#!/usr/bin/env bash
# Builds and runs the store-path measurements (stores.cu) on the first CUDA
# GPU: event/graph timing of every case, then one Nsight Compute run with
# cache flushing (ncu default, --cache-control all) and one without.
#
# Usage: tools/measure/stores/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/stores/out.
# Writes into OUTDIR (7 files):
#   env.txt         date, nvidia-smi (clocks, ECC), nvcc/ncu versions, ptxas
#                   report, store instructions per kernel from the SASS,
#                   metric check
#   sass.txt        cuobjdump -sass of the binary
#   time.csv        ./stores time: one row per case
#   smi_clocks.csv  nvidia-smi samples (100 ms) during the timing run
#   ncu_all.csv     ncu --cache-control all  (flush before every launch)
#   ncu_none.csv    ncu --cache-control none
# and prints a summary; run it as `run.sh 2>&1 | tee $OUT/run.log`.
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/stores
ENV=$OUTDIR/env.txt

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE,ECC
    nvcc --version
    echo "---- build: nvcc -O3 -arch=sm_90 -Xptxas -v -o stores stores.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/stores.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then
    cat "$ENV"
    echo "BUILD FAILED"
    exit 1
fi
echo "== build ok"

cuobjdump -sass "$BIN" >"$OUTDIR/sass.txt" 2>&1
{
    echo "---- store instructions per kernel (cuobjdump -sass): function opcode count"
    awk '/Function :/ {fn = $3}
         /STG/ {match($0, /STG[.A-Z0-9_]*/); c[fn " " substr($0, RSTART, RLENGTH)]++}
         END {for (k in c) print k, c[k]}' "$OUTDIR/sass.txt" | sort
} >>"$ENV"
sed -n '/---- store instructions/,$p' "$ENV"

echo "== time"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -lms 100 >"$OUTDIR/smi_clocks.csv" 2>&1 &
SMI_PID=$!
timeout 200 "$BIN" time "$OUTDIR/time.csv" 2>&1
rc=$?
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
echo "time rc=$rc"
{
    echo "---- after timing run"
    nvidia-smi -q -d CLOCK,PERFORMANCE
} >>"$ENV" 2>&1

echo "== ncu"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then
    echo "ncu not found"
    exit 1
fi
"$NCU" --version >>"$ENV" 2>&1
WANT="gpu__time_duration.sum l1tex__t_requests_pipe_lsu_mem_global_op_st.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum lts__t_sectors_srcunit_tex_op_write.sum lts__t_sectors_srcunit_tex_op_read.sum lts__t_requests_srcunit_tex_op_write.sum dram__bytes_read.sum dram__bytes_write.sum lts__t_sectors_op_write.sum lts__t_sectors_op_read.sum lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum sm__cycles_elapsed.avg.per_second"
ok_run() { grep -q '^"ID"' "$1" && ! grep -q '==ERROR==' "$1"; }
M=$(echo $WANT | tr ' ' ',')
"$NCU" --clock-control none --print-units base --csv --metrics "$M" "$BIN" probe >"$TMP/probe.txt" 2>&1
if ok_run "$TMP/probe.txt"; then
    echo "---- metrics: all accepted" >>"$ENV"
else
    echo "---- probe with all metrics failed:" >>"$ENV"
    grep -v '^"' "$TMP/probe.txt" | head -20 >>"$ENV"
    M=""
    for m in $WANT; do
        "$NCU" --clock-control none --print-units base --csv --metrics "$m" "$BIN" probe >"$TMP/p1.txt" 2>&1
        if ok_run "$TMP/p1.txt"; then
            M=${M:+$M,}$m
        else
            echo "metric dropped: $m" >>"$ENV"
            grep '==ERROR==' "$TMP/p1.txt" | head -3 >>"$ENV"
        fi
    done
fi
echo "metrics used: $M" | tee -a "$ENV"
[ -z "$M" ] && exit 1

timeout 170 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu_all.csv" 2>&1
echo "ncu all rc=$?"
timeout 150 "$NCU" --clock-control none --cache-control none --print-units base --csv \
    --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu_none.csv" 2>&1
echo "ncu none rc=$?"
grep -hv '^"' "$OUTDIR"/ncu_*.csv | grep -iE "error|warn" | head -5

echo "== ncu, first launch of each case, cache-control all"
python3 "$HERE/ncu_table.py" "$OUTDIR/ncu_all.csv" --launch 0 --brief
echo "== ncu, second launch of each case, cache-control none"
python3 "$HERE/ncu_table.py" "$OUTDIR/ncu_none.csv" --launch 1 --brief
exit $rc
