//! `gpusim`: the command-line front end.
#![allow(clippy::result_large_err)]

mod explain;
mod output;
mod plot;
mod progress;

use clap::{Args, Parser, Subcommand};
use engine::{DeviceSpec, Diag, LoadedWorkload};
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
  One point, double precision, a bigger array:
      gpusim run configs/h200.ron workloads/stride.ron --set elem=8 --set stride=4 --set nMB=256
  A sweep of your own: --set stride=1,2,4,8 or --set offset=0..=8

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
  (like gpu__time_duration). DEVIATIONS.md lists where it differs from measurements.";

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
    /// Device config(s) (configs/*.ron), then the workload (workloads/*.ron) last.
    #[arg(value_name = "CONFIG... WORKLOAD", required = true, num_args = 2..)]
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
    /// Worker threads (default: all cores). Output does not depend on it.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,
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

fn load_devices(paths: &[PathBuf]) -> Result<Vec<DeviceSpec>, Diag> {
    paths.iter().map(|p| engine::load_device(p)).collect()
}

fn run(args: RunArgs) -> Result<(), Diag> {
    let (wl_path, cfgs) = args.files.split_last().expect("clap requires 2 files");
    let devs = load_devices(cfgs)?;
    let wl: LoadedWorkload = engine::load_workload(wl_path)?;
    let sets = parse_sets(&args.set.set)?;
    let points = wl.points(&sets)?;
    wl.check(&points)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| Diag::msg(format!("cannot start worker threads: {e}")))?;
    let total = (points.len() * devs.len()) as u64;
    let bar = progress::Progress::start(total, args.quiet);
    let result = pool.install(|| engine::run_sweep(&devs, &wl, &points, &|| bar.inc()));
    bar.finish();
    let results = result?;
    let params: Vec<String> = wl.workload.params.iter().map(|p| p.name.clone()).collect();
    if let Some(p) = &args.csv {
        output::write_file(p, &output::csv(&params, &results))?;
    }
    if let Some(p) = &args.json {
        output::write_file(p, &output::json(&params, &results))?;
    }
    if let Some(p) = &args.plot {
        plot::plot(p, &wl.workload, &devs, &results)?;
    }
    let to_stdout = |p: &Option<PathBuf>| p.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !args.quiet && !to_stdout(&args.csv) && !to_stdout(&args.json) {
        print!("{}", output::table(&wl.workload, &devs, &results));
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
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("error: {d}");
            ExitCode::FAILURE
        }
    }
}
