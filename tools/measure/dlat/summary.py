#!/usr/bin/env python3
"""Summarises dlat's CSVs: latency percentiles, the tail beyond the usual
latency, the spacing of the slow loads in time (cv), and per pair case the
two warps' latencies.  Usage: summary.py DIR"""
import csv
import os
import statistics
import sys

d = sys.argv[1]


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))]


def stats(name, lat):
    p50 = pct(lat, 0.5)
    print(f"{name}: n={len(lat)} min={min(lat)} p10={pct(lat, .1)} p50={p50} p90={pct(lat, .9)} "
          f"p99={pct(lat, .99)} p99.9={pct(lat, .999)} max={max(lat)} mean={statistics.mean(lat):.1f}")
    for extra in (50, 100, 200, 400):
        slow = [x - p50 for x in lat if x > p50 + extra]
        if slow:
            print(f"  {len(slow) / len(lat) * 100:6.2f}% more than p50+{extra} cycles "
                  f"(their excess: mean {statistics.mean(slow):.0f}, max {max(slow)})")
    # The excess over the median, in 50-cycle bins.
    bins = {}
    for x in lat:
        b = (x - p50) // 50 * 50
        bins[b] = bins.get(b, 0) + 1
    print("  excess over p50 (cycles: loads): " +
          " ".join(f"{b}:{bins[b]}" for b in sorted(bins) if bins[b] >= 3))
    return p50


cv = os.path.join(d, "cv.csv")
if os.path.exists(cv):
    with open(cv) as f:
        head = f.readline().strip()
        print(head)
        mhz = float(head.split()[-2]) if "MHz" in head else 1980.0
        rows = [(int(r["issue_cycle"]), int(r["latency_cycles"])) for r in csv.DictReader(f)]
    lat = [l for _, l in rows]
    p50 = stats("cv (one word, DRAM each time)", lat)
    # Slow loads in time: group runs of consecutive slow loads into events.
    events, last = [], None
    for i, (t, l) in enumerate(rows):
        if l > p50 + 100:
            if last is None or i > last + 1:
                events.append((t, l))
            last = i
    if len(events) > 2:
        gaps = [(b[0] - a[0]) / mhz for a, b in zip(events, events[1:])]
        span = (rows[-1][0] - rows[0][0]) / mhz
        print(f"  slow events: {len(events)} in {span:.0f} us, one per {span / len(events):.2f} us; "
              f"spacing us p10={pct(gaps, .1):.2f} p50={pct(gaps, .5):.2f} p90={pct(gaps, .9):.2f}")
        hist = {}
        for g in gaps:
            b = round(g * 4) / 4
            hist[b] = hist.get(b, 0) + 1
        print("  spacing (us: events): " + " ".join(f"{b}:{hist[b]}" for b in sorted(hist) if hist[b] >= 3))

for name, what in (("chase", "dirty L2"), ("clean", "clean L2")):
    ch = os.path.join(d, name + ".csv")
    if os.path.exists(ch):
        with open(ch) as f:
            stats(f"{name} (1 GiB, a new line each step, ld.cg, {what})",
                  [int(r["latency_cycles"]) for r in csv.DictReader(f)])

pr = os.path.join(d, "pair.csv")
if os.path.exists(pr):
    cases = {}
    with open(pr) as f:
        for r in csv.DictReader(f):
            cases.setdefault((r["cache"], r["case"]), {}).setdefault(int(r["trial"]), {})[int(r["warp"])] = (
                int(r["issue_cycle"]), int(r["latency_cycles"]))
    print("pair: cache case: warp 0 latency p10/p50/p90 | warp 1 latency p10/p50/p90 | warp 1 issue - warp 0 issue p50")
    for (c, k), trials in cases.items():
        t = [v for j, v in sorted(trials.items()) if j >= 10]  # the first trials warm the TLB
        w0 = [v[0][1] for v in t]
        w1 = [v[1][1] for v in t]
        dt = [v[1][0] - v[0][0] for v in t]
        print(f"  {c} {k:5}: {pct(w0, .1)}/{pct(w0, .5)}/{pct(w0, .9)} | {pct(w1, .1)}/{pct(w1, .5)}/{pct(w1, .9)} | {pct(dt, .5)}")


def fit_tail(lat):
    """The clean chase's latencies as a body (the loads below 800 cycles)
    plus, for a fraction F of the loads, the body delayed by a wait spread
    evenly over [0, R): least squares over 10-cycle bins, R in 10-cycle
    steps, F in steps of 0.005. A bank that is refreshed for R out of
    every R / F gives a lone load that shape."""
    B, lo, nb = 10, 400, 130
    h = [0.0] * nb
    for x in lat:
        i = (x - lo) // B
        if 0 <= i < nb:
            h[i] += 1 / len(lat)
    ci = (800 - lo) // B
    body = [h[i] if i < ci else 0.0 for i in range(nb)]
    bs = sum(body)
    best = None
    for R in range(300, 800, 10):
        m = R // B
        sm = [0.0] * nb
        for i, b in enumerate(body):
            for j in range(i, min(nb, i + m)):
                sm[j] += b / m
        ss = sum(sm)
        for Fi in range(10, 50):
            F = Fi / 200
            e = sum(((1 - F) * body[i] / bs + F * sm[i] / ss - h[i]) ** 2 for i in range(nb))
            if best is None or e < best[0]:
                best = (e, R, F)
    return best[1], best[2]


ch = os.path.join(d, "clean.csv")
if os.path.exists(ch):
    with open(ch) as f:
        lat = [int(r["latency_cycles"]) for r in csv.DictReader(f)]
    near = [x for x in lat if x < 620]
    far = [x for x in lat if 620 <= x < 800]
    print(f"clean chase modes: below 620 cycles {len(near) / len(lat) * 100:.1f}% (median {statistics.median(near)}), "
          f"620-800 {len(far) / len(lat) * 100:.1f}% (median {statistics.median(far)}), "
          f"800 and more {(len(lat) - len(near) - len(far)) / len(lat) * 100:.1f}%")
    R, F = fit_tail(lat)
    print(f"tail fit: a fraction F = {F:.3f} of the loads waits U[0, R), R = {R} cycles "
          f"({R / 1.98:.0f} ns at 1980 MHz); R / F = {R / 1.98 / F:.0f} ns")

ld = os.path.join(d, "loaded.csv")
if os.path.exists(ld):
    cases = {}
    with open(ld) as f:
        for r in csv.DictReader(f):
            c = cases.setdefault(int(r["streaming_blocks"]), (float(r["stream_gbps"]), []))
            c[1].append(int(r["latency_cycles"]))
    print("loaded: streaming blocks, their GB/s, the chase's latency p10/p50/p90/p99 and mean (cycles)")
    for b, (gbps, lat) in sorted(cases.items()):
        print(f"  {b:4} {gbps:7.0f} GB/s: {pct(lat, .1)}/{pct(lat, .5)}/{pct(lat, .9)}/{pct(lat, .99)} "
              f"mean {statistics.mean(lat):.0f}")
