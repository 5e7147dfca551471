#!/usr/bin/env bash
# The `split` campaign: busy.cu's split mode (results/split.csv), then Nsight
# Compute's L2 and DRAM counters of one warm launch (the second of its case)
# of five cases at 132 blocks, u = 1 (results/split_ncu_<launch>.csv):
#   73 copy 1 GiB -> 1 GiB     109 copy 1 GiB -> 4 MiB     145 copy 8 MiB -> 1 GiB
#   181 copy 8 MiB -> 4 MiB    253 write 4 MiB
# (launch = ((case * 2 + blocks index) * 3 + u index) * 6 + 1, in split's order).
# Usage: tools/measure/busy/split.sh OUTDIR
set -u -o pipefail
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-$HERE/out}}
"$HERE/run.sh" "$OUTDIR" split
export PATH=$PATH:/usr/local/cuda/bin
BIN=$(mktemp -d)/busy
nvcc -O3 -arch=sm_90 -o "$BIN" "$HERE/busy.cu" || exit 1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_op_write.sum
for k in 73 109 145 181 253; do
    timeout 120 "$NCU" --clock-control none --cache-control none -k regex:stream_kernel \
        --launch-skip $k --launch-count 1 --metrics $M --csv "$BIN" split /dev/null \
        >"$OUTDIR/split_ncu_$k.csv" 2>"$OUTDIR/split_ncu_$k.err"
    echo "ncu $k rc=$?" >>"$OUTDIR/env.txt"
done
