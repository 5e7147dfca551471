#!/usr/bin/env python3
"""pline's results as a table: per case, per L2 slice (96), the lines written,
the DRAM sectors (32 B) read and written over the sectors per line (so in
lines), the partly written lines the L2 kept without reading (kept_p) and
the lines it did not write back (kept_d), and the L2's own writes (from
neither the SMs nor the fabric) and fills per written sector.

    python3 tools/measure/pline/summary.py [results/ncu.csv] [--csv OUT]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from campaign import ncu_cases, num, params  # noqa: E402

SLICES = 96


def rows(path):
    out = []
    for case, m in ncu_cases(path):
        p = params(case[2])
        lines = int(params(case[3])["lines"])
        s, g = int(p["s"]), int(p["g"])
        v = {k: num(x) for k, x in m.items()}
        rd = v["dram__bytes_read.sum"] / 32
        wr = v["dram__bytes_write.sum"] / 32
        st = v["lts__t_sectors_srcunit_tex_op_write.sum"]
        own = v["lts__t_sectors_op_write.sum"] - st - v["lts__t_sectors_srcunit_ltcfabric_op_write.sum"]
        per = lines / SLICES
        out.append(dict(
            per_slice=int(p["per_slice"]), s=s, g=g, step=int(p["step"]), ls=int(p.get("ls", 1)), lines=lines,
            time_us=v["gpu__time_duration.sum"] / 1000,
            read_lines=rd / s / SLICES, write_lines=wr / s / SLICES,
            kept_p=per - rd / s / SLICES, kept_d=per - wr / s / SLICES,
            own_per_sector=own / st, fill_per_sector=v["lts__d_sectors_fill_device.sum"] / st,
            st_miss=v["lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"] / st,
            dram_read=v["dram__bytes_read.sum"], dram_write=v["dram__bytes_write.sum"],
        ))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    here = os.path.dirname(os.path.abspath(__file__))
    path = args[0] if args else os.path.join(here, "results", "ncu.csv")
    rs = rows(path)
    print("| lines a slice | sectors a line | bytes a sector | step (cycles) | line stride | us | read (lines a slice) | written | kept partly written | kept dirty | own writes a sector | fills a sector |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rs:
        print(f"| {r['per_slice']} | {r['s']} | {4 * r['g']} | {r['step']} | {r['ls']} | {r['time_us']:.1f} | {r['read_lines']:.0f} | "
              f"{r['write_lines']:.0f} | {r['kept_p']:.0f} | {r['kept_d']:.0f} | {r['own_per_sector']:.3f} | {r['fill_per_sector']:.3f} |")
    if "--csv" in sys.argv:
        out = sys.argv[sys.argv.index("--csv") + 1]
        import csv
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rs[0]))
            w.writeheader()
            w.writerows(rs)


if __name__ == "__main__":
    main()
