#!/usr/bin/env bash
# Second run: footprint sweep of partial-sector stores below the L2 size
# (./stores time-sweep and ./stores ncu-sweep; cases in stores.cu,
# make_sweep_cases). Same build and Nsight Compute settings as run.sh.
#
# Usage: tools/measure/stores/run_sweep.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/stores/out.
# Writes into OUTDIR:
#   env_sweep.txt         date, nvidia-smi, versions, ptxas report
#   time_sweep.csv        ./stores time-sweep
#   ncu_sweep_all.csv     ncu --cache-control all  ./stores ncu-sweep
#   ncu_sweep_none.csv    ncu --cache-control none ./stores ncu-sweep
set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/stores
ENV=$OUTDIR/env_sweep.txt

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current,clocks.sm,clocks.mem --format=csv
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

echo "== time"
timeout 120 "$BIN" time-sweep "$OUTDIR/time_sweep.csv" 2>&1
rc=$?
echo "time rc=$rc"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv >>"$ENV" 2>&1

NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
M=gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,sm__cycles_elapsed.avg.per_second
echo "metrics: $M" >>"$ENV"
timeout 150 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --metrics "$M" "$BIN" ncu-sweep >"$OUTDIR/ncu_sweep_all.csv" 2>&1
echo "ncu all rc=$?"
timeout 150 "$NCU" --clock-control none --cache-control none --print-units base --csv \
    --metrics "$M" "$BIN" ncu-sweep >"$OUTDIR/ncu_sweep_none.csv" 2>&1
echo "ncu none rc=$?"
grep -hv '^"' "$OUTDIR"/ncu_sweep_*.csv | grep -iE "error" | head -5

echo "== ncu sweep, both launches, cache-control all"
python3 "$HERE/ncu_table.py" "$OUTDIR/ncu_sweep_all.csv" --brief
echo "== ncu sweep, both launches, cache-control none"
python3 "$HERE/ncu_table.py" "$OUTDIR/ncu_sweep_none.csv" --brief
exit $rc
