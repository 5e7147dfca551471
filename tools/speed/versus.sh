#!/usr/bin/env bash
# Two builds of gpusim, each with its own configs and workloads, timed whole
# on one thread in turn on the points of `cargo bench -- sectors_per_second`:
# task clock (perf stat) per run, and the L1 sectors and simulated time each
# gives (the sectors must agree: they come from coalescing alone).
#
# Usage: tools/speed/versus.sh OLD_CHECKOUT NEW_CHECKOUT [ROUNDS]
#   each checkout built (`cargo build --release`); ROUNDS defaults to 3.
# Prints CSV: round,point,which,task_clock_ms,sectors,time_ns
set -u -o pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_CHECKOUT NEW_CHECKOUT [ROUNDS]" >&2
    exit 2
fi
OLD=$1 NEW=$2 ROUNDS=${3:-3}
for d in "$OLD" "$NEW"; do
    if [ ! -x "$d/target/release/gpusim" ]; then
        echo "$0: $d/target/release/gpusim not found: build that checkout first (cargo build --release)" >&2
        exit 2
    fi
done
pts=("c870 offset --set nMB=4 --set elem=4 --set offset=1"
    "c2050 stride --set nMB=4 --set elem=4 --set stride=8"
    "h200 stride --set nMB=16 --set elem=4 --set stride=4"
    "h200 offset --set nMB=16 --set elem=4 --set offset=0"
    "h200 stride --set nMB=16 --set elem=4 --set stride=32")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "round,point,which,task_clock_ms,sectors,time_ns"
for round in $(seq "$ROUNDS"); do
    for p in "${pts[@]}"; do
        set -- $p
        dev=$1 wl=$2
        shift 2
        for which in old new; do
            if [ $which = old ]; then D=$OLD; else D=$NEW; fi
            (cd "$D" && perf stat -x, -e task-clock -o "$T/ps.txt" target/release/gpusim run "configs/$dev.ron" \
                "workloads/$wl.ron" "$@" --sample off -j1 -q --csv "$T/$which.csv" >/dev/null 2>&1)
            tc=$(grep task-clock "$T/ps.txt" | cut -d, -f1)
            got=$(python3 -c "
import csv
r = list(csv.DictReader(open('$T/$which.csv')))[0]
n = sum(int(r['l1tex__t_sectors_pipe_lsu_mem_global_op_' + k + '.sum']) for k in ('ld', 'st'))
print(f\"{n},{r['time_ns']}\")")
            echo "$round,$dev $wl $*,$which,$tc,$got"
        done
    done
done
