#!/usr/bin/env bash
# latspread.cu's mixed kernels on an H200: loads timed beside stores that
# go to DRAM, stores the L2 keeps, or none; then one cold launch of each
# under Nsight Compute with the DRAM traffic.
#
# Usage: tools/measure/latspread/run_mix.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, mix.csv, mix_ncu.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 latspread "${1:-}"
timeout 120 "$BIN" mix >"$OUTDIR/mix.csv" 2>&1
echo "mix rc=$?"
cat "$OUTDIR/mix.csv"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
timeout 120 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:k_mix --metrics "$M" "$BIN" mixncu >"$OUTDIR/mix_ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"dram__bytes_write.sum"' "$OUTDIR/mix_ncu.csv")"
grep -E '"(dram__bytes_write.sum|gpu__time_duration.sum)"' "$OUTDIR/mix_ncu.csv" | awk -F'","' '{print $(NF-2), $NF}'
echo "== done ($(date -u '+%H:%M:%S'))"
