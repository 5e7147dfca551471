#!/usr/bin/env python3
"""Writes tests/data/h200/corpus/widths.csv, the rows `gpusim validate`
replays, from results/widths.csv (make_csv.py's output).

Families (tests/data/h200/manifest.ron): widths_rw (workloads/offset.ron,
offset 0), widths_ro (workloads/stride_ro.ron, stride 1), widths_wo
(workloads/stride_wo.ron, stride 1) and launch_empty (workloads/empty.ron).
time_ns is the median of Nsight Compute's five cold launches per case
(time_ncu_rep_med_ns); the counters are those of its one cold launch with
all metrics."""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "results", "widths.csv")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "widths.csv")


def family_and_params(r):
    mib, elem, block, grid = r["size_mib"], r["elem_bytes"], r["block"], r["grid"]
    kind = r["kind"]
    if kind == "rw":
        return "widths_rw", f"nMB={mib};elem={elem};block={block};offset=0"
    if kind in ("ro", "wo"):
        return f"widths_{kind}", f"nMB={mib};elem={elem};block={block};stride=1"
    if kind == "empty":
        return "launch_empty", f"blocks={grid};block={block}"
    sys.exit(f"unknown kind {kind}")


def main():
    rows = list(csv.DictReader(open(SRC)))
    # Every Nsight Compute metric make_csv.py kept (names with `__`).
    counters = [c for c in rows[0] if "__" in c]
    out = []
    for r in rows:
        fam, params = family_and_params(r)
        # The empty kernel's store behind a never-true branch: no traffic,
        # but Nsight Compute's counters of it are kept as measured.
        row = {"family": fam, "params": params, "time_ns": r["time_ncu_rep_med_ns"],
               "time_source": "ncu_cold_median_of_5", "time_warm_ns": r["time_warm_ns"]}
        for c in counters:
            row[c] = r[c]
        out.append(row)
    cols = ["family", "params", "time_ns", "time_source", "time_warm_ns"] + counters
    with open(DST, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"{DST}: {len(out)} rows")


if __name__ == "__main__":
    main()
