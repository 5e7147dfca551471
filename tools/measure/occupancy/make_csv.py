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

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import corpus_row, tidy_rows, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "occupancy.csv")


def main():
    tidy, metrics = tidy_rows(RES, ["kind", "k", "smem", "block", "grid"])
    write_rows(os.path.join(RES, "occupancy.csv"), tidy)
    counters = [k for k in metrics if not k.startswith("launch__occupancy") and "maximum_warps" not in k
                and "shared_mem_per_block" not in k]
    out = []
    for r in tidy:
        if r["kind"] == "smem":
            fam, params = "occupancy_smem", f"nMB=256;block={r['block']};smem={r['smem']}"
        else:
            fam, params = "occupancy_regs", f"nMB=256;block={r['block']};K={r['k']}"
        out.append(corpus_row(fam, params, r, counters))
    write_rows(DST, out, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + counters)
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
