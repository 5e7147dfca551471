#!/usr/bin/env python3
"""Build the CSV files of tests/data/h200/stores/ from the raw run outputs.

Usage: make_tables.py [RESULTS_DIR] [DEST_DIR]
  RESULTS_DIR defaults to tools/measure/stores/results (raw output of run.sh
  and run_sweep.sh), DEST_DIR to tests/data/h200/stores.

Writes:
  ncu.csv          first launch of every case under ncu --cache-control all
                   (caches flushed before the launch: one cold launch)
  ncu_noflush.csv  second launch of every case under ncu --cache-control none
                   (right after an identical launch, nothing flushed)
  time.csv         CUDA-event timing of warm back-to-back launches
Column `run` is `main` (run.sh) or `sweep` (run_sweep.sh).
"""
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DEST = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    HERE, "..", "..", "..", "tests", "data", "h200", "stores")

ID_COLS = ["kernel", "params", "n", "footprint_bytes", "k_bytes", "grid",
           "block", "bytes_written", "bytes_stored", "sectors_written", "run"]


def ncu_rows(path, launch):
    out = subprocess.run([sys.executable, os.path.join(HERE, "ncu_table.py"),
                          path, "--launch", str(launch)],
                         check=True, capture_output=True, text=True)
    if out.stderr.strip():
        sys.exit("ncu_table.py: " + out.stderr)
    return list(csv.DictReader(io.StringIO(out.stdout)))


def write_ncu(dest, parts):
    rows = []
    metrics = None
    for path, run, launch in parts:
        for r in ncu_rows(path, launch):
            r["run"] = run
            m = [k for k in r if k not in ID_COLS and k != "launch"]
            if metrics is None:
                metrics = m
            elif m != metrics:
                sys.exit("metric columns differ in " + path)
            rows.append(r)
    with open(dest, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(ID_COLS + metrics)
        for r in rows:
            w.writerow([r[c] for c in ID_COLS + metrics])
    print(dest, len(rows), "rows")


def main():
    os.makedirs(DEST, exist_ok=True)
    write_ncu(os.path.join(DEST, "ncu.csv"),
              [(os.path.join(RES, "ncu_all.csv"), "main", 0),
               (os.path.join(RES, "ncu_sweep_all.csv"), "sweep", 0)])
    write_ncu(os.path.join(DEST, "ncu_noflush.csv"),
              [(os.path.join(RES, "ncu_none.csv"), "main", 1),
               (os.path.join(RES, "ncu_sweep_none.csv"), "sweep", 1)])
    rows = []
    header = None
    for name, run in (("time.csv", "main"), ("time_sweep.csv", "sweep")):
        with open(os.path.join(RES, name), newline="") as f:
            rd = csv.DictReader(f)
            header = rd.fieldnames
            for r in rd:
                r["run"] = run
                rows.append(r)
    dest = os.path.join(DEST, "time.csv")
    with open(dest, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header + ["run"])
        for r in rows:
            w.writerow([r[c] for c in header] + [r["run"]])
    print(dest, len(rows), "rows")


if __name__ == "__main__":
    main()
