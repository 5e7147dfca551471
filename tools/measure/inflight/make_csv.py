#!/usr/bin/env python3
"""The rows `gpusim validate` replays from the inflight campaign, and the
tables of its README, from the raw results of run.sh.

Usage: tools/measure/inflight/make_csv.py [RESULTS_DIR]
       (default tools/measure/inflight/results; run from anywhere)

Reads RESULTS_DIR/call1/{time.csv,ncu.csv,probe.csv},
RESULTS_DIR/call2/{time.csv,ncu.csv}, RESULTS_DIR/call3/{time.csv,ncu.csv}
and RESULTS_DIR/call4/ncu.csv; writes tests/data/h200/corpus/inflight.csv
(family stride_smem, workloads/stride_smem.ron): every timed case,
time_ns its warm event time of call 1 (the median of five batches, as
seed 002's 256 MiB times), with Nsight Compute's counters of one cold
launch (call 1: 8 blocks an SM, call 2: 2, call 3: the others). Prints
the times by blocks per SM, calls 2 and 3's times against call 1's, the
counters, the L2's store lookups (call 3) and its sectors by source
(call 4), and the probe's latencies with the lines they imply beyond the
SMs (Little's law).

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import ncu_cases, num, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "inflight.csv")
BLOCKS = {0: 8, 36864: 6, 56320: 4, 75776: 3, 114688: 2, 204800: 1}  # the driver's, printed by the program
COUNTERS = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]


def main():
    one, two, three, four = (os.path.join(RES, f"call{k}") for k in (1, 2, 3, 4))
    timed = list(csv.DictReader(open(os.path.join(one, "time.csv"))))
    again = {r["index"]: float(r["warm_ns"]) for r in csv.DictReader(open(os.path.join(two, "time.csv")))}
    third = {r["index"]: float(r["warm_ns"]) for r in csv.DictReader(open(os.path.join(three, "time.csv")))}
    c3 = {int(c[1]): m for c, m in ncu_cases(os.path.join(three, "ncu.csv"))}
    # Call 3 counted every case; calls 1 and 2 keep the cases they counted.
    counted = dict(c3)
    counted.update({int(c[1]): m for d in (one, two) for c, m in ncu_cases(os.path.join(d, "ncu.csv"))})
    out = []
    for r in timed:
        i = int(r["index"])
        row = {"family": "stride_smem",
               "params": f"nMB=256;elem={r['elem']};block={r['block']};stride={r['stride']};smem={r['smem']}",
               "time_ns": r["warm_ns"], "time_source": "events_warm_batch", "time_warm_ns": r["warm_ns"]}
        for k in COUNTERS:
            row[k] = num(counted[i][k]) if i in counted else ""
        out.append(row)
    write_rows(DST, out, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + COUNTERS)
    print(f"{os.path.normpath(DST)}: {len(out)} rows")

    print("\nwarm time, us, by blocks of 256 per SM (smem):")
    print("elem stride " + " ".join(f"{BLOCKS[s]:>8}" for s in sorted(BLOCKS)))
    keys = sorted({(int(r["elem"]), int(r["stride"])) for r in timed}, key=lambda k: (-k[0], k[1]))
    t = {(int(r["elem"]), int(r["stride"]), int(r["smem"])): float(r["warm_ns"]) for r in timed}
    for e, s in keys:
        print(f"{e:>4} {s:>6} " + " ".join(f"{t[(e, s, m)] / 1e3:8.1f}" for m in sorted(BLOCKS)))

    d = [again[r["index"]] / float(r["warm_ns"]) - 1 for r in timed]
    print(f"\ncall 2 against call 1: mean {100 * sum(d) / len(d):+.2f}%, at most {100 * max(map(abs, d)):.2f}% apart")
    d = [third[r["index"]] / float(r["warm_ns"]) - 1 for r in timed]
    print(f"call 3 against call 1: mean {100 * sum(d) / len(d):+.2f}%, at most {100 * max(map(abs, d)):.2f}% apart")

    print("\ncall 3, per L2 read sector from the SMs: store sectors that miss in the L2 (write lookups),")
    print("and DRAM bytes read, by blocks of 256 per SM")
    print("elem stride " + " ".join(f"{BLOCKS[s]:>13}" for s in sorted(BLOCKS)))
    index = {(int(r["elem"]), int(r["stride"]), int(r["smem"])): int(r["index"]) for r in timed}
    for e, s in keys:
        cells = []
        for sm in sorted(BLOCKS):
            m = c3[index[(e, s, sm)]]
            rd = num(m["lts__t_sectors_srcunit_tex_op_read.sum"])
            miss = num(m["lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"]) / num(m["lts__t_sectors_srcunit_tex_op_write.sum"])
            cells.append(f"{100 * miss:5.2f}% {num(m['dram__bytes_read.sum']) / rd:5.1f}B")
        print(f"{e:>4} {s:>6} " + " ".join(f"{c:>13}" for c in cells))

    print("\ncall 4, the L2's sectors by source, per L2 read sector from the SMs")
    cols = ["lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_lookup_miss.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum", "lts__t_sectors_srcunit_ltcfabric_op_read.sum",
            "lts__t_sectors_srcunit_ltcfabric_op_write.sum", "lts__d_sectors_fill_device.sum"]
    print("elem stride blocks " + " ".join(c.replace("lts__", "").replace(".sum", "") for c in cols) + " other_writes")
    for c, m in ncu_cases(os.path.join(four, "ncu.csv")):
        r = timed[int(c[1])]
        rd = num(m["lts__t_sectors_srcunit_tex_op_read.sum"])
        v = [num(m[k]) / rd for k in cols]
        other = v[1] - v[3] - v[5]
        print(f"{r['elem']:>4} {r['stride']:>6} {BLOCKS[int(r['smem'])]:>6} " + " ".join(f"{x:.3f}" for x in v) + f" {other:.3f}")

    print("\nNsight Compute, one cold launch: DRAM bytes read per L2 read sector")
    for i, m in sorted(counted.items()):
        r = timed[i]
        print(f"elem {r['elem']} stride {r['stride']:>2}, {BLOCKS[int(r['smem'])]} blocks: {num(m['dram__bytes_read.sum']) / num(m['lts__t_sectors_srcunit_tex_op_read.sum']):.1f}"
              f" B, DRAM writes {num(m['dram__bytes_write.sum']) / 1e6:.0f} MB, cold {num(m['gpu__time_duration.sum']) / 1e3:.1f} us")

    print("\nprobe: one warp's chase alone on its SM beside the stride kernel on the other 131")
    print("elem stride blocks  median   mean  p10  p90 ns   L2 sectors/ns  beyond the SMs (sectors/ns x mean)")
    for p in csv.DictReader(open(os.path.join(one, "probe.csv"))):
        ci = int(p["case"])
        if ci < 0:
            print(f"  alone              {float(p['median_ns']):6.0f} {float(p['mean_ns']):6.0f} {float(p['p10_ns']):4.0f} {float(p['p90_ns']):4.0f}")
            continue
        r = timed[ci]
        sectors = 256 * 2 ** 20 / int(r["elem"]) * (1 if int(r["stride"]) * int(r["elem"]) >= 32 else int(r["stride"]) * int(r["elem"]) / 32)
        rate = sectors / float(p["kernel_ns"])
        print(f"{r['elem']:>4} {r['stride']:>6} {BLOCKS[int(r['smem'])]:>6} {float(p['median_ns']):7.0f} {float(p['mean_ns']):6.0f} "
              f"{float(p['p10_ns']):4.0f} {float(p['p90_ns']):4.0f}   {rate:13.1f}  {rate * float(p['mean_ns']):8.0f}")


if __name__ == "__main__":
    main()
