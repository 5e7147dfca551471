#!/usr/bin/env python3
"""Turns run.sh's ncu.csv into tests/data/h200/corpus/pline.csv: the cases
whose stores come at once (step 0), the rows `gpusim validate` replays as
the family `pline` (workloads/pline.ron: L lines, k sectors of each,
g lanes of 4 bytes a sector, every ls-th line). The cases spread over time (step > 0) have
no workload (the IR has no wait) and stay in results/.

Plain Python, so that it runs anywhere (the reading is ../campaign.py).

    python3 make_csv.py [ncu.csv]
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
from campaign import ncu_cases, num, params  # noqa: E402

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "ncu.csv")
corpus = os.path.normpath(os.path.join(here, "..", "..", "..", "tests", "data", "h200", "corpus", "pline.csv"))
counters = ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
            "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]
n = 0
with open(corpus, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["family", "params", "time_ns", "time_source", "time_warm_ns"] + counters)
    for c, m in ncu_cases(src):
        p = params(c[2])
        if p["step"] != "0":
            continue
        lines = int(params(c[3])["lines"])
        w.writerow(["pline", f"L={lines};k={p['s']};g={p['g']};ls={p.get('ls', '1')}", int(num(m["gpu__time_duration.sum"])), "ncu_cold", ""]
                   + [int(num(m[k])) for k in counters])
        n += 1
print(f"{n} cases -> {corpus}")
