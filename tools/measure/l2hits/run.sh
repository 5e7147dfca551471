#!/usr/bin/env bash
# Builds and runs l2hits.cu on an H200 under Nsight Compute: one cold launch
# per case (--cache-control all) with the L2's lookup counters, the DRAM
# bytes and the achieved occupancy; then five cold launches per case with
# the duration alone.
#
# Usage: tools/measure/l2hits/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt (date, GPU, clocks, nvcc, ptxas, ncu version, the metrics
# kept), ncu.csv (raw ncu --csv with the program's CASE lines), ncu_time.csv
# (the five durations per case).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 l2hits "${1:-}"
echo "== build ok ($(date -u '+%H:%M:%S'))"
WANT="gpu__time_duration.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric.sum
lts__t_sectors_srcunit_ltcfabric_op_read.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum
lts__t_sectors_op_read.sum
lts__t_sectors_op_write.sum
lts__t_sectors_srcnode_gpc_lookup_hit.sum
lts__t_sectors_srcnode_gpc_lookup_miss.sum
dram__bytes_read.sum
dram__bytes_write.sum
sm__warps_active.avg.pct_of_peak_sustained_active
sm__cycles_active.avg
launch__grid_size
launch__block_size"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
probe_metrics "$WANT" --launch-count 1 "$BIN" ncu
echo "== ncu all metrics ($(date -u '+%H:%M:%S'))"
timeout 300 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error" | head -5
echo "== ncu duration x5 ($(date -u '+%H:%M:%S'))"
timeout 200 "$NCU" "${NCUARGS[@]}" --metrics gpu__time_duration.sum "$BIN" ncu 5 >"$OUTDIR/ncu_time.csv" 2>&1
echo "ncu time rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu_time.csv")"
echo "== done ($(date -u '+%H:%M:%S'))"
