#!/usr/bin/env bash
# latspread.cu's mixed kernels on an H200: loads timed beside other blocks'
# traffic; then one cold launch of each under Nsight Compute with the L2
# hits and the DRAM traffic. SET picks the kernels:
#   mix   V = 0-2: DRAM loads beside no stores, stores to DRAM, stores the
#         L2 keeps
#   hits  V = 3-5: L2-hit loads beside stores to DRAM, nothing, DRAM loads
#   frac  V = 6-8: DRAM loads beside an eighth, a quarter, half of the
#         stores of V = 1
#   shift V = 9-10: DRAM loads beside V = 1's stores half the buffer away,
#         or to scattered whole lines
#
# Usage: tools/measure/latspread/run_mix.sh [mix|hits|frac|shift] [OUTDIR]
#        (default mix; OUTDIR default $OUT, else ./out)
# Writes: env.txt, SET.csv, SET_ncu.csv.
set -u -o pipefail
SET=${1:-mix}
case "$SET" in
mix | hits | frac | shift) ;;
*) echo "usage: run_mix.sh [mix|hits|frac|shift] [OUTDIR]"; exit 2 ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 latspread "${2:-}"
timeout 120 "$BIN" "$SET" >"$OUTDIR/$SET.csv" 2>&1
echo "$SET rc=$?"
cat "$OUTDIR/$SET.csv"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
timeout 120 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:k_mix --metrics "$M" "$BIN" "${SET}ncu" >"$OUTDIR/${SET}_ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"dram__bytes_write.sum"' "$OUTDIR/${SET}_ncu.csv")"
grep -E '"(dram__bytes_write.sum|gpu__time_duration.sum)"' "$OUTDIR/${SET}_ncu.csv" | awk -F'","' '{print $(NF-2), $NF}'
echo "== done ($(date -u '+%H:%M:%S'))"
