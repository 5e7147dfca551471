#!/usr/bin/env bash
# The second or third set of misalign.cu on an H200 (second: where rw's
# cost lies, warps that share a line on one SM or on two, the load through
# the L1 or past it; third: which sharing costs, loads, stores, copies and
# one-sided sharing, on one SM or spread over two; fourth: when a store
# onto sectors another warp loads is held; fifth: whether the load must be
# done): CUDA-event times of
# warm back-to-back batches, then one cold launch per case under Nsight
# Compute with the L1 and L2 traffic.
#
# Usage: tools/measure/misalign/run_set.sh second|third|fourth|fifth [OUTDIR]
#        (OUTDIR default $OUT, else ./out)
# Writes: env.txt, time.csv, ncu.csv.
set -u -o pipefail
SET=${1:-}
case "$SET" in
second | third | fourth | fifth) ;;
*) echo "usage: run_set.sh second|third|fourth|fifth [OUTDIR]"; exit 2 ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 misalign "${2:-}"
timeout 60 "$BIN" time 5 "$SET" >"$OUTDIR/time.csv" 2>&1
echo "time rc=$? rows: $(grep -c '^TIME,' "$OUTDIR/time.csv")"
M="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
timeout 200 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu 1 "$SET" >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv") cases: $(grep -c '^CASE,' "$OUTDIR/ncu.csv")"
if [ "$SET" = fifth ]; then
    # Whether the barrier alone waits for the block's loads: the code of
    # the kernels around it.
    cuobjdump -sass "$BIN" | awk '/Function : .*k_sh/{p=1} /Function : /&&!/k_sh/{p=0} p' >"$OUTDIR/sass.txt" 2>&1
    echo "sass rc=$? lines: $(wc -l <"$OUTDIR/sass.txt")"
fi
echo "== done ($(date -u '+%H:%M:%S'))"
