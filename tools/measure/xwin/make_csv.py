#!/usr/bin/env python3
"""Turns run.sh's ncu.csv into results/xwin.csv: one row per case, its
parameters, the gap between the two warps' clocks before their stores (SM
cycles, over the 256 rounds: p10, median, p90, min, max; read in the same
launch as the counters), the counters, and the L2 write sectors of the two
warps over their L1 store sectors (`pair_l2_over_l1`: 0.5 where their
stores leave as one, 1.0 where none merge; the 128 sectors of the clocks
written out after the rounds are taken off first).

Plain Python, so that it runs anywhere (the reading is ../campaign.py).

    python3 make_csv.py [xwin.csv]

reads results/first/ncu.csv (m_w, the first call), results/second/ncu.csv
(m_v, the second) and results/third/ncu.csv (m_p, the third).
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from campaign import ncu_cases, num, params  # noqa: E402

R = 256  # rounds (xwin.cu)
STAMPS = 128  # L2 write sectors of the clocks written out
dst = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "xwin.csv")
cols = ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__m_l1tex2xbar_write_sectors.sum", "lts__t_requests_srcunit_tex_op_write.sum",
        "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum"]
n = 0
with open(dst, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["call", "kernel", "S", "sh", "N", "n0", "n1", "K", "gap_p10", "gap_p50", "gap_p90", "gap_min", "gap_max",
                "pair_sectors"] + cols + ["pair_l2_over_l1"])
    for call in ("first", "second", "third"):
        src = os.path.join(here, "results", call, "ncu.csv")
        gaps = [l.strip().split(",")[1:] for l in open(src, errors="replace") if l.startswith("GAP,")]
        cases = ncu_cases(src)
        if len(gaps) != len(cases):
            sys.exit(f"{src}: {len(cases)} cases, {len(gaps)} GAP lines")
        for (c, m), g in zip(cases, gaps):
            p = params(c[2])
            pair = int(c[3])
            l2 = num(m["lts__t_sectors_srcunit_tex_op_write.sum"])
            w.writerow([call, "m_" + c[1], p["S"], p["sh"], p.get("N", ""), p.get("n0", ""), p.get("n1", ""), p.get("K", "")]
                       + [int(x) for x in g] + [pair] + [int(num(m[x])) for x in cols]
                       + [round((l2 - STAMPS) / pair, 4)])
            n += 1
print(f"{n} cases -> {dst}")
