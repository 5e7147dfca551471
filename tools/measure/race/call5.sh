#!/usr/bin/env bash
# Call 5 of race: where the 8-block state falls among the L2's slices.
# ../loadlat calls 4-8 found the stride kernel's SMs split at 8 blocks an
# SM into the chip's two fixed halves, one of them slow, which one chosen
# anew at each launch. If the halves are the L2's two partitions (each with
# its own GPCs), the slices of the slow half's partition see fewer requests
# from their SMs. This call reads the blocks each SM ran and each
# slice's sectors by source, misses, own writes, fills and busy cycles:
# each counter's sum, with its largest and smallest instance (SM, L2
# slice, DRAM channel; the single instances' values, asked for with
# --print-metric-instances values, are not printed by Nsight Compute
# 2025.3: fmt.txt), in one cold launch per case and group, every group
# carrying
# the same two anchors (sm__ctas_launched and the slices' reads from the
# SMs) so that each launch's split can be told from the group's own pass.
# Cases: rw double 24 and float 32 at 8 blocks an SM (two launches each),
# rw float 32 at 2 blocks an SM (one).
#
# Usage: tools/measure/race/call5.sh [OUTDIR]   (default $OUT, else ./out)
# Writes: env.txt, cases.csv, fmt.txt, g1.csv .. g4.csv (and run.log from the
# caller's tee).
set -u -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../build.sh"
require_h200
measure_build race "${1:-}"
need_ncu
"$NCU" --version >>"$ENV" 2>&1
"$BIN" list >"$OUTDIR/cases.csv"
NCUARGS=(--clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_
    --page raw --print-metric-instances values)
# How this Nsight Compute prints instances (the details page prints the
# sum alone in CSV): one metric, one 2-block launch, three ways.
for P in "--page raw --print-metric-instances values" "--page details --print-metric-instances values" \
    "--page raw --print-metric-instances details"; do
    echo "#### $P" >>"$OUTDIR/fmt.txt"
    timeout 60 "$NCU" --clock-control none --cache-control all --print-units base --csv --kernel-name regex:^k_ \
        $P --metrics lts__t_sectors_srcunit_tex_op_read.sum,sm__ctas_launched.sum "$BIN" ncu 11 12 >>"$OUTDIR/fmt.txt" 2>&1
done
head -c 4000 "$OUTDIR/fmt.txt"
ANCHORS="sm__ctas_launched.sum
lts__t_sectors_srcunit_tex_op_read.sum"
G1="lts__t_sectors_srcunit_tex_op_write.sum
lts__t_sectors_srcunit_ltcfabric_op_read.sum
lts__t_sectors_srcunit_ltcfabric_op_write.sum"
G2="lts__t_sectors_op_write_lookup_miss.sum
lts__d_sectors_fill_device.sum
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"
G3="lts__xbar2lts_cycles_active.sum
lts__lts2xbar_cycles_active.sum
lts__cycles_active.sum"
G4="dram__bytes_read.sum
dram__bytes_write.sum
gpu__time_duration.sum
sm__cycles_active.sum"
g=0
for G in "$G1" "$G2" "$G3" "$G4"; do
    g=$((g + 1))
    echo "== group $g probe ($(date -u '+%H:%M:%S'))"
    W=$(for m in $ANCHORS $G; do b=${m%.sum}; echo "$b.sum $b.max $b.min"; done)
    probe_metrics "$W" "$BIN" ncu 11 12
    [ -z "$M" ] && continue
    out=$OUTDIR/g$g.csv
    echo "# group $g metrics: $M" >"$out"
    timeout 150 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu 0 2 2 >>"$out" 2>&1
    echo "g$g 8 blocks rc=$?"
    timeout 60 "$NCU" "${NCUARGS[@]}" --metrics "$M" "$BIN" ncu 11 12 >>"$out" 2>&1
    echo "g$g 2 blocks rc=$? rows: $(grep -c '^"' "$out")"
done
campaign_end
