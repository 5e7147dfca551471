#!/usr/bin/env python3
"""Turns run.sh's ncu.csv into wmerge.csv: one row per case with its
parameters, the sectors it would send with no merging, and the counters."""
import csv
import io
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "ncu.csv")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "results", "wmerge.csv")
cases, rows = [], []
for line in open(src):
    if line.startswith("CASE,"):
        _, name, params, unmerged = line.strip().split(",")
        cases.append((name, dict(p.split("=") for p in params.split(";")), int(unmerged)))
    elif line.startswith('"'):
        rows.append(line)
by_id = {}
for r in csv.DictReader(io.StringIO("".join(rows))):
    by_id.setdefault(int(r["ID"]), {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
assert len(by_id) == len(cases), (len(by_id), len(cases))
cols = ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__m_l1tex2xbar_write_sectors.sum", "lts__t_requests_srcunit_tex_op_write.sum",
        "lts__t_sectors_srcunit_tex_op_write.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
        "sm__cycles_active.avg"]
with open(dst, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kernel", "K", "G", "B", "S", "n", "d", "unmerged_sectors"] + cols + ["l2_over_unmerged"])
    for (name, p, exp), i in zip(cases, sorted(by_id)):
        m = by_id[i]
        w.writerow([name, p["K"], p["G"], p["B"], p["S"], p["n"], p["d"], exp]
                   + [int(m[c]) if c in m and c != "sm__cycles_active.avg" else round(m.get(c, 0), 1) for c in cols]
                   + [round(m["lts__t_sectors_srcunit_tex_op_write.sum"] / exp, 4)])
print(f"{len(cases)} cases -> {dst}")

# The m_run cases as the corpus's rows (family store_merge,
# workloads/store_merge.ron), for gpusim validate.
corpus = os.path.join(here, "..", "..", "..", "tests", "data", "h200", "corpus", "wmerge.csv")
if len(sys.argv) <= 2:
    head = ["family", "params", "time_ns", "time_source", "time_warm_ns",
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum", "lts__t_requests_srcunit_tex_op_write.sum",
            "dram__bytes_write.sum"]
    n = 0
    with open(corpus, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        seen = set()
        for (name, p, exp), i in zip(cases, sorted(by_id)):
            key = (p["K"], p["G"], p["B"])
            # A case the second call's sweep repeats is kept once, as first run.
            if name != "run" or key in seen:
                continue
            seen.add(key)
            m = by_id[i]
            w.writerow(["store_merge", f"nMB=16;K={p['K']};G={p['G']};B={p['B']}",
                        int(m["gpu__time_duration.sum"]), "ncu_cold", "",
                        int(m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]),
                        int(m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]),
                        int(m["lts__t_sectors_srcunit_tex_op_write.sum"]),
                        int(m["lts__t_requests_srcunit_tex_op_write.sum"]),
                        int(m["dram__bytes_write.sum"])])
            n += 1
    print(f"{n} cases -> {os.path.normpath(corpus)}")
