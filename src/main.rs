//! `gpusim`: the command-line front end.
#![allow(clippy::result_large_err)]

mod explain;
mod journal;
mod merge;
mod output;
mod plot;
mod progress;
mod sweep;
mod validate;

use clap::{Args, Parser, Subcommand};
use engine::{DeviceSpec, Diag, FileKind, LoadedWorkload, PointResult};
use std::path::PathBuf;
use std::process::ExitCode;

const ABOUT: &str = "\
Cycle-approximate SIMT GPU memory-subsystem simulator.

gpusim runs a small kernel (a workload file) on a model of a GPU (a device config) and
reports, for every point of the workload's parameter sweep, the memory transactions the
device issues (exact, by the coalescing rules of its compute capability), the traffic at
each level (L1, L2, DRAM, with Nsight Compute's counter names) and the kernel time and
bandwidth from a timed model of the SMs, caches, interconnect and DRAM.";

const RUN_HELP: &str = "\
EXAMPLES:
  Seed figure, offset curve of a Fermi card (float and double, offsets 0..32):
      gpusim run configs/c2050.ron workloads/offset.ron
  Three devices at once, CSV and a plot:
      gpusim run configs/c870.ron configs/c1060.ron configs/c2050.ron workloads/offset.ron \\
          --csv offset.csv --plot offset.svg
  The seed's figures in one command (one plot per workload: seed-offset.png, seed-stride.png):
      gpusim run configs/c870.ron configs/c1060.ron configs/c2050.ron \\
          workloads/offset.ron workloads/stride.ron --plot seed.png
  One point, double precision, a bigger array:
      gpusim run configs/h200.ron workloads/stride.ron --set elem=8 --set stride=4 --set nMB=256
  A sweep of your own: --set stride=1,2,4,8 or --set offset=0..=8
  Part 2 of 4 of a sweep (e.g. one task of a SLURM job array), resumable; `gpusim merge`
  joins the parts:
      gpusim run configs/h200.ron workloads/stride.ron --shard 2/4 --csv part2.csv --resume

OUTPUT:
  The table shows, per point: kernel time, useful bandwidth (the workload's bytes / time, in
  GB/s = 1e9 B/s), warp-level load requests, 32-byte sectors asked of L1 by loads and stores,
  L1 load hits, sectors read at L2, DRAM bytes, the busiest unit and achieved occupancy.
  --csv and --json write every column: Nsight Compute's counters
  (l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum, ...), transactions_32b/64b/128b and the
  utilisation of each unit (lsu, l1, noc, l2, dram), mean load latency and occupancy.

TIMING:
  Times come from a timed model: block dispatch, warp issue, the LSU, L1 with MSHRs, the
  interconnect, L2 slices and DRAM channels with banks, row buffers and bus turnaround. Caches
  start cold, as under Nsight Compute. The kernel's duration excludes the host's launch call
  (like gpu__time_duration). DEVIATIONS.md lists where it differs from measurements.

LONG SWEEPS:
  Files are written under a temporary name and renamed when whole. With --csv or --json to a
  file, each finished point is also appended to a journal beside it (out.csv.journal): after
  Ctrl-C, a SLURM time limit (SIGTERM), a kill or a crash, the same command with --resume runs
  only the points not done and writes the same bytes as an uninterrupted run. The first Ctrl-C
  lets the points in flight finish; a second stops at once. The journal is removed at the end.
  --shard I/N runs the I-th of N contiguous parts of the rows, cut to balance the expected
  cost (warps x instructions); its CSV starts with a `# gpusim-shard` line naming the sweep
  and rows (JSON: {\"gpusim_shard\": ..., \"rows\": [...]}) for `gpusim merge`.";

#[derive(Parser)]
#[command(name = "gpusim", version, about = ABOUT, long_about = ABOUT)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a workload's sweep on one or more devices.
    #[command(after_long_help = RUN_HELP, after_help = "See `gpusim run --help` for examples.")]
    Run(RunArgs),
    /// Show, for one warp, how each memory instruction's addresses become transactions.
    #[command(after_long_help = explain::HELP)]
    Explain(ExplainArgs),
    /// Replay every committed hardware measurement and report the model's error per family.
    #[command(
        after_long_help = validate::HELP,
        after_help = "See `gpusim validate --help` for what is compared and the exit status."
    )]
    Validate(ValidateArgs),
    /// Join the shards of a sweep (`run --shard I/N`) into the whole run's CSV or JSON.
    #[command(
        after_long_help = merge::HELP,
        after_help = "See `gpusim merge --help` for what is checked."
    )]
    Merge(MergeArgs),
}

#[derive(Args)]
struct MergeArgs {
    /// The merged file ("-" for stdout): byte-identical to the unsharded run's output.
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// The shards' CSV (or JSON) files, in any order.
    #[arg(value_name = "SHARD", required = true)]
    shards: Vec<PathBuf>,
}

#[derive(Args)]
struct ValidateArgs {
    /// Directory holding one folder per device with its manifest.ron.
    #[arg(long, value_name = "DIR", default_value = "tests/data")]
    data: PathBuf,
    /// Only this device's measurements (repeatable).
    #[arg(long, value_name = "NAME")]
    device: Vec<String>,
    /// Only this family (repeatable).
    #[arg(long, value_name = "NAME")]
    family: Vec<String>,
    /// Only the cases each family lists under `ci` (a few minutes in all).
    #[arg(long)]
    ci: bool,
    /// Write every case (simulated, measured, error) as CSV to this file ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,
    /// Plot simulated against measured time (log-log) to an .svg or .png file.
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    jobs: JobsArg,
    /// No progress bar and no timing line.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct JobsArg {
    /// Worker threads (default: all cores). Output does not depend on it.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,
}

/// The rayon pool for `-j N` (all cores when not given).
fn worker_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, Diag> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| Diag::msg(format!("cannot start worker threads: {e}")))
}

#[derive(Args)]
struct SetArgs {
    /// Set a workload parameter: NAME=VALUE, NAME=V1,V2,... or NAME=FROM..=TO.
    /// Pins a swept parameter (or sweeps a fixed one). Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

#[derive(Args)]
struct RunArgs {
    /// Device configs (configs/*.ron) and workloads (workloads/*.ron), in any
    /// order: each file says which it is. Every workload runs on every device.
    #[arg(value_name = "CONFIG... WORKLOAD...", required = true, num_args = 2..)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    set: SetArgs,
    /// Write all columns as CSV to this file ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,
    /// Write all columns as JSON to this file ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Draw bandwidth against the swept parameter to an .svg or .png file.
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// Run only the I-th of N parts of the sweep (1 <= I <= N); `gpusim merge` joins them.
    #[arg(long, value_name = "I/N")]
    shard: Option<sweep::Shard>,
    /// Continue a stopped run from its journal (OUT.journal beside the --csv/--json file).
    #[arg(long)]
    resume: bool,
    #[command(flatten)]
    jobs: JobsArg,
    /// No progress bar and no table (files are still written).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct ExplainArgs {
    /// Device config (configs/*.ron).
    config: PathBuf,
    /// Workload (workloads/*.ron).
    workload: PathBuf,
    #[command(flatten)]
    set: SetArgs,
    /// Global warp index (block * warps per block + warp in block).
    #[arg(long, default_value_t = 0)]
    warp: u64,
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, Vec<i64>)>, Diag> {
    sets.iter()
        .map(|s| {
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
                if b < a || b - a > 1_000_000 {
                    return Err(bad("empty or huge range"));
                }
                (a..=b).collect()
            } else {
                val.split(',').map(int).collect::<Result<Vec<_>, _>>()?
            };
            Ok((name.to_string(), vals))
        })
        .collect()
}

fn run(args: RunArgs) -> Result<(), Diag> {
    let mut devs: Vec<DeviceSpec> = Vec::new();
    let mut wls: Vec<LoadedWorkload> = Vec::new();
    let (mut dev_files, mut wl_files) = (Vec::new(), Vec::new());
    for f in &args.files {
        match engine::file_kind(f)? {
            FileKind::Device => {
                devs.push(engine::load_device(f)?);
                dev_files.push(f.clone());
            }
            FileKind::Workload => {
                wls.push(engine::load_workload(f)?);
                wl_files.push(f.clone());
            }
        }
    }
    if devs.is_empty() {
        return Err(Diag::msg("no device config given (e.g. configs/c2050.ron)"));
    }
    if wls.is_empty() {
        return Err(Diag::msg("no workload given (e.g. workloads/stride.ron)"));
    }
    let sets = parse_sets(&args.set.set)?;
    // With several workloads, a --set applies to those that have the
    // parameter; one that none has is an error.
    let has = |wl: &LoadedWorkload, n: &str| wl.workload.params.iter().any(|p| p.name == n);
    if wls.len() > 1 {
        if let Some((n, _)) = sets.iter().find(|(n, _)| !wls.iter().any(|w| has(w, n))) {
            return Err(Diag::msg(format!(
                "--set {n}: no workload given has a parameter `{n}`"
            )));
        }
    }
    let mut jobs = Vec::new();
    for wl in &wls {
        let mine: Vec<(String, Vec<i64>)> = if wls.len() > 1 {
            sets.iter().filter(|(n, _)| has(wl, n)).cloned().collect()
        } else {
            sets.clone()
        };
        let points = wl.points(&mine)?;
        wl.check(&points)?;
        jobs.push(points);
    }
    if args.shard.is_some() && args.plot.is_some() {
        return Err(Diag::msg(
            "--plot draws a whole sweep: plot without --shard, or merge the shards first",
        ));
    }
    let id = sweep::SweepId::of(&dev_files, &wl_files, &sets)?;
    let sweep = sweep::Sweep::new(devs, wls, jobs, id)?;
    let (devs, wls) = (&sweep.devs, &sweep.wls);
    let journal = [&args.csv, &args.json]
        .into_iter()
        .flatten()
        .find(|p| p.as_os_str() != "-")
        .map(|p| journal::path_for(p));
    let plan = sweep::Plan {
        shard: args.shard.unwrap_or(sweep::Shard::WHOLE),
        journal: journal.as_deref(),
        resume: args.resume,
    };
    let pool = worker_pool(args.jobs.jobs)?;
    let bar = progress::Progress::start(0, args.quiet);
    let done = pool.install(|| sweep::execute(&sweep, &plan, &bar));
    bar.finish();
    let done = done?;
    let per_wl: Vec<Vec<PointResult>> = (0..wls.len())
        .map(|w| done.of_workload(&sweep, w))
        .collect();
    let mut params: Vec<String> = Vec::new();
    for wl in wls.iter() {
        for p in &wl.workload.params {
            if !params.contains(&p.name) {
                params.push(p.name.clone());
            }
        }
    }
    let all = &done.results;
    let tag = args.shard.map(|_| &done.tag);
    if let Some(p) = &args.csv {
        let text = match tag {
            Some(t) => output::csv_shard(t, &params, all),
            None => output::csv(&params, all),
        };
        output::write_file(p, &text)?;
    }
    if let Some(p) = &args.json {
        let text = match tag {
            Some(t) => output::json_shard(t, &params, all),
            None => output::json(&params, all),
        };
        output::write_file(p, &text)?;
    }
    if let Some(j) = done.journal {
        j.remove()?;
    }
    if let Some(p) = &args.plot {
        for (wl, results) in wls.iter().zip(&per_wl) {
            let path = if wls.len() == 1 {
                p.clone()
            } else {
                // One plot per workload: out.png -> out-offset.png, out-stride.png.
                let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("plot");
                let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
                p.with_file_name(format!("{stem}-{}.{ext}", wl.workload.name))
            };
            plot::plot(&path, &wl.workload, devs, results)?;
        }
    }
    let to_stdout = |p: &Option<PathBuf>| p.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !args.quiet && !to_stdout(&args.csv) && !to_stdout(&args.json) {
        for (wl, results) in wls.iter().zip(&per_wl) {
            if !results.is_empty() || args.shard.is_none() {
                print!("{}", output::table(&wl.workload, devs, results));
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => run(a),
        Cmd::Explain(a) => (|| {
            let dev = engine::load_device(&a.config)?;
            let wl = engine::load_workload(&a.workload)?;
            let sets = parse_sets(&a.set.set)?;
            let text = explain::explain(&dev, &wl, &sets, a.warp)?;
            print!("{text}");
            Ok(())
        })(),
        Cmd::Merge(a) => merge::merge(&a.out, &a.shards),
        Cmd::Validate(a) => validate::validate(&validate::Options {
            data: a.data,
            devices: a.device,
            families: a.family,
            ci: a.ci,
            csv: a.csv,
            plot: a.plot,
            jobs: a.jobs.jobs,
            quiet: a.quiet,
        }),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("error: {d}");
            ExitCode::FAILURE
        }
    }
}
