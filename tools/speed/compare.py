#!/usr/bin/env python3
"""Compare a sampled run's CSV with a full run's (`--sample off`) CSV.

Usage: compare.py SAMPLED.csv FULL.csv
Prints, per point, the time difference, the error estimate and whether it
covers the difference, and the L2/DRAM counter differences; then a summary
against the targets (time within 2%, L2/DRAM within 1%, estimate covering
the true difference on at least 95% of points).
"""
import csv
import sys

KEYS = ["device", "workload"]
CNT = [
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
]
EXACT = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
]


def main(a_path, b_path, verbose=True):
    a = list(csv.DictReader(open(a_path)))
    b = list(csv.DictReader(open(b_path)))
    assert len(a) == len(b), "different point counts"
    params = [k for k in a[0] if k not in ("bytes",) and k in b[0]]
    params = params[: params.index("time_ns")]
    n = len(a)
    sampled = t_ok = c_ok = covered = exact_ok = 0
    worst_t = worst_c = 0.0
    for x, y in zip(a, b):
        assert [x[k] for k in params] == [y[k] for k in params], "rows differ"
        t1, t0 = float(x["time_ns"]), float(y["time_ns"])
        dt = t1 / t0 - 1
        err = float(x["time_ns_error"])
        cov = abs(t1 - t0) <= err + 0.0005 * t0 if float(x["sampled_fraction"]) < 1 else t1 == t0
        cd = max(
            abs(int(x[k]) / int(y[k]) - 1) if int(y[k]) else abs(int(x[k]))
            for k in CNT
        )
        ex = all(x[k] == y[k] for k in EXACT)
        sampled += float(x["sampled_fraction"]) < 1
        t_ok += abs(dt) <= 0.02
        c_ok += cd <= 0.01
        covered += cov
        exact_ok += ex
        worst_t = max(worst_t, abs(dt))
        worst_c = max(worst_c, cd)
        if verbose:
            print(
                " ".join(x[k] for k in params),
                f"frac {float(x['sampled_fraction']):.3f}",
                f"time {100*dt:+.2f}% est ±{100*err/t0:.2f}% {'ok' if cov else 'MISS'}",
                f"counters {100*cd:.2f}%",
                "" if ex else "L1-COUNTS-DIFFER",
            )
    print(
        f"{n} points, {sampled} sampled; time within 2%: {t_ok}/{n} (worst {100*worst_t:.2f}%); "
        f"L2/DRAM within 1%: {c_ok}/{n} (worst {100*worst_c:.2f}%); "
        f"estimate covers: {covered}/{n} ({100*covered/n:.1f}%); L1 counts exact: {exact_ok}/{n}"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], verbose="-q" not in sys.argv)
