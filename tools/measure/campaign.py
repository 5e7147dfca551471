"""What the campaigns' make_csv.py scripts share: reading Nsight Compute's
CSV with the program's CASE lines, and the tidy rows of a campaign that
ran `ncu` once per case with every metric (ncu.csv), five times per case
with the duration alone (ncu_time.csv), and timed warm batches with CUDA
events (time.csv, indexed by case).

Plain Python, so that it runs anywhere.
"""
import csv
import os
import statistics
import sys


def num(x):
    """A number as Nsight Compute prints it (thousands separated by commas;
    `n/a` for a metric the GPU does not count, NaN here)."""
    if x.strip() == "n/a":
        return float("nan")
    return float(x.replace(",", ""))


def ncu_cases(path):
    """(CASE fields, {metric: value}) per profiled launch, in order."""
    lines = open(path, errors="replace").read().splitlines()
    cases = [l.split(",") for l in lines if l.startswith("CASE,")]
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.DictReader([l for l in lines[start:] if l.startswith('"')]))
    by = {}
    for r in rows:
        by.setdefault(int(r["ID"]), {})[r["Metric Name"]] = r["Metric Value"]
    launches = [by[k] for k in sorted(by)]
    if len(launches) != len(cases):
        sys.exit(f"{path}: {len(launches)} launches profiled, {len(cases)} CASE lines")
    return list(zip(cases, launches))


def params(field):
    """A CASE line's `name=value;name=value` field as a dict of strings."""
    return dict(kv.split("=", 1) for kv in field.split(";"))


def tidy_rows(res, key):
    """One row per case: the CASE line's fields after its index, named
    `key`; the cold launch's time (time_ncu_ns), the median, min and max of
    the duration-only launches, the warm time and check from time.csv, then
    every other metric. Returns (rows, metric names)."""
    full = ncu_cases(os.path.join(res, "ncu.csv"))
    reps = {}
    for c, m in ncu_cases(os.path.join(res, "ncu_time.csv")):
        reps.setdefault(int(c[1]), []).append(num(m["gpu__time_duration.sum"]))
    warm = {int(r["index"]): r for r in csv.DictReader(open(os.path.join(res, "time.csv")))}
    metrics = [m for m in full[0][1] if m != "gpu__time_duration.sum"]
    rows = []
    for c, m in full:
        i = int(c[1])
        t = reps[i]
        row = dict(zip(key, c[2:2 + len(key)]))
        row["block"] = warm[i]["block"]
        row.update({
            "time_ncu_ns": num(m["gpu__time_duration.sum"]),
            "time_ncu_rep_med_ns": statistics.median(t),
            "time_ncu_rep_min_ns": min(t),
            "time_ncu_rep_max_ns": max(t),
            "ncu_reps": len(t),
            "time_warm_ns": warm[i]["warm_ns"],
            "check_bad": warm[i]["check_bad"],
        })
        for k in metrics:
            row[k] = num(m[k])
        rows.append(row)
    return rows, metrics


def write_rows(path, rows, cols=None):
    """Writes `rows` (dicts) to the CSV at `path`, columns `cols` (default:
    the first row's keys)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols or list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def corpus_row(family, params, r, counters):
    """A row `gpusim validate` replays: time_ns the median of the five cold
    launches, then `counters` as measured."""
    row = {"family": family, "params": params, "time_ns": r["time_ncu_rep_med_ns"],
           "time_source": "ncu_cold_median_of_5", "time_warm_ns": r["time_warm_ns"]}
    for k in counters:
        row[k] = r[k]
    return row
