#!/usr/bin/env bash
# latspread.cu's acknowledgement timing on an H200: each warp's load and its
# store's acknowledgement (__threadfence) in rw, cp, ws and rs.
#
# Usage: tools/measure/latspread/run_ack.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, ack.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build latspread "${1:-}"
timeout 120 "$BIN" ack >"$OUTDIR/ack.csv" 2>&1
echo "ack rc=$?"
cat "$OUTDIR/ack.csv"
echo "== done ($(date -u '+%H:%M:%S'))"
