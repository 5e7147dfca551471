#!/usr/bin/env bash
# Builds and runs l1reuse.cu on the first CUDA GPU: event timing of every
# case (warm batches, with a correctness check), then Nsight Compute: one
# cold launch per case with the counters, and five cold launches per case
# with the duration alone.
#
# Usage: tools/measure/l1reuse/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, sass_counts.txt, sass.txt, time.csv, ncu.csv,
# ncu_time.csv (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build l1reuse "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
sass_counts
cat "$OUTDIR/sass_counts.txt"

echo "== time ($(date -u '+%H:%M:%S'))"
timeout 150 "$BIN" time "$OUTDIR/time.csv"
echo "time rc=$?"

WANT="gpu__time_duration.sum
sm__cycles_elapsed.avg.per_second
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write.sum
dram__bytes_read.sum
dram__bytes_write.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__cycles_active.avg
smsp__inst_executed.sum
launch__registers_per_thread
launch__grid_size
launch__block_size"
ncu_campaign "$WANT"
campaign_end
grep -E '"(gpu__time_duration.sum|l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum|l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum|lts__t_sectors_srcunit_tex_op_read.sum)"' "$OUTDIR/ncu.csv" | awk -F'","' '{v = $NF; gsub(/"/, "", v); print $(NF-2), v}'
