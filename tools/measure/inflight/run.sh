#!/usr/bin/env bash
# Builds and runs inflight.cu on the first CUDA GPU (an H200 only): warm
# event times of seed 002's stride kernel at 256 MiB for 8 to 1 blocks per
# SM, the loaded latency of an isolated pointer chase beside it, then
# Nsight Compute: one cold launch per case with the counters, and five
# cold launches per case with the duration alone.
#
# Usage: tools/measure/inflight/run.sh [OUTDIR [FROM TO]]   (default $OUT,
# else ./out; Nsight Compute runs cases FROM..TO-1, default 0 11: those
# without shared memory). With COUNTERS_ONLY=1 the event times and the
# probe are skipped (Nsight Compute alone); with METRICS=fabric Nsight
# Compute reads the L2's sectors by source instead (below).
# Writes (8 files at most, the device tool's limit): env.txt,
# sass_counts.txt, cases.csv, time.csv, probe.csv, ncu.csv, ncu_time.csv
# (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build inflight "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
sass_counts
rm -f "$OUTDIR/sass.txt"
grep -E "^(#|k_stride|k_probe)" "$OUTDIR/sass_counts.txt" | grep -E "INSTR|LDG|STG|registers|^#" | head -30
"$BIN" list >"$OUTDIR/cases.csv"

if [ "${COUNTERS_ONLY:-0}" != 1 ]; then
    echo "== time ($(date -u '+%H:%M:%S'))"
    timeout 200 "$BIN" time "$OUTDIR/time.csv"
    echo "time rc=$?"

    echo "== probe ($(date -u '+%H:%M:%S'))"
    timeout 120 "$BIN" probe "$OUTDIR/probe.csv"
    echo "probe rc=$?"
fi

WANT="gpu__time_duration.sum
sm__cycles_elapsed.avg.per_second
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
dram__bytes_read.sum
dram__bytes_write.sum
sm__warps_active.avg.pct_of_peak_sustained_active
launch__occupancy_limit_shared_mem
launch__registers_per_thread"
# METRICS=fabric: instead, where the L2's sectors come from (every source,
# the fabric between the two partitions) and what it fills from DRAM.
if [ "${METRICS:-}" = fabric ]; then
    WANT="gpu__time_duration.sum
lts__t_sectors.sum
lts__t_sectors_op_read.sum
lts__t_sectors_op_write.sum
lts__t_sectors_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_ltcfabric.sum
lts__t_sectors_srcunit_ltcfabric_op_read.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum
lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
lts__d_sectors_fill_device.sum
lts__t_sectors_srcnode_gpc.sum
dram__bytes_read.sum
dram__bytes_write.sum"
fi
# Counters of some cases (ncu saves and restores the 8.4 GB buffer between
# passes): by default those with no shared memory (8 blocks an SM).
ncu_campaign "$WANT" "${2:-0}" "${3:-11}"

campaign_end
