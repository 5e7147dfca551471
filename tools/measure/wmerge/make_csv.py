#!/usr/bin/env python3
"""Turns run.sh's ncu.csv into results/wmerge.csv (one row per case: its
parameters, the sectors it would send with no merging, the counters) and
the m_run cases into tests/data/h200/corpus/wmerge.csv, the rows `gpusim
validate` replays as the family store_merge (workloads/store_merge.ron).

Plain Python, so that it runs anywhere (the reading is ../campaign.py).

    python3 make_csv.py [ncu.csv] [wmerge.csv]
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from campaign import ncu_cases, num, params  # noqa: E402

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "ncu.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "results", "wmerge.csv")
cases = [(c[1], params(c[2]), int(c[3]), m) for c, m in ncu_cases(src)]
cols = ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__m_l1tex2xbar_write_sectors.sum", "lts__t_requests_srcunit_tex_op_write.sum",
        "lts__t_sectors_srcunit_tex_op_write.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"]
with open(dst, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kernel", "K", "G", "B", "S", "n", "d", "unmerged_sectors"] + cols
               + ["sm__cycles_active.avg", "l2_over_unmerged"])
    for name, p, exp, m in cases:
        w.writerow([name, p["K"], p["G"], p["B"], p["S"], p["n"], p["d"], exp]
                   + [int(num(m[c])) for c in cols]
                   + [round(num(m["sm__cycles_active.avg"]), 1),
                      round(num(m["lts__t_sectors_srcunit_tex_op_write.sum"]) / exp, 4)])
print(f"{len(cases)} cases -> {dst}")

# The m_run cases as the corpus's rows, a case the second call's sweep
# repeats kept once, as first run.
if len(sys.argv) <= 2:
    corpus = os.path.normpath(os.path.join(here, "..", "..", "..", "tests", "data", "h200", "corpus", "wmerge.csv"))
    counters = ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "lts__t_sectors_srcunit_tex_op_write.sum", "lts__t_requests_srcunit_tex_op_write.sum",
                "dram__bytes_write.sum"]
    seen, n = set(), 0
    with open(corpus, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["family", "params", "time_ns", "time_source", "time_warm_ns"] + counters)
        for name, p, exp, m in cases:
            key = (p["K"], p["G"], p["B"])
            if name != "run" or key in seen:
                continue
            seen.add(key)
            w.writerow(["store_merge", f"nMB=16;K={p['K']};G={p['G']};B={p['B']}",
                        int(num(m["gpu__time_duration.sum"])), "ncu_cold", ""]
                       + [int(num(m[c])) for c in counters])
            n += 1
    print(f"{n} cases -> {corpus}")
