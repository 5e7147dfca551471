#!/usr/bin/env bash
# Nsight Compute's L2 and DRAM counters of one warm launch (rep 1) of six
# sides.cu cases, each under application replay (the whole program runs again
# for every pass, so that the L2 holds what the launches before left in it):
#   17 case 4: readers 8 MiB, writers on other SMs to 4 MiB (L2)
#   41 case 10: the same, writers to 1 GiB (DRAM)
#   45 case 11: the same with 16 writer warps per SM
#   29 case 7: a copy 8 MiB -> 1 GiB
#    5 case 1: a copy 8 MiB -> 4 MiB
#   53 case 13: readers of 1 GiB alone
# (launch = case * 4 + rep). Writes ncu_<launch>.csv beside env.txt.
# Usage: tools/measure/sides/ncu.sh [OUTDIR]
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build sides "${1:-}"
need_ncu
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum
M=$M,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum
for k in 17 41 45 29 5 53; do
    timeout 240 "$NCU" --clock-control none --cache-control none --replay-mode application \
        -k regex:sides_kernel --launch-skip $k --launch-count 1 --metrics $M --csv \
        "$BIN" "$TMP/sides_$k.csv" >"$OUTDIR/ncu_$k.csv" 2>"$TMP/ncu_$k.err"
    echo "ncu $k rc=$?" >>"$ENV"
    tail -2 "$TMP/ncu_$k.err" >>"$ENV"
done
tail -8 "$ENV"
