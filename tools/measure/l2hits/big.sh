#!/usr/bin/env bash
# The 256 MiB stride cases of l2hits.cu (`./l2hits big`) under Nsight
# Compute, one cold launch each (--cache-control all): the DRAM bytes, the
# L2's fills, its read and write lookups that miss, the write sectors that
# come with evict_first (neither from the SMs nor from the other partition)
# and the duration.
#
# Usage: tools/measure/l2hits/big.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, big.csv (raw ncu --csv with the program's CASE lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 l2hits "${1:-}"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__d_sectors_fill_device.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_op_write_lookup_hit.sum,lts__t_sectors_op_write_lookup_miss.sum,lts__t_sectors_op_write_evict_first.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
echo "metrics used: $M" >>"$ENV"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
timeout 500 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" big >"$OUTDIR/big.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/big.csv") cases: $(grep -c '^CASE,' "$OUTDIR/big.csv")"
grep -v '^"' "$OUTDIR/big.csv" | grep -iE "error" | head -5
echo "== done ($(date -u '+%H:%M:%S'))"
