#!/usr/bin/env python3
"""Call 5's table: for each counter of each launch, its sum and its
largest and smallest instance (SM, L2 slice or DRAM channel) over their
mean. Each group file holds two Nsight Compute runs: launches 0-3 (rw
double 24, double 24, float 32, float 32 at 8 blocks an SM), then one
(float 32 at 2 blocks).
  python3 make_call5.py [results/call5]"""
import csv
import io
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "results/call5"
print("| group | launch | counter | sum | max / mean | min / mean |")
print("| --- | --- | --- | --- | --- | --- |")
for g in range(1, 5):
    runs = open(f"{d}/g{g}.csv").read().split("==PROF== Connected")[1:]
    for n, run in enumerate(runs):
        lines = [l for l in run.splitlines(True) if l.startswith('"')]
        for r in csv.DictReader(io.StringIO("".join(lines))):
            if not r["ID"]:
                continue  # the units row
            kern = "double 24" if "double" in r["Kernel Name"] else "float 32"
            what = f"{kern}, {'2' if n else '8'} blocks, #{r['ID']}"
            ms = sorted({h.rsplit(".", 1)[0] for h in r if h.endswith(".sum")} - {"profiler__replayer_bytes_mem_accessible", "profiler__replayer_bytes_mem_backed_up"})
            for m in ms:
                if f"{m}.avg" not in r:
                    print(f"| g{g} | {what} | `{m}` | {float(r[m + '.sum'].replace(',', '')):,.0f} | | |")
                    continue
                v = {k: float(r[f"{m}.{k}"].replace(",", "")) for k in ("sum", "avg", "max", "min")}
                print(f"| g{g} | {what} | `{m}` | {v['sum']:,.0f} | {v['max'] / v['avg']:.2f} | {v['min'] / v['avg']:.2f} |")
