//! Physical laws of the timed model, checked on random kernels.
//!
//! A generator writes random workloads in gpusim's kernel IR: 1-3 buffers (some
//! shifted by a multiple of 16 bytes from their 256-byte aligned base); a kernel of
//! 1-6 statements mixing `Load`s and `Store`s of 1, 2, 4, 8 and 16 bytes at naturally
//! aligned indices, `Let`s of affine indices (stride 0-40 elements, random offset,
//! optionally plus a loop variable), `If`s on lane-dependent conditions (divergence)
//! and `For` loops of 1-4 iterations (some with per-lane bounds); stores that wait
//! for loaded values (`src`) or not; grids of 1-300 blocks (1-D, sometimes 2-D);
//! blocks of 32-1024 threads, whole warps or not (48, 100, ...); 8-64 registers per
//! thread. Every buffer is sized from the largest index its accesses reach, so no
//! access is out of bounds. Each case is rendered as workload RON text (a valid
//! workload file), parsed by the same loader as `workloads/*.ron`, and run through
//! [`engine::Simulation`] on one of the eight devices in `configs/` (case `n` runs on
//! device `n % 8`). Launches a device refuses (`SimError::Launch`: block too large,
//! too many registers) are skipped and counted, not failures.
//!
//! The laws, one test each:
//!
//! 1. `law1_utilisations_are_fractions`: every utilisation in `Bottlenecks`
//!    (`lsu_util`, `l1_util`, `noc_util`, `l2_util`, `dram_util`,
//!    `achieved_occupancy`, and the fraction `dram_row_hit_rate`) is finite
//!    and in `[0, 1 + 1e-9]`; `load_latency_cycles`
//!    is finite and `>= 0`.
//! 2. `law2_dram_traffic_within_peak_bandwidth`: `(dram__bytes_read +
//!    dram__bytes_write) / kernel time <= DeviceSpec::peak_gbps()`, where the kernel
//!    time is `counters.time_ps` minus the fixed `launch.kernel_overhead_ns`.
//! 3. `law3_time_at_least_counter_bounds`: from the counters alone, the kernel time
//!    (without the fixed overhead) is at least `warp_instructions / (sm.count *
//!    sm.issue_per_cycle)` cycles; at least `(L2 read + write sectors) * 32 B /
//!    (l2.slices * l2.slice_bytes_per_cycle)` cycles where there is an L2; at least
//!    DRAM bytes / peak bandwidth; and not negative.
//! 4. `law4_coalescing_counters_ignore_timing`: the counters that come from coalescing
//!    alone (`requests_ld/st`, `sectors_ld/st`, `transactions`, `warp_instructions`)
//!    do not change when timing parameters do: each case is re-run on copies of its
//!    device with (a) every DRAM timing (tRCD, tRP, CL, tRAS, tWTR, tRTW, tFAW,
//!    tCCD_L) doubled, (b) `dram_latency_cycles` x3, (c) L1/L2 hit latencies (and
//!    the far-partition latency) x2 + 17 cycles (devices with a cache), (d)
//!    `sm.clock_mhz` halved; and (e) the functional pass that sampled runs
//!    count with (`engine::sim::count_functional`, no timed model) counts
//!    the same.
//! 5. `law5_runs_are_deterministic`: running the same case twice gives identical
//!    `Counters` and bit-identical `Bottlenecks`.
//!
//! plus `generator_makes_valid_kernels`: no generated kernel faults or fails to
//! compile, every device checks some cases, and the generator reaches every
//! feature it claims (a failure there is a bug in this file, not in the model).
//!
//! Time bounds allow a relative slack of 1e-6 (and 1 ps, the resolution of
//! `time_ps`), only for rounding.
//!
//! All cases are generated and run once per test binary (in parallel, on rayon's
//! pool); each law's test then reads its violations. For every (law, what broke,
//! device), the test reports how many cases broke it and the first such case,
//! shrunk greedily (fewer blocks and threads, statements removed or unwrapped,
//! strides, offsets and widths simplified, at most 1000 tries) while it still
//! breaks the same thing on the same device by a clear margin (half the first
//! case's excess, or 5 %, whichever is less); the message has the device, the
//! numbers and the kernel as a workload file, which `gpusim run configs/DEV.ron
//! FILE.ron` runs as is.
//!
//! The generator, its RNG (SplitMix64, fixed seed) and the shrinker are written
//! here: `proptest` is a dependency of the engine and unit crates but not of the
//! root package, whose tests these are.
//!
//! Run the default 320 cases (40 per device; 4-8 s with `--release` on two cores,
//! shrinking included; `--nocapture` shows the summary: cases run, skipped as
//! unlaunchable per device, and how close the cases came to each limit):
//!
//! ```text
//! cargo test --release --test all laws -- --nocapture
//! ```
//!
//! A million cases (about 20 ms of CPU per case, so some 5-6 CPU-hours, spread
//! over all cores; `GPUSIM_LAW_SEED=N` picks another stream; case `n` of a stream
//! is the same whatever the case count, so `GPUSIM_LAW_CASES=n+1` reproduces it):
//!
//! ```text
//! GPUSIM_LAW_CASES=1000000 cargo test --release --test all laws -- --nocapture
//! ```

use engine::{Bottlenecks, Counters, DeviceSpec, SimError, Simulation, Workload};
use rayon::prelude::*;
use simt_core::ir::ron_options;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Instant;

/// The devices, in `configs/`; case `n` runs on `DEVICES[n % 8]`.
const DEVICES: [&str; 8] = [
    "c870", "c1060", "c2050", "p100", "v100", "a100", "h100", "h200",
];
/// Cases run by default (`GPUSIM_LAW_CASES` overrides).
const DEFAULT_CASES: u64 = 320;
/// Seed of the case stream (`GPUSIM_LAW_SEED` overrides).
const DEFAULT_SEED: u64 = 0x6770_7573_696d_4c57;
/// Relative slack of the time and bandwidth bounds, for rounding only.
const SLACK: f64 = 1e-6;
/// Slack of the utilisation bound.
const UTIL_SLACK: f64 = 1e-9;
/// Upper bound on a case's estimated work (warps x warp-level line requests and
/// instructions): grids are halved until a case fits, so that a run stays well
/// under 10 ms.
const WORK_BUDGET: u64 = 30_000;
/// At most this many candidate cases are simulated while shrinking one example.
const SHRINK_TRIES: usize = 1000;
/// How close cases come to each limit, reported in the summary (laws 1-3):
/// the largest utilisation, DRAM bandwidth over peak, each time bound over
/// the kernel time.
const NEAR: [&str; 5] = [
    "largest utilisation",
    "DRAM bandwidth / peak",
    "issue bound",
    "L2 bound",
    "DRAM bound",
];
/// Cases generated and run per parallel batch.
const BATCH: u64 = 2048;

// ---------------------------------------------------------------------------
// Random numbers

/// SplitMix64: small, fast, and every case gets its own stream.
struct Rng(u64);

impl Rng {
    fn for_case(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    /// True with probability `pct` percent.
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------------------
// Cases

/// A generated kernel and its launch: rendered to workload RON by [`render`].
#[derive(Debug, Clone, PartialEq)]
struct Case {
    /// Number in the case stream.
    id: u64,
    /// Index into [`DEVICES`].
    dev: usize,
    /// gridDim.x, gridDim.y.
    grid: [u32; 2],
    /// blockDim.x.
    block: u32,
    regs: u32,
    /// Per buffer: bytes added to its aligned base (a multiple of 16, so every
    /// width stays naturally aligned).
    base_offset: Vec<u32>,
    kernel: Vec<S>,
}

/// A statement. Variables: `g` (global thread index), `i<n>` (`Let`s), `k<n>`
/// (loop variables), `v<n>` (loaded values).
#[derive(Debug, Clone, PartialEq)]
enum S {
    /// `i<var> = stride * g + offset [+ kstride * k<loop>]`.
    Let {
        var: u32,
        stride: i64,
        offset: i64,
        k: Option<(u32, i64)>,
    },
    Load {
        buf: usize,
        width: i64,
        ix: Ix,
        dst: Option<u32>,
    },
    Store {
        buf: usize,
        width: i64,
        ix: Ix,
        src: Vec<u32>,
    },
    If {
        cond: Cond,
        then: Vec<S>,
        els: Vec<S>,
        /// Compiled with a predicate (its bodies hold shared accesses).
        pred: bool,
    },
    /// A shared-memory access of `sh` at word `(threadIdx.x * stride +
    /// offset) % words`, loading into `v<val>` or storing.
    Shared {
        store: bool,
        width: i64,
        stride: i64,
        offset: i64,
        val: Option<u32>,
    },
    /// `__syncthreads()` (only at the top level, where every warp of the
    /// block reaches it).
    Sync,
    /// `for k<var> in 0..iters`, or `0..1 + threadIdx.x % iters` when `lane`.
    For {
        var: u32,
        iters: u32,
        lane: bool,
        body: Vec<S>,
    },
}

/// The element index of an access.
#[derive(Debug, Clone, PartialEq)]
enum Ix {
    /// `i<var> + add`.
    Var { var: u32, add: i64 },
    /// `stride * g + offset`.
    Affine { stride: i64, offset: i64 },
}

#[derive(Debug, Clone, PartialEq)]
enum Cond {
    /// `threadIdx.x % m == r`.
    ModEq { m: u32, r: u32 },
    /// `threadIdx.x % m < r`.
    ModLt { m: u32, r: u32 },
    /// `threadIdx.x / 16 % 2 == 0`: half-warps.
    HalfWarp,
    /// `blockIdx.x % 2 == 1`: uniform in a warp.
    OddBlock,
    /// `g < limit`: the usual tail guard.
    Tail { limit: u64 },
}

struct Gen<'r> {
    rng: &'r mut Rng,
    nbufs: usize,
    left: u32,
    next_var: u32,
    next_loop: u32,
    next_val: u32,
    vars: Vec<u32>,
    loops: Vec<u32>,
    vals: Vec<u32>,
    threads: u64,
}

impl Gen<'_> {
    fn stride(&mut self) -> i64 {
        match self.rng.range(0, 99) {
            0..=14 => 0,
            15..=49 => 1,
            _ => self.rng.range(0, 40),
        }
    }
    fn offset(&mut self) -> i64 {
        match self.rng.range(0, 9) {
            0..=4 => 0,
            5..=8 => self.rng.range(0, 64),
            _ => self.rng.range(0, 5000),
        }
    }
    fn width(&mut self) -> i64 {
        self.rng.pick(&[1, 2, 4, 4, 4, 8, 8, 16])
    }
    fn ix(&mut self) -> Ix {
        if !self.vars.is_empty() && self.rng.chance(65) {
            let var = self.rng.pick(&self.vars);
            let add = if self.rng.chance(70) {
                0
            } else {
                self.rng.range(1, 40)
            };
            Ix::Var { var, add }
        } else {
            Ix::Affine {
                stride: self.stride(),
                offset: self.offset(),
            }
        }
    }
    fn cond(&mut self) -> Cond {
        match self.rng.range(0, 9) {
            0..=3 => {
                let m = self.rng.range(2, 5) as u32;
                Cond::ModEq {
                    m,
                    r: self.rng.range(0, m as i64 - 1) as u32,
                }
            }
            4..=5 => {
                let m = self.rng.pick(&[2, 3, 8, 16, 32, 33, 64]);
                Cond::ModLt {
                    m,
                    r: self.rng.range(1, m as i64 - 1) as u32,
                }
            }
            6 => Cond::HalfWarp,
            7 => Cond::OddBlock,
            _ => Cond::Tail {
                limit: self.rng.range(1, self.threads as i64) as u64,
            },
        }
    }

    /// A new loaded value's number, in scope from now on.
    fn new_val(&mut self) -> u32 {
        self.next_val += 1;
        self.vals.push(self.next_val - 1);
        self.next_val - 1
    }

    /// A shared-memory access (see [`S::Shared`]).
    fn shared(&mut self) -> S {
        let store = self.rng.chance(50);
        let val = (!store && self.rng.chance(60)).then(|| self.new_val());
        S::Shared {
            store,
            width: self.rng.pick(&[4, 4, 4, 8, 16]),
            stride: self.rng.pick(&[0, 1, 1, 2, 3, 4, 8, 16, 17, 32, 33]),
            offset: self.rng.range(0, 40),
            val,
        }
    }

    /// Statements of one block, while the kernel's budget lasts.
    fn block(&mut self, depth: u32, most: u32) -> Vec<S> {
        let vars = self.vars.len();
        let mut out = Vec::new();
        let n = self.rng.range(1, most.min(self.left).max(1) as i64) as u32;
        for _ in 0..n {
            if self.left == 0 {
                break;
            }
            self.left -= 1;
            let nested = depth < 2 && self.left > 0;
            let s = match self.rng.range(0, 99) {
                0..=29 => {
                    let dst = self.rng.chance(70).then(|| self.new_val());
                    S::Load {
                        buf: self.rng.range(0, self.nbufs as i64 - 1) as usize,
                        width: self.width(),
                        ix: self.ix(),
                        dst,
                    }
                }
                30..=59 => {
                    let mut src = Vec::new();
                    if !self.vals.is_empty() && self.rng.chance(65) {
                        src.push(self.rng.pick(&self.vals));
                        if self.rng.chance(30) {
                            let v = self.rng.pick(&self.vals);
                            if !src.contains(&v) {
                                src.push(v);
                            }
                        }
                    }
                    S::Store {
                        buf: self.rng.range(0, self.nbufs as i64 - 1) as usize,
                        width: self.width(),
                        ix: self.ix(),
                        src,
                    }
                }
                60..=77 => {
                    let k = if !self.loops.is_empty() && self.rng.chance(60) {
                        Some((self.rng.pick(&self.loops), self.rng.range(1, 64)))
                    } else {
                        None
                    };
                    let var = self.next_var;
                    self.next_var += 1;
                    let s = S::Let {
                        var,
                        stride: self.stride(),
                        offset: self.offset(),
                        k,
                    };
                    self.vars.push(var);
                    s
                }
                78..=88 if nested => {
                    let cond = self.cond();
                    let pred = self.rng.chance(25);
                    let (then, els) = if pred {
                        // nvcc's predicated body: shared accesses alone,
                        // issued by every warp under the predicate.
                        let then = (0..self.rng.range(1, 3)).map(|_| self.shared()).collect();
                        let els = self.rng.chance(30).then(|| self.shared());
                        (then, els.into_iter().collect())
                    } else {
                        let then = self.block(depth + 1, 3);
                        let more = self.left > 0 && self.rng.chance(40);
                        (
                            then,
                            if more {
                                self.block(depth + 1, 2)
                            } else {
                                Vec::new()
                            },
                        )
                    };
                    S::If {
                        cond,
                        then,
                        els,
                        pred,
                    }
                }
                89..=94 if nested => {
                    let var = self.next_loop;
                    self.next_loop += 1;
                    let iters = self.rng.range(1, 4) as u32;
                    let lane = self.rng.chance(30);
                    self.loops.push(var);
                    let body = self.block(depth + 1, 3);
                    self.loops.pop();
                    S::For {
                        var,
                        iters,
                        lane,
                        body,
                    }
                }
                95..=97 => self.shared(),
                98..=99 if depth == 0 => S::Sync,
                _ => {
                    self.left += 1;
                    continue;
                }
            };
            out.push(s);
        }
        self.vars.truncate(vars);
        out
    }
}

/// Case `id` of the stream `seed`.
fn generate(seed: u64, id: u64) -> Case {
    let rng = &mut Rng::for_case(seed, id);
    let grid = if rng.chance(85) {
        let gx = if rng.chance(30) {
            rng.range(1, 8)
        } else {
            rng.range(1, 300)
        };
        [gx as u32, 1]
    } else {
        let gx = rng.range(1, 20);
        [gx as u32, rng.range(1, 300 / gx) as u32]
    };
    let block = if rng.chance(60) {
        rng.pick(&[32, 64, 96, 128, 192, 256, 512, 768, 1024])
    } else if rng.chance(50) {
        rng.pick(&[33, 48, 100, 160, 200, 300, 500, 1000])
    } else {
        rng.range(32, 1024) as u32
    };
    let regs = if rng.chance(50) {
        rng.pick(&[8, 16, 32, 64])
    } else {
        rng.range(8, 64) as u32
    };
    let nbufs = rng.range(1, 3) as usize;
    let base_offset = (0..nbufs)
        .map(|_| {
            if rng.chance(80) {
                0
            } else {
                16 * rng.range(1, 15) as u32
            }
        })
        .collect();
    let threads = grid[0] as u64 * grid[1] as u64 * block as u64;
    let mut g = Gen {
        rng,
        nbufs,
        left: 0,
        next_var: 0,
        next_loop: 0,
        next_val: 0,
        vars: Vec::new(),
        loops: Vec::new(),
        vals: Vec::new(),
        threads,
    };
    g.left = g.rng.range(1, 6) as u32;
    let kernel = g.block(0, 6);
    let mut case = Case {
        id,
        dev: (id % DEVICES.len() as u64) as usize,
        grid,
        block,
        regs,
        base_offset,
        kernel,
    };
    // Keep the case small: halve the grid until the estimated work fits.
    while work(&case) > WORK_BUDGET && case.grid[0] * case.grid[1] > 1 {
        if case.grid[1] > 1 {
            case.grid[1] /= 2;
        } else {
            case.grid[0] /= 2;
        }
    }
    case
}

/// Strides (in elements) of a `Let` variable per unit of `g`, for [`work`].
fn g_stride(kernel: &[S], var: u32) -> i64 {
    fn find(ss: &[S], var: u32) -> Option<i64> {
        ss.iter().find_map(|s| match s {
            S::Let { var: v, stride, .. } if *v == var => Some(*stride),
            S::If { then, els, .. } => find(then, var).or_else(|| find(els, var)),
            S::For { body, .. } => find(body, var),
            _ => None,
        })
    }
    find(kernel, var).unwrap_or(1)
}

/// Estimated work of a case: warps x (instructions + 32-byte sectors per
/// warp-level access), loops counted at their longest.
fn work(case: &Case) -> u64 {
    fn walk(ss: &[S], mult: u64, all: &[S]) -> u64 {
        ss.iter()
            .map(|s| match s {
                S::Let { .. } => mult,
                S::Load { width, ix, .. } | S::Store { width, ix, .. } => {
                    let stride = match ix {
                        Ix::Var { var, .. } => g_stride(all, *var),
                        Ix::Affine { stride, .. } => *stride,
                    };
                    mult * (1 + (stride * width).clamp(1, 32) as u64)
                }
                S::Shared { width, .. } => mult * (1 + (*width as u64 / 4).max(1) * 8),
                S::Sync => mult,
                S::If { then, els, .. } => mult + walk(then, mult, all) + walk(els, mult, all),
                S::For { iters, body, .. } => {
                    mult * (*iters as u64 + 1) + walk(body, mult * *iters as u64, all)
                }
            })
            .sum()
    }
    let warps = case.grid[0] as u64 * case.grid[1] as u64 * case.block.div_ceil(32) as u64;
    warps * (1 + walk(&case.kernel, 1, &case.kernel))
}

// ---------------------------------------------------------------------------
// Rendering

struct Env {
    gmax: i64,
    lets: BTreeMap<u32, i64>,
    loops: Vec<(u32, i64)>,
    vals: Vec<u32>,
    need: Vec<i64>,
}

impl Env {
    fn ix(&self, ix: &Ix) -> Option<(String, i64)> {
        match ix {
            Ix::Var { var, add } => {
                let m = self.lets.get(var)?;
                let text = if *add == 0 {
                    format!("i{var}")
                } else {
                    format!("i{var} + {add}")
                };
                Some((text, m + add))
            }
            Ix::Affine { stride, offset } => {
                Some((affine(*stride, "g", *offset), stride * self.gmax + offset))
            }
        }
    }

    fn stmts(&mut self, ss: &[S], depth: usize, out: &mut String) -> Option<()> {
        for s in ss {
            self.stmt(s, depth, out)?;
        }
        Some(())
    }

    fn stmt(&mut self, s: &S, depth: usize, out: &mut String) -> Option<()> {
        let pad = "    ".repeat(depth);
        match s {
            S::Let {
                var,
                stride,
                offset,
                k,
            } => {
                let mut max = stride * self.gmax + offset;
                let mut text = affine(*stride, "g", *offset);
                if let Some((kv, ks)) = k {
                    let (_, kmax) = self.loops.iter().find(|(l, _)| l == kv)?;
                    max += ks * kmax;
                    text = format!("{text} + {}", affine(*ks, &format!("k{kv}"), 0));
                }
                if self.lets.insert(*var, max).is_some() {
                    return None;
                }
                writeln!(out, "{pad}Let(\"i{var}\", \"{text}\"),").ok()?;
            }
            S::Load {
                buf,
                width,
                ix,
                dst,
            } => {
                let (text, max) = self.ix(ix)?;
                let n = self.need.get_mut(*buf)?;
                *n = (*n).max((max + 1) * width);
                write!(
                    out,
                    "{pad}Load(buf: \"{}\", index: \"{text}\", width: \"{width}\"",
                    buf_name(*buf)
                )
                .ok()?;
                if let Some(d) = dst {
                    self.vals.push(*d);
                    write!(out, ", dst: \"v{d}\"").ok()?;
                }
                writeln!(out, "),").ok()?;
            }
            S::Store {
                buf,
                width,
                ix,
                src,
            } => {
                let (text, max) = self.ix(ix)?;
                let n = self.need.get_mut(*buf)?;
                *n = (*n).max((max + 1) * width);
                write!(
                    out,
                    "{pad}Store(buf: \"{}\", index: \"{text}\", width: \"{width}\"",
                    buf_name(*buf)
                )
                .ok()?;
                if !src.is_empty() {
                    let names: Vec<String> = src
                        .iter()
                        .map(|v| self.vals.contains(v).then(|| format!("\"v{v}\"")))
                        .collect::<Option<_>>()?;
                    write!(out, ", src: [{}]", names.join(", ")).ok()?;
                }
                writeln!(out, "),").ok()?;
            }
            S::Shared {
                store,
                width,
                stride,
                offset,
                val,
            } => {
                let words = SHARED_BYTES / width;
                write!(
                    out,
                    "{pad}{}(buf: \"sh\", index: \"(threadIdx.x * {stride} + {offset}) % {words}\", \
                     width: \"{width}\"",
                    if *store { "Store" } else { "Load" }
                )
                .ok()?;
                if let Some(d) = val {
                    self.vals.push(*d);
                    write!(out, ", dst: \"v{d}\"").ok()?;
                }
                writeln!(out, "),").ok()?;
            }
            S::Sync => writeln!(out, "{pad}Sync,").ok()?,
            S::If {
                cond,
                then,
                els,
                pred,
            } => {
                let c = match cond {
                    Cond::ModEq { m, r } => format!("threadIdx.x % {m} == {r}"),
                    Cond::ModLt { m, r } => format!("threadIdx.x % {m} < {r}"),
                    Cond::HalfWarp => "threadIdx.x / 16 % 2 == 0".to_string(),
                    Cond::OddBlock => "blockIdx.x % 2 == 1".to_string(),
                    Cond::Tail { limit } => format!("g < {limit}"),
                };
                let p = if *pred { ", predicated: true" } else { "" };
                writeln!(out, "{pad}If(cond: \"{c}\"{p}, then: [").ok()?;
                self.stmts(then, depth + 1, out)?;
                if els.is_empty() {
                    writeln!(out, "{pad}]),").ok()?;
                } else {
                    writeln!(out, "{pad}], else: [").ok()?;
                    self.stmts(els, depth + 1, out)?;
                    writeln!(out, "{pad}]),").ok()?;
                }
            }
            S::For {
                var,
                iters,
                lane,
                body,
            } => {
                let to = if *lane {
                    format!("1 + threadIdx.x % {iters}")
                } else {
                    iters.to_string()
                };
                writeln!(
                    out,
                    "{pad}For(var: \"k{var}\", from: \"0\", to: \"{to}\", body: ["
                )
                .ok()?;
                self.loops.push((*var, *iters as i64 - 1));
                self.stmts(body, depth + 1, out)?;
                self.loops.pop();
                writeln!(out, "{pad}]),").ok()?;
            }
        }
        Some(())
    }
}

/// `stride * var + offset`, without the terms that do nothing.
fn affine(stride: i64, var: &str, offset: i64) -> String {
    match (stride, offset) {
        (0, o) => o.to_string(),
        (1, 0) => var.to_string(),
        (s, 0) => format!("{s} * {var}"),
        (1, o) => format!("{var} + {o}"),
        (s, o) => format!("{s} * {var} + {o}"),
    }
}

/// Bytes of the shared buffer `sh` every case declares.
const SHARED_BYTES: i64 = 4096;

fn buf_name(i: usize) -> &'static str {
    ["a", "b", "c"][i]
}

/// The case as a workload file, or `None` when the case is inconsistent (a
/// shrinking step removed something another statement uses).
fn render(case: &Case) -> Option<String> {
    let [gx, gy] = case.grid;
    let threads = gx as i64 * gy as i64 * case.block as i64;
    let mut env = Env {
        gmax: threads - 1,
        lets: BTreeMap::new(),
        loops: Vec::new(),
        vals: Vec::new(),
        need: vec![16; case.base_offset.len()],
    };
    let mut body = String::new();
    env.stmts(&case.kernel, 2, &mut body)?;
    let mut out = String::new();
    let dev = DEVICES[case.dev];
    writeln!(
        out,
        "// law case #{} for {dev} (tests/all/laws.rs)\nWorkload(\n    name: \"law_case\",\n    \
         params: [],\n    buffers: [",
        case.id
    )
    .ok()?;
    for (i, (n, off)) in env.need.iter().zip(&case.base_offset).enumerate() {
        write!(out, "        (name: \"{}\", bytes: \"{n}\"", buf_name(i)).ok()?;
        if *off != 0 {
            write!(out, ", base_offset: \"{off}\"").ok()?;
        }
        writeln!(out, "),").ok()?;
    }
    let (grid, g) = if gy > 1 {
        (
            format!("[\"{gx}\", \"{gy}\"]"),
            "(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x",
        )
    } else {
        (
            format!("[\"{gx}\"]"),
            "blockIdx.x * blockDim.x + threadIdx.x",
        )
    };
    writeln!(
        out,
        "    ],\n    shared: [(name: \"sh\", bytes: \"{SHARED_BYTES}\")],\n    grid: {grid},\n    block: [\"{}\"],\n    regs_per_thread: {},\n    \
         useful_bytes: \"0\",\n    kernel: [\n        Let(\"g\", \"{g}\"),\n{body}    ],\n)",
        case.block, case.regs
    )
    .ok()?;
    Some(out)
}

// ---------------------------------------------------------------------------
// Devices

/// A device and the copies of it with timing parameters changed (law 4).
struct DevSet {
    base: DeviceSpec,
    variants: Vec<(&'static str, DeviceSpec)>,
}

fn devices() -> &'static [DevSet] {
    static DEVS: OnceLock<Vec<DevSet>> = OnceLock::new();
    DEVS.get_or_init(|| {
        DEVICES
            .iter()
            .map(|name| {
                let base = super::device(name);
                let mut variants = Vec::new();
                let mut d = base.clone();
                for t in [
                    &mut d.dram.t_rcd_ns,
                    &mut d.dram.t_rp_ns,
                    &mut d.dram.t_cl_ns,
                    &mut d.dram.t_ras_ns,
                    &mut d.dram.t_wtr_ns,
                    &mut d.dram.t_rtw_ns,
                    &mut d.dram.t_wr_ns,
                    &mut d.dram.t_faw_ns,
                    &mut d.dram.t_ccd_l_ns,
                    &mut d.dram.t_rfc_ns,
                ] {
                    *t *= 2.0;
                }
                variants.push(("DRAM timings x2", d));
                let mut d = base.clone();
                d.dram_latency_cycles *= 3;
                variants.push(("dram_latency_cycles x3", d));
                if base.l1.is_some() || base.l2.is_some() {
                    let mut d = base.clone();
                    if let Some(l1) = &mut d.l1 {
                        l1.hit_latency_cycles = l1.hit_latency_cycles * 2 + 17;
                    }
                    if let Some(l2) = &mut d.l2 {
                        l2.hit_latency_cycles = l2.hit_latency_cycles * 2 + 17;
                        l2.far_latency_cycles = l2.far_latency_cycles * 2 + 17;
                    }
                    variants.push(("cache hit latencies x2 + 17", d));
                }
                let mut d = base.clone();
                d.sm.clock_mhz /= 2.0;
                variants.push(("sm.clock_mhz / 2", d));
                for (what, d) in &variants {
                    d.validate()
                        .unwrap_or_else(|e| panic!("{name} with {what}: {e:?}"));
                }
                DevSet { base, variants }
            })
            .collect()
    })
}

// ---------------------------------------------------------------------------
// Checking

/// One broken law in one case.
#[derive(Debug, Clone)]
struct Violation {
    law: u8,
    /// What broke, e.g. `dram_util`: the key a shrunk example must keep.
    what: String,
    /// The numbers.
    detail: String,
    /// By how much: the measured value over its limit (> 1; infinite where
    /// there is no such ratio). A shrunk example must keep a clear excess.
    ratio: f64,
}

enum Outcome {
    /// The device refuses the launch.
    Skipped,
    /// The case does not compile or faults: a bug in this file.
    Invalid(String),
    /// The violations, and how close the case came to each limit (measured
    /// over limit, per [`NEAR`] key).
    Checked(Vec<Violation>, Vec<(&'static str, f64)>),
}

fn simulate(dev: &DeviceSpec, wl: &Workload, regs: u32) -> Result<(Counters, Bottlenecks), String> {
    let inst = wl.instantiate(&Vec::new()).map_err(|d| format!("{d:?}"))?;
    Simulation::new(dev, &inst.program, regs)
        .run()
        .map_err(|e| match e {
            SimError::Launch(m) => format!("launch: {m}"),
            other => format!("{other:?}"),
        })
}

fn utilisations(b: &Bottlenecks) -> [(&'static str, f64); 7] {
    [
        ("lsu_util", b.lsu_util),
        ("l1_util", b.l1_util),
        ("noc_util", b.noc_util),
        ("l2_util", b.l2_util),
        ("dram_util", b.dram_util),
        ("achieved_occupancy", b.achieved_occupancy),
        ("dram_row_hit_rate", b.dram_row_hit_rate),
    ]
}

fn bits(b: &Bottlenecks) -> [u64; 9] {
    [
        b.lsu_util.to_bits(),
        b.l1_util.to_bits(),
        b.noc_util.to_bits(),
        b.l2_util.to_bits(),
        b.dram_util.to_bits(),
        b.load_latency_cycles.to_bits(),
        b.achieved_occupancy.to_bits(),
        b.dram_row_hit_rate.to_bits(),
        b.blocks_per_sm as u64,
    ]
}

fn coalescing(c: &Counters) -> [(&'static str, u64); 12] {
    [
        ("requests_ld", c.requests_ld),
        ("requests_st", c.requests_st),
        ("sectors_ld", c.sectors_ld),
        ("sectors_st", c.sectors_st),
        ("transactions_32b", c.transactions[0]),
        ("transactions_64b", c.transactions[1]),
        ("transactions_128b", c.transactions[2]),
        ("warp_instructions", c.warp_instructions),
        ("shared_wavefronts_ld", c.shared_wavefronts_ld),
        ("shared_wavefronts_st", c.shared_wavefronts_st),
        ("shared_conflicts_ld", c.shared_conflicts_ld),
        ("shared_conflicts_st", c.shared_conflicts_st),
    ]
}

/// Runs `case` and checks the laws (only law `only`, when given: shrinking
/// runs no more than it needs).
fn check(case: &Case, only: Option<u8>) -> Outcome {
    let Some(ron) = render(case) else {
        return Outcome::Invalid("inconsistent case".into());
    };
    let wl: Workload = match ron_options().from_str(&ron) {
        Ok(w) => w,
        Err(e) => return Outcome::Invalid(format!("RON: {e}")),
    };
    if let Err(d) = wl.validate() {
        return Outcome::Invalid(format!("{d:?}"));
    }
    let set = &devices()[case.dev];
    let dev = &set.base;
    let (c, b) = match simulate(dev, &wl, case.regs) {
        Ok(x) => x,
        Err(m) if m.starts_with("launch: ") => return Outcome::Skipped,
        Err(m) => return Outcome::Invalid(m),
    };
    let want = |law: u8| only.is_none() || only == Some(law);
    let mut v = Vec::new();
    let mut near: Vec<(&'static str, f64)> = Vec::new();
    let mut broke = |law: u8, what: &str, ratio: f64, detail: String| {
        v.push(Violation {
            law,
            what: what.to_string(),
            detail,
            ratio: if ratio.is_nan() { f64::INFINITY } else { ratio },
        })
    };

    let overhead_ps = (dev.launch.kernel_overhead_ns * 1000.0).round();
    let kernel_ps = c.time_ps as f64 - overhead_ps;
    let dram_bytes = (c.dram_bytes_read + c.dram_bytes_write) as f64;
    let times = format!(
        "time_ps {} - overhead {overhead_ps} ps = kernel {kernel_ps} ps",
        c.time_ps
    );
    // measured / limit, for a limit that may be 0.
    let over = |x: f64, limit: f64| {
        if limit > 0.0 {
            x / limit
        } else {
            f64::INFINITY
        }
    };

    if want(1) {
        let most = utilisations(&b).iter().map(|u| u.1).fold(0.0, f64::max);
        near.push((NEAR[0], most));
        for (name, x) in utilisations(&b) {
            if !(x.is_finite() && (0.0..=1.0 + UTIL_SLACK).contains(&x)) {
                let r = if x > 1.0 { x } else { f64::INFINITY };
                broke(1, name, r, format!("{name} = {x} (not in [0, 1])"));
            }
        }
        let l = b.load_latency_cycles;
        if !(l.is_finite() && l >= 0.0) {
            let what = "load_latency_cycles";
            broke(1, what, f64::INFINITY, format!("{what} = {l}"));
        }
    }
    if want(2) {
        let peak = dev.peak_gbps();
        let gbps = dram_bytes / (kernel_ps / 1000.0);
        near.push((NEAR[1], over(dram_bytes, kernel_ps / 1000.0 * peak)));
        if dram_bytes > 0.0 && !(kernel_ps > 0.0 && gbps <= peak * (1.0 + SLACK)) {
            let r = if kernel_ps > 0.0 {
                gbps / peak
            } else {
                f64::INFINITY
            };
            broke(
                2,
                "DRAM bandwidth",
                r,
                format!(
                    "DRAM {} B read + {} B written in {kernel_ps} ps = {gbps:.2} GB/s > peak \
                     {peak:.2} GB/s ({r:.4}x; {times}; dram_util {:.4})",
                    c.dram_bytes_read, c.dram_bytes_write, b.dram_util
                ),
            );
        }
    }
    if want(3) {
        let cyc = dev.cycle_ps();
        let mut bound = |what: &'static str, ps: f64, how: String| {
            near.push((what, over(ps, kernel_ps)));
            if ps > kernel_ps * (1.0 + SLACK) + 1.0 {
                let r = over(ps, kernel_ps);
                broke(
                    3,
                    what,
                    r,
                    format!("{how} = {ps:.1} ps > kernel {kernel_ps} ps ({r:.4}x; {times})"),
                );
            }
        };
        let ipc = dev.sm.count as f64 * dev.sm.issue_per_cycle;
        bound(
            "issue bound",
            c.warp_instructions as f64 / ipc * cyc,
            format!(
                "{} warp instructions / ({} SMs x {} per cycle) x {cyc:.3} ps",
                c.warp_instructions, dev.sm.count, dev.sm.issue_per_cycle
            ),
        );
        if let Some(l2) = &dev.l2 {
            let sectors = c.l2_read_sectors + c.l2_write_sectors;
            let per_cycle = l2.slices as f64 * l2.slice_bytes_per_cycle;
            bound(
                "L2 bound",
                sectors as f64 * 32.0 / per_cycle * cyc,
                format!(
                    "({} + {}) L2 sectors x 32 B / ({} slices x {} B per cycle) x {cyc:.3} ps",
                    c.l2_read_sectors, c.l2_write_sectors, l2.slices, l2.slice_bytes_per_cycle
                ),
            );
        }
        let peak = dev.peak_gbps();
        bound(
            "DRAM bound",
            dram_bytes / peak * 1000.0,
            format!(
                "({} + {}) DRAM bytes / {peak:.2} GB/s",
                c.dram_bytes_read, c.dram_bytes_write
            ),
        );
        if kernel_ps < 0.0 {
            let detail = format!("kernel time negative: {times}");
            broke(3, "overhead", f64::INFINITY, detail);
        }
    }
    if want(4) {
        // (e) the functional pass that sampled runs count with, which has
        // no timed model at all.
        let f = wl
            .instantiate(&Vec::new())
            .map_err(|d| format!("{d:?}"))
            .and_then(|i| {
                engine::sim::count_functional(dev, &i.program, u64::MAX)
                    .map_err(|e| format!("{e:?}"))
            });
        match f {
            Ok(f) if coalescing(&f) != coalescing(&c) => broke(
                4,
                "functional pass",
                f64::INFINITY,
                format!("timed {c:?}\n    functional {f:?}"),
            ),
            Ok(_) => {}
            Err(m) => broke(4, "functional pass", f64::INFINITY, m),
        }
        for (what, d) in &set.variants {
            match simulate(d, &wl, case.regs) {
                Ok((c2, _)) => {
                    let diff: Vec<String> = coalescing(&c)
                        .iter()
                        .zip(coalescing(&c2))
                        .filter(|(a, b)| a.1 != b.1)
                        .map(|(a, b)| format!("{} {} -> {}", a.0, a.1, b.1))
                        .collect();
                    if !diff.is_empty() {
                        let detail = format!("with {what}: {}", diff.join(", "));
                        broke(4, what, f64::INFINITY, detail);
                    }
                }
                Err(m) => {
                    let detail = format!("with {what} the run fails: {m}");
                    broke(4, what, f64::INFINITY, detail);
                }
            }
        }
    }
    if want(5) {
        match simulate(dev, &wl, case.regs) {
            Ok((c2, b2)) => {
                if c2 != c {
                    let detail = format!("first {c:?}\n    second {c2:?}");
                    broke(5, "Counters", f64::INFINITY, detail);
                }
                if bits(&b2) != bits(&b) {
                    let detail = format!("first {b:?}\n    second {b2:?}");
                    broke(5, "Bottlenecks", f64::INFINITY, detail);
                }
            }
            Err(m) => {
                let detail = format!("the second run fails: {m}");
                broke(5, "Counters", f64::INFINITY, detail);
            }
        }
    }
    Outcome::Checked(v, near)
}

// ---------------------------------------------------------------------------
// Shrinking

/// Simpler versions of one statement (each a replacement sequence).
fn stmt_variants(s: &S) -> Vec<Vec<S>> {
    let mut out: Vec<Vec<S>> = Vec::new();
    let mut one = |x: S| {
        if &x != s {
            out.push(vec![x]);
        }
    };
    match s {
        S::Let {
            var,
            stride,
            offset,
            k,
        } => {
            for st in smaller(*stride, 0) {
                one(S::Let {
                    var: *var,
                    stride: st,
                    offset: *offset,
                    k: *k,
                });
            }
            for off in smaller(*offset, 0) {
                one(S::Let {
                    var: *var,
                    stride: *stride,
                    offset: off,
                    k: *k,
                });
            }
            one(S::Let {
                var: *var,
                stride: *stride,
                offset: *offset,
                k: None,
            });
        }
        S::Load {
            buf,
            width,
            ix,
            dst,
        } => {
            for (b, w, i) in simpler_access(*buf, *width, ix) {
                one(S::Load {
                    buf: b,
                    width: w,
                    ix: i,
                    dst: *dst,
                });
            }
            one(S::Load {
                buf: *buf,
                width: *width,
                ix: ix.clone(),
                dst: None,
            });
            one(S::Store {
                buf: *buf,
                width: *width,
                ix: ix.clone(),
                src: Vec::new(),
            });
        }
        S::Store {
            buf,
            width,
            ix,
            src,
        } => {
            one(S::Store {
                buf: *buf,
                width: *width,
                ix: ix.clone(),
                src: Vec::new(),
            });
            for (b, w, i) in simpler_access(*buf, *width, ix) {
                one(S::Store {
                    buf: b,
                    width: w,
                    ix: i,
                    src: src.clone(),
                });
            }
        }
        S::Shared {
            store,
            width,
            stride,
            offset,
            val,
        } => {
            for st in smaller(*stride, 0) {
                one(S::Shared {
                    store: *store,
                    width: *width,
                    stride: st,
                    offset: *offset,
                    val: *val,
                });
            }
            if *width > 4 {
                one(S::Shared {
                    store: *store,
                    width: 4,
                    stride: *stride,
                    offset: *offset,
                    val: *val,
                });
            }
            one(S::Shared {
                store: *store,
                width: *width,
                stride: *stride,
                offset: *offset,
                val: None,
            });
        }
        S::Sync => {}
        S::If {
            cond,
            then,
            els,
            pred,
        } => {
            out.push(then.clone());
            out.push(els.clone());
            if !els.is_empty() {
                out.push(then.iter().chain(els).cloned().collect());
                out.push(vec![S::If {
                    cond: cond.clone(),
                    then: then.clone(),
                    els: Vec::new(),
                    pred: *pred,
                }]);
            }
            for t in block_variants(then) {
                out.push(vec![S::If {
                    cond: cond.clone(),
                    then: t,
                    els: els.clone(),
                    pred: *pred,
                }]);
            }
            for e in block_variants(els) {
                out.push(vec![S::If {
                    cond: cond.clone(),
                    then: then.clone(),
                    els: e,
                    pred: *pred,
                }]);
            }
        }
        S::For {
            var,
            iters,
            lane,
            body,
        } => {
            out.push(body.clone());
            if *iters > 1 {
                out.push(vec![S::For {
                    var: *var,
                    iters: 1,
                    lane: false,
                    body: body.clone(),
                }]);
            }
            if *lane {
                out.push(vec![S::For {
                    var: *var,
                    iters: *iters,
                    lane: false,
                    body: body.clone(),
                }]);
            }
            for b in block_variants(body) {
                out.push(vec![S::For {
                    var: *var,
                    iters: *iters,
                    lane: *lane,
                    body: b,
                }]);
            }
        }
    }
    out
}

/// Smaller values than `x`, down to `floor`, boldest first: `floor`, half-way,
/// a quarter of the way, one less.
fn smaller(x: i64, floor: i64) -> Vec<i64> {
    let mut v: Vec<i64> = [floor, floor + (x - floor) / 2, x - (x - floor) / 4, x - 1]
        .into_iter()
        .filter(|&y| y >= floor && y < x)
        .collect();
    v.dedup();
    v
}

/// Simpler (buffer, width, index) of an access.
fn simpler_access(buf: usize, width: i64, ix: &Ix) -> Vec<(usize, i64, Ix)> {
    let mut out = Vec::new();
    if buf != 0 {
        out.push((0, width, ix.clone()));
    }
    if width != 4 {
        out.push((buf, 4, ix.clone()));
    }
    match ix {
        Ix::Var { var, add } => {
            for a in smaller(*add, 0) {
                out.push((buf, width, Ix::Var { var: *var, add: a }));
            }
        }
        Ix::Affine { stride, offset } => {
            for st in smaller(*stride, 0) {
                let ix = Ix::Affine {
                    stride: st,
                    offset: *offset,
                };
                out.push((buf, width, ix));
            }
            for off in smaller(*offset, 0) {
                let ix = Ix::Affine {
                    stride: *stride,
                    offset: off,
                };
                out.push((buf, width, ix));
            }
        }
    }
    out
}

/// Simpler versions of a block: a statement removed, or one simplified.
fn block_variants(ss: &[S]) -> Vec<Vec<S>> {
    let mut out = Vec::new();
    for i in 0..ss.len() {
        let mut v = ss.to_vec();
        v.remove(i);
        out.push(v);
    }
    for i in 0..ss.len() {
        for r in stmt_variants(&ss[i]) {
            let mut v = ss[..i].to_vec();
            v.extend(r);
            v.extend_from_slice(&ss[i + 1..]);
            out.push(v);
        }
    }
    out
}

/// Simpler versions of a whole case, boldest first.
fn case_variants(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    let mut with = |f: &dyn Fn(&mut Case)| {
        let mut x = c.clone();
        f(&mut x);
        if &x != c {
            out.push(x);
        }
    };
    // Drop buffers no access uses (the later ones move down a place).
    for i in 0..c.base_offset.len() {
        if c.base_offset.len() > 1 && !uses_buf(&c.kernel, i) {
            with(&|x| {
                x.base_offset.remove(i);
                renumber_bufs(&mut x.kernel, i);
            });
        }
    }
    with(&|x| x.grid = [1, 1]);
    for gy in smaller(c.grid[1] as i64, 1) {
        with(&|x| x.grid[1] = gy as u32);
    }
    for gx in smaller(c.grid[0] as i64, 1) {
        with(&|x| x.grid[0] = gx as u32);
    }
    with(&|x| x.block = x.block.min(32));
    with(&|x| x.block = x.block / 32 * 32);
    for b in smaller(c.block as i64, 1) {
        with(&|x| x.block = b as u32);
    }
    with(&|x| x.regs = x.regs.min(16));
    for i in 0..c.base_offset.len() {
        with(&|x| x.base_offset[i] = 0);
    }
    for k in block_variants(&c.kernel) {
        with(&|x| x.kernel = k.clone());
    }
    out
}

fn uses_buf(ss: &[S], b: usize) -> bool {
    ss.iter().any(|s| match s {
        S::Load { buf, .. } | S::Store { buf, .. } => *buf == b,
        S::If { then, els, .. } => uses_buf(then, b) || uses_buf(els, b),
        S::For { body, .. } => uses_buf(body, b),
        S::Let { .. } | S::Shared { .. } | S::Sync => false,
    })
}

/// Buffers after `gone` move down a place.
fn renumber_bufs(ss: &mut [S], gone: usize) {
    for s in ss {
        match s {
            S::Load { buf, .. } | S::Store { buf, .. } if *buf > gone => *buf -= 1,
            S::If { then, els, .. } => {
                renumber_bufs(then, gone);
                renumber_bufs(els, gone);
            }
            S::For { body, .. } => renumber_bufs(body, gone),
            _ => {}
        }
    }
}

/// The violation of `law`/`what` by at least `ratio` that `case` shows, if any.
fn still_breaks(case: &Case, law: u8, what: &str, ratio: f64) -> Option<Violation> {
    match check(case, Some(law)) {
        Outcome::Checked(v, _) => v
            .into_iter()
            .find(|x| x.law == law && x.what == what && x.ratio >= ratio),
        _ => None,
    }
}

/// Greedy shrinking: take the first simpler case that still breaks the same
/// thing, clearly (by half the original excess, or 5 %, whichever is less),
/// until none does. Returns the case, its violation and how it went.
fn shrink(case: &Case, law: u8, what: &str, v: &Violation) -> (Case, Violation, String) {
    let keep = 1.0 + ((v.ratio - 1.0) / 2.0).min(0.05);
    let mut best = (case.clone(), v.clone());
    let (mut tries, mut steps) = (0, 0);
    'outer: while tries < SHRINK_TRIES {
        for cand in case_variants(&best.0) {
            tries += 1;
            if let Some(v) = still_breaks(&cand, law, what, keep) {
                best = (cand, v);
                steps += 1;
                continue 'outer;
            }
            if tries >= SHRINK_TRIES {
                break;
            }
        }
        break;
    }
    let how = if tries >= SHRINK_TRIES {
        format!("{steps} steps (stopped after {tries} tries)")
    } else {
        format!("{steps} steps")
    };
    (best.0, best.1, how)
}

// ---------------------------------------------------------------------------
// The sweep, shared by the tests

/// The first case that broke one (law, what, device), and how many did.
struct Found {
    count: u64,
    case: Case,
    violation: Violation,
}

struct Sweep {
    seed: u64,
    cases: u64,
    checked: [u64; 8],
    skipped: [u64; 8],
    invalid: Vec<(Case, String)>,
    found: BTreeMap<(u8, String, usize), Found>,
    features: BTreeMap<&'static str, u64>,
    /// Per [`NEAR`] key: the highest measured/limit ratio, its device and case.
    closest: BTreeMap<&'static str, (f64, usize, u64)>,
    secs: f64,
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(s) => {
            let s = s.replace('_', "");
            let r = match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            };
            r.unwrap_or_else(|_| panic!("{name}={s} is not a number"))
        }
        Err(_) => default,
    }
}

/// What the generator reached in one case, for `generator_makes_valid_kernels`.
fn features(c: &Case, out: &mut Vec<&'static str>) {
    fn walk(ss: &[S], out: &mut Vec<&'static str>) {
        for s in ss {
            match s {
                S::Let { k: Some(_), .. } => out.push("Let with a loop variable"),
                S::Let { stride, .. } if *stride > 1 => out.push("Let with stride > 1"),
                S::Let { .. } => out.push("Let"),
                S::Load { width, .. } => out.push(match width {
                    1 => "Load of 1 byte",
                    2 => "Load of 2 bytes",
                    4 => "Load of 4 bytes",
                    8 => "Load of 8 bytes",
                    _ => "Load of 16 bytes",
                }),
                S::Store { src, width, .. } => {
                    out.push(if src.is_empty() {
                        "Store without src"
                    } else {
                        "Store with src"
                    });
                    if *width == 16 {
                        out.push("Store of 16 bytes");
                    }
                }
                S::Shared { store, .. } => out.push(if *store {
                    "Shared store"
                } else {
                    "Shared load"
                }),
                S::Sync => out.push("Sync"),
                S::If {
                    then, els, pred, ..
                } => {
                    out.push(if *pred {
                        "predicated If"
                    } else if els.is_empty() {
                        "If"
                    } else {
                        "If with else"
                    });
                    walk(then, out);
                    walk(els, out);
                }
                S::For { lane, body, .. } => {
                    out.push(if *lane {
                        "For with per-lane bounds"
                    } else {
                        "For"
                    });
                    walk(body, out);
                }
            }
        }
    }
    walk(&c.kernel, out);
    if c.grid[1] > 1 {
        out.push("2-D grid");
    }
    if c.block % 32 != 0 {
        out.push("block of partial warps");
    }
    if c.base_offset.iter().any(|&o| o != 0) {
        out.push("buffer with base_offset");
    }
    if c.base_offset.len() == 3 {
        out.push("three buffers");
    }
}

fn sweep() -> &'static Sweep {
    static SWEEP: OnceLock<Sweep> = OnceLock::new();
    SWEEP.get_or_init(|| {
        let seed = env_u64("GPUSIM_LAW_SEED", DEFAULT_SEED);
        let cases = env_u64("GPUSIM_LAW_CASES", DEFAULT_CASES);
        let t0 = Instant::now();
        devices();
        let mut s = Sweep {
            seed,
            cases,
            checked: [0; 8],
            skipped: [0; 8],
            invalid: Vec::new(),
            found: BTreeMap::new(),
            features: BTreeMap::new(),
            closest: BTreeMap::new(),
            secs: 0.0,
        };
        let mut start = 0;
        while start < cases {
            let end = (start + BATCH).min(cases);
            let results: Vec<(Case, Outcome, Vec<&'static str>)> = (start..end)
                .into_par_iter()
                .map(|id| {
                    let c = generate(seed, id);
                    let o = check(&c, None);
                    let mut f = Vec::new();
                    features(&c, &mut f);
                    (c, o, f)
                })
                .collect();
            for (case, outcome, feats) in results {
                for f in feats {
                    *s.features.entry(f).or_default() += 1;
                }
                match outcome {
                    Outcome::Skipped => s.skipped[case.dev] += 1,
                    Outcome::Invalid(m) => s.invalid.push((case, m)),
                    Outcome::Checked(vs, near) => {
                        s.checked[case.dev] += 1;
                        for (k, r) in near {
                            let e = s.closest.entry(k).or_insert((f64::MIN, 0, 0));
                            if r > e.0 {
                                *e = (r, case.dev, case.id);
                            }
                        }
                        for v in vs {
                            s.found
                                .entry((v.law, v.what.clone(), case.dev))
                                .and_modify(|f| f.count += 1)
                                .or_insert_with(|| Found {
                                    count: 1,
                                    case: case.clone(),
                                    violation: v,
                                });
                        }
                    }
                }
            }
            start = end;
        }
        s.secs = t0.elapsed().as_secs_f64();
        println!("{}", summary(&s));
        s
    })
}

fn summary(s: &Sweep) -> String {
    let mut out = String::new();
    let checked: u64 = s.checked.iter().sum();
    let skipped: u64 = s.skipped.iter().sum();
    writeln!(
        out,
        "laws: {} cases (GPUSIM_LAW_SEED={:#x}) in {:.1} s: {checked} checked, {skipped} skipped \
         as unlaunchable, {} invalid",
        s.cases,
        s.seed,
        s.secs,
        s.invalid.len()
    )
    .unwrap();
    let near: Vec<String> = NEAR
        .iter()
        .filter_map(|k| {
            let (r, dev, id) = s.closest.get(k)?;
            Some(format!("{k} {r:.4} ({} #{id})", DEVICES[*dev]))
        })
        .collect();
    writeln!(out, "  closest to the limits: {}", near.join(", ")).unwrap();
    for (i, d) in DEVICES.iter().enumerate() {
        write!(
            out,
            "  {d}: {} checked, {} skipped;",
            s.checked[i], s.skipped[i]
        )
        .unwrap();
        let broken: Vec<String> = s
            .found
            .iter()
            .filter(|((_, _, dev), _)| *dev == i)
            .map(|((law, what, _), f)| format!("law {law} {what} x{}", f.count))
            .collect();
        if broken.is_empty() {
            writeln!(out, " no law broken").unwrap();
        } else {
            writeln!(out, " broken: {}", broken.join(", ")).unwrap();
        }
    }
    out
}

const LAW_NAMES: [&str; 6] = [
    "",
    "utilisations are fractions",
    "DRAM traffic within peak bandwidth",
    "time at least the counters' lower bounds",
    "coalescing counters do not depend on timing",
    "runs are deterministic",
];

/// Fails with every violation of `law`, each with its first case shrunk.
fn assert_law(law: u8) {
    let s = sweep();
    let broken: Vec<(&(u8, String, usize), &Found)> =
        s.found.iter().filter(|((l, _, _), _)| *l == law).collect();
    if broken.is_empty() {
        return;
    }
    let reports: Vec<String> = broken
        .par_iter()
        .map(|((_, what, dev), f)| {
            let (small, v, steps) = shrink(&f.case, law, what, &f.violation);
            let checked = s.checked[*dev];
            format!(
                "law {law} ({}): `{what}` broken on {} in {} of {checked} checked cases.\n  \
                 first: case #{} (GPUSIM_LAW_CASES={}): {}\n  shrunk in {steps}: {}\n  \
                 kernel (a workload file: `gpusim run configs/{}.ron FILE`):\n{}",
                LAW_NAMES[law as usize],
                DEVICES[*dev],
                f.count,
                f.case.id,
                f.case.id + 1,
                f.violation.detail,
                v.detail,
                DEVICES[*dev],
                render(&small).unwrap_or_default()
            )
        })
        .collect();
    panic!(
        "{}\n{}",
        summary(s),
        reports.join("\n-----------------------------------------\n")
    );
}

#[test]
fn law1_utilisations_are_fractions() {
    assert_law(1);
}

#[test]
fn law2_dram_traffic_within_peak_bandwidth() {
    assert_law(2);
}

#[test]
fn law3_time_at_least_counter_bounds() {
    assert_law(3);
}

#[test]
fn law4_coalescing_counters_ignore_timing() {
    assert_law(4);
}

#[test]
fn law5_runs_are_deterministic() {
    assert_law(5);
}

#[test]
fn generator_makes_valid_kernels() {
    let s = sweep();
    if let Some((case, m)) = s.invalid.first() {
        panic!(
            "{} generated cases are invalid; first, case #{} on {}: {m}\n{}",
            s.invalid.len(),
            case.id,
            DEVICES[case.dev],
            render(case).unwrap_or_else(|| format!("{case:?}"))
        );
    }
    if s.cases >= DEFAULT_CASES {
        for (i, d) in DEVICES.iter().enumerate() {
            assert!(s.checked[i] > 0, "no case launched on {d}\n{}", summary(s));
        }
        let want = [
            "Let",
            "Let with stride > 1",
            "Let with a loop variable",
            "Load of 1 byte",
            "Load of 2 bytes",
            "Load of 4 bytes",
            "Load of 8 bytes",
            "Load of 16 bytes",
            "Store without src",
            "Store with src",
            "Store of 16 bytes",
            "Shared load",
            "Shared store",
            "Sync",
            "If",
            "If with else",
            "predicated If",
            "For",
            "For with per-lane bounds",
            "2-D grid",
            "block of partial warps",
            "buffer with base_offset",
            "three buffers",
        ];
        let missing: Vec<&str> = want
            .iter()
            .filter(|f| !s.features.contains_key(*f))
            .copied()
            .collect();
        assert!(
            missing.is_empty(),
            "the generator never made: {missing:?}\n{:?}",
            s.features
        );
    }
    // The generator's own rendering parses back to the same kernel size.
    let c = generate(s.seed, 0);
    let ron = render(&c).expect("case 0 renders");
    let wl: Workload = ron_options().from_str(&ron).expect("case 0 parses");
    assert_eq!(wl.regs_per_thread, engine::workload::Regs::Count(c.regs));
}
