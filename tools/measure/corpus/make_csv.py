#!/usr/bin/env python3
"""Builds the corpus CSVs that `gpusim validate` replays, from raw results.

Usage: tools/measure/corpus/make_csv.py   (from the repository root)

Reads tools/measure/corpus/results/{ncu.csv,ncu_warm.csv,time.csv} and the
earlier measurements tests/data/h200/{ncu.csv,timing.csv} (seed 002) and
tests/data/h200/stores/{ncu.csv,time.csv}; writes, under
tests/data/h200/corpus/:

  corpus.csv   one row per case of corpus.cu (cold ncu launch)
  seed002.csv  seed 002's offset/stride kernels: 4 MiB counters and times
               (ncu, cold) and 256 MiB times (events, warm back to back),
               with the L2 and DRAM counters of 14 of the 256 MiB strides
               from one cold launch each (tools/measure/l2hits, `big`)
  stores.csv   tests/data/h200/stores: seed 001's clear kernels,
               partial-sector stores and 16-byte store streams (ncu, cold)
  wshape.csv   tools/measure/wshape's one-thread-a-sector kernels over 1
               GiB by the sectors chosen in each line (ncu, cold): k_rw1
               (workloads/sector_mask.ron) and its loads alone, k_ro1
               (workloads/sector_mask_ro.ron); the stores alone into lines
               the L2 never held, k_st16 and k_st4
               (workloads/sector_store.ron, results/third)
  misalign.csv tools/measure/misalign's parts of seed 002's offset kernel at
               256 MiB (ncu, cold: the median of three launches for the
               first set, one launch for the spread warps of the second;
               family misalign), and the third set's one-sided sharing
               and spread loads, stores and copies (one launch each;
               family misalign_share): workloads/misalign.ron
  latmix.csv   tools/measure/latspread's loads beside stores to DRAM, stores
               the L2 keeps, or none (ncu, cold; warm: the median of seven
               launches by CUDA events): workloads/latmix.ron

and tools/measure/corpus/results/streams_warm.csv, the streams' second,
L2-warm launch (ncu, no flush; the model always starts cold, so this one is
for reading, not replaying).

Columns: family, params (the workload's parameters, NAME=VALUE;...),
time_ns (the reference kernel time), time_source, then Nsight Compute
metrics under their own names. A blank cell is a quantity not measured.
"""
import csv
import os
import statistics

RES = "tools/measure/corpus/results"
DST = "tests/data/h200/corpus"
METRICS = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
    "lts__t_requests_srcunit_tex_op_read.sum",
    "lts__t_requests_srcunit_tex_op_write.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__m_xbar2l1tex_read_sectors_mem_lg_op_ld.sum",
    "l1tex__m_l1tex2xbar_write_sectors_mem_lg_op_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__cycles_elapsed.avg.per_second",
    "launch__registers_per_thread",
]
HEAD = ["family", "params", "time_ns", "time_source", "time_warm_ns"] + METRICS


def num(text):
    """A number, or None for ncu's "n/a" (a metric this chip does not count)."""
    text = text.replace(",", "")
    return None if text in ("n/a", "") else float(text)


def fmt(v):
    if v is None or v == "":
        return ""
    v = float(v)
    return str(int(v)) if v == int(v) and abs(v) < 1e15 else f"{v:.6g}"


def parse_ncu(path):
    """(cases in launch order, {launch id: {metric: value}})."""
    lines = open(path, errors="replace").read().splitlines()
    cases = [l.split(",")[1:] for l in lines if l.startswith("CASE,")]
    table = [l for l in lines if l.startswith('"')]
    per = {}
    for r in csv.DictReader(table):
        if r["ID"] == "ID":
            continue
        per.setdefault(int(r["ID"]), {})[r["Metric Name"]] = num(r["Metric Value"])
    assert len(per) == len(cases), (path, len(per), len(cases))
    return cases, per


def write(name, rows, dst=DST):
    with open(os.path.join(dst, name), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEAD)
        for r in rows:
            w.writerow([fmt(r.get(h)) if h not in ("family", "params", "time_source") else r.get(h, "") for h in HEAD])
    print(f"{name}: {len(rows)} rows")


def corpus():
    warm = {}
    with open(f"{RES}/time.csv") as f:
        for r in csv.DictReader(f):
            warm[(r["family"], r["params"])] = float(r["ms_per_launch"]) * 1e6
            assert r["check_bad_words"] == "0", r
    cases, per = parse_ncu(f"{RES}/ncu.csv")
    rows = []
    for i, (idx, fam, params, rep) in enumerate(cases):
        m = per[i]
        row = {"family": fam, "params": params, "time_ns": m["gpu__time_duration.sum"],
               "time_source": "ncu_cold", "time_warm_ns": warm[(fam, params)]}
        row.update({k: m.get(k) for k in METRICS})
        rows.append(row)
    write("corpus.csv", rows)
    cases, per = parse_ncu(f"{RES}/ncu_warm.csv")
    rows = []
    for i, (idx, fam, params, rep) in enumerate(cases):
        if rep != "1":
            continue
        m = per[i]
        row = {"family": fam + "_warm", "params": params, "time_ns": m["gpu__time_duration.sum"],
               "time_source": "ncu_second_launch_no_flush", "time_warm_ns": warm[(fam, params)]}
        row.update({k: m.get(k) for k in METRICS})
        rows.append(row)
    write("streams_warm.csv", rows, RES)


def seed002():
    rows = []
    with open("tests/data/h200/ncu.csv") as f:
        for r in csv.DictReader(f):
            exp = r["experiment"]
            params = f"nMB={r['size_mb']};elem={r['elem']};{exp}={r['param']}"
            row = {"family": f"seed002_{exp}_4mib", "params": params,
                   "time_ns": num(r["gpu__time_duration.sum"]), "time_source": "ncu_cold"}
            row.update({k: r.get(k) for k in METRICS if k in r})
            rows.append(row)
    # The 256 MiB strides' L2 and DRAM counters, one cold launch each; the
    # time stays the warm batches' (the footprint, 0.25-8 GiB, is far beyond
    # the 60 MiB L2 either way).
    big = {}
    cases, per = parse_ncu("tools/measure/l2hits/results/big/big.csv")
    for i, (idx, kind, elem, mib, s, block, grid, rep, delay) in enumerate(cases):
        assert kind == "stride" and mib == "256" and block == "256", cases[i]
        big[f"nMB=256;elem={elem};stride={s}"] = per[i]
    with open("tests/data/h200/timing.csv") as f:
        for r in csv.DictReader(f):
            if r["size_mb"] != "256":
                continue
            exp = r["experiment"]
            params = f"nMB=256;elem={r['elem']};{exp}={r['param']}"
            row = {"family": f"seed002_{exp}_256mib", "params": params,
                   "time_ns": float(r["ms_batch"]) * 1e6, "time_source": "events_warm_batch",
                   "time_warm_ns": float(r["ms_batch"]) * 1e6}
            row.update({k: v for k, v in big.pop(params, {}).items() if k in METRICS})
            rows.append(row)
    assert not big, big.keys()
    write("seed002.csv", rows)


def stores():
    warm = {}
    with open("tests/data/h200/stores/time.csv") as f:
        for r in csv.DictReader(f):
            warm[(r["kernel"], r["params"])] = float(r["ms_per_launch"]) * 1e6
    rows = []
    seen = set()
    with open("tests/data/h200/stores/ncu.csv") as f:
        for r in csv.DictReader(f):
            kernel, p = r["kernel"], r["params"]
            if kernel in ("clear_four_ptx", "fill_coalesced", "store16_gridstride"):
                continue  # same workload as another row (identical SASS or pattern)
            kv = dict(x.split("=") for x in p.split(";"))
            if kernel == "partial_store":
                params, fam = f"fMB={int(kv['footprint']) >> 20};k={kv['k']}", "partial_store"
            elif kernel == "store16":
                params, fam = f"fMB={int(kv['footprint']) >> 20}", "store16"
            elif kernel == "clear_stride_loop":
                # measured with one thread per element (grid n/256)
                params, fam = f"n={kv['n']};full=1", kernel
            else:
                params, fam = f"n={kv['n']}", kernel
            if (fam, params) in seen:
                continue  # the footprint sweep repeats the main run's 16 MiB cases
            seen.add((fam, params))
            row = {"family": fam, "params": params, "time_ns": num(r["gpu__time_duration.sum"]),
                   "time_source": "ncu_cold", "time_warm_ns": warm.get((kernel, p))}
            row.update({k: r.get(k) for k in METRICS if k in r})
            rows.append(row)
    write("stores.csv", rows)


def wshape():
    # mask (sector 3 ... sector 0) -> the workload's k, f, d
    kfd = {"1111": (4, 0, 1), "0011": (2, 0, 1), "0101": (2, 0, 2), "0110": (2, 1, 1),
           "0001": (1, 0, 1), "1001": (2, 0, 3)}
    res = "tools/measure/wshape/results"
    # (run, mode kept -> its family and the workload's extra parameters).
    # The loads alone (ro1) were added in a second run (results/second),
    # the stores alone into lines the L2 never held (st16, st4) in a third
    # (results/third, beside rw1 again).
    runs = ((res, {"rw1": ("sector_mask", "")}),
            (f"{res}/second", {"ro1": ("sector_mask_ro", "")}),
            (f"{res}/third", {"st16": ("sector_store", ";w=16"), "st4": ("sector_store", ";w=4")}))
    rows = []
    for run, kept in runs:
        warm = {}
        with open(f"{run}/time.csv") as f:
            for line in f:
                if line.startswith("TIME,"):
                    _, i, mode, mask, _, ms = line.strip().split(",")
                    warm.setdefault((mode, mask), []).append(float(ms) * 1e6)
        cases, per = parse_ncu(f"{run}/ncu.csv")
        for i, (idx, mode, mask, grid, block, rep) in enumerate(cases):
            if mode not in kept:
                continue
            family, extra = kept[mode]
            k, f_, d = kfd[mask]
            m = per[i]
            row = {"family": family, "params": f"nMB=1024;k={k};f={f_};d={d}{extra}",
                   "time_ns": m["gpu__time_duration.sum"], "time_source": "ncu_cold",
                   "time_warm_ns": statistics.median(warm[(mode, mask)])}
            row.update({k2: m.get(k2) for k2 in METRICS})
            rows.append(row)
    write("wshape.csv", rows)


def misalign():
    res = "tools/measure/misalign/results"
    modes = {"rw": 0, "ro": 1, "wo": 2, "cp": 3, "lm": 4, "sm": 5, "rw2": 6}
    rows = []
    # (run, the modes kept and their workload parameters)
    runs = ((res, "misalign", {m: f"mode={v}" for m, v in modes.items()}),
            (f"{res}/second", "misalign", {"rwx": "mode=0;spread=1"}),
            (f"{res}/third", "misalign_share",
             {"rox": "mode=1;spread=1", "wox": "mode=2;spread=1", "cpx": "mode=3;spread=1",
              "rs": "mode=7", "rsx": "mode=7;spread=1", "ws": "mode=8", "wsx": "mode=8;spread=1"}),
            # ws with its store moved by S runs of 32 elements (ws@S), and
            # over 16 MiB (ws16@S); the barrier kernels (wss@S) have no
            # workload of their own.
            (f"{res}/fourth", "misalign_shift",
             {**{f"ws@{s}": f"mode=8;shift={s}" for s in (-32768, -8, -1, 0, 1, 8, 32768)},
              **{f"ws16@{s}": f"mode=8;shift={s}" for s in (0, 1)}}))
    for run, family, kept in runs:
        warm = {}
        with open(f"{run}/time.csv") as f:
            for line in f:
                if line.startswith("TIME,"):
                    _, i, mode, elem, k, _, ms = line.strip().split(",")
                    warm.setdefault((mode, elem, k), []).append(float(ms) * 1e6)
        cold = {}
        if os.path.exists(f"{run}/ncu_time.csv"):
            cases, per = parse_ncu(f"{run}/ncu_time.csv")
            for i, (idx, mode, elem, k, grid, block, rep) in enumerate(cases):
                cold.setdefault((mode, elem, k), []).append(per[i]["gpu__time_duration.sum"])
        cases, per = parse_ncu(f"{run}/ncu.csv")
        for i, (idx, mode, elem, k, grid, block, rep) in enumerate(cases):
            if mode not in kept:
                continue
            m = per[i]
            t = statistics.median(cold[(mode, elem, k)]) if cold else m["gpu__time_duration.sum"]
            mib = 16 if mode.startswith("ws16@") else 256
            row = {"family": family, "params": f"nMB={mib};elem={elem};{kept[mode]};k={k}",
                   "time_ns": t, "time_source": "ncu_cold",
                   "time_warm_ns": statistics.median(warm[(mode, elem, k)])}
            row.update({k2: m.get(k2) for k2 in METRICS})
            rows.append(row)
    write("misalign.csv", rows)


def latmix():
    rows = []
    # (run, its CSV of warm times, its Nsight Compute launches): v = 0-2,
    # the L2-hit loads of v = 3-5, a fraction of the stores (v = 6-8), the
    # stores moved (v = 9, 10).
    base = "tools/measure/latspread/results"
    for run, times, launches in ((f"{base}/mix", "mix.csv", "mix_ncu.csv"),
                                 (f"{base}/hits", "hits.csv", "hits_ncu.csv"),
                                 (f"{base}/frac", "frac.csv", "frac_ncu.csv"),
                                 (f"{base}/shift", "shift.csv", "shift_ncu.csv")):
        warm = {}
        with open(f"{run}/{times}") as f:
            for r in csv.DictReader(f):
                warm[(r["elem"], r["V"])] = float(r["plain_us"]) * 1e3
        cases, per = parse_ncu(f"{run}/{launches}")
        for i, (_, elem, v) in enumerate(cases):
            m = per[i]
            row = {"family": "latmix", "params": f"nMB=256;elem={elem};v={v}",
                   "time_ns": m["gpu__time_duration.sum"], "time_source": "ncu_cold",
                   "time_warm_ns": warm[(elem, v)]}
            row.update({k: m.get(k) for k in METRICS})
            rows.append(row)
    write("latmix.csv", rows)


if __name__ == "__main__":
    corpus()
    seed002()
    stores()
    wshape()
    misalign()
    latmix()
