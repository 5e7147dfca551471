#!/usr/bin/env python3
"""Whether the SMs split into a slow and a fast half (`run.sh OUTDIR blocks`
or `side`): blocks per SM sorted, cut at the largest ratio between
neighbours where it exceeds 1.5. Per file: the slow SMs (how many, their
blocks, a block's mean stay, whether they come in TPC pairs), the fast ones,
and how many blocks an SM holds on average over the kernel (p10, p50, p90).
With `--side SIDE.csv`: also each half's mean L2 hit latency for each line
of side.csv (the same call's `side` mode), slow half minus fast half.

    halves.py results/blocks/call3/blocks_e8_s21.csv.gz ...
    halves.py --side results/blocks/call3/side.csv results/blocks/call3/blocks_e8_s21.csv.gz
"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def load(path):
    with gzip.open(path, "rt") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    return [(int(r["sm"]), int(r["start_ns"]), int(r["end_ns"])) for r in rows]


def split(blocks):
    """Blocks per SM, time resident per SM (ns), and the slow SMs."""
    count, busy = defaultdict(int), defaultdict(float)
    for sm, s, e in blocks:
        count[sm] += 1
        busy[sm] += e - s
    v = sorted(count.values())
    k = max(range(1, len(v)), key=lambda i: v[i] / v[i - 1])
    slow = {sm for sm in count if count[sm] < v[k]} if v[k] / v[k - 1] > 1.5 else set()
    return count, busy, slow


def describe(path, side):
    blocks = load(path)
    span = max(e for _, _, e in blocks)
    count, busy, slow = split(blocks)
    fast = [sm for sm in count if sm not in slow]

    def stay(group):
        return sum(busy[s] for s in group) / max(1, sum(count[s] for s in group)) / 1000

    def blocks_of(group):
        c = [count[s] for s in group] or [0]
        return f"{min(c)}-{max(c)}"

    held = sorted(busy[s] / span for s in count)
    n = len(held)
    pairs = " in pairs" if slow and all(s ^ 1 in slow for s in slow) else ""
    print(
        f"{path.split('/')[-1]}: slow {len(slow)} SMs ({blocks_of(slow)} blocks, {stay(slow):.1f} us){pairs}, "
        f"fast {len(fast)} ({blocks_of(fast)}, {stay(fast):.1f} us); blocks held p10 "
        f"{held[n // 10]:.2f} p50 {held[n // 2]:.2f} p90 {held[n * 9 // 10]:.2f}"
    )
    if side and slow:
        diff = []
        for line in sorted(side[next(iter(side))]):
            a = statistics.mean(side[s][line] for s in slow)
            b = statistics.mean(side[s][line] for s in side if s not in slow)
            diff.append(a - b)
        print("  L2 hit latency, slow half minus fast half, per line (cycles): "
              + ", ".join(f"{d:+.1f}" for d in diff))


def main(args):
    side = None
    if args[:1] == ["--side"]:
        side = defaultdict(dict)
        with open(args[1]) as f:
            for r in csv.DictReader(f):
                side[int(r["sm"])][int(r["line"])] = float(r["cycles"])
        args = args[2:]
    for path in args:
        describe(path, side)


if __name__ == "__main__":
    main(sys.argv[1:])
