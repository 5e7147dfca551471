#!/usr/bin/env python3
"""Summarises tools/measure/xprio: the probe's L2 hits beside local and
remote read streams into its partition's slices.

Usage: summary.py OUTDIR
"""
import csv
import gzip
import os
import sys
from collections import defaultdict


def main():
    d = sys.argv[1]
    sm = list(csv.DictReader(open(os.path.join(d, "sms.csv"))))
    p0 = [int(r["sm"]) for r in sm if r["part"] == "0"]
    print(f"SMs in SM 0's partition (P0): {len(p0)}: {p0}")
    pages = list(csv.DictReader(gzip.open(os.path.join(d, "pages.csv.gz"), "rt")))
    near = sum(min(int(r["lat0"]), int(r["lat1"])) < 650 for r in pages)
    print(f"4 KiB pages homed in P0 (seen from SM 0): {near} of {len(pages)}")
    rows = defaultdict(list)
    for r in csv.DictReader(open(os.path.join(d, "probe.csv"))):
        rows[(r.get("op", "read"), r["case"], int(r["n"]))].append(r)
    print("op     streams   SMs  rate GB/s   probe p10 / p50 / p90 / p99 cycles (median of the repeats)")
    for (op, case, n), rs in sorted(rows.items()):
        med = lambda k: sorted(float(r[k]) for r in rs)[len(rs) // 2]
        print(f"{op:6s} {case:8s} {n:4d} {med('rate_gbps'):9.0f}   {med('p10'):6.0f} / {med('p50'):6.0f} / "
              f"{med('p90'):6.0f} / {med('p99'):6.0f}")


if __name__ == "__main__":
    main()
