#!/usr/bin/env python3
"""Builds the tidy CSV and the empty-kernel fit from the raw results of run.sh.

Usage: tools/measure/widths/make_csv.py [RESULTS_DIR]
       (default tools/measure/widths/results; run from anywhere)

Reads RESULTS_DIR/{time.csv,ncu.csv,ncu_time.csv}; writes

  RESULTS_DIR/widths.csv     one row per case: kind, elem_bytes, size_mib,
                             block, grid, time_ncu_ns (gpu__time_duration.sum
                             of the cold launch in the all-metrics run),
                             time_warm_ns (events, back-to-back batches),
                             time_cold_events_ns (events, one launch after a
                             256 MiB memset), then the Nsight Compute metrics
                             under their own names, then
                             time_ncu_rep_med_ns / _min_ns / _max_ns (the
                             duration-only run's repeated cold launches),
                             warm_min_ns, warm_max_ns, cold_min_ns,
                             cold_max_ns, check_bad.
  RESULTS_DIR/empty_fit.txt  least-squares fits of the empty kernels'
                             time = a + b * blocks + c * warps (ncu cold,
                             ncu repeated median, warm events, cold
                             events), over all 36 and over the 30 with
                             blocks of at most 512 threads, with each
                             case's residual.

Plain Python (no numpy), so that it runs anywhere.
"""
import csv
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
METRICS = [
    "sm__cycles_elapsed.avg.per_second",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__cycles_active.avg",
    "smsp__inst_executed.sum",
    "launch__registers_per_thread",
    "launch__grid_size",
    "launch__block_size",
]
KEY = ["kind", "elem_bytes", "size_mib", "block", "grid"]
HEAD = KEY + ["time_ncu_ns", "time_warm_ns", "time_cold_events_ns"] + METRICS + [
    "time_ncu_rep_med_ns", "time_ncu_rep_min_ns", "time_ncu_rep_max_ns", "ncu_reps",
    "warm_min_ns", "warm_max_ns", "cold_min_ns", "cold_max_ns", "check_bad"]


# The corpus's readers of ncu's CSV (as tools/measure/l2dirty does).
_spec = importlib.util.spec_from_file_location(
    "corpus_csv", os.path.join(HERE, "..", "corpus", "make_csv.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)
num = corpus.num


def fmt(v):
    """A value for the CSV; text (from time.csv) as it is."""
    return v if isinstance(v, str) else corpus.fmt(v)


def parse_ncu(path):
    """[(case fields, {metric: value})] in launch order."""
    cases, per = corpus.parse_ncu(path)
    return [(cases[i], per[i]) for i in range(len(cases))]


def lstsq3(rows):
    """Least squares y = a + b*x1 + c*x2 by the normal equations."""
    n = len(rows)
    s = [[0.0] * 3 for _ in range(3)]
    t = [0.0] * 3
    for x1, x2, y in rows:
        v = (1.0, x1, x2)
        for i in range(3):
            t[i] += v[i] * y
            for j in range(3):
                s[i][j] += v[i] * v[j]
    # Gaussian elimination with partial pivoting.
    m = [s[i][:] + [t[i]] for i in range(3)]
    for c in range(3):
        p = max(range(c, 3), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(3):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [m[r][k] - f * m[c][k] for k in range(4)]
    return [m[i][3] / m[i][i] for i in range(3)]


def main():
    timing = {}
    with open(os.path.join(RES, "time.csv")) as f:
        for r in csv.DictReader(f):
            timing[tuple(r[k] for k in KEY)] = r
    main_run = parse_ncu(os.path.join(RES, "ncu.csv"))
    reps = {}
    rep_path = os.path.join(RES, "ncu_time.csv")
    if os.path.exists(rep_path):
        for fields, m in parse_ncu(rep_path):
            reps.setdefault(tuple(fields[1:6]), []).append(m["gpu__time_duration.sum"])
    rows = []
    for fields, m in main_run:
        key = tuple(fields[1:6])
        t = timing[key]
        row = dict(zip(KEY, key))
        row["time_ncu_ns"] = m["gpu__time_duration.sum"]
        row["time_warm_ns"] = float(t["warm_ns"])
        row["time_cold_events_ns"] = float(t["cold_ns"])
        for k in METRICS:
            row[k] = m.get(k)
        rr = reps.get(key, [])
        if rr:
            row["time_ncu_rep_med_ns"] = statistics.median(rr)
            row["time_ncu_rep_min_ns"] = min(rr)
            row["time_ncu_rep_max_ns"] = max(rr)
            row["ncu_reps"] = len(rr)
        for a, b in (("warm_min_ns", "warm_min_ns"), ("warm_max_ns", "warm_max_ns"),
                     ("cold_min_ns", "cold_min_ns"), ("cold_max_ns", "cold_max_ns"), ("check_bad", "check_bad")):
            row[a] = t[b]
        rows.append(row)
    with open(os.path.join(RES, "widths.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEAD)
        for r in rows:
            w.writerow([fmt(r.get(h)) for h in HEAD])
    print(f"widths.csv: {len(rows)} rows")

    # Empty kernels: time = a + b * blocks + c * warps.
    empty = [r for r in rows if r["kind"] == "empty"]
    out = []
    subsets = (("all block sizes", 1024), ("blocks of 32 .. 512 threads", 512))
    for col in ("time_ncu_ns", "time_ncu_rep_med_ns", "time_warm_ns", "time_cold_events_ns"):
        for label, max_block in subsets:
            sel = [r for r in empty if r.get(col) not in (None, "") and int(r["block"]) <= max_block]
            pts = [(float(r["grid"]), float(r["grid"]) * int(r["block"]) / 32, float(r[col])) for r in sel]
            if len(pts) < 4:
                continue
            a, b, c = lstsq3(pts)
            res = [y - (a + b * x1 + c * x2) for x1, x2, y in pts]
            rms = (sum(e * e for e in res) / len(res)) ** 0.5
            out.append(f"## {col}, {label}: time_ns = a + b * blocks + c * warps, least squares over "
                       f"{len(pts)} empty kernels")
            out.append(f"a = {a:.1f} ns, b = {b:.4f} ns per block, c = {c:.5f} ns per warp; "
                       f"rms residual {rms:.1f} ns, max |residual| {max(abs(e) for e in res):.1f} ns")
            out.append("block,grid,warps,time_ns,fit_ns,residual_ns")
            for (x1, x2, y), e, r in zip(pts, res, sel):
                out.append(f"{r['block']},{r['grid']},{int(x2)},{y:.1f},{y - e:.1f},{e:.1f}")
            out.append("")
    with open(os.path.join(RES, "empty_fit.txt"), "w") as f:
        f.write("\n".join(out))
    print("\n".join(l for l in out if l.startswith(("##", "a ="))))


if __name__ == "__main__":
    main()
