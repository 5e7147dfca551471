//! Golden data from a real H200 (tests/data/h200, measured with Nsight Compute).

use super::*;

pub struct Row {
    pub experiment: String,
    pub elem: i64,
    pub param: i64,
    pub cols: Vec<(String, f64)>,
}

impl Row {
    pub fn get(&self, name: &str) -> f64 {
        self.cols
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("column {name}"))
    }
}

pub fn read_csv(path: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(repo(path)).expect("reference data");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                experiment: f[0].to_string(),
                elem: f[1].parse().expect("elem"),
                param: f[3].parse().expect("param"),
                cols: head
                    .iter()
                    .zip(&f)
                    .skip(4)
                    .map(|(h, v)| (h.to_string(), v.parse().expect("number")))
                    .collect(),
            }
        })
        .collect()
}

type Sim = Vec<(String, i64, i64, PointResult)>;

/// The simulated H200 results at 4 MiB for both experiments, keyed like the
/// reference (simulated once per test binary).
pub fn simulate_h200_4mib() -> &'static Sim {
    static SIM: std::sync::OnceLock<Sim> = std::sync::OnceLock::new();
    SIM.get_or_init(simulate)
}

fn simulate() -> Sim {
    let dev = device("h200");
    let mut out = Vec::new();
    for exp in ["offset", "stride"] {
        let wl = workload(exp);
        for r in run(&dev, &wl, &[("nMB", &[4]), ("elem", &[4, 8])]) {
            let p = r.param(exp).expect("swept parameter");
            out.push((exp.to_string(), r.param("elem").unwrap(), p, r));
        }
    }
    out
}

const EXACT: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];

#[test]
fn h200_requests_and_sectors_equal_nsight_compute_on_all_130_points() {
    let reference = read_csv("tests/data/h200/ncu.csv");
    assert_eq!(reference.len(), 130);
    let sim = simulate_h200_4mib();
    let mut checked = 0;
    for row in &reference {
        let (_, _, _, r) = sim
            .iter()
            .find(|(e, el, p, _)| *e == row.experiment && *el == row.elem && *p == row.param)
            .unwrap_or_else(|| {
                panic!(
                    "{} elem {} param {} not simulated",
                    row.experiment, row.elem, row.param
                )
            });
        let c = &r.counters;
        let got = [c.requests_ld, c.sectors_ld, c.requests_st, c.sectors_st];
        for (name, g) in EXACT.iter().zip(got) {
            assert_eq!(
                g as f64,
                row.get(name),
                "{name} at {} elem {} param {}",
                row.experiment,
                row.elem,
                row.param
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 130);
}

fn rel(sim: f64, reference: f64) -> f64 {
    (sim - reference) / reference
}

/// Traffic and time of the 130 cold 4 MiB points against one Nsight Compute
/// launch each. Targets: L2 read sectors within 2%, DRAM bytes read within
/// 10%, time within 15% on 90% of the points (117), and the float offset curve (bound by block launch
/// and load latency rather than DRAM) within 15% on every point. The
/// points that miss are DEVIATIONS.md 3.
#[test]
fn h200_traffic_and_time_against_nsight_compute() {
    let reference = read_csv("tests/data/h200/ncu.csv");
    let sim = simulate_h200_4mib();
    let (mut time_ok, mut worst_l2, mut worst_dram) = (0, 0.0f64, 0.0f64);
    let mut slowest = (f64::MIN, String::new());
    let mut too_slow = Vec::new();
    let mut offset_float_missed = Vec::new();
    for row in &reference {
        let (_, _, _, r) = sim
            .iter()
            .find(|(e, el, p, _)| *e == row.experiment && *el == row.elem && *p == row.param)
            .expect("simulated");
        let c = &r.counters;
        let l2 = rel(
            c.l2_read_sectors as f64,
            row.get("lts__t_sectors_srcunit_tex_op_read.sum"),
        );
        let dram = rel(c.dram_bytes_read as f64, row.get("dram__bytes_read.sum"));
        let time = rel(r.time_ns(), row.get("gpu__time_duration.sum"));
        worst_l2 = worst_l2.max(l2.abs());
        worst_dram = worst_dram.max(dram.abs());
        let name = format!("{} elem {} param {}", row.experiment, row.elem, row.param);
        if time.abs() <= 0.15 {
            time_ok += 1;
        } else if row.experiment == "offset" && row.elem == 4 {
            offset_float_missed.push(format!("{name}: {:+.1}%", time * 100.0));
        }
        if time > 0.15 {
            too_slow.push((row.experiment.clone(), row.elem, row.param));
        }
        if time > slowest.0 {
            slowest = (time, name);
        }
    }
    eprintln!(
        "H200 4 MiB: time within 15% on {time_ok}/130 (slowest {} at {:+.1}%); worst L2 read \
         {:.2}%, DRAM read {:.2}%",
        slowest.1,
        slowest.0 * 100.0,
        worst_l2 * 100.0,
        worst_dram * 100.0
    );
    assert!(
        worst_l2 <= 0.02,
        "L2 read sectors within 2%: worst {worst_l2:.4}"
    );
    assert!(
        worst_dram <= 0.10,
        "DRAM bytes read within 10%: worst {worst_dram:.4}"
    );
    assert!(
        offset_float_missed.is_empty(),
        "offset float within 15% everywhere: {offset_float_missed:?}"
    );
    // The target is 90% of the points (117). It was met from the time a
    // store waited in its SM until the L2 accepted it (DEVIATIONS.md 25) to
    // 2026-11-27, while warps that could go at one time went in the order of
    // their slots; with the oldest first (DEVIATIONS.md 34) 112; since an
    // SM's store path and a slice's write path take a store for its
    // sectors, command and byte mask as the H200 does (DEVIATIONS.md 35),
    // 121; since a DRAM bank's queue holds only the requests that have
    // arrived (DEVIATIONS.md 36), 119; since the L1's 8 ways and hashed
    // sets (DEVIATIONS.md 32, 2026-11-29), 122. The eight misses, all fast:
    // double offset 20, float strides 29 and 31 and double strides 21-24
    // and 26 (-15.5% to -20.5%), where the L2's write-backs and an SM's
    // misses cost the reads less than on the H200 (DEVIATIONS.md 27, 28,
    // 29), what holds the H200's block slots at large strides is not
    // modelled (DEVIATIONS.md 34) and neither are the lines its L2 loses
    // before their stores (DEVIATIONS.md 36).
    assert!(
        time_ok >= 117,
        "time within 15%: {time_ok} of 130, fewer than the target of 117 (DEVIATIONS.md 3 \
         lists the misses; too slow: {too_slow:?})"
    );
}

/// One DRAM-bound point at 256 MiB (a full curve takes minutes; the closing
/// figures of all four curves are measured with the CLI, see DEVIATIONS.md).
#[test]
fn h200_256mib_double_offset_bandwidth_within_10_percent() {
    let rows = std::fs::read_to_string(repo("tests/data/h200/timing.csv")).unwrap();
    let ms: f64 = rows
        .lines()
        .find(|l| l.starts_with("offset,8,256,0,"))
        .and_then(|l| l.split(',').nth(5))
        .and_then(|v| v.parse().ok())
        .expect("reference point");
    let r = &run(
        &device("h200"),
        &workload("offset"),
        &[("nMB", &[256]), ("elem", &[8]), ("offset", &[0])],
    )[0];
    let measured_gbps = r.bytes as f64 / (ms * 1e6);
    let err = (r.bandwidth_gbps() - measured_gbps) / measured_gbps;
    eprintln!(
        "H200 256 MiB double offset 0: {:.0} GB/s simulated, {measured_gbps:.0} measured ({:+.1}%)",
        r.bandwidth_gbps(),
        err * 100.0
    );
    assert!(err.abs() <= 0.10, "{err:+.3}");
}

/// The 10th, 50th, 90th and 99th percentile latencies of a point's first
/// load site against the row of `text` (a tools/measure/latspread CSV)
/// that starts with `key`, whose percentiles are its columns 8 to 11: each
/// within `bound` (a fraction).
fn assert_percentiles(text: &str, key: &str, r: &PointResult, bound: f64) {
    assert_some_percentiles(text, key, r, bound, &[0, 1, 2, 3]);
}

/// [`assert_percentiles`] for the percentiles numbered `which` (0: p10,
/// 1: p50, 2: p90, 3: p99) alone.
fn assert_some_percentiles(text: &str, key: &str, r: &PointResult, bound: f64, which: &[usize]) {
    let c: Vec<f64> = text
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no measured row {key}"))
        .split(',')
        .skip(7)
        .map(|x| x.parse().unwrap())
        .collect();
    let sim = r.load_sites[0].latency_percentiles_cycles;
    for (i, q) in ["p10", "p50", "p90", "p99"].iter().enumerate() {
        if !which.contains(&i) {
            continue;
        }
        let err = (sim[i] - c[i]) / c[i];
        eprintln!(
            "{key} {q}: {:.0} cycles simulated, {:.0} measured ({:+.1}%)",
            sim[i],
            c[i],
            err * 100.0
        );
        assert!(err.abs() <= bound, "{key} {q}: {err:+.3}");
    }
}

/// The value of parameter `name` at point `r`.
fn param(r: &PointResult, name: &str) -> i64 {
    r.point.iter().find(|(x, _)| x == name).unwrap().1
}

/// Runs `workloads/latmix.ron` at 256 MiB on the H200 for every `elem` and
/// `v` given and compares each point's percentiles `which` with the row
/// `mix,ELEM,V,` of the tools/measure/latspread CSV at `csv`, each within
/// `bound(v)`.
fn assert_latmix_percentiles(
    csv: &str,
    elems: &[i64],
    vs: &[i64],
    bound: impl Fn(i64) -> f64,
    which: &[usize],
) {
    let text = std::fs::read_to_string(repo(csv)).unwrap();
    let sims = run(
        &device("h200"),
        &workload("latmix"),
        &[("nMB", &[256]), ("elem", elems), ("v", vs)],
    );
    assert_eq!(sims.len(), elems.len() * vs.len());
    for r in &sims {
        let (elem, v) = (param(r, "elem"), param(r, "v"));
        assert_some_percentiles(&text, &format!("mix,{elem},{v},"), r, bound(v), which);
    }
}

/// The latencies of a load in a read-only DRAM-bound kernel (the load of
/// seed 002's offset kernel alone, 256 MiB, float and double) against the
/// H200's (tools/measure/latspread: clock64 around each warp's load): the
/// 10th, 50th, 90th and 99th percentiles each within 15%. With stores
/// beside the loads the H200's spread widens and gpusim's does not
/// (DEVIATIONS.md 23, the next test).
#[test]
fn h200_read_only_load_latency_percentiles_within_15_percent() {
    let text =
        std::fs::read_to_string(repo("tools/measure/latspread/results/latspread.csv")).unwrap();
    let sims = run(
        &device("h200"),
        &workload("misalign"),
        &[
            ("nMB", &[256]),
            ("elem", &[4, 8]),
            ("mode", &[1]),
            ("k", &[0]),
        ],
    );
    assert_eq!(sims.len(), 2);
    for r in &sims {
        let elem = param(r, "elem");
        assert_percentiles(&text, &format!("ro,{elem},0,"), r, 0.15);
    }
}

/// The latencies of loads beside stores (tools/measure/latspread `mix`,
/// `workloads/latmix.ron`: even blocks load a 256 MiB stream, odd blocks
/// store nothing, store as much into DRAM, or store into 8 MiB the L2
/// keeps), double (the float kernels are bound by their blocks' launch;
/// tools/measure/latspread/README.md has them): without stores and with
/// stores the L2 keeps,
/// each percentile within 15% of the H200's; with stores that reach the
/// DRAM, the H200's spread widens more than gpusim's (its p99 by 1,092
/// cycles at double, gpusim's by 368), a named gap (DEVIATIONS.md 23)
/// asserted at 30%.
#[test]
fn h200_load_latency_beside_stores() {
    assert_latmix_percentiles(
        "tools/measure/latspread/results/mix/mix.csv",
        &[8],
        &[0, 1, 2],
        |v| if v == 1 { 0.30 } else { 0.15 },
        &[0, 1, 2, 3],
    );
}

/// The latencies of loads beside the same stores moved (tools/measure/
/// latspread `shift`, `workloads/latmix.ron` v = 9: half the buffer away;
/// v = 10: each warp's run to a scattered run): on the H200 they widen as
/// much as beside the stores at the loads' own positions (double p10 /
/// p50 / p90: 712 / 1,073 / 1,590 and 750 / 1,122 / 1,653 cycles against
/// 737 / 1,102 / 1,619), and in gpusim too (604 / 908 / 1,324 and 612 /
/// 948 / 1,364 against 636 / 940 / 1,348), so the widening is the
/// writes' share of the DRAM's time, not where they land beside the reads.
/// p10 to p90 within the 30% of entry 23's gap (DEVIATIONS.md 23); the
/// p99 is not compared (the H200's 2,551-3,085, gpusim's 1,748-1,780).
#[test]
fn h200_load_latency_beside_moved_stores_widens_alike() {
    assert_latmix_percentiles(
        "tools/measure/latspread/results/shift/shift.csv",
        &[8],
        &[9, 10],
        |_| 0.30,
        &[0, 1, 2],
    );
}

/// The latencies of loads the L2 serves (tools/measure/latspread `hits`,
/// `workloads/latmix.ron` v = 3 and 5: even blocks load 8 MiB over and over,
/// odd blocks store a 256 MiB stream to DRAM or load one): the traffic to
/// and from DRAM widens the L2 hits' latencies on the H200 (p90 570-608
/// cycles against 393-399 without it) as in gpusim, each p90 within 15%.
/// Their p10 and p50 are 15-22% short of the H200's (a loaded L2 hit
/// takes 50-90 cycles more there than its unloaded 281; DEVIATIONS.md
/// 23), and the p99 is not compared: gpusim's L2 starts cold, so its
/// first pass over the 8 MiB (3% of the loads) misses, where the H200's
/// warm launches hit.
#[test]
fn h200_l2_hits_beside_dram_traffic_spread_as_the_h200s() {
    assert_latmix_percentiles(
        "tools/measure/latspread/results/hits/hits.csv",
        &[4, 8],
        &[3, 5],
        |_| 0.15,
        &[2],
    );
}

/// How widely the latencies of a load under load spread at 256 MiB
/// (the 10th to the 90th percentile, SM cycles), against the H200's
/// (tools/measure/loadlat, run 2): gpusim's spread is narrower, 0.39-0.74
/// of the H200's on these points, a named gap (DEVIATIONS.md 23): asserted
/// at no less than 0.35 of it and no more than 1.15 times it.
#[test]
fn h200_loaded_load_latency_spread_is_entry_23s_gap() {
    let text = std::fs::read_to_string(repo("tools/measure/loadlat/results/loadlat.csv")).unwrap();
    let measured = |kernel: &str, elem: i64, k: i64| -> (f64, f64) {
        let l = text
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|c| c[0] == kernel && c[1] == elem.to_string() && c[3] == k.to_string())
            .expect("measured");
        (l[8].parse().unwrap(), l[10].parse().unwrap())
    };
    let dev = device("h200");
    let mut sims = run(
        &dev,
        &workload("offset"),
        &[("nMB", &[256]), ("elem", &[4, 8]), ("offset", &[0])],
    );
    sims.extend(run(
        &dev,
        &workload("stride"),
        &[("nMB", &[256]), ("elem", &[4]), ("stride", &[2])],
    ));
    for r in &sims {
        let p = |n: &str| param(r, n);
        let (kernel, k) = match r.workload.as_str() {
            "offset" => ("offset", p("offset")),
            _ => ("stride", p("stride")),
        };
        let (p10, p90) = measured(kernel, p("elem"), k);
        let site = &r.load_sites[0];
        let [s10, s50, s90, s99] = site.latency_percentiles_cycles;
        assert!(s10 <= s50 && s50 <= s90 && s90 <= s99, "{site:?}");
        let ratio = (s90 - s10) / (p90 - p10);
        eprintln!(
            "{kernel} elem={} k={k}: p10-p90 {s10:.0}-{s90:.0} simulated, {p10:.0}-{p90:.0} measured (width {ratio:.2} of the H200's)",
            p("elem")
        );
        assert!((0.35..=1.15).contains(&ratio), "{kernel} {k}: {ratio:.2}");
    }
}

/// The mean latency of a load under load (issue to data, SM cycles) at 256
/// MiB against the H200's (tools/measure/loadlat: clock64 around each
/// warp's load, the mean of two runs), where the accesses are 1 to 16 bytes
/// apart: within 15% but for the float offset 16 and the float offset 0,
/// named gaps, and the two heaviest loads, within 17% (DEVIATIONS.md 25).
/// Wider strides are DEVIATIONS.md 23.
#[test]
fn h200_loaded_load_latency_within_15_percent() {
    let mut measured: Vec<((String, i64, i64), f64)> = Vec::new();
    for f in ["loadlat_run1.csv", "loadlat.csv"] {
        let text =
            std::fs::read_to_string(repo(&format!("tools/measure/loadlat/results/{f}"))).unwrap();
        for l in text.lines().skip(1) {
            let c: Vec<&str> = l.split(',').collect();
            let key = (
                c[0].to_string(),
                c[1].parse().unwrap(),
                c[3].parse().unwrap(),
            );
            let v: f64 = c[7].parse().unwrap();
            match measured.iter_mut().find(|(k, _)| *k == key) {
                Some((_, m)) => *m = (*m + v) / 2.0,
                None => measured.push((key, v)),
            }
        }
    }
    let dev = device("h200");
    let mut sims = run(
        &dev,
        &workload("offset"),
        &[("nMB", &[256]), ("elem", &[4, 8]), ("offset", &[0, 16])],
    );
    sims.extend(run(
        &dev,
        &workload("stride"),
        &[("nMB", &[256]), ("elem", &[4]), ("stride", &[2, 4])],
    ));
    sims.extend(run(
        &dev,
        &workload("stride"),
        &[("nMB", &[256]), ("elem", &[8]), ("stride", &[2])],
    ));
    assert_eq!(sims.len(), 7);
    let (mut gap, mut light) = (None, None);
    let mut errs = Vec::new();
    for r in &sims {
        let p = |n: &str| param(r, n);
        let (kernel, k) = match r.workload.as_str() {
            "offset" => ("offset", p("offset")),
            _ => ("stride", p("stride")),
        };
        let key = (kernel.to_string(), p("elem"), k);
        let m = measured
            .iter()
            .find(|(x, _)| *x == key)
            .expect("measured")
            .1;
        let sim = r.bottlenecks.load_latency_cycles;
        let err = (sim - m) / m;
        eprintln!(
            "{key:?}: {sim:.0} cycles simulated, {m:.0} measured ({:+.1}%)",
            err * 100.0
        );
        if key == ("offset".to_string(), 4, 16) {
            gap = Some(err);
        } else if key == ("offset".to_string(), 4, 0) {
            light = Some(err);
        } else {
            errs.push((key, err));
        }
    }
    for (key, err) in errs {
        // DEVIATIONS.md 25: at the heaviest loads (stride 4 float, stride 2
        // double: the DRAM's rows opened as fast as the model lets them)
        // gpusim's reads wait up to 16% long: the H200 opens rows for reads
        // faster than `t_faw_ns` allows
        // (`tools/measure/busy/results/piece.csv`, loads).
        let bound = if key.0 == "stride" && key.1 * key.2 == 16 {
            0.17
        } else {
            0.15
        };
        assert!(err.abs() <= bound, "{key:?}: {err:+.3}");
    }
    // DEVIATIONS.md 23: a warp of the float offset kernel whose 128 bytes
    // straddle two lines waits 15% longer on the H200 than one that reads
    // one line; in gpusim 1% longer. The test fails when that closes.
    // DEVIATIONS.md 24: at the lightest load of the seven (the float
    // offset, its DRAM 55% busy) the H200's loads wait 83 cycles more than
    // a lone load even at the 10th percentile, gpusim's 16: the latency
    // that moderate load adds is short by about 150 cycles. The test fails
    // when that closes.
    let light = light.expect("offset float 0 simulated");
    assert!(
        light < -0.15,
        "offset float 0 is within 15% ({light:+.3}): close the gap in DEVIATIONS.md 24"
    );
    let gap = gap.expect("offset float 16 simulated");
    assert!(
        gap < -0.15,
        "offset float 16 is within 15% ({gap:+.3}): close the gap in DEVIATIONS.md 23"
    );
}

/// The unloaded latency of a DRAM load: a chase through 1 GiB, one load at
/// a time, against the H200's (`tools/measure/dlat`, `clean.csv`). The
/// measured mean holds lines of both L2 homes and the loads that wait for a
/// bank's refresh; the model must not count those twice (DEVIATIONS.md 24).
/// The tolerance: the config's `dram_latency_cycles` (684) is an earlier
/// chase's mean, 0.7% above this one's, and 4,096 random loads split over
/// the homes and the refresh windows by chance (about 1% either way).
/// The loads are timed one after the other, as the hardware runs them.
#[test]
fn h200_unloaded_chase_latency_is_the_measured_mean() {
    let text = std::fs::read_to_string(repo("tools/measure/dlat/results/clean.csv")).unwrap();
    let lat: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    let measured = lat.iter().sum::<f64>() / lat.len() as f64;
    let r = run(&device("h200"), &workload("chase"), &[("steps", &[4096])]);
    let sim = r[0].bottlenecks.load_latency_cycles;
    let err = (sim - measured) / measured;
    eprintln!(
        "chase: {sim:.1} cycles simulated, {measured:.1} measured ({:+.1}%)",
        err * 100.0
    );
    assert!(err.abs() <= 0.03, "{err:+.3}");
    // Each load's address is the last one's value, so none starts before
    // the last has arrived: the kernel takes at least the steps' latencies
    // end to end (4,096 x 679 cycles at 1,980 MHz, 1.40 ms).
    let chain_ns = 4096.0 * sim / 1.98;
    assert!(
        r[0].time_ns() >= chain_ns,
        "the chase ran in {:.0} ns, less than its {chain_ns:.0} ns of dependent loads",
        r[0].time_ns()
    );
}

/// Partly written lines against `./busy piece` on the H200
/// (`tools/measure/busy/results/piece.csv`, `workloads/pieces.ron`, 8 Mi
/// sectors written 4 bytes each): one line per 256-byte piece costs its
/// fill and its write-back a row opening each (451 us); two lines of a
/// piece, 128 B apart, three openings (327 us), since each line's
/// write-back closes its row (`close_after_write`, DEVIATIONS.md 25). Both
/// within 15%. Whole 32-byte sectors in two lines of a piece are the case
/// that rule gets wrong (H200 162 us): the test fails when that closes.
#[test]
fn h200_partly_written_lines_cost_the_measured_row_openings() {
    let dev = device("h200");
    let wl = workload("pieces");
    let time_us = |op: i64, sp: i64, gap: i64| {
        let r = run(&dev, &wl, &[("op", &[op]), ("sp", &[sp]), ("gap", &[gap])]);
        r[0].time_ns() / 1000.0
    };
    for (op, sp, gap, measured) in [(0, 1, 32, 451.4), (0, 2, 128, 327.2)] {
        let t = time_us(op, sp, gap);
        let err = (t - measured) / measured;
        eprintln!(
            "pieces op {op} sp {sp} gap {gap}: {t:.1} us, H200 {measured} us ({:+.1}%)",
            err * 100.0
        );
        assert!(err.abs() <= 0.15, "op {op} sp {sp} gap {gap}: {err:+.3}");
    }
    let t = time_us(1, 2, 128);
    let err = (t - 161.6) / 161.6;
    eprintln!(
        "pieces op 1 sp 2 gap 128: {t:.1} us, H200 161.6 us ({:+.1}%)",
        err * 100.0
    );
    assert!(
        err > 0.15,
        "whole sectors in two lines of a piece within 15% ({err:+.3}): close the gap in DEVIATIONS.md 25"
    );
}

/// An L2-resident copy on the H200 (`tools/measure/busy/results/split.csv`:
/// 8 MiB read, 4 MiB written, 32 warps per SM, u = 4) moves 7.8 TB/s,
/// reads and writes together: more than one port per slice shared by the
/// reads and the writes could carry at the measured read and write rates
/// (one 128-byte line read and one written per 2.7 + 5.3 cycles: 6.1 TB/s).
/// The H200's slices write through a path of their own
/// (`l2.slice_write_bytes_per_cycle`), and the copy comes within 15%.
#[test]
fn h200_l2_resident_copy_reads_and_writes_at_once() {
    let r = run(
        &device("h200"),
        &workload("stream_loop"),
        &[
            ("op", &[1]),
            ("smb", &[8]),
            ("dmb", &[4]),
            ("blocks", &[132]),
            ("u", &[4]),
        ],
    );
    let gbps = r[0].bandwidth_gbps();
    let measured = 7794.3;
    let err = (gbps - measured) / measured;
    eprintln!(
        "copy 8 MiB -> 4 MiB: {gbps:.0} GB/s, H200 {measured} ({:+.1}%)",
        err * 100.0
    );
    assert!(
        gbps > 6100.0,
        "{gbps:.0} GB/s: no more than one port allows"
    );
    assert!(err.abs() <= 0.15, "{err:+.3}");
}

/// tools/measure/sides: L2-resident loads (8 MiB) from 66 SMs beside 4
/// writer warps on each of the other 66. With the writers' destination
/// resident the loads wait what an unloaded L2 hit waits, and gpusim
/// meets that within 15%; with it 1 GiB, the H200's L2 writes the lines
/// back to DRAM and its loads wait 666 cycles where gpusim's wait for
/// nothing a write-back holds: DEVIATIONS.md 27, asserted as the gap
/// (more than 15% fast) so that it fails the day the mechanism is in.
/// (`hitmiss`, DEVIATIONS.md 29: most of that wait is the readers' own
/// SMs' misses, the stores having evicted part of the source.)
#[test]
fn h200_l2_hits_do_not_yet_wait_for_other_sms_write_backs() {
    let measured = |d_mib: &str| {
        sides_latency(
            "sides.csv",
            &[
                ("sep", "1"),
                ("copy", "0"),
                ("read_warps", "16"),
                ("write_warps", "4"),
                ("s_mib", "8"),
                ("d_mib", d_mib),
            ],
            "latency_cycles",
        )
    };
    let r = run(
        &device("h200"),
        &workload("sides"),
        &[
            ("sep", &[1]),
            ("ww", &[4]),
            ("dmb", &[4, 1024]),
            ("iters", &[1024]),
            ("witers", &[4096]),
        ],
    );
    let (resident, written_back) = (measured("4"), measured("1024"));
    let sim: Vec<f64> = r
        .iter()
        .map(|p| p.bottlenecks.load_latency_cycles)
        .collect();
    eprintln!(
        "L2 hits beside other SMs' stores: into the L2 {:.0} cycles (H200 {resident:.0}), \
         written back {:.0} (H200 {written_back:.0})",
        sim[0], sim[1]
    );
    assert!(
        (sim[0] / resident - 1.0).abs() <= 0.15,
        "beside stores into the L2: {:.0} against {resident:.0}",
        sim[0]
    );
    assert!(
        r[1].counters.dram_bytes_write > 0,
        "the L2 writes back during the kernel"
    );
    assert!(
        sim[1] < 0.85 * written_back,
        "beside write-backs: {:.0} against {written_back:.0}; the gap of DEVIATIONS.md 27 \
         has closed: update it",
        sim[1]
    );
}

/// The mean latency of each case of a measurement CSV of
/// `tools/measure/sides` (three launches), by the columns that select it.
fn sides_latency(file: &str, select: &[(&str, &str)], column: &str) -> f64 {
    let text =
        std::fs::read_to_string(repo(&format!("tools/measure/sides/results/{file}"))).unwrap();
    let mut rows = csv_rows(&text);
    let head = rows.remove(0);
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let lat: Vec<f64> = rows
        .iter()
        .filter(|f| select.iter().all(|&(c, v)| f[col(c)] == v))
        .map(|f| f[col(column)].parse().unwrap())
        .collect();
    assert_eq!(lat.len(), 3, "three launches of {select:?}");
    lat.iter().sum::<f64>() / 3.0
}

/// Splits CSV text into rows of fields (fields may be double-quoted).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| {
            let mut out = vec![String::new()];
            let mut quoted = false;
            for ch in l.chars() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => out.push(String::new()),
                    c => out.last_mut().unwrap().push(c),
                }
            }
            out
        })
        .collect()
}

/// The mean latency of the load at the lowest pc (the first in program
/// order) and of the one at the highest.
fn first_and_last_load(p: &PointResult) -> (f64, f64) {
    let first = p.load_sites.iter().min_by_key(|s| s.pc).unwrap();
    let last = p.load_sites.iter().max_by_key(|s| s.pc).unwrap();
    (first.latency_cycles, last.latency_cycles)
}

/// tools/measure/sides `hitmiss`: L2-resident loads (16 warps on each of
/// 66 SMs, one load in flight each) beside 4 loader warps on each of the
/// other 66 SMs, which read 1 GiB from DRAM. With a 2 MiB source every
/// load of the readers hits and they wait 389 cycles on the H200; with
/// 8 MiB, 10-15% of the source misses the L2 and they wait 550, most of
/// them as long as a DRAM read. gpusim's readers wait for their SM's
/// misses only where one was sent just before them (`reply_order:
/// AfterPrevious`), and fewer of its source lines miss: DEVIATIONS.md 29,
/// asserted as the gap (the 8 MiB readers more than 15% fast). The 2 MiB readers are low by the
/// gap of DEVIATIONS.md 27 (an L2 hit under light load waits longer on
/// the H200: 21% in `tools/measure/busy` split), asserted at most 25%.
#[test]
fn h200_l2_hits_beside_misses_of_their_own_sms_and_of_others() {
    let measured = |s: &str| {
        sides_latency(
            "hitmiss.csv",
            &[("s_mib", s), ("other_warps", "4"), ("other_op", "load")],
            "latency_cycles",
        )
    };
    let r = run(
        &device("h200"),
        &workload("sides"),
        &[
            ("sep", &[1]),
            ("op", &[1]),
            ("ww", &[4]),
            ("smb", &[2, 8]),
            ("dmb", &[1024]),
            ("iters", &[1024]),
            ("witers", &[4096]),
        ],
    );
    // The readers' load comes first in the program.
    let readers: Vec<f64> = r.iter().map(|p| first_and_last_load(p).0).collect();
    let (hits, mixed) = (measured("2"), measured("8"));
    eprintln!(
        "L2 hits beside other SMs' DRAM loads: 2 MiB source {:.0} cycles (H200 {hits:.0}), \
         8 MiB {:.0} (H200 {mixed:.0})",
        readers[0], readers[1]
    );
    let err = readers[0] / hits - 1.0;
    assert!(
        (-0.25..=0.15).contains(&err),
        "2 MiB: {:.0} against {hits:.0} ({err:+.3}): DEVIATIONS.md 27",
        readers[0]
    );
    assert!(
        readers[1] < 0.85 * mixed,
        "8 MiB: {:.0} against {mixed:.0}: the gap of DEVIATIONS.md 29 has closed: update it",
        readers[1]
    );
}

/// tools/measure/sides `mixed`: on every SM, warps that load an L2-resident
/// 2 MiB source beside warps of the same SM that load a 1 GiB stream from
/// DRAM, on the same or other warp schedulers. The H200's hits wait 346
/// cycles alone and 366-594 beside their SM's misses (more the more miss
/// warps there are per hit warp); its misses wait 719-738 cycles whatever
/// is beside them. gpusim (`interconnect.reply_order: AfterPrevious`, a
/// reply does not overtake the one sent just before it): misses within
/// 15% everywhere; hits within 15% where hits and misses are on other
/// schedulers, and over by more than 15% where they share schedulers (the
/// gap of DEVIATIONS.md 29, asserted so that it fails when it closes);
/// alone, hits are low by the light-load gap of DEVIATIONS.md 27, at most
/// 25%.
#[test]
fn h200_l2_hits_wait_for_their_sms_misses() {
    // (hits, misses) masks as mixed.cu writes them and as integers, and
    // whether they share warp schedulers.
    let cases: [(&str, &str, i64, i64, bool); 5] = [
        ("0000eeee", "00000000", 0xEEEE, 0, false),
        ("00001111", "11110000", 0x1111, 0x1111_0000, true),
        ("0000eeee", "eeee0000", 0xEEEE, 0xEEEE_0000, true),
        ("0000eeee", "11110000", 0xEEEE, 0x1111_0000, false),
        ("00001111", "eeee0000", 0x1111, 0xEEEE_0000, false),
    ];
    let dev = device("h200");
    for (k, &(hm, mm, h, m, shared)) in cases.iter().enumerate() {
        let sel = [("hit_warps", hm), ("miss_warps", mm)];
        let hit = sides_latency("mixed.csv", &sel, "hit_latency_cycles");
        let r = run(
            &dev,
            &workload("mixed"),
            &[("hits", &[h]), ("misses", &[m]), ("iters", &[1024])],
        );
        let (sim_hit, sim_miss) = first_and_last_load(&r[0]);
        let err = sim_hit / hit - 1.0;
        if k == 0 {
            eprintln!("hits alone: {sim_hit:.0} cycles (H200 {hit:.0}, {err:+.3})");
            assert!((-0.25..=0.15).contains(&err), "DEVIATIONS.md 27: {err:+.3}");
            continue;
        }
        let miss = sides_latency("mixed.csv", &sel, "miss_latency_cycles");
        eprintln!(
            "hits {hm} misses {mm}: hits {sim_hit:.0} cycles (H200 {hit:.0}, {err:+.3}), \
             misses {sim_miss:.0} (H200 {miss:.0})"
        );
        assert!(
            (sim_miss / miss - 1.0).abs() <= 0.15,
            "misses: {sim_miss:.0} against {miss:.0}"
        );
        if shared {
            assert!(
                err > 0.15,
                "hits sharing schedulers with misses: {err:+.3}: the gap of DEVIATIONS.md 29 \
                 has closed: update it"
            );
        } else {
            assert!(err.abs() <= 0.15, "hits beside misses: {err:+.3}");
        }
    }
}

/// The blocks an SM holds, against the H200's own answer
/// (`cudaOccupancyMaxActiveBlocksPerMultiprocessor`,
/// tools/measure/occupancy/results/occ.csv): 592 combinations of the
/// registers the compiler gave 20 kernels (8 to 94 a thread), blocks of
/// 32 to 1024 threads and dynamic shared memory of 0 to 227 KiB, every one
/// exact (5 of them fit no block, which gpusim refuses). The register file
/// is handed out per warp in units of 256 registers and the warps it holds
/// counted in fours
/// (`sm.register_allocation`); counting registers one by one, as gpusim
/// did before, gave 36 of them more blocks than the H200 holds (35
/// registers at 256 threads: 7 where it holds 6; at 64 threads, 29 where
/// it holds 24).
#[test]
fn h200_blocks_per_sm_are_the_drivers() {
    let dev = device("h200");
    let wl = workload("occupancy");
    let text = std::fs::read_to_string(repo("tools/measure/occupancy/results/occ.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (regs, block, smem, want) = (col("regs"), col("block"), col("smem"), col("blocks_per_sm"));
    let mut checked = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f[i].parse::<i64>().unwrap();
        let point: engine::Point = vec![
            ("nMB".into(), 1),
            ("block".into(), num(block)),
            ("regs".into(), num(regs)),
            ("smem".into(), num(smem)),
        ];
        let inst = wl.workload.instantiate(&point).unwrap();
        // (A block that does not fit is an error, where the driver says 0.)
        let got = engine::Simulation::new(&dev, &inst.program, inst.regs_per_thread)
            .blocks_per_sm()
            .map_or(0, |n| n as i64);
        assert_eq!(got, num(want), "{line}");
        checked += 1;
    }
    assert_eq!(checked, 592);
}

/// The value of column `col` in the row of family `fam` with parameters
/// `params` of a corpus CSV (tests/data/h200/corpus).
fn corpus_value(path: &str, fam: &str, params: &str, col: &str) -> f64 {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let k = head
        .iter()
        .position(|h| *h == col)
        .unwrap_or_else(|| panic!("column {col}"));
    let row = lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[0] == fam && f[1] == params)
        .unwrap_or_else(|| panic!("no row {fam} {params}"));
    row[k].parse().unwrap()
}

/// A tree reduction whose conditional body nvcc predicates
/// (tools/measure/kernels, `workloads/reduce.ron`): every warp issues the
/// body's shared loads and store on every trip, with no thread active in
/// most, and the H200 counts them all (129 loads and 72 stores a block);
/// gpusim's counts are the H200's exactly. (Its wavefronts carry entry 18's
/// extras, and its time entry 33's gap: DEVIATIONS.md.)
#[test]
fn h200_reduce_counts_its_predicated_shared_instructions() {
    let csv = "tests/data/h200/corpus/kernels.csv";
    for r in run(&device("h200"), &workload("reduce"), &[("nMB", &[4, 16])]) {
        let params = format!("nMB={}", param(&r, "nMB"));
        let c = &r.counters;
        for (col, sim) in [
            ("smsp__inst_executed_op_shared_ld.sum", c.shared_requests_ld),
            ("smsp__inst_executed_op_shared_st.sum", c.shared_requests_st),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                c.requests_ld,
            ),
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                c.requests_st,
            ),
        ] {
            let h200 = corpus_value(csv, "reduce", &params, col);
            assert_eq!(sim as f64, h200, "{params} {col}");
        }
    }
}

/// A shared load whose predicate holds on no lane (tools/measure/kernels
/// cases 21-24, `workloads/shared_pred.ron`): on the H200, 512 x 16 of them
/// a warp take as long as the same loads with every lane active (267.9
/// and 271.5 us: one shared instruction a cycle per SM, each with its pass
/// through the LSU). gpusim gives a predicated-off instruction its pass:
/// the two times are the same, each within 10% of the H200's
/// (DEVIATIONS.md 33).
#[test]
fn h200_a_predicated_off_shared_load_takes_an_lsu_pass() {
    let csv = "tests/data/h200/corpus/kernels.csv";
    let sims = run(
        &device("h200"),
        &workload("shared_pred"),
        &[("flag", &[0, 1]), ("op", &[0])],
    );
    assert_eq!(sims.len(), 2);
    for r in &sims {
        let params = format!("flag={};op=0;blocks=1056;trips=512", param(r, "flag"));
        let h200 = corpus_value(csv, "shared_pred", &params, "time_ns");
        let err = (r.time_ns() - h200) / h200;
        eprintln!(
            "{params}: {:.0} ns simulated, {h200:.0} measured ({:+.1}%)",
            r.time_ns(),
            err * 100.0
        );
        assert!(err.abs() <= 0.10, "{params}: {err:+.3}");
    }
    let (off, on) = (sims[0].time_ns(), sims[1].time_ns());
    assert!(
        (off - on).abs() <= 0.01 * on,
        "off {off:.0} ns, on {on:.0} ns"
    );
}

/// Seed 002's stride kernel at 256 MiB, float stride 32, 8 blocks an SM:
/// in most launches the H200 runs one of its two halves of SMs at about a
/// quarter of the other half's warps (`tools/measure/loadlat` calls 4-8;
/// call 4's launch: 5,927 warps an SM on the slow half against 23,753 and
/// 35,273 on the rest), where gpusim gives every SM the same share: a
/// named gap (DEVIATIONS.md 38), asserted as the H200's split (its busiest
/// SM ran more than three times the warps of its least busy) and gpusim's
/// even share (every SM's blocks timed and loads' latency within 10% of
/// the mean over the SMs).
#[test]
fn h200_stride_32_sm_split_is_entry_38s_gap() {
    let text =
        std::fs::read_to_string(repo("tools/measure/loadlat/results/call4/trace_per_sm.csv"))
            .unwrap();
    let warps: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[0] == "rw" && c[1] == "4" && c[2] == "32" && c[3] == "8")
        .map(|c| c[5].parse().unwrap())
        .collect();
    assert_eq!(warps.len(), 132);
    let (lo, hi) = warps
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &w| (a.min(w), b.max(w)));
    assert!(hi > 3.0 * lo, "H200 warps an SM {lo}-{hi}");
    let r = run(
        &device("h200"),
        &workload("stride"),
        &[("nMB", &[256]), ("elem", &[4]), ("stride", &[32])],
    )
    .remove(0);
    assert_eq!(r.per_sm.len(), 132);
    let mean = |f: &dyn Fn(&engine::SmShare) -> f64| {
        r.per_sm.iter().map(f).sum::<f64>() / r.per_sm.len() as f64
    };
    let blocks = mean(&|p| p.blocks as f64);
    let latency = mean(&|p| p.load_latency_cycles);
    for (i, p) in r.per_sm.iter().enumerate() {
        assert!(
            (p.blocks as f64 - blocks).abs() < 0.1 * blocks,
            "SM {i}: {} blocks, mean {blocks:.1}",
            p.blocks
        );
        assert!(
            (p.load_latency_cycles - latency).abs() < 0.1 * latency,
            "SM {i}: {:.0} cycles, mean {latency:.0}",
            p.load_latency_cycles
        );
    }
    eprintln!(
        "H200 warps an SM {lo}-{hi}; gpusim blocks timed an SM {:.1} (mean), latency {latency:.0} cycles",
        blocks
    );
}
