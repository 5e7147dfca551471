#!/usr/bin/env bash
# Builds and runs xmerge.cu on an H200.
#
# Usage: tools/measure/xmerge/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, m_x's SASS),
#         check.txt, ncu.csv (raw ncu --csv, one cold launch per case,
#         --cache-control all, with the program's CASE lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 xmerge "${1:-}"
cuobjdump -sass "$BIN" | grep -E "Function|STG|BAR|BRA|CS2R|EXIT" | head -60 >>"$ENV"
timeout 120 "$BIN" check >"$OUTDIR/check.txt" 2>&1
tail -1 "$OUTDIR/check.txt"
M="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
M="$M,l1tex__m_l1tex2xbar_write_sectors.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum"
M="$M,sm__cycles_active.avg"
echo "metrics: $M" | tee -a "$ENV"
ncu_cold ncu "$M"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -v ^CASE | head -5
