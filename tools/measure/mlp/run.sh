#!/usr/bin/env bash
# Builds and runs mlp.cu on the first CUDA GPU (an H200 only): warm event
# times of every case, then Nsight Compute counters of one cold launch of
# each case with u = 4 (that the `dram` cases miss the L2 and the `l2`
# ones, cold here, count the same sectors).
#
# Usage: tools/measure/mlp/run.sh [OUTDIR [FROM]]   (default $OUT, else ./out;
# FROM: time only the cases from that index on, as `./mlp list` numbers them)
# Writes: env.txt, sass_counts.txt, cases.csv, time.csv, ncu.csv (and
# run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build mlp "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
sass_counts
grep -E 'k_mlp.* (INSTR|LDG|STG)' "$OUTDIR/sass_counts.txt" | head -60
"$BIN" list >"$OUTDIR/cases.csv"

echo "== time ($(date -u '+%H:%M:%S'))"
timeout 300 "$BIN" time "$OUTDIR/time.csv" ${2:-0}
echo "time rc=$?"

need_ncu
"$NCU" --version >>"$ENV" 2>&1
echo "== ncu ($(date -u '+%H:%M:%S'))"
M=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum
timeout 200 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_ \
    --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
campaign_end >/dev/null
echo "== done ($(date -u '+%H:%M:%S'))"
