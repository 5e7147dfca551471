#!/usr/bin/env bash
# latspread.cu's mixed kernels with a fraction of the stores (V = 6, 7, 8:
# an eighth, a quarter, half of the odd blocks store) on an H200: how the
# loads' latency spread grows with the DRAM writes beside them; then one
# cold launch of each under Nsight Compute with the DRAM traffic.
#
# Usage: tools/measure/latspread/run_frac.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, frac.csv, frac_ncu.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 latspread "${1:-}"
timeout 120 "$BIN" frac >"$OUTDIR/frac.csv" 2>&1
echo "frac rc=$?"
cat "$OUTDIR/frac.csv"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
timeout 120 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:k_mix --metrics "$M" "$BIN" fracncu >"$OUTDIR/frac_ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"dram__bytes_write.sum"' "$OUTDIR/frac_ncu.csv")"
grep -E '"(dram__bytes_write.sum|gpu__time_duration.sum)"' "$OUTDIR/frac_ncu.csv" | awk -F'","' '{print $(NF-2), $NF}'
echo "== done ($(date -u '+%H:%M:%S'))"
