#!/usr/bin/env bash
# Builds and runs the corpus (corpus.cu) on the first CUDA GPU: event timing
# of every case (warm), then one Nsight Compute run (one cold launch per case:
# ncu's default --cache-control all flushes the caches before it).
#
# Usage: tools/measure/corpus/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, metric check),
#         sass_counts.txt (LDG/STG per kernel), time.csv, smi_clocks.csv,
#         ncu.csv (raw ncu --csv output with the program's CASE lines),
#         ncu_warm.csv (streams launched twice, no flush).
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
mkdir -p "$OUTDIR"
export PATH=$PATH:/usr/local/cuda/bin
TMP=$(mktemp -d)
BIN=$TMP/corpus
ENV=$OUTDIR/env.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "host: $(uname -srm)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,ecc.mode.current --format=csv
    nvidia-smi -q -d CLOCK,PERFORMANCE
    nvcc --version
    echo "---- build: nvcc -O3 -arch=sm_90 -Xptxas -v -o corpus corpus.cu"
    nvcc -O3 -arch=sm_90 -Xptxas -v -o "$BIN" "$HERE/corpus.cu" 2>&1
    echo "build rc=$?"
} >"$ENV" 2>&1
if [ ! -x "$BIN" ]; then cat "$ENV"; echo "BUILD FAILED"; exit 1; fi
echo "== build ok"
grep -E "Compiling entry|Used [0-9]+ registers" "$ENV" | paste - - | sed -E 's/.*entry function .(_Z[^ ]*). for .sm_90.*Used ([0-9]+) registers.*/\1 \2/' | c++filt | tee "$OUTDIR/regs.txt"
cuobjdump -sass "$BIN" | awk '/Function :/ {fn = $3}
     /(LDG|STG)/ {match($0, /(LDG|STG)[.A-Z0-9_]*/); c[fn " " substr($0, RSTART, RLENGTH)]++}
     END {for (k in c) print k, c[k]}' | sort | c++filt >"$OUTDIR/sass_counts.txt"
cat "$OUTDIR/sass_counts.txt"

echo "== time"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv -lms 200 >"$OUTDIR/smi_clocks.csv" 2>&1 &
SMI=$!
timeout 300 "$BIN" time "$OUTDIR/time.csv"
rc=$?
kill $SMI 2>/dev/null; wait $SMI 2>/dev/null
echo "time rc=$rc"

echo "== ncu"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
"$NCU" --version >>"$ENV" 2>&1
WANT="gpu__time_duration.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
lts__t_requests_srcunit_tex_op_write.sum
lts__t_requests_srcunit_tex_op_read.sum
dram__bytes_read.sum
dram__bytes_write.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum
l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_write.sum
l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum
l1tex__m_l1tex2xbar_write_sectors_mem_lg_op_st.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__cycles_elapsed.avg.per_second
launch__registers_per_thread
launch__occupancy_limit_registers"
ok_run() { grep -q '^"ID"' "$1" && ! grep -q '==ERROR==' "$1"; }
M=$(echo $WANT | tr ' ' ',')
"$NCU" --clock-control none --print-units base --csv --kernel-name regex:^k_ --metrics "$M" "$BIN" ncu 0 1 >"$TMP/probe.txt" 2>&1
if ! ok_run "$TMP/probe.txt"; then
    echo "---- probe with all metrics failed:" >>"$ENV"
    grep -v '^"' "$TMP/probe.txt" | head -20 >>"$ENV"
    M=""
    for m in $WANT; do
        "$NCU" --clock-control none --print-units base --csv --kernel-name regex:^k_ --metrics "$m" "$BIN" ncu 0 1 >"$TMP/p1.txt" 2>&1
        if ok_run "$TMP/p1.txt"; then M=${M:+$M,}$m; else echo "metric dropped: $m" | tee -a "$ENV"; fi
    done
fi
echo "metrics used: $M" | tee -a "$ENV"
timeout 420 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --kernel-name regex:^k_ --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$?"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error|warn" | head -5
# The streams (cases 0-32) again, each launched twice with no cache flush:
# the second launch finds the L2 (and TLBs) warm.
timeout 120 "$NCU" --clock-control none --cache-control none --print-units base --csv \
    --kernel-name regex:^k_ --metrics "$M" "$BIN" ncu 0 33 2 >"$OUTDIR/ncu_warm.csv" 2>&1
echo "ncu warm rc=$?"
grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv"
{ echo "---- after the run"; nvidia-smi -q -d CLOCK,PERFORMANCE; } >>"$ENV" 2>&1
