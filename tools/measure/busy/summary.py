#!/usr/bin/env python3
"""Summarises tools/measure/busy's lat.csv and act.csv (usage: summary.py DIR)."""
import csv
import gzip
import os
import sys
from collections import OrderedDict

d = sys.argv[1] if len(sys.argv) > 1 else "results"


def opened(path):
    """The CSV at path, or its gzipped copy (path.gz)."""
    return open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")


def pct(xs, p):
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def latencies(path, keys, title, head, row):
    """Prints, per case (the columns `keys`), the chase's mean and percentiles."""
    groups = OrderedDict()
    for r in csv.DictReader(opened(path)):
        groups.setdefault(tuple(r[k] for k in keys), []).append(int(r["latency_cycles"]))
    print(title)
    print(head + f"{'mean':>8}{'p10':>6}{'p50':>6}{'p90':>6}{'p99':>6}")
    for k, xs in groups.items():
        xs.sort()
        print(row(k) + f"{sum(xs) / len(xs):>8.0f}{pct(xs, 10):>6}{pct(xs, 50):>6}{pct(xs, 90):>6}{pct(xs, 99):>6}")


try:
    latencies(
        f"{d}/lat.csv",
        ["case", "blocks", "b0_warps", "u", "op", "footprint", "stream_gbps"],
        "chase latency (SM cycles) beside streaming warps",
        f"{'case':<11}{'blocks':>7}{'b0w':>5}{'u':>3}{'op':>6}{'foot':>6}{'GB/s':>9}",
        lambda k: f"{k[0]:<11}{k[1]:>7}{k[2]:>5}{k[3]:>3}{k[4]:>6}{k[5]:>6}{float(k[6]):>9.0f}",
    )
except FileNotFoundError:
    pass

try:
    print()
    latencies(
        f"{d}/mix.csv",
        ["read_warps", "write_warps", "read_gbps", "write_gbps"],
        "chase latency (SM cycles) on a quiet SM beside read warps and write-only warps",
        f"{'rd warps':>9}{'wr warps':>9}{'rd GB/s':>9}{'wr GB/s':>9}",
        lambda k: f"{k[0]:>9}{k[1]:>9}{float(k[2]):>9.0f}{float(k[3]):>9.0f}",
    )
except FileNotFoundError:
    pass

try:
    rows = list(csv.DictReader(open(f"{d}/stream.csv")))
    print()
    print("streams alone (warm launch, median of 5): rate and their own load latency")
    print(f"{'op':<6}{'blocks':>7}{'u':>3}{'GB/s':>8}{'latency':>9}")
    for r in rows:
        print(f"{r['op']:<6}{int(r['blocks']):>7}{int(r['u']):>3}{float(r['gbps']):>8.0f}"
              f"{float(r['load_latency_cycles']):>9.0f}")
except FileNotFoundError:
    pass

try:
    rows = list(csv.DictReader(open(f"{d}/act.csv")))
    print()
    print("random chunks over 64 GiB (warm launch, median of 5)")
    print(f"{'case':<7}{'chunk':>6}{'d':>9}{'u':>3}{'chunks':>10}{'ms':>9}{'chunks/us':>11}{'64B fetch/ns/ch':>17}")
    for r in rows:
        c = int(r["chunks"])
        ms = float(r["ms"])
        cb = int(r["chunk_bytes"])
        # 64-byte fetches (for pairs 32 bytes apart, some share one: counted apart)
        fetches = c * max(1, cb // 64)
        print(f"{r['case']:<7}{cb:>6}{int(r['pair_d']):>9}{int(r['u']):>3}{c:>10}{ms:>9.4f}"
              f"{float(r['chunks_per_us']):>11.1f}{fetches / (ms * 1e6) / 94:>17.4f}")
except FileNotFoundError:
    pass

try:
    rows = list(csv.DictReader(open(f"{d}/piece.csv")))
    print()
    print("sectors in 256-byte pieces (8 Mi sectors, one launch after the L2 was emptied, median of 3)")
    print(f"{'op':<8}{'sp':>3}{'gap':>5}{'us':>9}{'sectors/us':>12}{'pieces/us':>11}")
    for r in rows:
        print(f"{r['op']:<8}{int(r['sectors_per_piece']):>3}{int(r['gap']):>5}{float(r['ms']) * 1e3:>9.1f}"
              f"{float(r['sectors_per_us']):>12.0f}{float(r['pieces_per_us']):>11.0f}")
except FileNotFoundError:
    pass
