//! `gpusim validate`: replays every committed hardware measurement through
//! the model and reports, per family of kernels, how far the model is.
//!
//! A manifest (`tests/data/<device>/manifest.ron`) lists the families: the
//! kernel measured, the workload that models it, the CSV of cases and the
//! thresholds. A case is one CSV row: `family`, `params` (`NAME=VALUE;...`,
//! pinning every parameter of the workload to one point), `time_ns` and
//! Nsight Compute metrics under their own names; a blank cell was not
//! measured.

use crate::plot::{self, ScatterSeries};
use crate::progress::Progress;
use engine::{DeviceSpec, Diag, LoadedWorkload, Point, PointResult};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub const HELP: &str = "\
WHAT IS COMPARED, PER CASE:
  exact     l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum and
            l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum must be equal
            (counts are deterministic on the hardware);
  shared    where measured, smsp__inst_executed_op_shared_{ld,st}.sum,
            l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum and
            l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum must
            be equal too (the column shows the cases where all six are; a
            family's gap may allow a worst error, in % of the measured
            wavefronts of the same operation);
  L2        lts__t_sectors_srcunit_tex_op_{read,write}.sum, error
            (sim - measured) / max(measured, 1% of the case's L1 sectors);
  DRAM      dram__bytes_{read,write}.sum, error
            (sim - measured) / max(measured, 1% of the case's L1 sectors x 32 B,
            64 KiB); writes only for kernels that store (L1 store sectors,
            or L2 write sectors where those were not measured);
  time      (sim - measured) / measured, against the manifest's reference time
            (Nsight Compute's gpu__time_duration.sum of one cold launch, or
            CUDA-event times of warm batches where the family says so).
  The floors keep a few stray bytes from reading as a large error: kernels
  that read nothing from DRAM show 2.5-30 KB of DRAM reads on the H200
  (stream_write, store16), and a load-only kernel's DRAM writes are the
  previous kernel's dirty lines leaving the L2 (up to 2.4 MB after a copy),
  which no model of the kernel itself can know.

PER FAMILY:
  L2 and DRAM: mean |error| and the worst (signed); time: the mean absolute
  percentage error (MAPE), how many cases are within 15%, and the worst case.
  Verdict: `met` when every target holds (exact counters; L2 within 2%, DRAM
  within 5%, time MAPE 10% and worst 15%, unless the manifest sets others);
  `gap <entry>` when a target is missed but the family stays inside the gap
  that DEVIATIONS.md names for it; `MISSED ...` otherwise.

EXIT STATUS:
  0 when every family selected is met or within its named gap, 1 otherwise
  (the table is printed first).

EXAMPLES:
  Everything measured on the H200 (several minutes on two cores):
      gpusim validate
  One family, a CSV of every case and a plot:
      gpusim validate --family stream_read --csv stream.csv --plot stream.svg
  The quick subset run by CI:
      gpusim validate --ci
  What reads in arrival order with 2 KiB DRAM rows would do to the fit:
      gpusim validate --family pst --config-set dram.first_ready=false \
          --config-set dram.row_bytes=2048";

/// One manifest: the measurements of one device.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    device: String,
    config: String,
    families: Vec<Family>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Family {
    name: String,
    #[allow(dead_code)]
    description: String,
    #[allow(dead_code)]
    kernel: String,
    workload: String,
    data: String,
    #[allow(dead_code)]
    method: String,
    #[serde(default = "ten")]
    time_mape: f64,
    #[serde(default = "fifteen")]
    time_worst: f64,
    #[serde(default = "two")]
    l2: f64,
    #[serde(default = "five")]
    dram: f64,
    #[serde(default)]
    gap: Option<Gap>,
    #[serde(default)]
    ci: Vec<String>,
}

/// A gap named in DEVIATIONS.md: bounds the family must stay within while
/// it misses a target (each defaults to the family's target).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gap {
    entry: String,
    #[serde(default)]
    time_mape: Option<f64>,
    #[serde(default)]
    time_worst: Option<f64>,
    #[serde(default)]
    l2: Option<f64>,
    #[serde(default)]
    dram: Option<f64>,
    /// Worst error of a shared-memory counter allowed, percent.
    #[serde(default)]
    shared: Option<f64>,
}

fn ten() -> f64 {
    10.0
}
fn fifteen() -> f64 {
    15.0
}
fn two() -> f64 {
    2.0
}
fn five() -> f64 {
    5.0
}

/// What `gpusim validate` was asked.
pub struct Options {
    pub data: PathBuf,
    pub devices: Vec<String>,
    pub families: Vec<String>,
    pub ci: bool,
    pub csv: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub jobs: Option<usize>,
    /// How each case is run (sampling).
    pub run: engine::RunOptions,
    pub quiet: bool,
    /// Device overrides (`--config-set`), one value each.
    pub config_set: Vec<engine::config_set::ConfigSet>,
}

const EXACT: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];
/// Shared-memory counters, compared exactly where measured.
const SHARED: [&str; 6] = engine::SHARED_COLUMNS;
/// Compared within a tolerance: (CSV column, short name).
const TRAFFIC: [(&str, &str); 4] = [
    ("lts__t_sectors_srcunit_tex_op_read.sum", "l2_read"),
    ("lts__t_sectors_srcunit_tex_op_write.sum", "l2_write"),
    ("dram__bytes_read.sum", "dram_read"),
    ("dram__bytes_write.sum", "dram_write"),
];

/// DRAM bytes under which an error is measured against this floor: the
/// H200's DRAM counters show up to 30 KB in kernels that move no data
/// through the DRAM (stream_write, store16 in tests/data/h200/corpus).
const DRAM_FLOOR_BYTES: f64 = 65536.0;

/// One measured case.
struct Case {
    /// Index into the flat family list.
    family: usize,
    params: String,
    point: Point,
    time_ns: Option<f64>,
    meas: BTreeMap<String, f64>,
}

/// A family with what it needs to run.
struct Fam<'a> {
    device: &'a str,
    dev: usize,
    wl: usize,
    spec: &'a Family,
}

/// One case compared.
struct Outcome {
    exact_req: Option<bool>,
    exact_sec: Option<bool>,
    /// Worst |error| of the shared-memory counters (fraction), when measured.
    shared: Option<f64>,
    /// Signed errors (fractions) of TRAFFIC, when measured.
    traffic: [Option<(f64, f64, f64)>; 4],
    time: Option<(f64, f64, f64)>,
    /// Blocks timed over blocks in the grid, and the sampled time's error
    /// estimate in ns (1 and 0 when timed whole).
    sample: (f64, f64),
}

pub fn validate(o: &Options) -> Result<(), Diag> {
    let started = std::time::Instant::now();
    // Manifests, sorted by directory.
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&o.data)
        .map_err(|e| Diag {
            file: Some(o.data.display().to_string()),
            ..Diag::msg(format!("cannot read the data directory: {e}"))
        })?
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.join("manifest.ron").is_file())
        .collect();
    dirs.sort();
    let mut manifests = Vec::new();
    for d in &dirs {
        let m: Manifest = engine::load_ron(&d.join("manifest.ron"))?;
        manifests.push(m);
    }
    if manifests.is_empty() {
        return Err(Diag::msg(format!(
            "no manifest found: expected {}/<device>/manifest.ron",
            o.data.display()
        )));
    }
    let known_devices: Vec<&str> = manifests.iter().map(|m| m.device.as_str()).collect();
    for d in &o.devices {
        if !known_devices.contains(&d.as_str()) {
            return Err(Diag::msg(format!(
                "--device {d}: no such device in {} (there are: {})",
                o.data.display(),
                known_devices.join(", ")
            )));
        }
    }
    let chosen: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| o.devices.is_empty() || o.devices.contains(&m.device))
        .collect();
    let known_families: Vec<&str> = chosen
        .iter()
        .flat_map(|m| m.families.iter().map(|f| f.name.as_str()))
        .collect();
    for f in &o.families {
        if !known_families.contains(&f.as_str()) {
            return Err(Diag::msg(format!(
                "--family {f}: no such family (there are: {})",
                known_families.join(", ")
            )));
        }
    }

    let mut overrides = Vec::new();
    for c in &o.config_set {
        match c.values.as_slice() {
            [v] => overrides.push((c.path.clone(), v.clone())),
            _ => {
                return Err(Diag::msg(format!(
                    "--config-set {}: validate takes one value per field",
                    c.path
                )))
            }
        }
    }

    // Devices, workloads and cases.
    let mut devs: Vec<DeviceSpec> = Vec::new();
    let mut wls: Vec<LoadedWorkload> = Vec::new();
    let mut wl_paths: Vec<String> = Vec::new();
    let mut fams: Vec<Fam> = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut csv_cache: BTreeMap<String, Vec<CsvRow>> = BTreeMap::new();
    for m in &chosen {
        devs.push(engine::config_set::load_device_with(
            Path::new(&m.config),
            &overrides,
        )?);
        let dev = devs.len() - 1;
        for f in &m.families {
            if !o.families.is_empty() && !o.families.contains(&f.name) {
                continue;
            }
            if o.ci && f.ci.is_empty() {
                continue;
            }
            let wl = match wl_paths.iter().position(|p| *p == f.workload) {
                Some(i) => i,
                None => {
                    wls.push(engine::load_workload(Path::new(&f.workload))?);
                    wl_paths.push(f.workload.clone());
                    wls.len() - 1
                }
            };
            if !csv_cache.contains_key(&f.data) {
                csv_cache.insert(f.data.clone(), read_csv(Path::new(&f.data))?);
            }
            fams.push(Fam {
                device: &m.device,
                dev,
                wl,
                spec: f,
            });
            let fi = fams.len() - 1;
            let mut found = 0;
            for row in &csv_cache[&f.data] {
                if row.family != f.name || (o.ci && !f.ci.contains(&row.params)) {
                    continue;
                }
                found += 1;
                let at = |message: String| Diag {
                    file: Some(f.data.clone()),
                    pos: Some((row.line, 1)),
                    ..Diag::msg(message)
                };
                let pins = parse_params(&row.params).map_err(&at)?;
                let points = wls[wl].points(&pins).map_err(|d| at(d.message))?;
                if points.len() != 1 {
                    return Err(at(format!(
                        "params `{}` give {} points of {}: a case must pin every swept parameter",
                        row.params,
                        points.len(),
                        f.workload
                    )));
                }
                wls[wl].check(&points)?;
                let mut meas = row.values.clone();
                let time_ns = meas.remove("time_ns");
                cases.push(Case {
                    family: fi,
                    params: row.params.clone(),
                    point: points.into_iter().next().expect("one point"),
                    time_ns,
                    meas,
                });
            }
            if o.ci && found < f.ci.len() {
                return Err(Diag {
                    file: Some(f.data.clone()),
                    ..Diag::msg(format!(
                        "family {}: {} of its `ci` cases have no row in the data",
                        f.name,
                        f.ci.len() - found
                    ))
                });
            }
        }
    }

    // Simulate, in parallel, in case order.
    let pool = crate::worker_pool(o.jobs)?;
    let bar = Progress::start(cases.len() as u64, o.quiet);
    let results: Vec<Result<PointResult, Diag>> = pool.install(|| {
        use rayon::prelude::*;
        cases
            .par_iter()
            .map(|c| {
                let f = &fams[c.family];
                let r = engine::run_point_with(&devs[f.dev], &wls[f.wl], &c.point, &o.run);
                bar.inc();
                r
            })
            .collect()
    });
    bar.finish();
    let results: Vec<PointResult> = results.into_iter().collect::<Result<_, _>>()?;
    let outcomes: Vec<Outcome> = cases
        .iter()
        .zip(&results)
        .map(|(c, r)| compare(c, r))
        .collect();

    // Report.
    let (table, missed) = report(&fams, &cases, &outcomes);
    if let Some(p) = &o.csv {
        crate::output::write_file(p, &case_csv(&fams, &cases, &outcomes))?;
    }
    if let Some(p) = &o.plot {
        let series: Vec<ScatterSeries> = fams
            .iter()
            .enumerate()
            .map(|(i, f)| ScatterSeries {
                label: f.spec.name.clone(),
                points: cases
                    .iter()
                    .zip(&outcomes)
                    .filter(|(c, _)| c.family == i)
                    .filter_map(|(_, o)| o.time.map(|(s, m, _)| (m / 1000.0, s / 1000.0)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let devices: Vec<&str> = chosen.iter().map(|m| m.device.as_str()).collect();
        plot::scatter(
            p,
            &format!("gpusim vs {}: kernel time", devices.join(", ")),
            "time (µs)",
            0.15,
            &series,
        )?;
    }
    if !overrides.is_empty() {
        // The table is not the stock model's: say so above it.
        let list: Vec<String> = overrides.iter().map(|(p, v)| format!("{p}={v}")).collect();
        println!("device overrides (--config-set): {}", list.join(", "));
    }
    print!("{table}");
    if !o.quiet {
        eprintln!(
            "validated {} cases of {} families in {:.1} s",
            cases.len(),
            fams.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if missed > 0 {
        return Err(Diag::msg(format!(
            "{missed} {} missed {} thresholds (see the verdict column)",
            if missed == 1 { "family" } else { "families" },
            if missed == 1 { "its" } else { "their" },
        )));
    }
    Ok(())
}

/// One data row: its line, family, params and numeric cells.
struct CsvRow {
    line: usize,
    family: String,
    params: String,
    values: BTreeMap<String, f64>,
}

/// Columns read as numbers; the others are kept out of the comparison.
fn numeric_column(name: &str) -> bool {
    name == "time_ns"
        || EXACT.contains(&name)
        || SHARED.contains(&name)
        || TRAFFIC.iter().any(|(c, _)| *c == name)
}

fn read_csv(path: &Path) -> Result<Vec<CsvRow>, Diag> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Diag {
        file: Some(file.clone()),
        ..Diag::msg(format!("cannot read: {e}"))
    })?;
    let mut lines = text.lines().enumerate();
    let head: Vec<&str> = lines
        .next()
        .map(|(_, h)| h.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let col = |name: &str| head.iter().position(|h| *h == name);
    let (Some(fc), Some(pc)) = (col("family"), col("params")) else {
        return Err(Diag {
            file: Some(file),
            pos: Some((1, 1)),
            ..Diag::msg("the header must have the columns `family` and `params`".to_string())
        });
    };
    let mut rows = Vec::new();
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        if cells.len() != head.len() {
            return Err(Diag {
                file: Some(file),
                pos: Some((i + 1, 1)),
                ..Diag::msg(format!(
                    "{} cells, the header has {}",
                    cells.len(),
                    head.len()
                ))
            });
        }
        let mut values = BTreeMap::new();
        for (h, c) in head.iter().zip(&cells) {
            if c.is_empty() || !numeric_column(h) {
                continue;
            }
            let v: f64 = c.parse().map_err(|_| Diag {
                file: Some(file.clone()),
                pos: Some((i + 1, l.find(c).unwrap_or(0) + 1)),
                ..Diag::msg(format!("column `{h}`: `{c}` is not a number"))
            })?;
            if !v.is_finite() || v < 0.0 {
                return Err(Diag {
                    file: Some(file.clone()),
                    pos: Some((i + 1, l.find(c).unwrap_or(0) + 1)),
                    ..Diag::msg(format!(
                        "column `{h}`: `{c}` is not a finite, non-negative number"
                    ))
                });
            }
            values.insert(h.to_string(), v);
        }
        rows.push(CsvRow {
            line: i + 1,
            family: cells[fc].to_string(),
            params: cells[pc].to_string(),
            values,
        });
    }
    Ok(rows)
}

fn parse_params(s: &str) -> Result<Vec<(String, Vec<i64>)>, String> {
    s.split(';')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (n, v) = p
                .split_once('=')
                .ok_or_else(|| format!("params: `{p}` is not NAME=VALUE"))?;
            let v: i64 = v
                .trim()
                .parse()
                .map_err(|_| format!("params: `{p}`: the value is not an integer"))?;
            Ok((n.trim().to_string(), vec![v]))
        })
        .collect()
}

fn sim_value(r: &PointResult, column: &str) -> f64 {
    let c = &r.counters;
    (match column {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" => c.requests_ld,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum" => c.requests_st,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" => c.sectors_ld,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum" => c.sectors_st,
        "lts__t_sectors_srcunit_tex_op_read.sum" => c.l2_read_sectors,
        "lts__t_sectors_srcunit_tex_op_write.sum" => c.l2_write_sectors,
        "dram__bytes_read.sum" => c.dram_bytes_read,
        "dram__bytes_write.sum" => c.dram_bytes_write,
        "smsp__inst_executed_op_shared_ld.sum" => c.shared_requests_ld,
        "smsp__inst_executed_op_shared_st.sum" => c.shared_requests_st,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" => c.shared_wavefronts_ld,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum" => c.shared_wavefronts_st,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum" => c.shared_conflicts_ld,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum" => c.shared_conflicts_st,
        _ => unreachable!("compared column {column}"),
    }) as f64
}

fn compare(c: &Case, r: &PointResult) -> Outcome {
    let exact = |cols: &[&str]| -> Option<bool> {
        let present: Vec<&&str> = cols.iter().filter(|k| c.meas.contains_key(**k)).collect();
        (!present.is_empty()).then(|| present.iter().all(|k| sim_value(r, k) == c.meas[**k]))
    };
    let l1_sectors: f64 = EXACT[2..].iter().filter_map(|k| c.meas.get(*k)).sum();
    let mut traffic = [None; 4];
    // A kernel stores when its L1 store sectors say so, or, where they
    // were not measured, when the L2 received write sectors from the SMs.
    let stores = match c.meas.get(EXACT[3]) {
        Some(s) => *s > 0.0,
        None => c.meas.get(TRAFFIC[1].0).is_some_and(|w| *w > 0.0),
    };
    for (i, (col, _)) in TRAFFIC.iter().enumerate() {
        if i == 3 && !stores {
            continue;
        }
        if let Some(&m) = c.meas.get(*col) {
            let floor = if i < 2 {
                0.01 * l1_sectors
            } else {
                (0.32 * l1_sectors).max(DRAM_FLOOR_BYTES)
            };
            let s = sim_value(r, col);
            traffic[i] = Some((s, m, (s - m) / m.max(floor).max(1.0)));
        }
    }
    // Errors relative to the measured wavefronts of the same operation
    // (conflicts are wavefronts too; 0 conflicts measured is no floor).
    let shared_errs: Vec<f64> = SHARED
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let m = *c.meas.get(*k)?;
            let base = if i >= 4 {
                c.meas.get(SHARED[i - 2]).copied().unwrap_or(m).max(m)
            } else {
                m
            };
            Some((sim_value(r, k) - m).abs() / base.max(1.0))
        })
        .collect();
    Outcome {
        exact_req: exact(&EXACT[..2]),
        exact_sec: exact(&EXACT[2..]),
        shared: (!shared_errs.is_empty()).then(|| shared_errs.iter().copied().fold(0.0, f64::max)),
        traffic,
        time: c.time_ns.filter(|t| *t > 0.0).map(|m| {
            let s = r.time_ns();
            (s, m, (s - m) / m)
        }),
        sample: (r.sample.fraction(), r.sample.time_error_ps as f64 / 1000.0),
    }
}

/// Mean |error| and the worst signed error, in percent.
fn mean_worst(errs: &[f64]) -> Option<(f64, f64)> {
    if errs.is_empty() {
        return None;
    }
    let mean = errs.iter().map(|e| e.abs()).sum::<f64>() / errs.len() as f64;
    let worst = errs
        .iter()
        .copied()
        .fold(0.0f64, |w, e| if e.abs() > w.abs() { e } else { w });
    Some((100.0 * mean, 100.0 * worst))
}

fn report(fams: &[Fam], cases: &[Case], outcomes: &[Outcome]) -> (String, usize) {
    let head = [
        "family",
        "cases",
        "req exact",
        "sect exact",
        "shared exact",
        "L2 rd %",
        "L2 wr %",
        "DRAM rd %",
        "DRAM wr %",
        "time MAPE",
        "<=15%",
        "worst time",
        "verdict",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut missed = 0;
    let mut all_idx: Vec<usize> = Vec::new();
    let summarize = |idx: &[usize]| -> (Vec<String>, Summary) {
        let frac = |f: &dyn Fn(&Outcome) -> Option<bool>| {
            let v: Vec<bool> = idx.iter().filter_map(|&i| f(&outcomes[i])).collect();
            (v.iter().filter(|b| **b).count(), v.len())
        };
        let req = frac(&|o| o.exact_req);
        let sec = frac(&|o| o.exact_sec);
        let shared = frac(&|o| o.shared.map(|e| e == 0.0));
        let shared_worst = idx
            .iter()
            .filter_map(|&i| outcomes[i].shared)
            .fold(0.0, f64::max);
        let tr: Vec<Option<(f64, f64)>> = (0..4)
            .map(|k| {
                let e: Vec<f64> = idx
                    .iter()
                    .filter_map(|&i| outcomes[i].traffic[k].map(|t| t.2))
                    .collect();
                mean_worst(&e)
            })
            .collect();
        let times: Vec<(usize, f64)> = idx
            .iter()
            .filter_map(|&i| outcomes[i].time.map(|t| (i, t.2)))
            .collect();
        let mape = (!times.is_empty())
            .then(|| 100.0 * times.iter().map(|t| t.1.abs()).sum::<f64>() / times.len() as f64);
        let within = times.iter().filter(|t| t.1.abs() <= 0.15).count();
        let worst = times
            .iter()
            .copied()
            .fold(None, |w: Option<(usize, f64)>, t| match w {
                Some(w) if w.1.abs() >= t.1.abs() => Some(w),
                _ => Some(t),
            });
        let cell_frac = |(a, b): (usize, usize)| {
            if b == 0 {
                "-".to_string()
            } else {
                format!("{a}/{b}")
            }
        };
        let cell_mw = |x: Option<(f64, f64)>| match x {
            Some((m, w)) => format!("{m:.1} | {w:+.1}"),
            None => "-".to_string(),
        };
        let cells = vec![
            idx.len().to_string(),
            cell_frac(req),
            cell_frac(sec),
            cell_frac(shared),
            cell_mw(tr[0]),
            cell_mw(tr[1]),
            cell_mw(tr[2]),
            cell_mw(tr[3]),
            mape.map(|m| format!("{m:.1}%"))
                .unwrap_or_else(|| "-".into()),
            if times.is_empty() {
                "-".into()
            } else {
                format!("{within}/{}", times.len())
            },
            worst
                .map(|(i, e)| format!("{:+.1}% {}", 100.0 * e, cases[i].params))
                .unwrap_or_else(|| "-".into()),
        ];
        let s = Summary {
            exact: req.0 == req.1 && sec.0 == sec.1,
            shared: 100.0 * shared_worst,
            l2: tr[..2]
                .iter()
                .flatten()
                .map(|t| t.1.abs())
                .fold(0.0, f64::max),
            dram: tr[2..]
                .iter()
                .flatten()
                .map(|t| t.1.abs())
                .fold(0.0, f64::max),
            mape: mape.unwrap_or(0.0),
            worst: worst.map(|w| 100.0 * w.1.abs()).unwrap_or(0.0),
        };
        (cells, s)
    };
    for (fi, f) in fams.iter().enumerate() {
        let idx: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].family == fi)
            .collect();
        all_idx.extend(&idx);
        let (mut cells, s) = summarize(&idx);
        let spec = f.spec;
        let misses = s.misses(spec.l2, spec.dram, spec.time_mape, spec.time_worst, 0.0);
        let verdict = if misses.is_empty() {
            "met".to_string()
        } else if let Some(g) = spec.gap.as_ref().filter(|g| {
            s.exact
                && s.misses(
                    g.l2.unwrap_or(spec.l2),
                    g.dram.unwrap_or(spec.dram),
                    g.time_mape.unwrap_or(spec.time_mape),
                    g.time_worst.unwrap_or(spec.time_worst),
                    g.shared.unwrap_or(0.0),
                )
                .is_empty()
        }) {
            format!("gap {}", g.entry)
        } else {
            missed += 1;
            format!("MISSED {}", misses.join(", "))
        };
        let name = if fams.iter().any(|g| g.device != f.device) {
            format!("{}/{}", f.device, spec.name)
        } else {
            spec.name.clone()
        };
        cells.insert(0, name);
        cells.push(verdict);
        rows.push(cells);
    }
    let (mut cells, _) = summarize(&all_idx);
    cells.insert(0, "all".into());
    cells.push(String::new());
    rows.push(cells);
    // Align.
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i == 0 || i >= 11 {
                let _ = write!(l, "{c}{} ", " ".repeat(pad));
            } else {
                let _ = write!(l, "{}{c} ", " ".repeat(pad));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut out, &head.map(String::from));
    for r in &rows {
        line(&mut out, r);
    }
    out.push_str(
        "(L2 and DRAM: mean |error| | worst signed error, in %; time: mean absolute error, \
         cases within 15%, worst case)\n",
    );
    (out, missed)
}

struct Summary {
    exact: bool,
    /// Worst error of a shared-memory counter, percent.
    shared: f64,
    /// Worst |error| of L2 reads and writes, percent.
    l2: f64,
    dram: f64,
    mape: f64,
    worst: f64,
}

impl Summary {
    /// The thresholds this summary misses.
    fn misses(&self, l2: f64, dram: f64, mape: f64, worst: f64, shared: f64) -> Vec<String> {
        let mut m = Vec::new();
        if !self.exact {
            m.push("exact counts".to_string());
        }
        if self.shared > shared {
            m.push(if shared == 0.0 {
                "exact shared counts".to_string()
            } else {
                format!("shared counts {shared}%")
            });
        }
        if self.l2 > l2 {
            m.push(format!("L2 {l2}%"));
        }
        if self.dram > dram {
            m.push(format!("DRAM {dram}%"));
        }
        if self.mape > mape {
            m.push(format!("time MAPE {mape}%"));
        }
        if self.worst > worst {
            m.push(format!("time worst {worst}%"));
        }
        m
    }
}

fn case_csv(fams: &[Fam], cases: &[Case], outcomes: &[Outcome]) -> String {
    let mut out = String::from("device,family,params,requests_exact,sectors_exact,shared_err");
    for (_, n) in TRAFFIC {
        let _ = write!(out, ",{n}_sim,{n}_meas,{n}_err");
    }
    out.push_str(",time_ns_sim,time_ns_meas,time_err,sampled_fraction,time_ns_error\n");
    let b = |x: Option<bool>| x.map(|b| if b { "1" } else { "0" }).unwrap_or("");
    for (c, o) in cases.iter().zip(outcomes) {
        let f = &fams[c.family];
        let _ = write!(
            out,
            "{},{},{},{},{}",
            f.device,
            f.spec.name,
            c.params,
            b(o.exact_req),
            b(o.exact_sec)
        );
        match o.shared {
            Some(e) => {
                let _ = write!(out, ",{e:.4}");
            }
            None => out.push(','),
        }
        for t in &o.traffic {
            match t {
                Some((s, m, e)) => {
                    let _ = write!(out, ",{s},{m},{e:.4}");
                }
                None => out.push_str(",,,"),
            }
        }
        match o.time {
            Some((s, m, e)) => {
                let _ = write!(out, ",{s:.1},{m},{e:.4}");
            }
            None => out.push_str(",,,"),
        }
        let _ = writeln!(out, ",{:.4},{:.3}", o.sample.0, o.sample.1);
    }
    out
}
