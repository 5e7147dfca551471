#!/usr/bin/env python3
"""gpusim against busy.cu's split streams on the H200 (results/split.csv).

Usage: compare_split.py GPUSIM [CONFIG] [--config-set PATH=VALUE]...
Runs workloads/stream_loop.ron for each of the eight cases (op, source and
destination sizes) at 132 and 264 blocks, u = 1, 2, 4, and prints the rate
and the loads' mean latency, measured and simulated."""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def main():
    gpusim = sys.argv[1]
    rest = sys.argv[2:]
    config = os.path.join(ROOT, "configs", "h200.ron")
    if rest and not rest[0].startswith("--"):
        config, rest = rest[0], rest[1:]
    meas = list(csv.DictReader(open(os.path.join(HERE, "results", "split.csv"))))
    ops = {"read": 0, "copy": 1, "write": 2}
    groups = []
    for r in meas:
        key = (r["op"], r["s_bytes"], r["d_bytes"])
        if key not in groups:
            groups.append(key)
    sim = {}
    tmp = tempfile.mkdtemp()
    for op, sb, db in groups:
        smb = max(int(sb) >> 20, 1)
        dmb = max(int(db) >> 20, 1)
        out = os.path.join(tmp, f"{op}_{smb}_{dmb}.csv")
        subprocess.run([gpusim, "run", config, os.path.join(ROOT, "workloads", "stream_loop.ron"),
                        "--set", f"op={ops[op]}", "--set", f"smb={smb}", "--set", f"dmb={dmb}",
                        "--csv", out, "--quiet"] + rest, check=True)
        for s in csv.DictReader(open(out)):
            sim[(op, sb, db, s["blocks"], s["u"])] = s
    print(f"{'case':26} {'blocks':>6} {'u':>2} {'H200 GB/s':>10} {'gpusim':>8} {'err':>6} "
          f"{'H200 lat':>8} {'gpusim':>7}")
    errs = []
    for r in meas:
        s = sim[(r["op"], r["s_bytes"], r["d_bytes"], r["blocks"], r["u"])]
        size = lambda b: "-" if b == "0" else f"{int(b) >> 20} MiB"
        name = f"{r['op']} {size(r['s_bytes'])} -> {size(r['d_bytes'])}"
        g, sg = float(r["gbps"]), float(s["bandwidth_gbps"])
        e = 100 * (sg / g - 1)
        errs.append(abs(e))
        print(f"{name:26} {r['blocks']:>6} {r['u']:>2} {g:10.0f} {sg:8.0f} {e:+5.1f}% "
              f"{float(r['load_latency_cycles']):8.0f} {float(s['load_latency_cycles']):7.0f}")
    print(f"rate: mean |error| {sum(errs) / len(errs):.1f}%, {sum(e <= 15 for e in errs)}/{len(errs)} within 15%")


if __name__ == "__main__":
    main()
