#!/usr/bin/env python3
"""Summarises tools/measure/lhome: each line's home partition seen from each SM.

Usage: summary.py OUTDIR        (reads OUTDIR/lat.csv.gz or lat.csv)
       summary.py OUTDIR bits   (reads OUTDIR/bits.csv: the partition as a
                                function of the line number's bits)

A line's latency is the least of its three walks. Below NEAR_MAX cycles the
line is homed in the SM's own partition, from there to FAR_MAX in the other
(tools/measure/dlat: 548 and 729 cycles), above that unknown. Prints the
histogram that justifies the two thresholds, which SMs see the same lines
near (the SMs of one partition), and how the home changes along the lines:
the share of neighbouring lines, and of lines 2^k apart, homed in different
partitions, and the runs of lines with one home.
"""
import csv
import gzip
import os
import sys
from collections import Counter, defaultdict

NEAR_MAX, FAR_MAX = 640, 820


def load(d):
    p = os.path.join(d, "lat.csv.gz")
    f = gzip.open(p, "rt") if os.path.exists(p) else open(os.path.join(d, "lat.csv"))
    rows = defaultdict(dict)
    for r in csv.DictReader(f):
        lat = min(int(r["lat0"]), int(r["lat1"]), int(r["lat2"]))
        rows[int(r["sm"])][(int(r["region"]), int(r["line"]))] = lat
    return rows


def cls(lat):
    return "n" if lat < NEAR_MAX else ("f" if lat < FAR_MAX else "?")


def bits(d):
    """Line 0, each line 2^b and random lines, from SM 0 and SM 2: the home
    from the difference of the two SMs' least latencies (partition 0: SM 2
    slower by 100 cycles or more; 1: SM 0 slower), as translation misses
    over 32 GiB add to some lines on both alike. Then which single bits
    flip the home, and a fit of the home as the parity of some bits over
    GF(2) to the clearest lines (|difference| 130-230 cycles): a parity
    leaves no row inconsistent."""
    lat = defaultdict(dict)
    for r in csv.DictReader(open(os.path.join(d, "bits.csv"))):
        lat[int(r["sm"])][int(r["line"])] = min(int(r["lat0"]), int(r["lat1"]), int(r["lat2"]))
    home, clear = {}, {}
    for x in lat[0]:
        diff = lat[2][x] - lat[0][x]
        if abs(diff) >= 100:
            home[x] = 0 if diff > 0 else 1
        if 130 <= abs(diff) <= 230:
            clear[x] = home[x]
    print(f"lines: {len(lat[0])}; homed by the difference: {len(home)}; clearest: {len(clear)}")
    flips = [b for b in range(28) if (1 << b) in home and 0 in home and home[1 << b] != home[0]]
    unknown = [b for b in range(28) if (1 << b) not in home]
    print(f"single bits of the line number whose flip from line 0 changes the home: {flips}; "
          f"undecided: {unknown}")
    # Gaussian elimination over GF(2): unknowns are 28 mask bits and a constant.
    basis, inconsistent = {}, 0
    for x, h in sorted(clear.items()):
        v, r = (x & ((1 << 28) - 1)) | (1 << 28), h
        for p in sorted(basis, reverse=True):
            if v >> p & 1:
                v, r = v ^ basis[p][0], r ^ basis[p][1]
        if v == 0:
            inconsistent += r
            continue
        basis[v.bit_length() - 1] = (v, r)
    print(f"parity fit: rank {len(basis)}, rows inconsistent with any parity: {inconsistent} "
          f"of {len(clear)}")


def main():
    d = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "bits":
        return bits(d)
    rows = load(d)
    sms = sorted(rows)
    hist = Counter()
    for s in sms:
        for lat in rows[s].values():
            hist[min(lat // 20 * 20, 1400)] += 1
    print(f"SMs walked: {len(sms)}; lines per SM: {len(rows[sms[0]])}")
    print("least latency of three walks, 20-cycle bins (all SMs, all lines):")
    tot = sum(hist.values())
    for b in sorted(hist):
        if hist[b] * 1000 >= tot:
            print(f"  {b:5d} {hist[b]:8d} {100 * hist[b] / tot:5.1f}%")
    pats = {s: "".join(cls(rows[s][k]) for k in sorted(rows[s])) for s in sms}
    unk = sum(p.count("?") for p in pats.values())
    print(f"unknown (>= {FAR_MAX} cycles): {unk} of {sum(len(p) for p in pats.values())}")
    # The SMs of one partition see the same lines near: group by agreement with SM 0.
    ref = pats[sms[0]]

    def agree(a, b):
        k = [(x, y) for x, y in zip(a, b) if x != "?" and y != "?"]
        return sum(x == y for x, y in k) / max(1, len(k))

    same = [s for s in sms if agree(pats[s], ref) > 0.5]
    other = [s for s in sms if s not in same]
    print(f"SMs that see SM {sms[0]}'s near lines near ({len(same)}): {same}")
    print(f"the others ({len(other)}): {other}")
    ag = [agree(pats[s], ref) if s in same else 1 - agree(pats[s], ref) for s in sms]
    print(f"agreement with that split, line by line: min {min(ag):.4f}, mean {sum(ag) / len(ag):.4f}")
    # A consensus home per line: partition 0 = near for SM sms[0]'s group.
    keys = sorted(rows[sms[0]])
    home = {}
    for i, k in enumerate(keys):
        votes = Counter()
        for s in sms:
            c = pats[s][i]
            if c == "?":
                continue
            in0 = s in same
            votes[0 if (c == "n") == in0 else 1] += 1
        home[k] = votes.most_common(1)[0][0] if votes else None
    for region in (0, 1):
        ks = [k for k in keys if k[0] == region]
        h = [home[k] for k in ks]
        print(f"region {region} (lines {ks[0][1]}..{ks[-1][1]}): homed in partition 0: "
              f"{sum(1 for x in h if x == 0)}, 1: {sum(1 for x in h if x == 1)}")
        for gap in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
            pairs = [(h[i], h[i + gap]) for i in range(len(h) - gap) if h[i] is not None and h[i + gap] is not None]
            diff = sum(a != b for a, b in pairs) / max(1, len(pairs))
            print(f"  lines {gap:3d} apart in different partitions: {100 * diff:5.1f}%")
        even = [(h[i], h[i + 1]) for i in range(0, len(h) - 1, 2) if h[i] is not None and h[i + 1] is not None]
        print(f"  the two lines of a 256-byte unit in different partitions: "
              f"{100 * sum(a != b for a, b in even) / max(1, len(even)):5.1f}%")
        runs, cur, n = Counter(), None, 0
        for x in h:
            if x == cur:
                n += 1
            else:
                if cur is not None:
                    runs[n] += 1
                cur, n = x, 1
        runs[n] += 1
        print(f"  runs of lines with one home (length: count): "
              + ", ".join(f"{k}: {v}" for k, v in sorted(runs.items())[:16]))
        print("  first 256 lines (0 = partition 0):")
        s = "".join("." if x is None else str(x) for x in h[:256])
        for i in range(0, 256, 64):
            print("   ", s[i:i + 64])


if __name__ == "__main__":
    main()
