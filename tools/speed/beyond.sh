#!/usr/bin/env bash
# Sampled against timed whole on devices and sizes that the committed
# comparisons (the seed points, the validate cases) do not cover: the
# stride and offset kernels at 32 MiB on the V100, P100, A100 and H100.
# Writes DIR/{stride,offset}_{auto,off}.csv and prints tools/speed/compare.py's
# verdicts. About 6 minutes on 2 cores.
#   tools/speed/beyond.sh BIN DIR
set -euo pipefail
bin=$1; out=$2; mkdir -p "$out"
cd "$(dirname "$0")/../.."
devs=(configs/v100.ron configs/p100.ron configs/a100.ron configs/h100.ron)
for mode in auto off; do
  "$bin" run "${devs[@]}" workloads/stride.ron --set nMB=32 --set stride=1,3,8,16,32 \
    --set elem=4,8 -q --sample "$mode" --csv "$out/stride_$mode.csv"
  "$bin" run "${devs[@]}" workloads/offset.ron --set nMB=32 --set offset=0,1,16 \
    --set elem=4,8 -q --sample "$mode" --csv "$out/offset_$mode.csv"
done
python3 tools/speed/compare.py "$out/stride_auto.csv" "$out/stride_off.csv"
python3 tools/speed/compare.py "$out/offset_auto.csv" "$out/offset_off.csv"
