#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// Diagnostics are large but only travel on the error path.
#![allow(clippy::result_large_err)]

pub mod config_set;
pub mod diag;
pub mod l2;
pub mod noc;
pub mod sim;
pub mod sm;
pub mod spec;
pub mod workload;

pub use diag::Diag;
pub use sim::{Bottlenecks, SimError, Simulation};
pub use spec::DeviceSpec;
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
    ron_options().from_str(src).map_err(|e| Diag {
        file: Some(path.display().to_string()),
        pos: Some((e.position.line, e.position.col)),
        ..Diag::msg(e.code.to_string())
    })
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
    let d: DeviceSpec = parse(path, &src)?;
    d.validate().map_err(|(field, m)| {
        Diag::field(field, m).in_file(&path.display().to_string(), Some(&src))
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
    let w: Workload = parse(path, &src)?;
    let file = path.display().to_string();
    w.validate().map_err(|d| d.in_file(&file, Some(&src)))?;
    Ok(LoadedWorkload {
        workload: w,
        file,
        src,
    })
}

fn point_text(p: &Point) -> String {
    p.iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Simulates one point.
pub fn run_point(
    dev: &DeviceSpec,
    wl: &LoadedWorkload,
    point: &Point,
) -> Result<PointResult, Diag> {
    let inst = wl.workload.instantiate(point).map_err(|d| wl.locate(d))?;
    let sim = Simulation::new(dev, &inst.program, wl.workload.regs_per_thread);
    let (counters, bottlenecks) = sim.run().map_err(|e| match e {
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
        counters,
        bottlenecks,
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
            let r = run_point(d, wl, p);
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

/// Bottleneck-report columns, in CSV order.
pub const REPORT_COLUMNS: [&str; 11] = [
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
];

/// The CSV header for a workload's parameters.
pub fn csv_header(params: &[String]) -> Vec<String> {
    let mut h = vec!["device".to_string(), "workload".to_string()];
    h.extend(params.iter().cloned());
    h.extend(["bytes", "time_ns", "bandwidth_gbps"].map(String::from));
    h.extend(COUNTER_COLUMNS.map(String::from));
    h.extend(["transactions_32b", "transactions_64b", "transactions_128b"].map(String::from));
    h.extend(REPORT_COLUMNS.map(String::from));
    h
}

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
    ] {
        v.push(format!("{x:.3}"));
    }
    v
}
