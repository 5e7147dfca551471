#!/usr/bin/env python3
"""The tidy CSV of the textbook-kernels campaign and the rows `gpusim
validate` replays, from the raw results of run.sh.

Usage: tools/measure/kernels/make_csv.py [RESULTS_DIR]
       (default tools/measure/kernels/results; run from anywhere)

Reads RESULTS_DIR/{ncu.csv,ncu_time.csv,time.csv}; writes

  RESULTS_DIR/kernels.csv     (and split/kernels.csv, plds/kernels.csv, for
                              the later runs in those folders)
                              one row per case: kind (triad, reduce, saxpy,
                              reduce_ld, reduce_tree, plds_*, padd_*),
                              n_mib, grid, block, time_ncu_ns (the cold
                              launch with every metric), the median, min
                              and max of the five duration-only cold
                              launches, time_warm_ns (events), then every
                              Nsight Compute metric under its own name
  tests/data/h200/corpus/kernels.csv
                              the same cases as families triad, reduce,
                              saxpy_gs, reduce_ld, reduce_tree and
                              shared_pred (workloads/<family>.ron);
                              time_ns is the median of the five cold
                              launches

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import corpus_row, tidy_rows, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "kernels.csv")


def family(r):
    """The family and parameters `gpusim validate` replays a case as."""
    kind = r["kind"]
    if kind == "triad":
        return "triad", f"nMB={r['n_mib']};block={r['block']}"
    if kind in ("reduce", "reduce_ld", "reduce_tree"):
        return kind, f"nMB={r['n_mib']}"
    if kind == "saxpy":
        return "saxpy_gs", f"nMB={r['n_mib']};blocks={r['grid']}"
    flag = int(kind.endswith("_on"))
    op = int(kind.startswith("padd"))
    return "shared_pred", f"flag={flag};op={op};blocks={r['grid']};trips=512"


def main():
    # The first run (cases 0-16), then the reduction's parts (17-20,
    # results/split) and the predicated loads (21-24, results/plds).
    tidy, metrics = [], []
    for sub in ("", "split", "plds"):
        res = os.path.join(RES, sub)
        if not os.path.exists(os.path.join(res, "ncu.csv")):
            continue
        rows, ms = tidy_rows(res, ["kind", "n_mib", "grid"])
        write_rows(os.path.join(res, "kernels.csv"), rows)
        tidy += rows
        metrics += [m for m in ms if m not in metrics]
    # Metrics this GPU does not count (`n/a`, NaN) are left out.
    metrics = [m for m in metrics if any(m in r and r[m] == r[m] for r in tidy)]
    out = []
    for r in tidy:
        fam, params = family(r)
        out.append(corpus_row(fam, params, r, [m for m in metrics if m in r]))
    # Metrics a later run added are blank in the rows of the runs without them.
    write_rows(DST, [{m: "" for m in metrics} | o for o in out],
               ["family", "params", "time_ns", "time_source", "time_warm_ns"] + metrics)
    print(f"{len(tidy)} cases; {os.path.normpath(DST)}: {len(out)} rows")
    for r in tidy:
        print(r["kind"], r["n_mib"], r["grid"], "time %.0f ns (cold x5 %.0f-%.0f), warm %s, check %s" % (
            r["time_ncu_rep_med_ns"], r["time_ncu_rep_min_ns"], r["time_ncu_rep_max_ns"], r["time_warm_ns"],
            r["check_bad"]))


if __name__ == "__main__":
    main()
