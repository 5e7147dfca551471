#!/usr/bin/env bash
# Builds and runs pstore.cu on the first CUDA GPU under Nsight Compute.
#
# Usage: tools/measure/pstore/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, check, the list
#         of measured launches), metrics_query.txt (the DRAM and L2 lines of
#         ncu --query-metrics --chip gh100), and raw ncu --csv files:
#         spread.csv     family spread (pld, pst, prw at 32 B to 64 KiB
#                        spacings), one cold launch each (--cache-control all)
#         dirty.csv      family dirty (k sectors of each line, whole or
#                        4 bytes of each), one cold launch each
#         cold.csv       families pst, prw: one cold launch per case
#         warm.csv       each store after a flush and a load of its sectors
#                        (--cache-control none, application replay)
#         cold_bd.csv    the breakdown of gpu__compute_memory_throughput (each
#                        unit's throughput, % of its peak), cold
#         warm_bd.csv    the same, warm
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/pstore
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,ecc.mode.current --format=csv
    nvcc --version | tail -2
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/pstore.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
{
    echo "---- SASS instructions per kernel (cuobjdump --dump-sass)"
    cuobjdump --dump-sass "$BIN" | awk '/Function :/ {f = $3} /^ +\/\*[0-9a-f]{4}\*\// {n[f]++} END {for (k in n) print k, n[k]}' | sort
} >>"$ENV" 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
{ echo "---- list"; "$BIN" list; echo "---- list-spread"; "$BIN" list-spread; echo "---- list-dirty"; "$BIN" list-dirty; echo "---- check"; timeout 120 "$BIN" check; echo "check rc=$?"; } >>"$ENV" 2>&1
grep -c "0 bad words" "$ENV" | sed 's/^/cases with 0 bad words: /'
timeout 60 "$NCU" --query-metrics --chip gh100 >"$TMP/query.txt" 2>&1
echo "query rc=$? ($(wc -l <"$TMP/query.txt") lines)" | tee -a "$ENV"
grep -E "^(dram|fbpa|lts|ltc|fb)__" "$TMP/query.txt" >"$OUTDIR/metrics_query.txt"
BASE="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__cycles_active.avg,lts__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second,sm__cycles_elapsed.avg.per_second"
BD="gpu__time_duration.sum,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
run_ncu() {  # name, seconds, ncu options...
    local name=$1 secs=$2
    shift 2
    local t0=$SECONDS
    timeout "$secs" "$NCU" --clock-control none --print-units base --csv --kernel-name regex:^m_ "$@" >"$OUTDIR/$name.csv" 2>&1
    echo "ncu $name rc=$? rows=$(grep -c '"gpu__time_duration.sum"' "$OUTDIR/$name.csv") ($((SECONDS - t0)) s)" | tee -a "$ENV"
}
run_ncu spread 200 --cache-control all --metrics "$BASE" "$BIN" spread
run_ncu dirty 200 --cache-control all --metrics "$BASE" "$BIN" dirty
run_ncu cold 150 --cache-control all --metrics "$BASE" "$BIN" cold
run_ncu warm 150 --cache-control none --replay-mode application --metrics "$BASE" "$BIN" warm
run_ncu cold_bd 150 --cache-control all --metrics "$BD" "$BIN" cold
if ! grep -q '"gpu__time_duration.sum"' "$OUTDIR/cold_bd.csv"; then
    # No breakdown: prefix in this ncu; the sections that hold the same units.
    run_ncu cold_bd 150 --cache-control all --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables "$BIN" cold
fi
run_ncu warm_bd 200 --cache-control none --replay-mode application --metrics "$BD" "$BIN" warm
grep -hiE "^==(ERROR|WARNING)==" "$OUTDIR"/*.csv | sort | uniq -c | head -10
