#!/usr/bin/env python3
"""mgap's results as one table: results/ncu.csv (the CASE lines in launch
order, the profiler's rows by launch ID), results/clock.csv, and from
results/sass.txt the dependent IMADs the SASS puts between each two
consecutive stores of a thread (ptxas moves some of the N before the
earlier store, and for some N sinks the stores together).

Usage: tools/measure/mgap/summary.py [RESULTS_DIR]  (writes summary.csv there)
"""
import csv
import re
import sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results")
cases, metrics = [], {}
for line in open(d / "ncu.csv"):
    if line.startswith("CASE,"):
        _, kernel, params, unmerged = line.strip().split(",")
        cases.append((kernel, params, int(unmerged)))
    elif line.startswith('"') and not line.startswith('"ID"'):
        f = next(csv.reader([line]))
        metrics.setdefault(int(f[0]), {})[f[-3]] = float(f[-1].replace(",", ""))
# IMADs between consecutive 4-byte stores (STG.E), per kernel <K, N>.
between, fn = {}, None
for line in open(d / "sass.txt"):
    m = re.search(r"Function : void m_gap<(\d+), (\d+)>", line)
    if m:
        fn = (int(m.group(1)), int(m.group(2)))
        between[fn] = []
        continue
    if "Function :" in line:
        fn = None
    m = re.search(r"\*/\s+(@!?P\d\s+)?([A-Z][A-Z0-9_.]*)", line)
    if fn and m:
        between[fn].append(m.group(2))
imads = {}
for fn, ops in between.items():
    pos = [i for i, o in enumerate(ops) if o == "STG.E"]
    imads[fn] = "/".join(str(sum(o == "IMAD" for o in ops[a + 1 : b])) for a, b in zip(pos, pos[1:]))
clock = {}
for r in csv.DictReader(open(d / "clock.csv")):
    key = f"K={r['K']};N={r['N']};G={r['G']};B={r['B']}"
    clock[key] = r["cycles_per_trip_median"]
out = csv.writer(open(d / "summary.csv", "w", newline=""))
out.writerow(["kernel", "params", "l1_store_sectors", "l2_write_sectors", "l2_over_l1",
              "xbar_over_l1", "time_ns", "cycles_per_trip", "imads_between_stores"])
for i, (kernel, params, unmerged) in enumerate(cases):
    m = metrics[i]
    st = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    # Each warp's lane 0 also stores its clock and trip count (two
    # 8-byte stores into one sector): 2 sectors a warp beside the case's.
    warps = int(params.split("G=")[1].split(";")[0]) * int(params.split("B=")[1]) // 32
    assert st == unmerged + 2 * warps, (params, st, unmerged)
    l2 = m["lts__t_sectors_srcunit_tex_op_write.sum"]
    xb = m["l1tex__m_l1tex2xbar_write_sectors.sum"]
    row = [kernel, params, int(st), int(l2), f"{l2 / st:.3f}", f"{xb / st:.3f}",
           int(m["gpu__time_duration.sum"]), clock.get(params, ""),
           imads[(int(params.split("K=")[1].split(";")[0]), int(params.split("N=")[1].split(";")[0]))]]
    out.writerow(row)
    print(*row)
