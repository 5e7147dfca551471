#!/usr/bin/env bash
# Builds and runs pline.cu on an H200.
#
# Usage: tools/measure/pline/run.sh [OUTDIR]   (default $OUT, else out/ beside this script)
# Writes: env.txt (date, nvidia-smi, versions, ptxas report, the kernel's SASS
#         stores), check.txt (every written word checked), ncu.csv (raw ncu
#         --csv, one cold launch per case, --cache-control all, with the
#         program's CASE lines).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
measure_ncu_h200 pline "${1:-}"
cuobjdump -sass "$BIN" | grep -E "Function|STG|CS2R|BRA|EXIT" | head -40 >>"$ENV"
timeout 400 "$BIN" check >"$OUTDIR/check.txt" 2>&1
tail -1 "$OUTDIR/check.txt"
M="gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
M="$M,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"
M="$M,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_ltcfabric_op_write.sum,lts__t_sectors_lookup_miss.sum"
M="$M,lts__d_sectors_fill_device.sum,dram__bytes_read.sum,dram__bytes_write.sum"
echo "metrics: $M" | tee -a "$ENV"
ncu_cold ncu "$M"
grep -v '^"' "$OUTDIR/ncu.csv" | grep -v ^CASE | head -5
# The same again: how far one launch's counts move from another's.
ncu_cold ncu2 "$M"
