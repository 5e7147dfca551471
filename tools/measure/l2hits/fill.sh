#!/usr/bin/env bash
# Second pass over the l2hits cases: where do the DRAM reads beyond the L2's
# read misses come from (seed 002's stride kernel at float strides 20-32)?
# Lists the L2 and DRAM metrics this Nsight Compute knows on the GPU
# (metrics.txt), keeps those about fills, evictions and DRAM sectors, and
# reads them on one cold launch per case (fill.csv).
#
# Usage: tools/measure/l2hits/fill.sh [OUTDIR]   (default $OUT, else ./out)
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 l2hits "${1:-}"
"$NCU" --query-metrics --csv >"$OUTDIR/metrics.txt" 2>&1
WANT=$(grep -oE '^"?(lts__d_sectors[a-z_]*|lts__t_sectors_(srcunit_tex_)?op_(read|write)_lookup_(hit|miss)|lts__t_sectors_[a-z_]*evict[a-z_]*|lts__t_sectors_srcunit_ltcfabric_op_(read|write)_lookup_(hit|miss)|lts__t_sectors_srcunit_l1|lts__t_sectors_aperture_device_op_(read|write)|dram__sectors_(read|write)|lts__t_sectors_srcunit_tex_op_(read|write))' "$OUTDIR/metrics.txt" | tr -d '"' | sort -u | sed 's/$/.sum/')
WANT="gpu__time_duration.sum
dram__bytes_read.sum
dram__bytes_write.sum
$WANT"
echo "candidates: $(echo $WANT | wc -w)"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_)
probe_metrics "$WANT" --launch-count 1 "$BIN" ncu
timeout 400 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu >"$OUTDIR/fill.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/fill.csv") cases: $(grep -c '^CASE,' "$OUTDIR/fill.csv")"
echo "== done ($(date -u '+%H:%M:%S'))"
