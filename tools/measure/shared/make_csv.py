#!/usr/bin/env python3
"""Builds the shared-memory and irregular-access CSV that `gpusim validate`
can replay, from raw results.

Usage: tools/measure/shared/make_csv.py   (from the repository root)

Reads tools/measure/shared/results/{ncu.csv,time.csv}; writes
tests/data/h200/shared/shared.csv, one row per case of shared.cu (the cold
ncu launch), and prints, for the shared_bank cases and the transposes, the
shared-memory wavefronts and bank conflicts per warp-level instruction.

Columns: exactly those of tests/data/h200/corpus/corpus.csv (family, params,
time_ns = ncu's gpu__time_duration.sum of the cold launch, time_source =
ncu_cold, time_warm_ns = the events median, then the Nsight Compute metrics
of tools/measure/corpus/make_csv.py's METRICS, imported from there so that
the two files keep one column list), then the SHARED metrics below. A blank
cell is a quantity not measured (ncu's "n/a", or a metric ncu refused: the
run records those in results/env.txt as "metric dropped").
"""
import csv
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the corpus script
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
from make_csv import METRICS as CORPUS_METRICS  # noqa: E402

RES = "tools/measure/shared/results"
DST = "tests/data/h200/shared"
SHARED = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
]
METRICS = CORPUS_METRICS + SHARED
HEAD = ["family", "params", "time_ns", "time_source", "time_warm_ns"] + METRICS


def num(text):
    """A number, or None for ncu's "n/a" (a metric this chip does not count)."""
    text = text.replace(",", "")
    return None if text in ("n/a", "") else float(text)


def fmt(v):
    if v is None or v == "":
        return ""
    v = float(v)
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else f"{v:.6g}"


def parse_ncu(path):
    """[(case fields, {metric: value})] in launch order.

    The file holds several ncu runs one after the other (each: the program's
    CASE lines, then ncu's table, whose IDs start at 0 again); each run's
    IDs are matched with its own CASE lines, in order.
    """
    out = []
    cases, table = [], []

    def flush():
        per = {}
        rows = [r for r in csv.DictReader(table)] if table else []
        for r in rows:
            if r["ID"] == "ID":
                continue
            per.setdefault(int(r["ID"]), {})[r["Metric Name"]] = num(r["Metric Value"])
        assert len(per) == len(cases), (path, len(per), len(cases))
        for i, c in enumerate(cases):
            out.append((c, per[i]))

    header = None
    for line in open(path, errors="replace").read().splitlines():
        if line.startswith("CASE,"):
            if table:
                flush()
                cases, table = [], []
            cases.append(line.split(",")[1:])
        elif line.startswith('"ID"'):
            header = line
            table = [header]
        elif line.startswith('"'):
            table.append(line)
    if cases:
        flush()
    return out


def main():
    warm = {}
    with open(f"{RES}/time.csv") as f:
        for r in csv.DictReader(f):
            warm[(r["family"], r["params"])] = float(r["ms_per_launch"]) * 1e6
            assert r["check_bad_words"] == "0", r
    rows = []
    for fields, m in parse_ncu(f"{RES}/ncu.csv"):
        # CASE,<index>,<family>,<params>,<rep>; params hold ';' but no ','
        idx, fam, params, rep = fields
        row = {"family": fam, "params": params, "time_ns": m["gpu__time_duration.sum"],
               "time_source": "ncu_cold", "time_warm_ns": warm[(fam, params)]}
        row.update({k: m.get(k) for k in METRICS})
        rows.append(row)
    os.makedirs(DST, exist_ok=True)
    with open(os.path.join(DST, "shared.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEAD)
        for r in rows:
            w.writerow([fmt(r.get(h)) if h not in ("family", "params", "time_source") else r.get(h, "") for h in HEAD])
    print(f"shared.csv: {len(rows)} rows")
    print("\nshared memory per warp-level instruction (ncu, cold launch):")
    print(f"{'family':24} {'params':22} {'ld wf/inst':>10} {'ld confl/inst':>13} {'st wf/inst':>10} {'st confl/inst':>13}"
          f" {'ld inst':>8} {'st inst':>8}")
    for r in rows:
        if not (r["family"] == "shared_bank" or r["family"].startswith("transpose_tiled")):
            continue
        li, si = r[SHARED[4]], r[SHARED[5]]
        q = lambda a, b: f"{a / b:.3f}" if a is not None and b else "-"
        print(f"{r['family']:24} {r['params']:22} {q(r[SHARED[0]], li):>10} {q(r[SHARED[2]], li):>13}"
              f" {q(r[SHARED[1]], si):>10} {q(r[SHARED[3]], si):>13} {fmt(li):>8} {fmt(si):>8}")


if __name__ == "__main__":
    main()
