#!/usr/bin/env bash
# Builds and runs race.cu on the first CUDA GPU (an H200 only): warm event
# times of every case, then Nsight Compute: one cold launch per case with
# the L2's sectors by source and operation and its fills from DRAM, and
# five cold launches per case with the duration alone.
#
# Usage: tools/measure/race/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, sass_counts.txt, cases.csv, time.csv, ncu.csv,
# ncu_time.csv (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build race "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
sass_counts
rm -f "$OUTDIR/sass.txt"
grep -E "^(#|k_)" "$OUTDIR/sass_counts.txt" | grep -E "INSTR|LDG|STG|CS2R|registers|^#" | head -30
"$BIN" list >"$OUTDIR/cases.csv"

echo "== time ($(date -u '+%H:%M:%S'))"
timeout 200 "$BIN" time "$OUTDIR/time.csv"
echo "time rc=$?"

WANT="gpu__time_duration.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
lts__t_sectors.sum
lts__t_sectors_op_read.sum
lts__t_sectors_op_write.sum
lts__t_sectors_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric_op_read.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum
lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
lts__d_sectors_fill_device.sum
dram__bytes_read.sum
dram__bytes_write.sum"
ncu_campaign "$WANT"

campaign_end
