#!/usr/bin/env python3
"""The H200's course of seed 002's stride kernel at 256 MiB, wave by wave,
beside gpusim's (`--json`'s `wave_ends_ns`).

Usage: compare.py WAVES.csv [GPUSIM.json ...]

WAVES.csv is `results/waves.csv` of `run.sh`. Each GPUSIM.json is the output
of, for instance,

    gpusim run configs/h200.ron workloads/stride.ron --set nMB=256 \\
        --set elem=8 --set stride=21 --sample off --json OUT.json

(timed whole: a sampled run times only its first waves). For every case,
the time per wave (the time between the ends of consecutive whole waves of
1,056 blocks) over three stretches of the kernel: waves 2-4, 5-20 and 21 to
the one before the last whole wave (the last is the tail's), as the mean in microseconds and the spread (standard
deviation over the mean); the H200's over its three launches together.
"""
import csv
import json
import statistics as st
import sys
from collections import defaultdict

STRETCHES = [(2, 4), (5, 20), (21, None)]


def per_wave(ends):
    """Durations of whole waves, us: ends[k] is wave k+1's end, ns."""
    return [(b - a) / 1000 for a, b in zip([0] + ends[:-1], ends)]


def stretches(durations_by_run):
    out = []
    for lo, hi in STRETCHES:
        xs = []
        for d in durations_by_run:
            top = len(d) - 1 if hi is None else hi
            xs += d[lo - 1 : top]
        m = st.mean(xs)
        out.append((m, st.pstdev(xs) / m))
    return out


def main(waves_csv, jsons):
    h200 = defaultdict(lambda: defaultdict(dict))
    for r in csv.DictReader(open(waves_csv)):
        if r["wave"] != "end":
            h200[(int(r["elem"]), int(r["stride"]))][r["launch"]][int(r["wave"])] = int(r["t_ns"])
    sim = {}
    for path in jsons:
        d = json.load(open(path))
        for p in d if isinstance(d, list) else d["points"]:
            if float(p.get("sampled_fraction", 1)) < 1:
                print(f"{path}: elem={p['elem']} stride={p['stride']} was sampled; skipped", file=sys.stderr)
                continue
            sim[(int(p["elem"]), int(p["stride"]))] = [t for t in p["wave_ends_ns"]]
    hdr = "elem stride | " + " | ".join(f"waves {lo}-{hi or 'end'}" for lo, hi in STRETCHES)
    print(hdr + "   (mean us per wave, spread)")
    for key in sorted(h200):
        runs = [per_wave([w[k] for k in sorted(w)]) for w in h200[key].values()]
        h = stretches(runs)
        line = f"{key[0]:4d} {key[1]:6d} | H200   " + " | ".join(f"{m:6.2f} {s * 100:4.1f}%" for m, s in h)
        print(line)
        if key in sim:
            g = stretches([per_wave(sim[key])])
            print(
                f"{'':11} | gpusim "
                + " | ".join(f"{m:6.2f} {s * 100:4.1f}% ({m / hm - 1:+.1%})" for (m, s), (hm, _) in zip(g, h))
            )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
