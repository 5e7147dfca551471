#!/usr/bin/env bash
# Builds and runs mixed.cu on the first CUDA GPU, then Nsight Compute's L2
# and DRAM counters of one warm launch (rep 1) of case 6 (hits on
# schedulers 1-3, misses on scheduler 0; launch 25) under application replay.
# Usage: tools/measure/sides/mixed.sh [OUTDIR]
# Writes: env.txt, mixed.csv (see mixed.cu), ncu_mixed_25.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build mixed "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'LDG|CS2R' | head -12 >>"$ENV" 2>&1
timeout 300 "$BIN" "$OUTDIR/mixed.csv"
echo "mixed rc=$?" >>"$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
need_ncu
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
M=$M,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
timeout 120 "$NCU" --clock-control none --cache-control none --replay-mode application \
    -k regex:mixed_kernel --launch-skip 25 --launch-count 1 --metrics $M --csv \
    "$BIN" "$TMP/mixed_25.csv" >"$OUTDIR/ncu_mixed_25.csv" 2>"$TMP/ncu.err"
echo "ncu 25 rc=$?" >>"$ENV"
tail -2 "$TMP/ncu.err" >>"$ENV"
tail -6 "$ENV"
