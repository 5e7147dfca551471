#!/usr/bin/env python3
"""Builds tests/data/h200/corpus/l2dirty.csv, which `gpusim validate` replays,
from tools/measure/l2dirty/results/stride.csv (the strided kernels, one cold
launch each under Nsight Compute), in the corpus's columns.

Usage: tools/measure/l2dirty/make_csv.py   (from the repository root)

Families: stride_ro and stride_wo (workloads/stride_ro.ron, stride_wo.ron);
the rw kernel is seed 002's and stays with seed002.csv. The write-back
sequences (results/seq.csv) are not replayed: they ran without a cache flush
between kernels, and the README says why they cannot be.
"""
import csv
import importlib.util
import os

spec = importlib.util.spec_from_file_location("corpus_csv", "tools/measure/corpus/make_csv.py")
corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus)

cases, per = corpus.parse_ncu("tools/measure/l2dirty/results/stride.csv")
rows = []
for i, (fam, params, _step) in enumerate(cases):
    if fam not in ("stride_ro", "stride_wo"):
        continue
    m = per[i]
    row = {"family": fam, "params": "nMB=4;" + params, "time_ns": corpus.fmt(m["gpu__time_duration.sum"]),
           "time_source": "ncu_cold", "time_warm_ns": ""}
    for k in corpus.METRICS:
        row[k] = corpus.fmt(m.get(k, ""))
    rows.append(row)
with open(os.path.join(corpus.DST, "l2dirty.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=corpus.HEAD, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
print(len(rows), "rows")
