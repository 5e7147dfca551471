//! Simulator speed: how fast gpusim simulates, not how fast the simulated GPU is.
//!
//! Run everything with
//!
//! ```text
//! cargo bench --bench sim_speed
//! ```
//!
//! or one group by passing a filter after `--`, e.g.
//! `cargo bench --bench sim_speed -- warp_instructions`
//! (likewise `-- seed_reproduction`, `-- h200_stride_sweep`).
//! `cargo bench --bench sim_speed -- --test` runs every benchmark once, as a smoke test.
//!
//! # Reading the numbers
//!
//! * `warp_instructions/<device>/<workload>/<param>=<value>`: one sweep point
//!   (nMB=1, elem=4) simulated by [`engine::run_point`] on the calling thread
//!   alone. `time` is the wall time of one point; `thrpt` is *simulated* warp
//!   instructions per second of host time (`Kelem/s`, `Melem/s`: one "element"
//!   is one simulated warp instruction). Since this runs on one thread, the
//!   throughput is also the per-core simulation speed.
//! * `seed_reproduction/c870+c1060+c2050`: wall time of the whole seed figure
//!   set, i.e. what `gpusim` spends on "the seed figures in one command": the
//!   offset and stride workloads with their default sweeps (elem 4 and 8,
//!   nMB=4) on c870, c1060 and c2050, through [`engine::run_sweep`] on the
//!   global rayon pool (all cores). Loading configs is not timed.
//! * `sectors_per_second/<device>/<workload>/<param>=<value>`: one point
//!   (nMB=4 on the Tesla cards, 16 on the H200; elem=4) timed whole
//!   (`Sampling::Off`) on one thread: `thrpt` is simulated L1 sectors per
//!   second of host time, per core. The setup prints each point's slowdown
//!   (host time over the simulated kernel time).
//! * `functional_pass/h200_offset_64mib/{traced,each_warp}`: the counts
//!   without the timed model (what a sampled run spends on the blocks it
//!   does not time), from one traced block and warp by warp; `thrpt` is
//!   simulated warps per second on one thread.
//! * `h200_256mib/stride2_{sampled,full}`: one point of seed 002's large
//!   curves on the H200 on one thread, sampled and timed whole.
//! * `h200_stride_sweep/stride_nMB4_elem4`: the h200 stride sweep (stride
//!   1..=32, nMB=4, elem=4; 32 points) through [`engine::run_sweep`] on all
//!   cores. `thrpt` is the sweep's total simulated warp instructions per second
//!   of wall time, summed over all cores; divide by the number of cores for a
//!   rough per-core figure.
//!
//! Run time: every group uses criterion's smallest sample size (10). The
//! `warp_instructions` group takes about 40 s. The two sweep groups use flat
//! sampling, so they cost 1 warm-up + 10 sample iterations each (plus one
//! uncounted sweep to count `h200_stride_sweep`'s warp instructions). On a
//! 2-core machine a sweep iteration takes about 25 s (seed set) and 17 s
//! (h200), so the full bench runs for about 10 minutes. Criterion's
//! "Unable to complete 10 samples in 5.0s" warning for these groups is
//! expected. Use `-- warp_instructions` for a quick measurement: the other
//! groups' setup is skipped when the filter excludes them.

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use engine::{DeviceSpec, LoadedWorkload, Point};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn device(name: &str) -> DeviceSpec {
    let path = root().join("configs").join(format!("{name}.ron"));
    engine::load_device(&path).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()))
}

fn workload(name: &str) -> LoadedWorkload {
    let path = root().join("workloads").join(format!("{name}.ron"));
    engine::load_workload(&path).unwrap_or_else(|d| panic!("{}: {d:?}", path.display()))
}

fn points(wl: &LoadedWorkload, overrides: &[(&str, Vec<i64>)]) -> Vec<Point> {
    let o: Vec<(String, Vec<i64>)> = overrides
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    wl.points(&o)
        .unwrap_or_else(|d| panic!("{}: {d:?}", wl.file))
}

/// Whether the filter on criterion's command line certainly excludes the
/// benchmark `id`, so that its setup (a first run to count warp instructions,
/// up to a whole sweep) can be skipped. Conservative: options are skipped with
/// their values, and a filter that is not a plain literal is assumed to match.
fn filtered_out(id: &str) -> bool {
    const WITH_VALUE: [&str; 19] = [
        "-c",
        "--color",
        "-s",
        "--save-baseline",
        "-b",
        "--baseline",
        "--baseline-lenient",
        "--format",
        "--profile-time",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
    ];
    let mut args = std::env::args().skip(1);
    let mut filter = None;
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            filter = Some(a);
        }
    }
    match filter {
        Some(f)
            if f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_/=-".contains(c)) =>
        {
            !id.contains(&f)
        }
        _ => false,
    }
}

fn sweep(devs: &[DeviceSpec], wl: &LoadedWorkload, pts: &[Point]) -> u64 {
    let rs =
        engine::run_sweep(devs, wl, pts, &|| {}).unwrap_or_else(|d| panic!("{}: {d:?}", wl.file));
    rs.iter().map(|r| r.counters.warp_instructions).sum()
}

/// Single-threaded `run_point`, throughput in simulated warp instructions.
fn warp_instructions(c: &mut Criterion) {
    let mut g = c.benchmark_group("warp_instructions");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let cases: [(&str, &str, i64); 3] = [
        ("offset", "offset", 1),
        ("stride", "stride", 2),
        ("stride", "stride", 32),
    ];
    for dev_name in ["c2050", "h200"] {
        let dev = device(dev_name);
        for (wl_name, param, value) in cases {
            let function = format!("{dev_name}/{wl_name}");
            let parameter = format!("{param}={value}");
            if filtered_out(&format!("warp_instructions/{function}/{parameter}")) {
                continue;
            }
            let wl = workload(wl_name);
            let pts = points(
                &wl,
                &[("nMB", vec![1]), ("elem", vec![4]), (param, vec![value])],
            );
            assert_eq!(pts.len(), 1, "{wl_name}: expected one point");
            let pt = &pts[0];
            let first = engine::run_point(&dev, &wl, pt)
                .unwrap_or_else(|d| panic!("{dev_name} {wl_name}: {d:?}"));
            g.throughput(Throughput::Elements(first.counters.warp_instructions));
            g.bench_with_input(BenchmarkId::new(function, parameter), pt, |b, pt| {
                b.iter(|| black_box(engine::run_point(&dev, &wl, pt).unwrap()))
            });
        }
    }
    g.finish();
}

/// The seed figure set, all cores.
fn seed_reproduction(c: &mut Criterion) {
    let devs: Vec<DeviceSpec> = ["c870", "c1060", "c2050"].map(device).to_vec();
    let sets: Vec<(LoadedWorkload, Vec<Point>)> = ["offset", "stride"]
        .map(|name| {
            let wl = workload(name);
            let pts = points(&wl, &[]);
            (wl, pts)
        })
        .to_vec();
    let mut g = c.benchmark_group("seed_reproduction");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    g.bench_function("c870+c1060+c2050", |b| {
        b.iter(|| {
            let mut total = 0;
            for (wl, pts) in &sets {
                total += sweep(&devs, wl, pts);
            }
            black_box(total)
        })
    });
    g.finish();
}

/// The h200 stride sweep, all cores, throughput in simulated warp instructions.
fn h200_stride_sweep(c: &mut Criterion) {
    if filtered_out("h200_stride_sweep/stride_nMB4_elem4") {
        return;
    }
    let devs = [device("h200")];
    let wl = workload("stride");
    let pts = points(&wl, &[("nMB", vec![4]), ("elem", vec![4])]);
    let total = sweep(&devs, &wl, &pts);
    let mut g = c.benchmark_group("h200_stride_sweep");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(total));
    g.bench_function("stride_nMB4_elem4", |b| {
        b.iter(|| black_box(sweep(&devs, &wl, &pts)))
    });
    g.finish();
}

/// Simulated L1 sectors (loads and stores) of a result.
fn sectors(r: &engine::PointResult) -> u64 {
    r.counters.sectors_ld + r.counters.sectors_st
}

/// The full timed model on one thread, throughput in simulated sectors
/// (every sector a warp asks of L1, the unit of work the timed path
/// books through L1, interconnect, L2 and DRAM). Also prints, once per
/// point, the slowdown: host time over the simulated kernel's time.
fn sectors_per_second(c: &mut Criterion) {
    let mut g = c.benchmark_group("sectors_per_second");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let full = engine::RunOptions {
        sampling: engine::Sampling::Off,
        ..Default::default()
    };
    let cases: [(&str, &str, &str, i64); 5] = [
        ("c870", "offset", "offset", 1),
        ("c2050", "stride", "stride", 8),
        ("h200", "stride", "stride", 4),
        ("h200", "offset", "offset", 0),
        // A line per lane: every L2 lookup misses and replaces a line.
        ("h200", "stride", "stride", 32),
    ];
    for (dev_name, wl_name, param, value) in cases {
        let id = format!("{dev_name}/{wl_name}/{param}={value}");
        if filtered_out(&format!("sectors_per_second/{id}")) {
            continue;
        }
        let dev = device(dev_name);
        let wl = workload(wl_name);
        let n_mb = if dev_name == "h200" { 16 } else { 4 };
        let pts = points(
            &wl,
            &[("nMB", vec![n_mb]), ("elem", vec![4]), (param, vec![value])],
        );
        let pt = &pts[0];
        let t0 = std::time::Instant::now();
        let first =
            engine::run_point_with(&dev, &wl, pt, &full).unwrap_or_else(|d| panic!("{id}: {d:?}"));
        let host = t0.elapsed().as_secs_f64();
        eprintln!(
            "{id} nMB={n_mb}: {} sectors, simulated kernel {:.1} us, host {:.3} s, slowdown {:.0}x",
            sectors(&first),
            first.time_ns() / 1000.0,
            host,
            host / (first.time_ns() * 1e-9)
        );
        g.throughput(Throughput::Elements(sectors(&first)));
        g.bench_with_input(BenchmarkId::from_parameter(&id), pt, |b, pt| {
            b.iter(|| black_box(engine::run_point_with(&dev, &wl, pt, &full).unwrap()))
        });
    }
    g.finish();
}

/// One H200 point of seed 002's large curves (stride 2, float, 256 MiB),
/// sampled (the default) and timed whole, on one thread. The full run
/// takes tens of seconds an iteration: run this group on its own
/// (`-- h200_256mib`).
fn h200_256mib(c: &mut Criterion) {
    let mut g = c.benchmark_group("h200_256mib");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(10));
    let dev = device("h200");
    let wl = workload("stride");
    for (name, sampling) in [
        ("sampled", engine::Sampling::Auto),
        ("full", engine::Sampling::Off),
    ] {
        if filtered_out(&format!("h200_256mib/stride2_{name}")) {
            continue;
        }
        let pts = points(
            &wl,
            &[("nMB", vec![256]), ("elem", vec![4]), ("stride", vec![2])],
        );
        let opts = engine::RunOptions {
            sampling,
            ..Default::default()
        };
        g.bench_function(format!("stride2_{name}"), |b| {
            b.iter(|| black_box(engine::run_point_with(&dev, &wl, &pts[0], &opts).unwrap()))
        });
    }
    g.finish();
}

/// The functional pass (counts without the timed model, what a sampled
/// run spends on the blocks it does not time), throughput in simulated
/// warps per second on one thread: seed 002's offset kernel at 64 MiB on
/// the H200 (524,288 warps), counted from one traced block
/// (`engine::functional`) and warp by warp.
fn functional_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("functional_pass");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let dev = device("h200");
    let wl = workload("offset");
    let pts = points(
        &wl,
        &[("nMB", vec![64]), ("elem", vec![4]), ("offset", vec![1])],
    );
    let inst = wl.workload.instantiate(&pts[0]).unwrap();
    let prog = &inst.program;
    let warps = prog.blocks() * prog.warps_per_block() as u64;
    g.throughput(Throughput::Elements(warps));
    if !filtered_out("functional_pass/h200_offset_64mib/traced") {
        g.bench_function("h200_offset_64mib/traced", |b| {
            b.iter(|| black_box(engine::sim::count_functional(&dev, prog, u64::MAX).unwrap()))
        });
    }
    if !filtered_out("functional_pass/h200_offset_64mib/each_warp") {
        g.bench_function("h200_offset_64mib/each_warp", |b| {
            b.iter(|| black_box(engine::sim::count_each_warp(&dev, prog, u64::MAX).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    warp_instructions,
    functional_pass,
    sectors_per_second,
    seed_reproduction,
    h200_stride_sweep,
    h200_256mib
);
criterion_main!(benches);
