#!/usr/bin/env bash
# Call 4 of race: rw and rwd4 at 1 to 8 blocks an SM (RACE_SWEEP=1, see
# race.cu): how the L2's own writes, their misses and fills grow with the
# lines held between the loads and their stores. Warm event times, then
# Nsight Compute (one cold launch per case with the counters, five with
# the duration alone).
#
# Usage: tools/measure/race/call4.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, cases.csv, time.csv, ncu.csv, ncu_time.csv (and run.log
# from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build race "${1:-}"
export RACE_SWEEP=1
"$BIN" list >"$OUTDIR/cases.csv"
echo "== time ($(date -u '+%H:%M:%S'))"
timeout 240 "$BIN" time "$OUTDIR/time.csv" | grep '^#'
echo "time rc=$?"
WANT="gpu__time_duration.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum
lts__t_sectors_srcunit_ltcfabric_op_write_lookup_miss.sum
lts__t_sectors_op_write.sum
lts__t_sectors_op_write_lookup_miss.sum
lts__d_sectors_fill_device.sum
dram__bytes_read.sum
dram__bytes_write.sum"
ncu_campaign "$WANT"
campaign_end >/dev/null
