#!/usr/bin/env python3
"""Summarise Nsight Compute CSV output (ncu --csv --print-units base).

Usage: ncu_summary.py FILE...

Prints one line per (kernel, grid, block, metric): the number of launches
profiled, the median, the minimum and the maximum value, and the value of
every launch in order. Lines that are not part of the CSV table are skipped.
"""
import csv
import statistics
import sys


def rows(path):
    with open(path, newline="", errors="replace") as f:
        lines = f.readlines()
    start = None
    for i, line in enumerate(lines):
        if line.startswith('"ID"'):
            start = i
            break
    if start is None:
        return []
    table = [l for l in lines[start:] if l.startswith('"')]
    return list(csv.DictReader(table))


def num(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    groups = {}
    order = []
    for path in sys.argv[1:]:
        for r in rows(path):
            name = r.get("Kernel Name", "?").split("(")[0]
            key = (
                name,
                r.get("Grid Size", "?"),
                r.get("Block Size", "?"),
                r.get("Metric Name", "?"),
                r.get("Metric Unit", ""),
            )
            v = num(r.get("Metric Value", ""))
            if v is None:
                continue
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(v)
    print("kernel,grid,block,metric,unit,launches,median,min,max,values")
    for key in order:
        v = groups[key]
        name, grid, block, metric, unit = key
        print(
            '%s,"%s","%s",%s,%s,%d,%.6g,%.6g,%.6g,"%s"'
            % (
                name,
                grid,
                block,
                metric,
                unit,
                len(v),
                statistics.median(v),
                min(v),
                max(v),
                " ".join("%.6g" % x for x in v),
            )
        )


if __name__ == "__main__":
    main()
