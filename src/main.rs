//! `gpusim`: the command-line front end.
#![allow(clippy::result_large_err)]

mod describe;
mod explain;
mod journal;
mod merge;
mod output;
mod plot;
mod progress;
mod study;
mod sweep;
mod validate;
mod variants;

use clap::{Args, Parser, Subcommand};
use engine::{DeviceSpec, Diag, FileKind, LoadedWorkload, PointResult};
use std::path::{Path, PathBuf};
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
  L1 load hits, sectors read at L2, DRAM bytes, (for kernels with shared memory) the shared
  wavefronts and bank conflicts of loads and stores together, the busiest unit and achieved
  occupancy.
  --csv and --json write every column: Nsight Compute's counters
  (l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum, ...), transactions_32b/64b/128b, the
  shared-memory instructions, wavefronts and bank conflicts
  (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum, ...), and the utilisation of each unit (lsu, l1, noc, l2, dram), mean load latency and occupancy,
  and dram_row_hit_rate (DRAM accesses that found their row open / all DRAM accesses).
  --json also gives each point's load_sites: every global load instruction that ran (pc, its
  index in program order; statement, where it stands in the workload file, e.g.
  kernel[3].body[0]), its warp-level loads and their mean latency in cycles, and the 10th,
  50th, 90th and 99th percentiles of that latency (latency_p10_cycles, ..., to 8 cycles):
  which load of a kernel waits, and how unevenly. And wave_ends_ns: when each whole wave of
  blocks (SMs x blocks per SM) of the blocks timed had retired, ns from the launch (the
  time the k x wave-th block to retire did): the kernel's course, its ramp, steady pace
  and any change of pace. And per_sm: for each SM by number, the blocks timed that ran
  there and their loads' mean latency (load_latency_cycles): how evenly the SMs shared
  the work (the H200 at seed 002's large strides does not: tools/measure/loadlat).

TIMING:
  Times come from a timed model: block dispatch, warp issue, the LSU, L1 with MSHRs, the
  interconnect, L2 slices and DRAM channels with banks, row buffers and bus turnaround. Caches
  start cold, as under Nsight Compute. The kernel's duration excludes the host's launch call
  (like gpu__time_duration). DEVIATIONS.md lists where it differs from measurements.

SAMPLING:
  A grid of 16 waves or more (waves = SMs x blocks per SM) is timed only until blocks retire
  at a steady rate: the two halves of the waves since the warm-up of 4 waves (and since the L2
  has replaced twice the lines it has places for, where the kernel touches more than it
  holds) must agree within 1%, halves of 4 waves at least (a 16th of the grid's waves each,
  up to 8, in a long grid), in time per block and in the L1, L2 and DRAM traffic per sector
  issued, and each half's mean time per wave must be known to 2% (uneven waves take more of
  them); halves that differ by more than their waves' spread explains start the window again
  after the first half. The
  blocks not timed add that rate; L2 and DRAM counters are carried over on the sectors issued.
  Requests, sectors and transactions stay exact (every warp still runs, untimed). The CSV gives
  sampled_fraction (blocks timed / blocks) and time_ns_error (the estimate's uncertainty).
  A kernel whose rate changes after the window settled is misestimated: use --sample off when
  a point matters more than its speed.

LONG SWEEPS:
  Files are written under a temporary name and renamed when whole (a device or pipe, such as
  /dev/null, is written in place). With --csv or --json to a file, each finished point is also
  appended to a journal beside it (out.csv.journal): after Ctrl-C, a SLURM time limit
  (SIGTERM), a kill or a crash, the same command with --resume runs only the points not done
  and writes the same bytes as an uninterrupted run. The first Ctrl-C lets the points in
  flight finish; a second stops at once. The journal is removed at the end.
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
    /// Run a what-if study file: devices, device fields to vary, workloads; writes CSV and a plot.
    #[command(
        after_long_help = study::HELP,
        after_help = "See `gpusim study --help` for the file format."
    )]
    Study(StudyArgs),
    /// Show the machine a device file makes: bandwidths, capacities, latencies, occupancy.
    #[command(after_long_help = describe::HELP)]
    Describe(DescribeArgs),
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
struct DescribeArgs {
    /// Device config (configs/*.ron).
    config: PathBuf,
    #[command(flatten)]
    config_set: ConfigSetArgs,
    /// Registers per thread for the occupancy table.
    #[arg(long, default_value_t = 16)]
    regs: u32,
}

#[derive(Args)]
struct StudyArgs {
    /// The study file (studies/*.ron).
    file: PathBuf,
    /// Directory for NAME.csv and NAME.svg (created if missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    #[command(flatten)]
    jobs: JobsArg,
    #[command(flatten)]
    sample: SampleArg,
    /// Run only the I-th of N parts of the study's points: NAME.csv is then
    /// a shard for `gpusim merge`, and no plot is drawn.
    #[arg(long, value_name = "I/N")]
    shard: Option<sweep::Shard>,
    /// Continue a stopped study from its journal (NAME.csv.journal).
    #[arg(long)]
    resume: bool,
    /// No progress bar and no table (files are still written).
    #[arg(short, long)]
    quiet: bool,
}

fn study(a: StudyArgs) -> Result<(), Diag> {
    let plan = study::load(&a.file, &a.out)?;
    std::fs::create_dir_all(&a.out).map_err(|e| Diag {
        file: Some(a.out.display().to_string()),
        ..Diag::msg(format!("cannot create the output directory: {e}"))
    })?;
    if !a.quiet {
        eprintln!(
            "study {}: {}",
            plan.study.name,
            plan.study
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let r = run(RunArgs {
        files: plan.files,
        set: SetArgs {
            set: plan.study.set.clone(),
        },
        config_set: ConfigSetArgs {
            config_set: plan.study.config_set.clone(),
        },
        csv: Some(plan.csv.clone()),
        json: None,
        plot: a.shard.is_none().then(|| plan.plot.clone()),
        plot_x: plan.study.plot_x.clone(),
        jobs: a.jobs,
        sample: a.sample,
        shard: a.shard,
        resume: a.resume,
        quiet: a.quiet,
        variants: plan.study.variants.clone(),
    });
    r.map_err(|d| study::blame(d, &a.file))?;
    if !a.quiet {
        if a.shard.is_some() {
            eprintln!("wrote the shard {}", plan.csv.display());
        } else {
            eprintln!("wrote {} and {}", plan.csv.display(), plan.plot.display());
        }
    }
    Ok(())
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
    /// Sampled timing (see `gpusim run --help`). Off by default here:
    /// validation measures the model, so every block is timed.
    #[arg(long = "sample", value_name = "on|off|auto", default_value = "off")]
    sample: engine::Sampling,
    /// Override a field of each measured device's config before replaying
    /// it, one value (repeatable; paths as `gpusim run --config-set`), to
    /// see what a change does to the fit. Exits 1 as usual when a family
    /// leaves its bounds.
    #[arg(long = "config-set", value_name = "PATH=VALUE")]
    config_set: Vec<String>,
    /// No progress bar and no timing line.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct JobsArg {
    /// Worker threads (default, or 0: all cores; at most one per point).
    /// Output does not depend on it.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,
}

/// Refuses, before any point runs, outputs that would be lost or destroy
/// something: two outputs to one file (or both to stdout), an output onto
/// one of the `inputs`, onto a directory, or a plot of unknown format.
fn check_outputs<'a>(
    args: &RunArgs,
    inputs: impl Iterator<Item = &'a PathBuf>,
) -> Result<(), Diag> {
    let outs: Vec<(&str, &PathBuf)> = [
        ("--csv", &args.csv),
        ("--json", &args.json),
        ("--plot", &args.plot),
    ]
    .into_iter()
    .filter_map(|(f, p)| p.as_ref().map(|p| (f, p)))
    .collect();
    let same = |a: &Path, b: &Path| {
        a == b
            || matches!(
                (a.canonicalize(), b.canonicalize()),
                (Ok(x), Ok(y)) if x == y
            )
    };
    let inputs: Vec<&PathBuf> = inputs.collect();
    for (i, (flag, p)) in outs.iter().enumerate() {
        if p.as_os_str() == "-" {
            if let Some((other, _)) = outs[..i].iter().find(|(_, q)| q.as_os_str() == "-") {
                return Err(Diag::msg(format!(
                    "{other} - and {flag} -: only one output can go to stdout"
                )));
            }
            continue;
        }
        if let Some((other, _)) = outs[..i].iter().find(|(_, q)| same(q, p)) {
            return Err(Diag::msg(format!(
                "{other} and {flag} both write {}: give each its own file",
                p.display()
            )));
        }
        if let Some(input) = inputs.iter().find(|q| same(q, p)) {
            return Err(Diag::msg(format!(
                "{flag} {}: that is an input of this run ({}); it would be overwritten",
                p.display(),
                input.display()
            )));
        }
        if p.is_dir() {
            return Err(Diag::msg(format!(
                "{flag} {}: is a directory; give a file name",
                p.display()
            )));
        }
    }
    if let Some(p) = &args.plot {
        plot::format_of(p)?;
    } else if args.plot_x.is_some() && args.shard.is_none() {
        return Err(Diag::msg(
            "--plot-x chooses a plot's x axis: give --plot as well",
        ));
    }
    Ok(())
}

/// The rayon pool for `-j N` (all cores when not given).
fn worker_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, Diag> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| Diag::msg(format!("cannot start worker threads: {e}")))
}

#[derive(Args)]
struct SampleArg {
    /// Sampled timing: `auto` (default) times grids of 16 waves or more
    /// only until their wave time settles and extrapolates the rest; `on`
    /// samples any grid with waves to spare; `off` times every block.
    /// Requests, sectors and transactions stay exact either way; the time,
    /// L2 and DRAM counters of a sampled point are extrapolated, with the
    /// error estimate in the `time_ns_error` column.
    #[arg(long = "sample", value_name = "on|off|auto", default_value = "auto")]
    sample: engine::Sampling,
    /// Refuse a point whose kernel would execute more warp instructions than
    /// this: before it runs, where loops with constant bounds and the grid
    /// give the count, or when the run gets there. A guard against a
    /// runaway loop or grid in a script-made workload.
    #[arg(long, value_name = "N", default_value_t = engine::DEFAULT_MAX_WARP_INSTRUCTIONS)]
    max_warp_instructions: u64,
}

impl SampleArg {
    fn options(&self) -> engine::RunOptions {
        engine::RunOptions {
            sampling: self.sample,
            max_warp_instructions: self.max_warp_instructions,
        }
    }
}

#[derive(Args)]
struct SetArgs {
    /// Set a workload parameter: NAME=VALUE, NAME=V1,V2,... or NAME=FROM..=TO.
    /// Pins a swept parameter (or sweeps a fixed one). Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

#[derive(Args)]
struct ConfigSetArgs {
    /// Change a field of the device file: PATH=VALUE, PATH=V1,V2,... or
    /// PATH=FROM..=TO, PATH as written in the file (sm.count,
    /// l2.slice.size_bytes, load_rule=Lines(bytes: 32)). Several values give
    /// one device variant each; checked like the file. Repeatable.
    #[arg(long = "config-set", value_name = "PATH=VALUE")]
    config_set: Vec<String>,
}

#[derive(Args)]
struct RunArgs {
    /// Device configs (configs/*.ron) and workloads (workloads/*.ron), in any
    /// order: each file says which it is. Every workload runs on every device.
    #[arg(value_name = "CONFIG... WORKLOAD...", required = true, num_args = 2..)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    set: SetArgs,
    #[command(flatten)]
    config_set: ConfigSetArgs,
    /// Write all columns as CSV to this file ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    csv: Option<PathBuf>,
    /// Write all columns as JSON to this file ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Draw bandwidth against the swept parameter to an .svg or .png file.
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// The plot's x axis: a workload parameter or a --config-set path with
    /// integer values (default: the parameter with the most values).
    #[arg(long = "plot-x", value_name = "NAME")]
    plot_x: Option<String>,
    /// Run only the I-th of N parts of the sweep (1 <= I <= N); `gpusim merge` joins them.
    #[arg(long, value_name = "I/N")]
    shard: Option<sweep::Shard>,
    /// Continue a stopped run from its journal (OUT.journal beside the --csv/--json file).
    #[arg(long)]
    resume: bool,
    #[command(flatten)]
    jobs: JobsArg,
    #[command(flatten)]
    sample: SampleArg,
    /// No progress bar and no table (files are still written).
    #[arg(short, long)]
    quiet: bool,
    /// Named device variants (from a study file).
    #[arg(skip)]
    variants: Vec<variants::Named>,
}

#[derive(Args)]
struct ExplainArgs {
    /// Device config (configs/*.ron).
    config: PathBuf,
    /// Workload (workloads/*.ron).
    workload: PathBuf,
    #[command(flatten)]
    set: SetArgs,
    #[command(flatten)]
    config_set: ConfigSetArgs,
    /// Global warp index (block * warps per block + warp in block).
    #[arg(long, default_value_t = 0)]
    warp: u64,
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, Vec<i64>)>, Diag> {
    let parsed: Vec<(String, Vec<i64>)> = sets
        .iter()
        .map(|s| engine::parse_set(s))
        .collect::<Result<_, _>>()?;
    for (i, (n, _)) in parsed.iter().enumerate() {
        if parsed[..i].iter().any(|(m, _)| m == n) {
            return Err(Diag::msg(format!(
                "--set {n} is given twice: give its values once (--set {n}=1,2,4)"
            )));
        }
    }
    Ok(parsed)
}

fn run(args: RunArgs) -> Result<(), Diag> {
    let mut devs: Vec<DeviceSpec> = Vec::new();
    let mut wls: Vec<LoadedWorkload> = Vec::new();
    let config_sets = variants::parse(&args.config_set.config_set)?;
    let mut varied = variants::Variants::default();
    let (mut dev_files, mut wl_files) = (Vec::new(), Vec::new());
    // The file each device came from.
    let mut dev_of: Vec<std::path::PathBuf> = Vec::new();
    for f in &args.files {
        match engine::file_kind(f)? {
            FileKind::Device => {
                for d in variants::load(f, &args.variants, &config_sets, &mut varied)? {
                    // Rows and plot series are keyed by the device's name.
                    if let Some(k) = devs.iter().position(|e| e.name == d.name) {
                        return Err(Diag::msg(format!(
                            "{} and {} both name a device `{}`: their results could not be \
                             told apart; give one another `name`",
                            dev_of[k].display(),
                            f.display(),
                            d.name
                        )));
                    }
                    devs.push(d);
                    dev_of.push(f.clone());
                }
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
    check_outputs(&args, dev_files.iter().chain(&wl_files))?;
    if args.shard.is_some() && args.plot.is_some() {
        return Err(Diag::msg(
            "--plot draws a whole sweep: plot without --shard, or merge the shards first",
        ));
    }
    // The devices as loaded (variants included) and how points are run
    // are part of the sweep's identity, beside the files' bytes.
    let opts = args.sample.options();
    let extra = format!("{devs:?} {opts:?}");
    let id = sweep::SweepId::of(&dev_files, &wl_files, &sets, &extra)?;
    // More workers than points would only cost threads.
    let points = devs.len() * jobs.iter().map(Vec::len).sum::<usize>();
    let sweep = sweep::Sweep::new(devs, wls, jobs, id)?;
    let (devs, wls) = (&sweep.devs, &sweep.wls);
    let journal = journal::for_outputs(
        [&args.csv, &args.json]
            .into_iter()
            .flatten()
            .map(|p| p.as_path()),
    );
    let plan = sweep::Plan {
        shard: args.shard.unwrap_or(sweep::Shard::WHOLE),
        journal: journal.as_deref(),
        resume: args.resume,
    };
    let pool = worker_pool(args.jobs.jobs.map(|j| j.min(points.max(1))))?;
    let bar = progress::Progress::start(0, args.quiet);
    let done = pool.install(|| sweep::execute(&sweep, &plan, &opts, &bar));
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
        let whole = output::csv_with(&params, &varied, all);
        let text = match tag {
            Some(t) => output::csv_shard(t, &whole),
            None => whole,
        };
        output::write_file(p, &text)?;
    }
    if let Some(p) = &args.json {
        let text = match tag {
            Some(t) => output::json_shard(t, &params, &varied, all),
            None => output::json_with(&params, &varied, all),
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
            match args.plot_x.as_deref() {
                Some(x) if varied.paths.iter().any(|p| p == x) => {
                    let (d, r) = varied.field_as_param(x, devs, results)?;
                    plot::plot_x(&path, &wl.workload, &d, &r, Some(x))?
                }
                x => plot::plot_x(&path, &wl.workload, devs, results, x)?,
            }
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
            let sets = variants::parse(&a.config_set.config_set)?;
            if let Some(s) = sets.iter().find(|s| s.values.len() > 1) {
                return Err(Diag::msg(format!(
                    "--config-set {}: explain shows one device; give one value",
                    s.path
                )));
            }
            let dev = variants::load(&a.config, &[], &sets, &mut Default::default())?.remove(0);
            let wl = engine::load_workload(&a.workload)?;
            let sets = parse_sets(&a.set.set)?;
            if let Some((n, _)) = sets.iter().find(|(_, v)| v.len() > 1) {
                return Err(Diag::msg(format!(
                    "--set {n}: explain shows one point; give one value"
                )));
            }
            let text = explain::explain(&dev, &wl, &sets, a.warp)?;
            print!("{text}");
            Ok(())
        })(),
        Cmd::Study(a) => study(a),
        Cmd::Describe(a) => (|| {
            let sets = variants::parse(&a.config_set.config_set)?;
            let devs = variants::load(&a.config, &[], &sets, &mut Default::default())?;
            let text: Vec<String> = devs.iter().map(|d| describe::describe(d, a.regs)).collect();
            print!("{}", text.join("\n"));
            Ok(())
        })(),
        Cmd::Merge(a) => merge::merge(&a.out, &a.shards),
        Cmd::Validate(a) => variants::parse(&a.config_set).and_then(|sets| {
            validate::validate(&validate::Options {
                config_set: sets,
                data: a.data,
                devices: a.device,
                families: a.family,
                ci: a.ci,
                csv: a.csv,
                plot: a.plot,
                jobs: a.jobs.jobs,
                run: engine::RunOptions {
                    sampling: a.sample,
                    ..Default::default()
                },
                quiet: a.quiet,
            })
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
