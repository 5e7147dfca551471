#!/usr/bin/env python3
"""The tidy CSV of the textbook-kernels campaign and the rows `gpusim
validate` replays, from the raw results of run.sh.

Usage: tools/measure/kernels/make_csv.py [RESULTS_DIR]
       (default tools/measure/kernels/results; run from anywhere)

Reads RESULTS_DIR/{ncu.csv,ncu_time.csv,time.csv}; writes

  RESULTS_DIR/kernels.csv     one row per case: kind (triad, reduce, saxpy),
                              n_mib, grid, block, time_ncu_ns (the cold
                              launch with every metric), the median, min
                              and max of the five duration-only cold
                              launches, time_warm_ns (events), then every
                              Nsight Compute metric under its own name
  tests/data/h200/corpus/kernels.csv
                              the same cases as families triad
                              (workloads/triad.ron), reduce
                              (workloads/reduce.ron) and saxpy_gs
                              (workloads/saxpy_gs.ron); time_ns is the
                              median of the five cold launches

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import corpus_row, tidy_rows, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "kernels.csv")


def main():
    tidy, metrics = tidy_rows(RES, ["kind", "n_mib", "grid"])
    write_rows(os.path.join(RES, "kernels.csv"), tidy)
    out = []
    for r in tidy:
        if r["kind"] == "triad":
            fam, params = "triad", f"nMB={r['n_mib']};block={r['block']}"
        elif r["kind"] == "reduce":
            fam, params = "reduce", f"nMB={r['n_mib']}"
        else:
            fam, params = "saxpy_gs", f"nMB={r['n_mib']};blocks={r['grid']}"
        out.append(corpus_row(fam, params, r, metrics))
    write_rows(DST, out, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + metrics)
    print(f"{os.path.join(RES, 'kernels.csv')}: {len(tidy)} rows; {os.path.normpath(DST)}: {len(out)} rows")
    for r in tidy:
        print(r["kind"], r["n_mib"], r["grid"], "time %.0f ns (cold x5 %.0f-%.0f), warm %s, check %s" % (
            r["time_ncu_rep_med_ns"], r["time_ncu_rep_min_ns"], r["time_ncu_rep_max_ns"], r["time_warm_ns"],
            r["check_bad"]))


if __name__ == "__main__":
    main()
