#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// Diagnostics are large but only travel on the error path.
#![allow(clippy::result_large_err)]

pub mod config_set;
pub mod diag;
pub mod functional;
pub mod l2;
pub mod noc;
pub mod sample;
pub mod sim;
pub mod sm;
pub mod spec;
pub mod workload;

pub use diag::Diag;
pub use sample::Sampling;
pub use sim::{
    Bottlenecks, LoadSite, Outcome, SampleInfo, SimError, Simulation, SmShare, LATENCY_BIN_CYCLES,
};
pub use spec::{DeviceSpec, RegisterAllocation, RegisterGranularity, ReplyOrder, StoreMerge};
pub use workload::{Point, Workload};

use rayon::prelude::*;
use simt_core::ir::ron_options;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Event counts of one launch, named after Nsight Compute's metrics where one exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`: warp-level global loads.
    pub requests_ld: u64,
    /// `l1tex__t_requests_pipe_lsu_mem_global_op_st.sum`: warp-level global stores.
    pub requests_st: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`: bytes of load transactions / 32.
    pub sectors_ld: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum`: bytes of store transactions / 32.
    pub sectors_st: u64,
    /// `l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum`.
    pub l1_hits_ld: u64,
    /// `lts__t_sectors_srcunit_tex_op_read.sum`.
    pub l2_read_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_write.sum`.
    pub l2_write_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum`.
    pub l2_read_hits: u64,
    /// `dram__bytes_read.sum`.
    pub dram_bytes_read: u64,
    /// `dram__bytes_write.sum`.
    pub dram_bytes_write: u64,
    /// Kernel duration (`gpu__time_duration.sum`), ps.
    pub time_ps: u64,
    /// Coalescer transactions of 32, 64 and 128 bytes, loads and stores.
    pub transactions: [u64; 3],
    /// Warp instructions executed.
    pub warp_instructions: u64,
    /// `smsp__inst_executed_op_shared_ld.sum`: warp-level shared loads.
    pub shared_requests_ld: u64,
    /// `smsp__inst_executed_op_shared_st.sum`: warp-level shared stores.
    pub shared_requests_st: u64,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`: passes
    /// through the banks for shared loads.
    pub shared_wavefronts_ld: u64,
    /// `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum`.
    pub shared_wavefronts_st: u64,
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`: passes
    /// beyond the conflict-free number.
    pub shared_conflicts_ld: u64,
    /// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum`.
    pub shared_conflicts_st: u64,
}

/// The result of one sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// Device short name.
    pub device: String,
    /// Workload name.
    pub workload: String,
    /// Parameter values.
    pub point: Point,
    /// Useful bytes.
    pub bytes: u64,
    /// Counters.
    pub counters: Counters,
    /// Utilisations.
    pub bottlenecks: Bottlenecks,
    /// How much of the grid was timed.
    pub sample: SampleInfo,
    /// Each global load instruction's mean latency, in program order.
    pub load_sites: Vec<LoadSite>,
    /// When each whole wave of the blocks timed had retired, ps
    /// ([`sim::Outcome::wave_ends_ps`](crate::sim::Outcome::wave_ends_ps)).
    pub wave_ends_ps: Vec<u64>,
    /// Per SM, the blocks timed that ran there and their loads' mean
    /// latency ([`sim::Outcome::per_sm`](crate::sim::Outcome::per_sm)).
    pub per_sm: Vec<SmShare>,
}

/// How points are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Whether the timed model samples the grid's waves.
    pub sampling: Sampling,
    /// A point whose kernel would execute more warp instructions is refused
    /// (before it runs where the count is known up front, else when it
    /// gets there).
    pub max_warp_instructions: u64,
}

/// The default budget of warp instructions per point: a hundred times the
/// largest shipped workload (a 1 GiB stream: 8.4 million warps of a few
/// instructions); a point timed whole at that size would run for days.
pub const DEFAULT_MAX_WARP_INSTRUCTIONS: u64 = 10_000_000_000;

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            sampling: Sampling::default(),
            max_warp_instructions: DEFAULT_MAX_WARP_INSTRUCTIONS,
        }
    }
}

impl PointResult {
    /// Kernel time in ns.
    pub fn time_ns(&self) -> f64 {
        self.counters.time_ps as f64 / 1000.0
    }
    /// Useful bytes per ns (= GB/s).
    pub fn bandwidth_gbps(&self) -> f64 {
        self.bytes as f64 / self.time_ns()
    }
    /// Value of a parameter.
    pub fn param(&self, name: &str) -> Option<i64> {
        self.point.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

fn read(path: &Path) -> Result<String, Diag> {
    std::fs::read_to_string(path).map_err(|e| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(format!("cannot read: {e}"))
    })
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, src: &str) -> Result<T, Diag> {
    // ron's parser recurses on nesting: refuse a depth no file needs
    // before it can exhaust the stack.
    if let Some((line, col)) = too_deep(src) {
        return Err(Diag {
            file: Some(path.display().to_string()),
            pos: Some((line, col)),
            ..Diag::msg(format!("nested more than {MAX_NESTING} levels deep"))
        });
    }
    ron_options().from_str(src).map_err(|e| Diag {
        file: Some(path.display().to_string()),
        pos: Some((e.position.line, e.position.col)),
        ..Diag::msg(e.code.to_string())
    })
}

/// Brackets deeper than this are refused (the shipped files nest 6 deep).
pub const MAX_NESTING: usize = 64;

/// Line and column where `src` first nests brackets deeper than
/// [`MAX_NESTING`] (outside strings and comments), if it does.
fn too_deep(src: &str) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut chars = src.chars().peekable();
    let (mut in_str, mut escaped) = (false, false);
    while let Some(c) = chars.next() {
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
        }
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        col = 0;
                        break;
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((line, col));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads a RON file of any serde type (e.g. a validation manifest), with
/// the file, line and column of a syntax or field error.
pub fn load_ron<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, Diag> {
    let src = read(path)?;
    parse(path, &src)
}

/// Reads and validates a device config.
pub fn load_device(path: &Path) -> Result<DeviceSpec, Diag> {
    let src = read(path)?;
    device_from_str(path, &src)
}

/// Parses and validates a device config's text (`path` names it in
/// diagnostics).
pub fn device_from_str(path: &Path, src: &str) -> Result<DeviceSpec, Diag> {
    let d: DeviceSpec = parse(path, src)?;
    d.validate().map_err(|(field, m)| {
        Diag::field(field, m).in_file(&path.display().to_string(), Some(src))
    })?;
    Ok(d)
}

/// A workload with its file name and source, for diagnostics.
#[derive(Debug, Clone)]
pub struct LoadedWorkload {
    /// The workload.
    pub workload: Workload,
    /// Its file.
    pub file: String,
    /// Its source text.
    pub src: String,
}

impl LoadedWorkload {
    /// Points of the sweep with overrides.
    pub fn points(&self, overrides: &[(String, Vec<i64>)]) -> Result<Vec<Point>, Diag> {
        self.workload.points(overrides).map_err(|d| self.locate(d))
    }

    /// Puts a diagnostic in this file.
    pub fn locate(&self, d: Diag) -> Diag {
        if d.path.is_none() && d.text.is_none() && d.message.starts_with("--set") {
            return d;
        }
        d.in_file(&self.file, Some(&self.src))
    }

    /// Compiles every point once, so that errors surface before a long run.
    pub fn check(&self, points: &[Point]) -> Result<(), Diag> {
        for p in points {
            self.workload.instantiate(p).map_err(|d| self.locate(d))?;
        }
        Ok(())
    }
}

/// What a gpusim file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A device config, `Device(...)`.
    Device,
    /// A workload, `Workload(...)`.
    Workload,
}

/// Tells a device config from a workload by its top-level name.
pub fn file_kind(path: &Path) -> Result<FileKind, Diag> {
    let src = read(path)?;
    let mut rest = src.as_str();
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map(|(_, b)| b).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|(_, b)| b).unwrap_or("");
        } else {
            break;
        }
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    match name.as_str() {
        "Device" => Ok(FileKind::Device),
        "Workload" => Ok(FileKind::Workload),
        _ => {
            Err(Diag {
                file: Some(path.display().to_string()),
                ..Diag::msg(format!(
                "expected a device config `Device(...)` or a workload `Workload(...)`, found `{}`",
                if name.is_empty() {
                    rest.lines().next().unwrap_or("").chars().take(30).collect::<String>()
                } else {
                    name
                }
            ))
            })
        }
    }
}

/// Reads and checks a workload.
pub fn load_workload(path: &Path) -> Result<LoadedWorkload, Diag> {
    let src = read(path)?;
    workload_from_str(path, src)
}

/// Parses and validates a workload's text (`path` names it in
/// diagnostics).
pub fn workload_from_str(path: &Path, src: String) -> Result<LoadedWorkload, Diag> {
    let mut w: Workload = parse(path, &src)?;
    w.dir = path.parent().map(|d| d.to_path_buf());
    let file = path.display().to_string();
    w.validate().map_err(|d| d.in_file(&file, Some(&src)))?;
    Ok(LoadedWorkload {
        workload: w,
        file,
        src,
    })
}

/// Parses one `--set` value: `NAME=VALUE`, `NAME=V1,V2,...` or
/// `NAME=FROM..=TO` (at most a million values).
pub fn parse_set(s: &str) -> Result<(String, Vec<i64>), Diag> {
    let bad = |why: &str| {
        Diag::msg(format!(
            "--set {s}: {why} (expected NAME=VALUE, NAME=V1,V2,... or NAME=FROM..=TO)"
        ))
    };
    let (name, val) = s.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(bad("empty name"));
    }
    let int = |t: &str| -> Result<i64, Diag> {
        t.trim()
            .parse::<i64>()
            .map_err(|_| bad(&format!("`{}` is not an integer", t.trim())))
    };
    let vals = if let Some((a, b)) = val.split_once("..=") {
        let (a, b) = (int(a)?, int(b)?);
        if b < a || (b as i128 - a as i128) > 1_000_000 {
            return Err(bad("empty or huge range"));
        }
        (a..=b).collect()
    } else {
        let v = val.split(',').map(int).collect::<Result<Vec<_>, _>>()?;
        if v.len() > 1_000_000 {
            return Err(bad("more than a million values"));
        }
        v
    };
    Ok((name.to_string(), vals))
}

fn point_text(p: &Point) -> String {
    p.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Simulates one point, sampling large grids ([`Sampling::Auto`]).
pub fn run_point(
    dev: &DeviceSpec,
    wl: &LoadedWorkload,
    point: &Point,
) -> Result<PointResult, Diag> {
    run_point_with(dev, wl, point, &RunOptions::default())
}

/// Simulates one point with `opts`.
pub fn run_point_with(
    dev: &DeviceSpec,
    wl: &LoadedWorkload,
    point: &Point,
    opts: &RunOptions,
) -> Result<PointResult, Diag> {
    let inst = wl.workload.instantiate(point).map_err(|d| wl.locate(d))?;
    let budget = opts.max_warp_instructions;
    if inst.min_warp_instructions > budget {
        let p = &inst.program;
        let warps = p.blocks().saturating_mul(p.warps_per_block() as u64).max(1);
        return Err(wl.locate(Diag::msg(format!(
            "refused at {} on {}: the kernel would execute at least {} warp instructions \
             ({} blocks x {} warps x at least {} each), more than the budget of {budget} \
             (--max-warp-instructions)",
            point_text(point),
            dev.name,
            inst.min_warp_instructions,
            p.blocks(),
            p.warps_per_block(),
            inst.min_warp_instructions / warps,
        ))));
    }
    let sim = Simulation::new(dev, &inst.program, inst.regs_per_thread)
        .sampling(opts.sampling)
        .budget(budget);
    let out = sim.run_outcome().map_err(|e| match e {
        SimError::Exec { err, block, thread } => {
            let src = &inst.program.sources[err.pc as usize];
            wl.locate(Diag::field(
                src.path.clone(),
                format!(
                    "`{}`: {}; blockIdx=({},{},{}) threadIdx=({},{},{}), at {} on {}",
                    src.text,
                    err.fault,
                    block[0],
                    block[1],
                    block[2],
                    thread[0],
                    thread[1],
                    thread[2],
                    point_text(point),
                    dev.name
                ),
            ))
        }
        SimError::Budget(n) => wl.locate(Diag::msg(format!(
            "stopped at {} on {}: the kernel ran past the budget of {n} warp instructions \
             (--max-warp-instructions)",
            point_text(point),
            dev.name
        ))),
        SimError::Launch(m) => wl.locate(Diag::msg(format!(
            "cannot launch on {} at {}: {m}",
            dev.name,
            point_text(point)
        ))),
    })?;
    Ok(PointResult {
        device: dev.name.clone(),
        workload: wl.workload.name.clone(),
        point: point.clone(),
        bytes: inst.useful_bytes,
        counters: out.counters,
        bottlenecks: out.bottlenecks,
        sample: out.sample,
        load_sites: out.load_sites,
        wave_ends_ps: out.wave_ends_ps,
        per_sm: out.per_sm,
    })
}

/// Runs `points` on every device, in parallel on the current rayon pool.
/// Results come back in order (device-major), whatever the thread count.
/// `done` is called after each point completes.
pub fn run_sweep(
    devs: &[DeviceSpec],
    wl: &LoadedWorkload,
    points: &[Point],
    done: &(dyn Fn() + Sync),
) -> Result<Vec<PointResult>, Diag> {
    run_sweep_with(devs, wl, points, &RunOptions::default(), done)
}

/// [`run_sweep`] with `opts`.
pub fn run_sweep_with(
    devs: &[DeviceSpec],
    wl: &LoadedWorkload,
    points: &[Point],
    opts: &RunOptions,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<PointResult>, Diag> {
    let jobs: Vec<(&DeviceSpec, &Point)> = devs
        .iter()
        .flat_map(|d| points.iter().map(move |p| (d, p)))
        .collect();
    // The error reported is the first in point order, whatever the thread
    // count: points after a failed one are skipped, points before it run.
    let first_failed = AtomicUsize::new(usize::MAX);
    let results: Vec<Option<Result<PointResult, Diag>>> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, (d, p))| {
            if i > first_failed.load(Ordering::Relaxed) {
                return None;
            }
            let r = run_point_with(d, wl, p, opts);
            if r.is_err() {
                first_failed.fetch_min(i, Ordering::Relaxed);
            }
            done();
            Some(r)
        })
        .collect();
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Some(Ok(x)) => out.push(x),
            Some(Err(e)) => return Err(e),
            None => break,
        }
    }
    Ok(out)
}

/// Nsight Compute metric columns, in CSV order.
pub const COUNTER_COLUMNS: [&str; 11] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
];

/// Shared-memory counter columns (Nsight Compute's names), in CSV order:
/// warp instructions, wavefronts and bank conflicts, loads then stores.
pub const SHARED_COLUMNS: [&str; 6] = [
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
];

/// Bottleneck-report columns, in CSV order.
pub const REPORT_COLUMNS: [&str; 12] = [
    "lsu_util",
    "l1_util",
    "noc_util",
    "l2_util",
    "dram_util",
    "lsu_stall",
    "inflight_stall",
    "l2_mshr_stall",
    "dram_queue_stall",
    "load_latency_cycles",
    "achieved_occupancy",
    "dram_row_hit_rate",
];

/// The CSV header for a workload's parameters.
pub fn csv_header(params: &[String]) -> Vec<String> {
    let mut h = vec!["device".to_string(), "workload".to_string()];
    h.extend(params.iter().cloned());
    h.extend(["bytes", "time_ns", "bandwidth_gbps"].map(String::from));
    h.extend(COUNTER_COLUMNS.map(String::from));
    h.extend(["transactions_32b", "transactions_64b", "transactions_128b"].map(String::from));
    h.extend(SHARED_COLUMNS.map(String::from));
    h.extend(REPORT_COLUMNS.map(String::from));
    h.extend(SAMPLE_COLUMNS.map(String::from));
    h
}

/// Sampling columns, in CSV order: the fraction of blocks timed and the
/// estimated error of the time in ns (0 when every block was timed).
pub const SAMPLE_COLUMNS: [&str; 2] = ["sampled_fraction", "time_ns_error"];

/// One CSV row, in [`csv_header`] order for `params` (a parameter the
/// point's workload does not have is left empty).
pub fn csv_row(r: &PointResult, params: &[String]) -> Vec<String> {
    let c = &r.counters;
    let b = &r.bottlenecks;
    let mut v = vec![r.device.clone(), r.workload.clone()];
    v.extend(
        params
            .iter()
            .map(|p| r.param(p).map(|x| x.to_string()).unwrap_or_default()),
    );
    v.push(r.bytes.to_string());
    v.push(format!("{:.3}", r.time_ns()));
    v.push(format!("{:.3}", r.bandwidth_gbps()));
    for x in [
        c.requests_ld,
        c.requests_st,
        c.sectors_ld,
        c.sectors_st,
        c.l1_hits_ld,
        c.l2_read_sectors,
        c.l2_write_sectors,
        c.l2_read_hits,
        c.dram_bytes_read,
        c.dram_bytes_write,
        (c.time_ps + 500) / 1000,
    ] {
        v.push(x.to_string());
    }
    v.extend(c.transactions.iter().map(|x| x.to_string()));
    for x in [
        c.shared_requests_ld,
        c.shared_requests_st,
        c.shared_wavefronts_ld,
        c.shared_wavefronts_st,
        c.shared_conflicts_ld,
        c.shared_conflicts_st,
    ] {
        v.push(x.to_string());
    }
    for x in [
        b.lsu_util,
        b.l1_util,
        b.noc_util,
        b.l2_util,
        b.dram_util,
        b.lsu_stall,
        b.inflight_stall,
        b.l2_mshr_stall,
        b.dram_queue_stall,
        b.load_latency_cycles,
        b.achieved_occupancy,
        b.dram_row_hit_rate,
    ] {
        v.push(format!("{x:.3}"));
    }
    v.push(format!("{:.4}", r.sample.fraction()));
    v.push(format!("{:.3}", r.sample.time_error_ps as f64 / 1000.0));
    v
}
