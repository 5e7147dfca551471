#!/usr/bin/env bash
# Builds and runs wshape.cu on an H200: one cold launch per case under
# Nsight Compute (--cache-control all) with the DRAM bytes and the DRAM's
# active read and write cycles, five cold launches with the duration alone,
# then CUDA-event times of warm back-to-back batches.
#
# Usage: tools/measure/wshape/run.sh [OUTDIR] [MODES]
#   OUTDIR: default $OUT, else ./out; MODES: only these modes, comma-separated
#   (e.g. st16,st4,rw1 for the third call; every mode if absent).
# Writes: env.txt, ncu.csv, ncu_time.csv, time.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 wshape "${1:-}"
MODES=${2:-}
WANT="gpu__time_duration.sum
dram__bytes_read.sum
dram__bytes_write.sum
dram__cycles_active_read.sum
dram__cycles_active_write.sum
dram__cycles_elapsed.avg
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_op_write_lookup_miss.sum
lts__d_sectors_fill_device.sum
sm__warps_active.avg.pct_of_peak_sustained_active"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
probe_metrics "$WANT" --launch-count 1 "$BIN" ncu
timeout 300 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu 1 $MODES >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
timeout 200 "$NCU" "${NCUARGS[@]}" --metrics gpu__time_duration.sum "$BIN" ncu 5 $MODES >"$OUTDIR/ncu_time.csv" 2>&1
echo "ncu time rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu_time.csv")"
timeout 120 "$BIN" time 5 $MODES >"$OUTDIR/time.csv" 2>&1
echo "time rc=$? rows: $(grep -c '^TIME,' "$OUTDIR/time.csv")"
echo "== done ($(date -u '+%H:%M:%S'))"
