#!/usr/bin/env python3
"""The rows `gpusim validate` replays from the l2src campaign, and the
tables of its README, from the raw results of run.sh.

Usage: tools/measure/l2src/make_csv.py [RESULTS_DIR]
       (default tools/measure/l2src/results; run from anywhere)

Reads RESULTS_DIR/{time.csv,ncu.csv}; writes
tests/data/h200/corpus/l2src.csv: the cases of the load alone (family
stride_smem_ro), the store alone (stride_smem_wo) and the copy into another
buffer (stride_smem_cp), time_ns their warm event time (the median of five
batches), with Nsight Compute's counters of one cold launch. (The whole
kernel's cases repeat family stride_smem's and are not written.) Prints the
times by blocks per SM and the L2's sectors by source per sector the SMs
access.

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import ncu_cases, num, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "l2src.csv")
FAMILY = {"ro": "stride_smem_ro", "wo": "stride_smem_wo", "cp": "stride_smem_cp"}
BLOCKS = {0: 8, 114688: 2}
COUNTERS = ["lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
            "dram__bytes_read.sum", "dram__bytes_write.sum"]


def main():
    timed = list(csv.DictReader(open(os.path.join(RES, "time.csv"))))
    profiled = ncu_cases(os.path.join(RES, "ncu.csv"))
    counted = {int(c[1]): m for c, m in profiled}
    out = []
    for r in timed:
        if r["kind"] not in FAMILY:
            continue
        row = {"family": FAMILY[r["kind"]],
               "params": f"nMB=256;elem={r['elem']};block={r['block']};stride={r['stride']};smem={r['smem']}",
               "time_ns": r["warm_ns"], "time_source": "events_warm_batch", "time_warm_ns": r["warm_ns"]}
        for k in COUNTERS:
            row[k] = num(counted[int(r["index"])][k])
        out.append(row)
    write_rows(DST, out, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + COUNTERS)
    print(f"{os.path.normpath(DST)}: {len(out)} rows")

    print("\nwarm time, us, at 8 and 2 blocks of 256 per SM")
    t = {(r["kind"], int(r["elem"]), int(r["stride"]), int(r["smem"])): float(r["warm_ns"]) for r in timed}
    print("kind elem stride        8        2   8 against 2")
    for k, e, s, m in sorted(t, key=lambda x: (["rw", "ro", "wo", "cp"].index(x[0]), -x[1], x[2])):
        if m != 0:
            continue
        a, b = t[(k, e, s, 0)], t[(k, e, s, 114688)]
        print(f"{k:>4} {e:>4} {s:>6} {a / 1e3:8.1f} {b / 1e3:8.1f}   {100 * (a / b - 1):+6.1f}%")

    print("\nper sector the SMs read or write (the larger): the L2's writes from neither the SMs nor")
    print("the fabric, its sectors filled from DRAM, and the share of the SMs' store sectors that miss")
    print("kind elem stride blocks  other writes  fills  store misses")
    for c, m in profiled:
        rd, wr = num(m["lts__t_sectors_srcunit_tex_op_read.sum"]), num(m["lts__t_sectors_srcunit_tex_op_write.sum"])
        base = max(rd, wr)
        other = num(m["lts__t_sectors_op_write.sum"]) - wr - num(m["lts__t_sectors_srcunit_ltcfabric_op_write.sum"])
        miss = num(m["lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"]) / wr if wr else 0.0
        print(f"{c[2]:>4} {c[3]:>4} {c[4]:>6} {BLOCKS[int(c[5])]:>6}  {other / base:12.3f}  {num(m['lts__d_sectors_fill_device.sum']) / base:5.3f}"
              f"  {100 * miss:11.2f}%")


if __name__ == "__main__":
    main()
