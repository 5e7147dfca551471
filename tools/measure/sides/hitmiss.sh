#!/usr/bin/env bash
# Builds and runs hitmiss.cu on the first CUDA GPU, then Nsight Compute's L2
# and DRAM counters of one warm launch (rep 1, launch 4 x case + 1) of five
# cases, each under application replay (the L2 holds what the launches
# before left in it):
#    5 case 1: readers 8 MiB beside 4 loader warps per SM (1 GiB)
#    9 case 2: the same, 16 loader warps
#   17 case 4: readers 8 MiB beside 4 writer warps per SM (1 GiB)
#   33 case 8: readers 2 MiB beside 4 loader warps
#   45 case 11: readers 2 MiB beside 4 writer warps
# Usage: tools/measure/sides/hitmiss.sh [OUTDIR]
# Writes: env.txt, hitmiss.csv (see hitmiss.cu), ncu_<launch>.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build hitmiss "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'LDG|STG|CS2R' | head -24 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/hitmiss.csv"
echo "hitmiss rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
need_ncu
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum
M=$M,lts__t_sectors_srcunit_ltcfabric_op_read.sum,lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum
for k in 5 9 17 33 45; do
    timeout 120 "$NCU" --clock-control none --cache-control none --replay-mode application \
        -k regex:hitmiss_kernel --launch-skip $k --launch-count 1 --metrics $M --csv \
        "$BIN" "$TMP/hitmiss_$k.csv" >"$OUTDIR/ncu_$k.csv" 2>"$TMP/ncu_$k.err"
    echo "ncu $k rc=$?" >>"$ENV"
    tail -2 "$TMP/ncu_$k.err" >>"$ENV"
done
# Requests beside sectors, once (a separate run: a metric this ncu lacks
# would stop the others).
timeout 120 "$NCU" --clock-control none --cache-control none --replay-mode application \
    -k regex:hitmiss_kernel --launch-skip 17 --launch-count 1 \
    --metrics lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum --csv \
    "$BIN" "$TMP/hitmiss_r.csv" >"$OUTDIR/ncu_req_17.csv" 2>"$TMP/ncu_r.err"
echo "ncu req 17 rc=$?" >>"$ENV"
tail -2 "$TMP/ncu_r.err" >>"$ENV"
tail -16 "$ENV"
