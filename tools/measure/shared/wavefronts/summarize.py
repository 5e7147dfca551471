#!/usr/bin/env python3
"""Per-case table of shared-memory wavefronts and bank conflicts from ncu.csv.

Usage: summarize.py NCU_CSV   (prints a Markdown table and the raw metrics)

ncu.csv: the program's CASE lines ("CASE,<i>,<name>,<kernel>,<n>,<gx>,<gy>,
<dyn>"), then ncu's --csv table (IDs 0.. in launch order, one row per
metric). Per-instruction values divide by smsp__inst_executed_op_shared_*.
"""
import csv
import sys


def num(t):
    t = t.replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def parse(path):
    cases, table = [], []
    for line in open(path, errors="replace").read().splitlines():
        if line.startswith("CASE,"):
            cases.append(line.split(","))
        elif line.startswith('"'):
            table.append(line)
    per = {}
    for r in csv.DictReader(table):
        if r["ID"] == "ID":
            continue
        per.setdefault(int(r["ID"]), {})[r["Metric Name"]] = num(r["Metric Value"])
    assert len(per) == len(cases), (len(per), len(cases))
    return [(cases[i], per[i]) for i in range(len(cases))]


def f(v, d=3):
    return "" if v is None else f"{v:.{d}f}"


def main():
    rows = parse(sys.argv[1])
    W = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"
    C = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_"
    I = "smsp__inst_executed_op_shared_"
    print("| case | kernel | n | grid | dyn smem | waves/SM | ld inst | st inst | wf/ld | wf/st | confl/ld | confl/st | time us |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c, m in rows:
        _, i, name, kern, n, gx, gy, dyn = c
        ld, st = m.get(I + "ld.sum"), m.get(I + "st.sum")

        def per(k, d):
            v = m.get(k)
            return None if v is None or not d else v / d

        t = m.get("gpu__time_duration.sum")
        print(f"| {i} {name} | {kern} | {n} | ({gx},{gy}) | {dyn} | {f(m.get('launch__waves_per_multiprocessor'), 2)} "
              f"| {f(ld, 0)} | {f(st, 0)} | {f(per(W + 'ld.sum', ld))} | {f(per(W + 'st.sum', st))} "
              f"| {f(per(C + 'ld.sum', ld))} | {f(per(C + 'st.sum', st))} | {f(None if t is None else t / 1000, 1)} |")
    print()
    names = []
    for _, m in rows:
        for k in m:
            if k not in names:
                names.append(k)
    print("raw metrics, one column per case (index as above):")
    print("metric," + ",".join(c[1] for c, _ in rows))
    for k in names:
        print(k + "," + ",".join("" if m.get(k) is None else f"{m[k]:.6g}" for _, m in rows))


if __name__ == "__main__":
    main()
