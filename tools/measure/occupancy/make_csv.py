#!/usr/bin/env python3
"""The tidy CSV of the occupancy campaign and the rows `gpusim validate`
replays, from the raw results of run.sh.

Usage: tools/measure/occupancy/make_csv.py [RESULTS_DIR]
       (default tools/measure/occupancy/results; run from anywhere)

Reads RESULTS_DIR/{ncu.csv,ncu_time.csv,time.csv}; writes

  RESULTS_DIR/occupancy.csv   one row per timed case: kind (smem, chain),
                              k, smem, block, grid, time_ncu_ns (the cold
                              launch with every metric), the median, min
                              and max of the five duration-only cold
                              launches, time_warm_ns (events), then every
                              Nsight Compute metric under its own name
  tests/data/h200/corpus/occupancy.csv
                              the same cases as families occupancy_smem
                              (workloads/occupancy.ron) and occupancy_regs
                              (workloads/reg_chain.ron); time_ns is the
                              median of the five cold launches

Plain Python, so that it runs anywhere.
"""
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "occupancy.csv")
# Extra warp instructions a warp of k_chain<K> executes beyond k_chain<0>'s
# (smsp__inst_executed.sum / warps, this campaign's ncu.csv), which
# workloads/reg_chain.ron runs as its chain: K -> instructions.
KEY = ["kind", "k", "smem", "block", "grid"]


def num(x):
    return float(x.replace(",", ""))


def ncu_cases(path):
    """(CASE fields, {metric: value}) per profiled launch, in order."""
    lines = open(path, errors="replace").read().splitlines()
    cases = [l.split(",") for l in lines if l.startswith("CASE,")]
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.DictReader([l for l in lines[start:] if l.startswith('"')]))
    by = {}
    for r in rows:
        by.setdefault(int(r["ID"]), {})[r["Metric Name"]] = r["Metric Value"]
    launches = [by[k] for k in sorted(by)]
    if len(launches) != len(cases):
        sys.exit(f"{path}: {len(launches)} launches profiled, {len(cases)} CASE lines")
    return list(zip(cases, launches))


def main():
    full = ncu_cases(os.path.join(RES, "ncu.csv"))
    reps = {}
    for c, m in ncu_cases(os.path.join(RES, "ncu_time.csv")):
        reps.setdefault(int(c[1]), []).append(num(m["gpu__time_duration.sum"]))
    warm = {int(r["index"]): r for r in csv.DictReader(open(os.path.join(RES, "time.csv")))}
    metrics = [m for m in full[0][1] if m != "gpu__time_duration.sum"]
    tidy = []
    for c, m in full:
        i = int(c[1])
        t = reps[i]
        row = dict(zip(KEY, c[2:7]))
        row.update({
            "time_ncu_ns": num(m["gpu__time_duration.sum"]),
            "time_ncu_rep_med_ns": statistics.median(t),
            "time_ncu_rep_min_ns": min(t),
            "time_ncu_rep_max_ns": max(t),
            "ncu_reps": len(t),
            "time_warm_ns": warm[i]["warm_ns"],
            "check_bad": warm[i]["check_bad"],
        })
        for k in metrics:
            row[k] = num(m[k])
        tidy.append(row)
    head = list(tidy[0])
    with open(os.path.join(RES, "occupancy.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head, lineterminator="\n")
        w.writeheader()
        w.writerows(tidy)
    counters = [k for k in metrics if not k.startswith("launch__occupancy") and "maximum_warps" not in k
                and "shared_mem_per_block" not in k]
    out = []
    for r in tidy:
        if r["kind"] == "smem":
            fam, params = "occupancy_smem", f"nMB=256;block={r['block']};smem={r['smem']}"
        else:
            fam, params = "occupancy_regs", f"nMB=256;block={r['block']};K={r['k']}"
        row = {"family": fam, "params": params, "time_ns": r["time_ncu_rep_med_ns"],
               "time_source": "ncu_cold_median_of_5", "time_warm_ns": r["time_warm_ns"]}
        for k in counters:
            row[k] = r[k]
        out.append(row)
    cols = ["family", "params", "time_ns", "time_source", "time_warm_ns"] + counters
    with open(DST, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"{os.path.join(RES, 'occupancy.csv')}: {len(tidy)} rows; {os.path.normpath(DST)}: {len(out)} rows")
    for r in tidy:
        print(r["kind"], r["k"], r["smem"], "regs", int(r["launch__registers_per_thread"]),
              "blocks by regs", int(r["launch__occupancy_limit_registers"]),
              "by smem", int(r["launch__occupancy_limit_shared_mem"]),
              "time %.0f ns (cold x5 %.0f-%.0f), warm %s" % (r["time_ncu_rep_med_ns"], r["time_ncu_rep_min_ns"],
                                                            r["time_ncu_rep_max_ns"], r["time_warm_ns"]),
              "inst/warp %.1f" % (r["smsp__inst_executed.sum"] / (r["launch__grid_size"] * r["launch__block_size"] / 32)))


if __name__ == "__main__":
    main()
