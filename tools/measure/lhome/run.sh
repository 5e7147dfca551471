#!/usr/bin/env bash
# Builds and runs lhome.cu (each line's home L2 partition, seen from every
# SM, by the latency of a lone DRAM load) on an H200.
#
# Usage: tools/measure/lhome/run.sh [OUTDIR]
#   OUTDIR defaults to $OUT if set, else tools/measure/lhome/out.
# Writes into OUTDIR:
#   env.txt     date, GPU, driver, clocks, nvcc version, ptxas report, the SASS of the walk
#   lat.csv     sm,region,line,lat0,lat1,lat2 (lhome.cu)
#   smid.csv    sm,found
#   summary.txt tools/measure/lhome/summary.py of the two
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build lhome "${1:-}"
cuobjdump --dump-sass "$BIN" | awk '/Function :/ {p = 1} p && /Function|CS2R|LDG|STG/' >>"$ENV" 2>&1
timeout 400 "$BIN" "$OUTDIR" 2>"$TMP/err.txt"
echo "lhome rc=$?" | tee -a "$ENV"
tail -3 "$TMP/err.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
gzip -9 -k "$OUTDIR/lat.csv" && rm "$OUTDIR/lat.csv"
python3 "$HERE/summary.py" "$OUTDIR" | tee "$OUTDIR/summary.txt"
# The partition function's higher bits: SMs 0 and 2 over 32 GiB (bits.csv).
timeout 200 "$BIN" "$OUTDIR" bits
echo "lhome bits rc=$?" | tee -a "$ENV"
python3 "$HERE/summary.py" "$OUTDIR" bits | tee -a "$OUTDIR/summary.txt"
