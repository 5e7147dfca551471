#!/usr/bin/env bash
# Call 3 of race: the same cases under Nsight Compute with the L2's
# lookups split by source and operation, hit and miss, to say which of
# the fabric's lookups miss (reads or writes) at 8 and at 2 blocks an SM,
# and which source the L2's own writes are counted under.
#
# Usage: tools/measure/race/call3.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, ncu.csv, ncu_time.csv (and run.log from the caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build race "${1:-}"
"$BIN" list >"$OUTDIR/cases.csv"
WANT="gpu__time_duration.sum
lts__t_sectors_srcunit_tex_op_read.sum
lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
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
lts__t_sectors_srcnode_gpc_op_write.sum
lts__t_sectors_srcnode_fbp_op_write.sum
lts__t_sectors_srcnode_fbp_op_write_lookup_miss.sum
lts__t_sectors_srcunit_l1_op_write.sum
lts__d_sectors_fill_device.sum
lts__t_sectors_op_write.sum"
ncu_campaign "$WANT"
campaign_end
