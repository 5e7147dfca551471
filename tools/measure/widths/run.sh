#!/usr/bin/env bash
# Builds and runs widths.cu on the first CUDA GPU: event timing of every case
# (warm batches and single launches after an L2 flush, with a correctness
# check), then Nsight Compute: one cold launch per case with the counters,
# and five cold launches per case with the duration alone.
#
# Usage: tools/measure/widths/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes (8 files at most, the device tool's limit):
#   env.txt          date, nvidia-smi (query and -q clocks/performance, before
#                    and after), nvcc, ptxas report, ncu and cuobjdump
#                    versions, the metric check
#   sass_counts.txt  registers per kernel (ptxas), then per kernel every
#                    LDG/STG opcode with its count and the SASS instruction
#                    count
#   sass.txt         the SASS of every k_* kernel
#   time.csv         ./widths time (events)
#   smi_clocks.csv   nvidia-smi clocks every 200 ms during ./widths time
#   ncu.csv          raw ncu --csv, all metrics, one cold launch per case,
#                    with the program's CASE lines
#   ncu_time.csv     raw ncu --csv, gpu__time_duration.sum only, five cold
#                    launches per case
#   (run.log         the caller's tee of this script's output)
set -u -o pipefail
# The campaign is for the H200: stop at once on any other GPU.
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build widths "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
{
    echo "---- nvidia-smi"
    nvidia-smi
    echo "---- nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,ECC (before)"
    nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,ECC
    echo "---- uname: $(uname -srm)"
    echo "---- cuobjdump: $(cuobjdump --version | tail -1)"
} >>"$ENV" 2>&1

# Registers per kernel from the ptxas report, then the load/store opcodes.
{
    echo "# registers per thread (ptxas -v)"
    grep -E "Compiling entry|Used [0-9]+ registers" "$ENV" | paste - - |
        sed -E 's/.*entry function .(_Z[^ ]*). for .sm_90.*Used ([0-9]+) registers.*/\1 \2/' | c++filt
    echo "# kernel opcode count (LDG/STG opcodes; INSTR = all SASS instructions)"
    cuobjdump -sass "$BIN" | awk '/Function :/ {fn = $3}
        /^ +\/\*[0-9a-f]+\*\/ +[A-Z@]/ {c[fn " INSTR"]++}
        /(LDG|STG)/ {match($0, /(LDG|STG)[.A-Z0-9_]*/); c[fn " " substr($0, RSTART, RLENGTH)]++}
        END {for (k in c) print k, c[k]}' | sort | c++filt
} >"$OUTDIR/sass_counts.txt" 2>&1
cuobjdump -sass "$BIN" | c++filt >"$OUTDIR/sass.txt" 2>&1
cat "$OUTDIR/sass_counts.txt"

echo "== time ($(date -u '+%H:%M:%S'))"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
    --format=csv -lms 200 >"$OUTDIR/smi_clocks.csv" 2>&1 &
SMI=$!
timeout 150 "$BIN" time "$OUTDIR/time.csv"
rc=$?
kill $SMI 2>/dev/null
wait $SMI 2>/dev/null
echo "time rc=$rc"

need_ncu
"$NCU" --version >>"$ENV" 2>&1
echo "== ncu metric check ($(date -u '+%H:%M:%S'))"
WANT="gpu__time_duration.sum
sm__cycles_elapsed.avg.per_second
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
dram__bytes_read.sum
dram__bytes_write.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__cycles_active.avg
smsp__inst_executed.sum
launch__registers_per_thread
launch__grid_size
launch__block_size"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
# Case 0 (rw, float, 4 MiB, block 32) with every metric; else one at a time.
probe_metrics "$WANT" "$BIN" ncu 0 1
echo "== ncu all metrics ($(date -u '+%H:%M:%S'))"
timeout 270 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error|warn|out\[0\]" | grep -v "unmodified GPU clocks" | head -5

echo "== ncu duration x5 ($(date -u '+%H:%M:%S'))"
timeout 150 "$NCU" "${NCUARGS[@]}" --metrics gpu__time_duration.sum "$BIN" ncu 0 100000 5 >"$OUTDIR/ncu_time.csv" 2>&1
echo "ncu time rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu_time.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu_time.csv")"
grep -v '^"' "$OUTDIR/ncu_time.csv" | grep -iE "error|warn|out\[0\]" | grep -v "unmodified GPU clocks" | head -5

{
    echo "---- after the run ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
    nvidia-smi -q -d CLOCK,PERFORMANCE
} >>"$ENV" 2>&1
echo "== done ($(date -u '+%H:%M:%S'))"
# Short table: block 256 at 4 MiB (events, ns).
awk -F, 'NR == 1 || ($4 == 4 && $5 == 256) || ($2 == "empty" && $5 == 256)' "$OUTDIR/time.csv" | cut -d, -f2-7,11,15
