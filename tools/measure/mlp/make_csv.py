#!/usr/bin/env python3
"""The rows `gpusim validate` replays from the mlp campaign, and a summary.

Usage: tools/measure/mlp/make_csv.py [RESULTS_DIR]
       (default tools/measure/mlp/results; run from anywhere)

Reads RESULTS_DIR/call2/{time.csv,ncu.csv} (every load case, timed warm,
and Nsight Compute's counters of one cold launch of each case with u = 4)
and RESULTS_DIR/call3/{time.csv,ncu.csv} (the seven store shapes; call 3
reran shapes 0-3 with the new ones, and its times are the ones used);
writes tests/data/h200/corpus/mlp.csv:

  mlp          kind=K;grid=G;block=T;u=U   the `dram` cases of the sector
               (K = 0) and line (K = 1) loads (workloads/mlp.ron), but
               those whose compiled loop uses a value before its last
               load issues (line loads at u >= 8, any at u = 32)
  store_shape  shape=S;grid=G              the `l2` cases of k_st
               (workloads/store_shape.ron)

time_ns is the warm event time (time_source events_warm_batch: each load
launch reads lines no launch before it touched, so its lines come from
DRAM as in gpusim's cold run); the counters, where a case has them, are
the cold launch's. Then prints, for one SM, the load and store rates the
config's sm.max_pending_lines and sm.store_sectors_per_cycle come from.

Plain Python, so that it runs anywhere (the reading is ../campaign.py).
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from campaign import ncu_cases, num, write_rows  # noqa: E402

RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
DST = os.path.join(HERE, "..", "..", "..", "tests", "data", "h200", "corpus", "mlp.csv")
# The fixed cost of a launch here: 65536 and 131072 lines take 16.7 and
# 33.2 us more than 32768 at the tag rate, so 32768 take 19.46 - 16.63 us
# of work plus this (call 1's sector loads, one SM).
FIXED_NS = 2830.0
COUNTERS = [
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
]
KIND = {"sector": 0, "line": 1}
SHAPES = ["st32x1", "st4x1", "st2x2", "st1x4", "st16x1v", "st32x1v", "st4x2h"]


def key(kind, where, grid, block, u):
    return (kind, where, int(grid), int(block), int(u))


def counters(path):
    """Counters of each profiled case, by its key."""
    out = {}
    for c, m in ncu_cases(path):
        # CASE,<index>,<kind>,<where>,<grid>,<block>,<u>
        out[key(*c[2:7])] = {k: num(m[k]) for k in COUNTERS}
    return out


def main():
    rows = []
    t2 = list(csv.DictReader(open(os.path.join(RES, "call2", "time.csv"))))
    n2 = counters(os.path.join(RES, "call2", "ncu.csv"))
    for r in t2:
        if r["kind"] not in KIND or r["where"] != "dram":
            continue
        # The compiled loop uses its first value before its last loads
        # issue where it has many (results/call3/sass.txt: line loads at
        # u >= 8 add the first value after 6 loads, sector loads at u = 32
        # after 22), so a warp has fewer in flight than the workload, which
        # issues all u first: not the same kernel.
        if (r["kind"] == "line" and int(r["u"]) >= 8) or int(r["u"]) == 32:
            continue
        k = key(r["kind"], r["where"], r["grid"], r["block"], r["u"])
        row = {"family": "mlp",
               "params": f"kind={KIND[r['kind']]};grid={r['grid']};block={r['block']};u={r['u']}",
               "time_ns": r["warm_ns"], "time_source": "events_warm_batch", "time_warm_ns": r["warm_ns"]}
        row.update(n2.get(k, {}))
        rows.append(row)
    t3 = list(csv.DictReader(open(os.path.join(RES, "call3", "time.csv"))))
    n3 = counters(os.path.join(RES, "call3", "ncu.csv"))
    for r in t3:
        if r["kind"] not in SHAPES or r["where"] != "l2":
            continue
        k = key(r["kind"], r["where"], r["grid"], r["block"], r["u"])
        row = {"family": "store_shape", "params": f"shape={r['shape']};grid={r['grid']}",
               "time_ns": r["warm_ns"], "time_source": "events_warm_batch", "time_warm_ns": r["warm_ns"]}
        row.update(n3.get(k, {}))
        rows.append(row)
    write_rows(DST, rows, ["family", "params", "time_ns", "time_source", "time_warm_ns"] + COUNTERS)
    print(f"{os.path.normpath(DST)}: {len(rows)} rows")

    print("\none SM, sector loads from DRAM (call 2): lines/ns and ns a trip, by threads x loads a thread")
    for r in t2:
        if r["kind"] == "sector" and r["where"] == "dram" and r["grid"] == "1":
            t = float(r["warm_ns"]) - FIXED_NS
            print("  T %5s u %2s  in flight asked %6d  %.3f lines/ns  %7.1f ns a trip" % (
                r["block"], r["u"], int(r["block"]) * int(r["u"]), int(r["lines"]) / t, t / int(r["iters"])))
    print("\none SM, stores into the L2 (call 3): per SM cycle (1.98 GHz)")
    for r in t3:
        if r["kind"] in SHAPES and r["where"] == "l2" and r["grid"] == "1":
            s = int(r["shape"])
            per = [32, 4, 2, 1, 16, 32, 4][s]
            sectors = [32, 4, 4, 4, 16, 32, 8][s]
            t = float(r["warm_ns"]) - FIXED_NS
            lines = int(r["lines"])
            print("  %-8s %.3f line requests, %.3f sectors a cycle" % (
                r["kind"], lines / t / 1.98, lines * sectors / per / t / 1.98))
    print("\nwarps of one block running (call 3), sector loads, lines/ns: DRAM u=16, L2 u=16, DRAM u=32, L2 u=32")
    masks = {}
    for r in t3:
        if r["kind"] == "mask":
            masks.setdefault(int(r["shape"]), []).append(int(r["lines"]) / (float(r["warm_ns"]) - FIXED_NS))
    for m, v in masks.items():
        ws = [w for w in range(16) if m >> w & 1]
        print("  warps %-28s (sub-partitions %s): %s" % (
            ws, sorted({w % 4 for w in ws}), " ".join("%.3f" % x for x in v)))


if __name__ == "__main__":
    main()
