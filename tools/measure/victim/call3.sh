#!/usr/bin/env bash
# Call 3 of victim (VICTIM_RW=1, see victim.cu): does a line read and then
# written in part (as seed 002's stride kernel does to every line it
# touches at large strides) take more of the L2 than a line read, or is it
# kept before clean lines?
#   rw_pollute.csv: A read, then s MiB of other lines read, read then
#                   written 8 bytes a sector, read then written whole, or
#                   written 8 bytes a sector; then A probed.
#   rw_order.csv:   W read then written 8 bytes a sector and A read, in
#                   either order, then s MiB read; then W or A probed.
#   ncu.csv:        16 and 64 MiB walked in each of those four ways, one cold
#                   launch each under Nsight Compute: the L2's lookups by
#                   source, operation and outcome (which of them the L2
#                   issues by itself).
# Usage: tools/measure/victim/call3.sh [OUTDIR]   (default $OUT, else out/ beside this script)
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build victim "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|LDG|STG' | head -60 >>"$ENV" 2>&1
echo "== probes ($(date -u '+%H:%M:%S'))"
VICTIM_RW=1 timeout 300 "$BIN" "$OUTDIR/rw_pollute.csv" "$OUTDIR/rw_order.csv"
echo "victim call 3 rc=$?" | tee -a "$ENV"
need_ncu
"$NCU" --version >>"$ENV" 2>&1
WANT="gpu__time_duration.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric_op_read_lookup_hit.sum
lts__t_sectors_srcunit_ltcfabric_op_read_lookup_miss.sum
lts__t_sectors_srcunit_ltcfabric_op_write_lookup_hit.sum
lts__t_sectors_srcunit_ltcfabric_op_write_lookup_miss.sum
lts__t_sectors_op_write_lookup_hit.sum
lts__t_sectors_op_write_lookup_miss.sum
lts__t_sectors_op_read_lookup_hit.sum
lts__t_sectors_op_read_lookup_miss.sum
lts__d_sectors_fill_device.sum
lts__t_sectors_op_write.sum
dram__bytes_read.sum
dram__bytes_write.sum"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_walk)
echo "== ncu ($(date -u '+%H:%M:%S'))"
probe_metrics "$WANT" "$BIN" ncu
timeout 200 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu >"$OUTDIR/ncu.csv" 2>&1
echo "ncu rc=$? rows: $(grep -c '"gpu__time_duration.sum"' "$OUTDIR/ncu.csv")" | tee -a "$ENV"
campaign_end
