#!/usr/bin/env bash
# Call 5 of victim (VICTIM_STREAM=1, see victim.cu): calls 3 and 4 walked
# a line a warp instruction with L2-only loads. Seed 002's stride kernel
# touches a line a lane, 32 a warp instruction, with plain loads that the
# L1 caches, then stores each back. Do lines touched so take the room of
# lines read?
#   stream_pollute.csv: A read, then s MiB of other lines read whole, or a
#                       line a lane loaded (8 bytes, plain load), or loaded
#                       and stored back plus one; then A probed.
#   ncu.csv:            16 and 64 MiB walked in the two line-a-lane ways,
#                       one cold launch each under Nsight Compute.
# Usage: tools/measure/victim/call5.sh [OUTDIR]   (default $OUT, else out/ beside this script)
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build victim "${1:-}"
cuobjdump --dump-sass "$BIN" | grep -E 'Function|LDG|STG' | head -150 >>"$ENV" 2>&1
echo "== probes ($(date -u '+%H:%M:%S'))"
VICTIM_STREAM=1 timeout 300 "$BIN" "$OUTDIR/stream_pollute.csv"
echo "victim call 5 rc=$?" | tee -a "$ENV"
export VICTIM_STREAM=1
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
