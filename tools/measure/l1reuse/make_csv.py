#!/usr/bin/env python3
"""The tidy CSV of the L1 reuse campaign and the rows `gpusim validate`
replays, from the raw results of run.sh.

Usage: tools/measure/l1reuse/make_csv.py [RESULTS_DIR]
       (default tools/measure/l1reuse/results; run from anywhere)

Reads RESULTS_DIR/{ncu.csv,ncu_time.csv,time.csv}; writes

  RESULTS_DIR/l1reuse.csv     one row per case: kind (window, stencil),
                              w_kib, n_mib, grid, block, time_ncu_ns (the
                              cold launch with every metric), the median,
                              min and max of the five duration-only cold
                              launches, time_warm_ns (events), then every
                              Nsight Compute metric under its own name
  tests/data/h200/corpus/l1reuse.csv
                              the same cases as families l1_window
                              (workloads/l1_window.ron) and stencil
                              (workloads/stencil.ron); time_ns is the
                              median of the five cold launches

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import corpus_row, tidy_rows, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "l1reuse.csv")


def main():
    tidy, metrics = tidy_rows(RES, ["kind", "w_kib", "n_mib", "grid"])
    write_rows(os.path.join(RES, "l1reuse.csv"), tidy)
    out = []
    for r in tidy:
        if r["kind"] == "window":
            fam, params = "l1_window", f"W={r['w_kib']};R=8;blocks={r['grid']}"
        else:
            fam, params = "stencil", f"nMB={r['n_mib']};block={r['block']}"
        out.append(corpus_row(fam, params, r, metrics))
    write_rows(DST, out, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + metrics)
    print(f"{os.path.join(RES, 'l1reuse.csv')}: {len(tidy)} rows; {os.path.normpath(DST)}: {len(out)} rows")
    for r in tidy:
        ld = r["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
        hit = r["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"]
        print(r["kind"], r["w_kib"], r["n_mib"], "time %.0f ns (cold x5 %.0f-%.0f), warm %s" % (
            r["time_ncu_rep_med_ns"], r["time_ncu_rep_min_ns"], r["time_ncu_rep_max_ns"], r["time_warm_ns"]),
              "L1 hits %.0f of %.0f sectors (%.1f%%)" % (hit, ld, 100 * hit / ld))


if __name__ == "__main__":
    main()
