#!/usr/bin/env bash
# Builds and runs mgap.cu on an H200.
#
# Usage: tools/measure/mgap/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report), sass.txt (the
#         SASS of every kernel), clock.csv (cycles a trip, `./mgap clock`),
#         ncu.csv (raw ncu --csv, one cold launch per m_gap case,
#         --cache-control all, with the program's CASE lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 mgap "${1:-}"
cuobjdump -sass "$BIN" | grep -vE "^\s*/\* [0-9a-f]{4} \*/\s+0x" | c++filt >"$OUTDIR/sass.txt"
timeout 120 "$BIN" clock >"$OUTDIR/clock.csv" 2>&1
echo "clock rc=$? lines: $(wc -l <"$OUTDIR/clock.csv")"
M="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
M="$M,l1tex__m_l1tex2xbar_write_sectors.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum"
M="$M,sm__cycles_active.avg"
echo "metrics: $M" | tee -a "$ENV"
ncu_cold ncu "$M"
cat "$OUTDIR/clock.csv"
