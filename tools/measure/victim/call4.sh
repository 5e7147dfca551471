#!/usr/bin/env bash
# Call 4 of victim (VICTIM_SECTOR=1, see victim.cu): call 3 found that lines
# read and then written in part take the room of lines read when the walk
# reads whole lines. Seed 002's stride kernel at large strides touches one
# sector of each line. Does a line touched so take a slot of its own (or
# more, or less) when it is read, or read then written 8 bytes?
#   sector_pollute.csv: A read, then s MiB of other lines read whole, or one
#                       sector of each read (ld.cg), read then written 8
#                       bytes, or the same with a plain load; then A probed.
#   ncu.csv:            16 and 64 MiB walked in each one-sector way, one cold
#                       launch each under Nsight Compute.
# Usage: tools/measure/victim/call4.sh [OUTDIR]   (default $OUT, else out/ beside this script)
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build victim "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|LDG|STG' | head -60 >>"$ENV" 2>&1
echo "== probes ($(date -u '+%H:%M:%S'))"
VICTIM_SECTOR=1 timeout 300 "$BIN" "$OUTDIR/sector_pollute.csv"
echo "victim call 4 rc=$?" | tee -a "$ENV"
export VICTIM_SECTOR=1
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
