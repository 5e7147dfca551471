#!/usr/bin/env python3
"""Turns run.sh's ncu.csv into results/xmerge.csv: one row per case, its
parameters, the L1 store sectors of the warps of S (`pair_sectors`) and of
the others (`other_sectors`, each storing whole lines of its own), the
counters, and the L2 write sectors of the warps of S over their L1 sectors
(`pair_l2_over_l1`: 0.5 where two warps' stores leave as one, 1.0 where
none merge; the others' lines are never shared, so their L2 sectors are
their L1 sectors).

Plain Python, so that it runs anywhere (the reading is ../campaign.py).

    python3 make_csv.py [ncu.csv] [xmerge.csv]
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from campaign import ncu_cases, num, params  # noqa: E402

R = 256  # rounds (xmerge.cu)
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "ncu.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "results", "xmerge.csv")
cols = ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__m_l1tex2xbar_write_sectors.sum", "lts__t_requests_srcunit_tex_op_write.sum",
        "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum"]
n = 0
with open(dst, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["B", "S", "L", "s", "d", "busy", "pair_sectors", "other_sectors"] + cols + ["pair_l2_over_l1"])
    for c, m in ncu_cases(src):
        p = params(c[2])
        B, S, L, s = int(p["B"]), int(p["S"], 16), int(p["L"]), int(p["s"])
        warps = B // 32
        k = bin(S & ((1 << warps) - 1)).count("1")
        pair = k * R * min(L * s, 32)
        other = (warps - k) * R * 4 if p["busy"] == "1" else 0
        l2 = num(m["lts__t_sectors_srcunit_tex_op_write.sum"])
        w.writerow([B, p["S"], L, s, p["d"], p["busy"], pair, other]
                   + [int(num(m[x])) for x in cols] + [round((l2 - other) / pair, 4)])
        n += 1
print(f"{n} cases -> {dst}")
