#!/usr/bin/env python3
"""results/kstart.csv from results/ncu.csv: one row per case (kernel,
grid, block) with the median, least and greatest of its five cold
launches' gpu__time_duration.sum (ns)."""
import csv
import io
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
text = open(os.path.join(HERE, "results", "ncu.csv")).read()
cases = [l.split(",") for l in text.splitlines() if l.startswith("CASE,")]
rows = list(csv.reader(io.StringIO("\n".join(l for l in text.splitlines() if l.startswith('"')))))
head, data = rows[0], rows[1:]
iid, name, value = head.index("ID"), head.index("Metric Name"), head.index("Metric Value")
per = {}
for r in data:
    per.setdefault(int(r[iid]), {})[r[name]] = r[value].replace(",", "")
ids = sorted(per)
reps = len(ids) // len(cases)
with open(os.path.join(HERE, "results", "kstart.csv"), "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["kernel", "grid", "block", "time_ncu_med_ns", "time_ncu_min_ns", "time_ncu_max_ns", "launches"])
    for k, c in enumerate(cases):
        got = [per[ids[k * reps + j]] for j in range(reps)]
        assert all(int(g["launch__grid_size"]) == int(c[3]) for g in got), c
        assert all(int(g["launch__block_size"]) == int(c[4]) for g in got), c
        t = [float(g["gpu__time_duration.sum"]) for g in got]
        w.writerow([c[2], c[3], c[4], statistics.median(t), min(t), max(t), reps])
print("results/kstart.csv:", len(cases), "cases of", reps, "launches")
