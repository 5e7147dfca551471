#!/usr/bin/env python3
"""The tables of this campaign's README, from the raw results of run.sh.

Usage: tools/measure/race/make_tables.py [RESULTS_DIR]
       (default tools/measure/race/results/call1; run from anywhere)

Reads RESULTS_DIR/{time.csv,ncu.csv}; prints, per case, the warm time and
the L2's sectors by source and operation per sector the SMs read: writes
from the SMs, across the fabric, and from neither (the L2's own), misses,
fills from DRAM, and the DRAM bytes read per sector. Plain Python (the
reading is ../campaign.py).
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import ncu_cases, num  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "call1")
BLOCKS = {"0": 8, "114688": 2}


def main():
    timed = {r["index"]: r for r in csv.DictReader(open(os.path.join(RES, "time.csv")))}
    print("| kind | elem | stride | blocks an SM | warm us | SM writes | fabric writes | own writes "
          "| misses | fills | DRAM B read | store sectors missing |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c, m in ncu_cases(os.path.join(RES, "ncu.csv")):
        idx, kind, elem, stride, smem = c[1], c[2], c[3], c[4], c[5]
        rd = num(m["lts__t_sectors_srcunit_tex_op_read.sum"])
        tex_w = num(m["lts__t_sectors_srcunit_tex_op_write.sum"])
        fab_w = num(m["lts__t_sectors_srcunit_ltcfabric_op_write.sum"])
        own = num(m["lts__t_sectors_op_write.sum"]) - tex_w - fab_w
        miss = num(m["lts__t_sectors_lookup_miss.sum"])
        fill = num(m["lts__d_sectors_fill_device.sum"])
        dr = num(m["dram__bytes_read.sum"])
        st_miss = num(m["lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"])
        t = float(timed[idx]["warm_ns"]) / 1000
        print(f"| {kind} | {elem} | {stride} | {BLOCKS[smem]} | {t:,.1f} | {tex_w / rd:.3f} | {fab_w / rd:.3f} "
              f"| {own / rd:.3f} | {miss / rd:.3f} | {fill / rd:.3f} | {dr / rd:.1f} | {100 * st_miss / tex_w:.2f}% |")


if __name__ == "__main__":
    main()
