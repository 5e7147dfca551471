#!/usr/bin/env bash
# Call 6 of race: call 5's counters instance by instance, tried in Nsight
# Compute's text output, as its CSV gave only the sums (call 5, fmt.txt).
# The text gives only the sums too (results/call6). Asked for: for rw
# float 32 and double 24 at 8 blocks an SM (two launches each) and float 32 at 2 blocks (one), in one pass per
# launch where the counters allow, the blocks each SM ran, each slice's
# read sectors from the SMs and across the fabric, its write lookups that
# miss (the L2's own writes), its fills, and each channel's DRAM bytes.
#
# Usage: tools/measure/race/call6.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, cases.csv, inst_a.txt, inst_b.txt (and run.log).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build race "${1:-}"
need_ncu
"$NCU" --version >>"$ENV" 2>&1
"$BIN" list >"$OUTDIR/cases.csv"
A=(--clock-control none --cache-control all --print-units base --kernel-name regex:^k_ --print-metric-instances values)
MA=sm__ctas_launched.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_write_lookup_miss.sum,lts__d_sectors_fill_device.sum
MB=sm__ctas_launched.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum,dram__bytes_read.sum
for x in a b; do
    if [ $x = a ]; then M=$MA; else M=$MB; fi
    echo "== $x ($(date -u '+%H:%M:%S'))"
    timeout 150 "$NCU" "${A[@]}" --metrics "$M" "$BIN" ncu 0 2 2 >"$OUTDIR/inst_$x.txt" 2>&1
    echo "$x 8 blocks rc=$?"
    timeout 60 "$NCU" "${A[@]}" --metrics "$M" "$BIN" ncu 11 12 >>"$OUTDIR/inst_$x.txt" 2>&1
    echo "$x 2 blocks rc=$?"
done
head -c 3000 "$OUTDIR/inst_a.txt"
campaign_end
