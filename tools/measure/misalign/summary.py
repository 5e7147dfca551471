#!/usr/bin/env python3
"""Summarises misalign's results: per case, the warm time (median of the
CUDA-event batches), the cold time (median of Nsight Compute's launches),
and the traffic of the cold launch, with each time against the aligned
case (k = 0) of its mode and element. RESULTS may be any of the five
runs (results/, results/second/ ... results/fifth/).

Usage: tools/measure/misalign/summary.py [RESULTS]   (default results/ beside this file)
"""
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")


def num(text):
    text = text.replace(",", "")
    return float("nan") if text in ("n/a", "") else float(text)


def ncu(path):
    lines = open(path, errors="replace").read().splitlines()
    cases = [l.split(",")[1:] for l in lines if l.startswith("CASE,")]
    per = {}
    for r in csv.DictReader([l for l in lines if l.startswith('"')]):
        if r["ID"] == "ID":
            continue
        per.setdefault(int(r["ID"]), {})[r["Metric Name"]] = num(r["Metric Value"])
    return cases, per


def main():
    warm = {}
    for line in open(os.path.join(RES, "time.csv")):
        if line.startswith("TIME,"):
            _, i, mode, elem, k, _, ms = line.strip().split(",")
            warm.setdefault((mode, elem, k), []).append(float(ms) * 1e3)
    # Cold times: three launches (ncu_time.csv) where the run has them,
    # else the one launch of ncu.csv (the second and third sets).
    cold = {}
    have = os.path.exists(os.path.join(RES, "ncu_time.csv"))
    cases, per = ncu(os.path.join(RES, "ncu_time.csv" if have else "ncu.csv"))
    for i, (idx, mode, elem, k, grid, block, rep) in enumerate(cases):
        cold.setdefault((mode, elem, k), []).append(per[i]["gpu__time_duration.sum"] / 1e3)
    cases, per = ncu(os.path.join(RES, "ncu.csv"))
    print(f"{'mode':4} {'elem':>4} {'k':>3} {'warm us':>8} {'vs k0':>6} {'cold us':>8} {'vs k0':>6} "
          f"{'L2 rd req':>10} {'L2 rd sec':>10} {'L2 wr req':>10} {'L2 wr sec':>10} {'DRAM rd MB':>10} {'DRAM wr MB':>10} {'ld wavef':>9} {'occ %':>6}")
    base = {}
    for i, (idx, mode, elem, k, grid, block, rep) in enumerate(cases):
        m = {k2: v for k2, v in per[i].items()}
        for name in ("l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum",):
            m.setdefault(name, float("nan"))
        w = statistics.median(warm[(mode, elem, k)])
        c = statistics.median(cold[(mode, elem, k)])
        if k == "0":
            base[(mode, elem)] = (w, c)
        bw, bc = base[(mode, elem)]
        print(f"{mode:4} {elem:>4} {k:>3} {w:8.1f} {100 * (w / bw - 1):+5.1f}% {c:8.1f} {100 * (c / bc - 1):+5.1f}% "
              f"{m['lts__t_requests_srcunit_tex_op_read.sum']:10.0f} {m['lts__t_sectors_srcunit_tex_op_read.sum']:10.0f} "
              f"{m['lts__t_requests_srcunit_tex_op_write.sum']:10.0f} {m['lts__t_sectors_srcunit_tex_op_write.sum']:10.0f} "
              f"{m['dram__bytes_read.sum'] / 1e6:10.1f} {m['dram__bytes_write.sum'] / 1e6:10.1f} "
              f"{m['l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum']:9.0f} {m['sm__warps_active.avg.pct_of_peak_sustained_active']:6.1f}")


if __name__ == "__main__":
    main()
