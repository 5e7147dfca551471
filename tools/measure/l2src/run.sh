#!/usr/bin/env bash
# Builds and runs l2src.cu on the first CUDA GPU (an H200 only): Nsight
# Compute's list of the L2's sector counters (query.txt), warm event times
# of every case, then Nsight Compute: one cold launch per case with the L2's
# sectors by source and operation (those the query lists included), and
# five cold launches per case with the duration alone.
#
# Usage: tools/measure/l2src/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, query.txt, cases.csv, time.csv, ncu.csv, ncu_time.csv
# (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build l2src "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
gpu_state_before
"$BIN" list >"$OUTDIR/cases.csv"
need_ncu

echo "== query ($(date -u '+%H:%M:%S'))"
"$NCU" --query-metrics-mode suffix --metrics lts__t_sectors,lts__t_requests --chip gh100 >"$OUTDIR/query.txt" 2>&1
echo "query rc=$? lines: $(wc -l <"$OUTDIR/query.txt")"

echo "== time ($(date -u '+%H:%M:%S'))"
timeout 200 "$BIN" time "$OUTDIR/time.csv"
echo "time rc=$?"

# The sector counters by source the query names (at most 24), beside the
# ones calls 3 and 4 of tools/measure/inflight read.
SRC=$(grep -oE 'lts__t_sectors_src(unit|node)_[a-z0-9]+(_op_(read|write))?(_lookup_(hit|miss))?' "$OUTDIR/query.txt" |
    sort -u | grep -vE 'srcunit_(tex|ltcfabric)_op|srcnode_gpc_op' | head -24 | sed 's/$/.sum/')
WANT="gpu__time_duration.sum
lts__t_sectors.sum
lts__t_sectors_op_read.sum
lts__t_sectors_op_write.sum
lts__t_sectors_lookup_miss.sum
lts__t_sectors_op_read_lookup_miss.sum
lts__t_sectors_op_write_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric_op_read.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum
lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
lts__d_sectors_fill_device.sum
dram__bytes_read.sum
dram__bytes_write.sum
$SRC"
WANT=$(echo "$WANT" | sort -u)
ncu_campaign "$WANT"

campaign_end
