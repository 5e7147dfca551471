#!/usr/bin/env bash
# Builds and runs occupancy.cu on the first CUDA GPU: the driver's blocks per
# SM for every kernel, block size and shared-memory size (occ.csv), event
# timing of the timed cases (warm batches, with a correctness check), then
# Nsight Compute: one cold launch per case with the counters, and five cold
# launches per case with the duration alone.
#
# Usage: tools/measure/occupancy/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes (8 files at most, the device tool's limit):
#   env.txt          date, nvidia-smi, nvcc, the ptxas report, ncu and
#                    cuobjdump versions, the metric check
#   sass_counts.txt  registers per kernel (ptxas), then per kernel every
#                    opcode with its count and the SASS instruction count
#   sass.txt         the SASS of k_rw and of k_chain<0>, <24> and <224>
#   occ.csv          ./occupancy occ (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
#   time.csv         ./occupancy time (events)
#   ncu.csv          raw ncu --csv, all metrics, one cold launch per case,
#                    with the program's CASE lines
#   ncu_time.csv     raw ncu --csv, gpu__time_duration.sum only, five cold
#                    launches per case
#   (run.log         the caller's tee of this script's output)
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build occupancy "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
echo "---- cuobjdump: $(cuobjdump --version | tail -1)" >>"$ENV" 2>&1

sass_counts
# (sass.txt keeps k_rw and k_chain<0>, <24> and <224>: the others differ only in the chain.)
awk '/Function :/ {keep = ($0 ~ /k_rw|k_chain<0>|k_chain<24>|k_chain<224>/)} keep' "$OUTDIR/sass.txt" >"$TMP/sass.txt" && mv "$TMP/sass.txt" "$OUTDIR/sass.txt"
grep -E "^(#|k_rw|k_chain<(0|24|224)>) (INSTR|IMAD|LDG|STG|BRA|ISETP|IADD3)" "$OUTDIR/sass_counts.txt" | head -40

echo "== occ ($(date -u '+%H:%M:%S'))"
timeout 60 "$BIN" occ "$OUTDIR/occ.csv"
echo "occ rc=$?"

echo "== time ($(date -u '+%H:%M:%S'))"
timeout 150 "$BIN" time "$OUTDIR/time.csv"
echo "time rc=$?"

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
launch__block_size
launch__shared_mem_per_block_dynamic
launch__occupancy_limit_registers
launch__occupancy_limit_shared_mem
launch__occupancy_limit_warps
launch__occupancy_limit_blocks
sm__maximum_warps_per_active_cycle_pct"
ncu_campaign "$WANT"

campaign_end
