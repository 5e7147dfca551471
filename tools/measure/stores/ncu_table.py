#!/usr/bin/env python3
"""Turn the Nsight Compute output of `./stores ncu` into one row per launch.

Usage: ncu_table.py NCU.csv [--launch 0|1] [--brief]

NCU.csv is what `ncu --csv --print-units base --metrics ... ./stores ncu`
printed: the program's "CASE,..." lines (one per case, in launch order; each
case is launched twice) and ncu's CSV table (one row per launch and metric).
Profiled launch ID i belongs to case i // 2, launch i % 2. The kernel name of
every row is checked against the case.

Default output: CSV on stdout, columns
    kernel,params,n,footprint_bytes,k_bytes,grid,block,bytes_written,
    bytes_stored,sectors_written,launch,<one column per metric>
--launch L keeps launch L only; --brief prints a short human-readable table.
"""
import csv
import sys

METRIC_ORDER = [
    "gpu__time_duration.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "lts__t_requests_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_read.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
    "sm__cycles_elapsed.avg.per_second",
]
CASE_COLS = ["kernel", "params", "n", "footprint_bytes", "k_bytes", "grid",
             "block", "bytes_written", "bytes_stored", "sectors_written"]


def parse(path):
    with open(path, newline="", errors="replace") as f:
        lines = f.read().splitlines()
    cases = []
    for line in lines:
        if line.startswith("CASE,") and not line.startswith("CASE,index"):
            parts = line.split(",")
            cases.append(dict(zip(["index"] + CASE_COLS, parts[1:])))
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    rows = []
    if start is not None:
        table = [l for l in lines[start:] if l.startswith('"')]
        rows = list(csv.DictReader(table))
    return cases, rows


def num(text):
    try:
        return float(text.replace(",", ""))
    except (ValueError, AttributeError):
        return None


def base_name(kernel_name):
    name = kernel_name.split("(")[0].strip()
    if name.startswith("void "):
        name = name[5:]
    return name.split("<")[0].strip()


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        sys.exit(1)
    path = args[0]
    launch = None
    if "--launch" in args:
        launch = int(args[args.index("--launch") + 1])
    brief = "--brief" in args
    cases, rows = parse(path)
    per = {}
    names = {}
    metrics = []
    for r in rows:
        i = int(r["ID"])
        m = r["Metric Name"]
        if m not in metrics:
            metrics.append(m)
        per.setdefault(i, {})[m] = num(r["Metric Value"])
        names[i] = r.get("Kernel Name", "?")
    metrics.sort(key=lambda m: METRIC_ORDER.index(m) if m in METRIC_ORDER else 99)
    out = []
    for i in sorted(per):
        ci, li = divmod(i, 2)
        if ci >= len(cases):
            print(f"warning: launch ID {i} has no case", file=sys.stderr)
            continue
        c = cases[ci]
        if base_name(names[i]) != c["kernel"]:
            print(f"warning: ID {i} is {names[i]!r}, case says {c['kernel']}",
                  file=sys.stderr)
        if launch is not None and li != launch:
            continue
        out.append((c, li, per[i]))
    if not brief:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(CASE_COLS + ["launch"] + metrics)
        for c, li, v in out:
            vals = []
            for m in metrics:
                x = v.get(m)
                vals.append("" if x is None else ("%d" % x if x == int(x) else "%.6g" % x))
            w.writerow([c[k] for k in CASE_COLS] + [li] + vals)
        return
    short = [
        ("gpu__time_duration.sum", "time_us", 1e-3),
        ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1_st_req", 1),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1_st_sect", 1),
        ("lts__t_requests_srcunit_tex_op_write.sum", "lts_wr_req", 1),
        ("lts__t_sectors_srcunit_tex_op_write.sum", "lts_tex_wr", 1),
        ("lts__t_sectors_srcunit_tex_op_read.sum", "lts_tex_rd", 1),
        ("lts__t_sectors_op_write.sum", "lts_wr", 1),
        ("lts__t_sectors_op_read.sum", "lts_rd", 1),
        ("dram__bytes_read.sum", "dram_rd_MB", 1e-6),
        ("dram__bytes_write.sum", "dram_wr_MB", 1e-6),
    ]
    print("%-18s %-28s %2s " % ("kernel", "params", "L")
          + " ".join("%11s" % s for _, s, _ in short))
    for c, li, v in out:
        cells = []
        for m, _, scale in short:
            x = v.get(m)
            cells.append("%11s" % ("-" if x is None else ("%.1f" % (x * scale) if scale != 1 else "%d" % x)))
        print("%-18s %-28s %2d " % (c["kernel"], c["params"], li) + " ".join(cells))


if __name__ == "__main__":
    main()
