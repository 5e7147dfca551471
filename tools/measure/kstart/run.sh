#!/usr/bin/env bash
# Builds and runs kstart.cu on an H200 under Nsight Compute: every case
# launched REPS (5) times, each launch timed cold (gpu__time_duration.sum).
# Writes into $OUT: env.txt, sass_counts.txt, ncu.csv (+ the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build kstart "${1:-}"
cuobjdump -sass "$BIN" | awk '/Function :/ {fn = $3} /^ +\/\*[0-9a-f]+\*\/ +[A-Z@]/ {c[fn]++} END {for (k in c) print k, c[k], "SASS instructions"}' >"$OUTDIR/sass_counts.txt"
grep -E "Used [0-9]+ registers" "$ENV" >>"$OUTDIR/sass_counts.txt"
cat "$OUTDIR/sass_counts.txt"
need_ncu
"$NCU" --version >>"$ENV" 2>&1
echo "== ncu ($(date -u '+%H:%M:%S'))"
timeout 400 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --kernel-name regex:^k_ --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size \
    "$BIN" ncu 5 >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv")"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -iE "error|out\[0\]" | head -5
echo "== done ($(date -u '+%H:%M:%S'))"
