#!/usr/bin/env python3
"""How long each block of seed 002's stride kernel stays resident on the
H200 (`run.sh OUTDIR blocks`), and whether some wait far longer than the
rest: a scheduler that lets a few warps lose every contest for the SM's
miss path leaves their blocks resident while many waves of younger ones
pass.

    blocks.py results/blocks/call1/blocks_e8_s21.csv.gz ...

Per file: the mean wave time (1,056 blocks, from wave 21 on), each block's
residency (exit - entry) at the 50th, 90th, 99th percentile and at most,
in waves, and at the end of every wave from the third the number of blocks
still resident that entered more than two waves of blocks earlier (in the
order blocks entered), mean and most.
"""
import csv
import gzip
import sys

WAVE = 132 * 8


def load(path):
    with gzip.open(path, "rt") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))]
    head, rows = rows[0], rows[1:]
    i = {k: n for n, k in enumerate(head)}
    return [(int(r[i["start_ns"]]), int(r[i["end_ns"]])) for r in rows]


def summary(blocks):
    ends = sorted(e for _, e in blocks)
    waves = len(ends) // WAVE
    wave_end = [ends[k * WAVE - 1] for k in range(1, waves + 1)]
    per_wave = (wave_end[-1] - wave_end[19]) / (waves - 20)
    res = sorted(e - s for s, e in blocks)
    pct = lambda p: res[min(len(res) - 1, int(p * len(res)))] / per_wave
    # Blocks in the order they entered; at each wave end, the ones entered
    # (rank < entered) and not yet gone whose rank is below entered - 2 waves.
    order = sorted(range(len(blocks)), key=lambda b: blocks[b][0])
    rank = [0] * len(blocks)
    for r, b in enumerate(order):
        rank[b] = r
    starts = sorted(s for s, _ in blocks)
    old = []
    import bisect
    for k in range(3, waves + 1):
        t = wave_end[k - 1]
        entered = bisect.bisect_right(starts, t)
        cut = entered - 2 * WAVE
        old.append(sum(1 for b, (s, e) in enumerate(blocks) if rank[b] < cut and e > t))
    return per_wave, [pct(p) for p in (0.5, 0.9, 0.99)] + [res[-1] / per_wave], old


def main():
    print("file | blocks | us a wave | residency in waves: p50, p90, p99, max | resident >2 waves old: mean, most")
    for path in sys.argv[1:]:
        blocks = load(path)
        w, r, old = summary(blocks)
        print(f"{path.split('/')[-1]} | {len(blocks)} | {w / 1000:.2f} | "
              + ", ".join(f"{x:.2f}" for x in r)
              + f" | {sum(old) / len(old):.1f}, {max(old)}")


if __name__ == "__main__":
    main()
