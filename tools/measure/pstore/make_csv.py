#!/usr/bin/env python3
"""Joins pstore's raw Nsight Compute files into results/pstore.csv.

Usage: tools/measure/pstore/make_csv.py [RESULTS_DIR]

Also writes tests/data/h200/corpus/pstore.csv, the cold launches in the
corpus's columns: families pst and prw, and spread_ld, spread_st, spread_rw
(the launches of `./pstore spread`, results/spread.csv), and dirty_lines
(`./pstore dirty`, results/dirty.csv); env.txt lists every launch.

One row per measured launch: family (pst, prw: one cold launch each;
pst_warm: the store after a flush and a load of its sectors), params, then
the counters of cold.csv/warm.csv and each unit's throughput in % of its peak from the breakdown files. The
launches are matched to the case list in env.txt by their order (ncu's ID).
"""
import csv
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
res = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results")


def listed(env, head):
    """The launches that env.txt lists under `---- head`, in order."""
    text = open(os.path.join(res, env)).read().split(f"---- {head}\n")[1]
    lines = text.split("---- ")[0].strip().splitlines()
    return [tuple(l.split(",", 1)) for l in lines]


def cases():
    return listed("env.txt", "list")


SPREAD = {"pld": "spread_ld", "pst": "spread_st", "prw": "spread_rw"}


def ncu(name):
    """{launch id: {metric: value}} from one raw ncu --csv file."""
    path = os.path.join(res, name + ".csv")
    if not os.path.exists(path):
        return {}
    rows = [l for l in open(path) if l.startswith('"')]
    out = {}
    for r in csv.DictReader(rows):
        v = r["Metric Value"].replace(",", "")
        try:
            v = float(v)
        except ValueError:
            continue
        out.setdefault(int(r["ID"]), {})[r["Metric Name"]] = v
    return out


COUNTERS = [
    ("time_ns", "gpu__time_duration.sum"),
    ("l1_st_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    ("l1_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    ("l1_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    ("l2_wr_requests", "lts__t_requests_srcunit_tex_op_write.sum"),
    ("l2_wr_sectors", "lts__t_sectors_srcunit_tex_op_write.sum"),
    ("l2_wr_hit", "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum"),
    ("l2_wr_miss", "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum"),
    ("l2_rd_sectors", "lts__t_sectors_srcunit_tex_op_read.sum"),
    ("l2_rd_hit", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"),
    ("dram_rd_bytes", "dram__bytes_read.sum"),
    ("dram_wr_bytes", "dram__bytes_write.sum"),
    ("lts_cycles_active", "lts__cycles_active.avg"),
    ("lts_hz", "lts__cycles_elapsed.avg.per_second"),
    ("dram_hz", "dram__cycles_elapsed.avg.per_second"),
    ("sm_hz", "sm__cycles_elapsed.avg.per_second"),
]
UNITS = [
    "dram__cycles_active",
    "lts__t_tag_requests",
    "lts__t_sectors",
    "lts__d_sectors",
    "lts__xbar2lts_cycles_active",
    "lts__lts2xbar_cycles_active",
    "l1tex__m_l1tex2xbar_req_cycles_active",
    "l1tex__data_pipe_lsu_wavefronts",
    "l1tex__lsuin_requests",
]


def main():
    cs = cases()
    n_cold = sum(1 for f, _ in cs if f != "pst_warm")
    cold, warm = ncu("cold"), ncu("warm")
    cold_bd, warm_bd = ncu("cold_bd"), ncu("warm_bd")
    head = ["family", "params"] + [c for c, _ in COUNTERS]
    head += ["pct_" + u.split("__", 1)[0] + "_" + u.split("__", 1)[1] for u in UNITS]
    out = csv.writer(open(os.path.join(res, "pstore.csv"), "w", newline=""))
    out.writerow(head)
    for i, (fam, params) in enumerate(cs):
        if fam == "pst_warm":
            k, m, bd = i - n_cold, warm, warm_bd
        else:
            k, m, bd = i, cold, cold_bd
        row = [fam, params]
        row += [m.get(k, {}).get(name, "") for _, name in COUNTERS]
        row += [bd.get(k, {}).get(u + ".avg.pct_of_peak_sustained_elapsed", "") for u in UNITS]
        out.writerow(row)


main()


def corpus_rows():
    """Every cold launch in the corpus's columns, for `gpusim validate`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "corpus_csv", os.path.join(here, "..", "corpus", "make_csv.py"))
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    # (raw file, list in env.txt, family name in the corpus from the listed one)
    sources = [
        ("cold", "list", lambda fam: fam),
        ("spread", "list-spread", lambda fam: SPREAD[fam]),
        ("dirty", "list-dirty", lambda fam: "dirty_lines"),
    ]
    rows = []
    for raw, head, family in sources:
        per = ncu(raw)
        # The cold launches come first in their list; pst_warm's are warm.csv's.
        for i, (fam, params) in enumerate(listed("env.txt", head)):
            if fam == "pst_warm":
                continue
            m = per[i]
            row = {"family": family(fam), "params": params, "time_ns": m["gpu__time_duration.sum"],
                   "time_source": "ncu_cold", "time_warm_ns": ""}
            for k in corpus.METRICS:
                row[k] = m.get(k, "")
            rows.append(row)
    corpus.write("pstore.csv", rows, dst=os.path.join(here, "..", "..", "..", corpus.DST))


corpus_rows()
