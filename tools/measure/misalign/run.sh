#!/usr/bin/env bash
# Builds and runs misalign.cu on an H200: one cold launch per case under
# Nsight Compute (--cache-control all) with the L1, L2 and DRAM traffic and
# three cold launches with the duration alone; first, CUDA-event times of
# warm back-to-back batches.
#
# Usage: tools/measure/misalign/run.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, ncu.csv, ncu_time.csv, time.csv.
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 misalign "${1:-}"
WANT="gpu__time_duration.sum
dram__bytes_read.sum
dram__bytes_write.sum
lts__t_requests_srcunit_tex_op_read.sum
lts__t_requests_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_op_write_lookup_miss.sum
lts__d_sectors_fill_device.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum
l1tex__m_xbar2l1tex_read_sectors.sum
l1tex__m_l1tex2xbar_req.sum
sm__warps_active.avg.pct_of_peak_sustained_active"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
timeout 60 "$BIN" time >"$OUTDIR/time.csv" 2>&1
echo "time rc=$? rows: $(grep -c '^TIME,' "$OUTDIR/time.csv")"
probe_metrics "$WANT" --launch-count 1 "$BIN" ncu
timeout 360 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
timeout 100 "$NCU" "${NCUARGS[@]}" --metrics gpu__time_duration.sum "$BIN" ncu 3 >"$OUTDIR/ncu_time.csv" 2>&1
echo "ncu time rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu_time.csv")"
echo "== done ($(date -u '+%H:%M:%S'))"
