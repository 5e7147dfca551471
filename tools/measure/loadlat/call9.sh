#!/usr/bin/env bash
# Call 9 of loadlat (`./loadlat role`): calls 4-8 found the stride kernel's
# SMs split at 8 blocks an SM, the slow ones' loads and stores both held,
# and stores into lines the L2 does not hold costing more. Does an SM's
# own storing into absent lines slow its own loads? One kernel in which
# the SMs of one parity store into the lines they loaded (rw) and the
# others into a second buffer (cp: lines the L2 does not hold), each warp
# timed as in call 6; the halves swapped (flip); float stride 32 and
# double 24 at 8, 6 and 2 blocks an SM.
# Usage: tools/measure/loadlat/call9.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt, role.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build loadlat "${1:-}"
timeout 300 "$BIN" role >"$OUTDIR/role.csv" 2>>"$ENV"
echo "role rc=$?" | tee -a "$ENV"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >>"$ENV" 2>&1
cat "$OUTDIR/role.csv"
tail -3 "$ENV"
