#!/usr/bin/env python3
"""One line per wshape case: cold time (the profiled launch and the median
of five), the warm batches' median, DRAM bytes, the rate, L2 sectors.

Usage: tools/measure/wshape/summary.py [RESULTS]   (default: results/ beside it)
"""
import collections
import csv
import os
import statistics
import sys

base = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")


def parse(p):
    lines = open(p).read().splitlines()
    cases = [l for l in lines if l.startswith("CASE,")]
    r = list(csv.reader([l for l in lines if l.startswith('"')]))
    idx = {h: i for i, h in enumerate(r[0])}
    by = collections.OrderedDict()
    for x in r[1:]:
        by.setdefault(x[idx["ID"]], {})[x[idx["Metric Name"]]] = float(x[idx["Metric Value"]].replace(",", ""))
    return cases, list(by.values())


cases, ms = parse(os.path.join(base, "ncu.csv"))
tc, tm = parse(os.path.join(base, "ncu_time.csv"))
cold = collections.defaultdict(list)
for c, m in zip(tc, tm):
    cold[c.split(",")[1]].append(m["gpu__time_duration.sum"])
warm = collections.defaultdict(list)
for l in open(os.path.join(base, "time.csv")):
    if l.startswith("TIME,"):
        f = l.strip().split(",")
        warm[f[1]].append(float(f[5]))
print("mode,mask,grid,time_ns,cold5_median_ns,warm_median_ns,dram_read_bytes,dram_write_bytes,"
      "dram_tb_per_s,l2_read_sectors,l2_write_sectors,l2_fills,occupancy_pct")
for c, m in zip(cases, ms):
    f = c.split(",")
    t = m["gpu__time_duration.sum"]
    dr, dw = m["dram__bytes_read.sum"], m["dram__bytes_write.sum"]
    print(f"{f[2]},{f[3]},{f[4]},{t:.0f},{statistics.median(cold[f[1]]):.0f},"
          f"{statistics.median(warm[f[1]]) * 1e6:.0f},{dr:.0f},{dw:.0f},{(dr + dw) / t / 1e3:.2f},"
          f"{m['lts__t_sectors_srcunit_tex_op_read.sum']:.0f},{m['lts__t_sectors_srcunit_tex_op_write.sum']:.0f},"
          f"{m['lts__d_sectors_fill_device.sum']:.0f},{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}")
