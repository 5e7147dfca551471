#!/usr/bin/env bash
# latspread.cu's mixed kernels with L2-hit loads (V = 3, 4, 5) on an H200:
# whether stores to DRAM widen the latency of loads the L2 serves (the L2
# and the crossbar) or only of loads from DRAM; then one cold launch of
# each under Nsight Compute with the L2 hits and the DRAM traffic.
#
# Usage: tools/measure/latspread/run_hits.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, hits.csv, hits_ncu.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 latspread "${1:-}"
timeout 120 "$BIN" hits >"$OUTDIR/hits.csv" 2>&1
echo "hits rc=$?"
cat "$OUTDIR/hits.csv"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
timeout 120 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:k_mix --metrics "$M" "$BIN" hitsncu >"$OUTDIR/hits_ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"dram__bytes_write.sum"' "$OUTDIR/hits_ncu.csv")"
grep -E '"(dram__bytes_write.sum|gpu__time_duration.sum|lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum)"' "$OUTDIR/hits_ncu.csv" | awk -F'","' '{print $(NF-2), $NF}'
echo "== done ($(date -u '+%H:%M:%S'))"
