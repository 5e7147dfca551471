#!/usr/bin/env bash
# Builds and runs wcomb.cu on the first CUDA GPU.
#
# Usage: tools/measure/wcomb/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, the SASS of the
#         measured kernels), metrics.txt (the L1-to-L2 write metrics this
#         Nsight Compute knows), check.txt, ncu.csv (raw ncu --csv, one cold
#         launch per case, --cache-control all, with the program's CASE lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_build wcomb "${1:-}"
need_ncu
cuobjdump -sass "$BIN" | grep -E "Function|STG|S2R|CS2R|BRA|EXIT" | head -60 >>"$ENV"
"$NCU" --version >>"$ENV" 2>&1
"$NCU" --query-metrics --chip gh100 2>&1 | grep -E "l1tex2xbar|xbar2lts|srcunit_tex_op_write|l1tex__m_" >"$OUTDIR/metrics.txt"
timeout 120 "$BIN" check >"$OUTDIR/check.txt" 2>&1
tail -1 "$OUTDIR/check.txt"
M="gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum,dram__bytes_write.sum"
for m in l1tex__m_l1tex2xbar_write_sectors l1tex__m_l1tex2xbar_write_bytes l1tex__m_l1tex2xbar_req \
    l1tex__m_l1tex2xbar_write_sectors_mem_global_op_st l1tex__m_l1tex2xbar_write_bytes_mem_global_op_st; do
    if grep -qE "^$m( |$)" "$OUTDIR/metrics.txt"; then M="$M,$m.sum"; fi
done
echo "metrics: $M" | tee -a "$ENV"
timeout 420 "$NCU" --clock-control none --cache-control all --print-units base --csv \
    --kernel-name regex:^m_ --metrics "$M" "$BIN" >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c gpu__time_duration "$OUTDIR/ncu.csv") cases: $(grep -c ^CASE "$OUTDIR/ncu.csv")"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -v ^CASE | head -5
