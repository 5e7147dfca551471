#!/usr/bin/env bash
# Builds and runs xwin.cu on an H200.
#
# Usage: tools/measure/xwin/run.sh [OUTDIR] [second|third]
#   (OUTDIR default $OUT, else out/ beside this script; `second`, `third`:
#   the second or third call's cases, m_v or m_p)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, the SASS of
#         m_w<4>, m_v or m_p<3>), check.txt (the words check and each case's gaps,
#         outside Nsight Compute), ncu.csv (raw ncu --csv, one cold launch per
#         case, --cache-control all, with the program's CASE and GAP lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 xwin "${1:-}"
SET=${2:-}
FN=m_wILi4E
[ "$SET" = third ] && FN=m_pILi3E
[ "$SET" = second ] && FN=m_v
cuobjdump -sass "$BIN" | awk -v fn="$FN" '/Function :/ {p = index($0, fn) > 0} p' |
    grep -vE "^\s*/\* [0-9a-f]{4} \*/\s+0x" | head -90 >>"$ENV"
timeout 120 "$BIN" check $SET >"$OUTDIR/check.txt" 2>&1
tail -1 "$OUTDIR/check.txt"
M="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
M="$M,l1tex__m_l1tex2xbar_write_sectors.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum"
echo "metrics: $M" | tee -a "$ENV"
ncu_cold ncu "$M" $SET
grep -v '^"' "$OUTDIR/ncu.csv" | grep -v ^CASE | head -5
