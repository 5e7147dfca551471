#!/usr/bin/env python3
"""Compare two `gpusim validate --csv` files case by case: one run with
`--sample auto` (or `on`), one with every block timed (the default).

Usage: compare_validate.py SAMPLED.csv FULL.csv
Prints the cases whose time or L2/DRAM counters differ, then a summary
against the sampler's targets (time within 2%, L2/DRAM within 1%, the sampled
run's error estimate `time_ns_error` covering the difference from the full
run on at least 95% of the sampled cases).
"""
import csv
import sys

CNT = ["l2_read_sim", "l2_write_sim", "dram_read_sim", "dram_write_sim"]


def rel(a, b):
    a, b = float(a), float(b)
    if b == 0:
        return 0.0 if a == 0 else float("inf")
    return a / b - 1


def main(s_path, f_path):
    key = lambda r: (r["device"], r["family"], r["params"])
    s = {key(r): r for r in csv.DictReader(open(s_path))}
    f = {key(r): r for r in csv.DictReader(open(f_path))}
    assert s.keys() == f.keys(), "the files hold different cases"
    n = len(f)
    differ = t_ok = c_ok = sampled = covered = 0
    worst_t = worst_c = (0.0, None)
    for k in sorted(f):
        a, b = s[k], f[k]
        dt = rel(a["time_ns_sim"], b["time_ns_sim"])
        dc = max(
            (abs(rel(a[c], b[c])) for c in CNT if a.get(c) not in (None, "") and b.get(c) not in (None, "")),
            default=0.0,
        )
        frac = float(a.get("sampled_fraction") or 1)
        if frac < 1:
            sampled += 1
            err = float(a.get("time_ns_error") or 0)
            diff = abs(float(a["time_ns_sim"]) - float(b["time_ns_sim"]))
            covered += diff <= err
        if dt != 0 or dc != 0:
            differ += 1
            print(f"{k[1]:24} {k[2]:40} frac {frac:.3f} time {dt:+.4f}  counters {dc:.4f}")
        t_ok += abs(dt) <= 0.02
        c_ok += dc <= 0.01
        if abs(dt) > abs(worst_t[0]):
            worst_t = (dt, k)
        if dc > worst_c[0]:
            worst_c = (dc, k)
    print(f"{n} cases, {sampled} sampled, {differ} differ")
    print(f"time within 2%: {t_ok}/{n} (worst {worst_t[0]:+.4f} {worst_t[1]})")
    print(f"L2/DRAM within 1%: {c_ok}/{n} (worst {worst_c[0]:.4f} {worst_c[1]})")
    if sampled:
        print(f"estimate covers the difference: {covered}/{sampled} sampled cases ({100 * covered / sampled:.1f}%)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
