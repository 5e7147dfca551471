//! A sweep as one flat list of jobs, and the machinery that runs part of it.
//!
//! `run` turns its devices, workloads and `--set` values into one list of
//! jobs, in the order of the output rows (workload, then device, then
//! point). Everything that cuts a sweep up works on that list and on its
//! identity, so any command that builds such a list gets sharding, the
//! journal and `--resume` for free:
//!
//! ```text
//!  files + --set ──▶ Sweep { jobs, id } ──▶ --shard I/N ──▶ jobs[a..b] ──▶ run_point ──▶ rows
//!                                                             │   ▲            │
//!                                                             │   └─ journal ◀─┘ (a line per point)
//!                                                             └─ --resume: points in the journal are not rerun
//! ```
//!
//! The identity of a sweep is a 64-bit FNV-1a hash of the gpusim version,
//! the contents of every device and workload file, the `--set` values,
//! the devices as loaded (`--config-set` variants) and the run options:
//! the same sweep has the same identity on every machine, and any change
//! of an input gives another.

use crate::journal::Journal;
use engine::{DeviceSpec, Diag, LoadedWorkload, Point, PointResult};
use rayon::prelude::*;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// 64-bit FNV-1a (Fowler, Noll, Vo), a simple hash that is the same on
/// every machine and every run.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub fn bytes(&mut self, data: &[u8]) -> &mut Fnv {
        for &b in data {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
    /// A length-prefixed field, so that ("ab", "c") and ("a", "bc") differ.
    pub fn field(&mut self, data: &[u8]) -> &mut Fnv {
        self.bytes(&(data.len() as u64).to_le_bytes()).bytes(data)
    }
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// FNV-1a of one string, as 16 hex digits (the journal's line checksum).
pub fn checksum(s: &str) -> String {
    format!("{:016x}", Fnv::new().bytes(s.as_bytes()).finish())
}

/// What identifies a sweep: equal for the same inputs on any machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SweepId(pub u64);

impl fmt::Display for SweepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl SweepId {
    /// Hashes the gpusim version, the bytes of the device files and of the
    /// workload files (each kind in the order given) and the `--set` values
    /// (sorted by name; `0..=3` and `0,1,2,3` are the same sweep).
    pub fn of(
        devices: &[PathBuf],
        workloads: &[PathBuf],
        sets: &[(String, Vec<i64>)],
        extra: &str,
    ) -> Result<SweepId, Diag> {
        let mut h = Fnv::new();
        h.field(b"gpusim sweep v1");
        h.field(env!("CARGO_PKG_VERSION").as_bytes());
        h.field(extra.as_bytes());
        for (tag, files) in [("device", devices), ("workload", workloads)] {
            for f in files {
                let bytes = std::fs::read(f).map_err(|e| Diag {
                    file: Some(f.display().to_string()),
                    ..Diag::msg(format!("cannot read: {e}"))
                })?;
                h.field(tag.as_bytes()).field(&bytes);
            }
        }
        let mut sets = sets.to_vec();
        sets.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, vals) in &sets {
            h.field(b"set").field(name.as_bytes());
            h.field(&(vals.len() as u64).to_le_bytes());
            for v in vals {
                h.bytes(&v.to_le_bytes());
            }
        }
        Ok(SweepId(h.finish()))
    }
}

/// `--shard I/N`: the I-th of N parts, I from 1 to N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// The whole sweep.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = |why: &str| format!("`{s}`: {why} (expected I/N with 1 <= I <= N, e.g. 3/16)");
        let (i, n) = s.split_once('/').ok_or_else(|| bad("no `/`"))?;
        let i: usize = i.trim().parse().map_err(|_| bad("I is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| bad("N is not a number"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if i == 0 || i > n {
            return Err(bad(&format!("shards are numbered 1 to {n}")));
        }
        Ok(Shard { index: i, count: n })
    }
}

/// The part of a sweep a file holds: written at the top of each shard's
/// CSV (as a `#` comment) and JSON, and of each journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardTag {
    pub sweep: SweepId,
    pub shard: Shard,
    /// Row indices of the whole sweep, half-open.
    pub start: usize,
    pub end: usize,
    /// Rows of the whole sweep.
    pub total: usize,
}

const TAG: &str = "gpusim-shard";

impl fmt::Display for ShardTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{TAG} sweep={} shard={} points={}..{}/{}",
            self.sweep, self.shard, self.start, self.end, self.total
        )
    }
}

impl FromStr for ShardTag {
    type Err = String;
    fn from_str(s: &str) -> Result<ShardTag, String> {
        let bad = || format!("`{s}` is not a `{TAG} sweep=... shard=I/N points=A..B/TOTAL` line");
        let mut it = s.split_whitespace();
        if it.next() != Some(TAG) {
            return Err(bad());
        }
        let mut field = |name: &str| {
            it.next()
                .and_then(|kv| kv.strip_prefix(name))
                .and_then(|v| v.strip_prefix('='))
                .map(str::to_string)
                .ok_or_else(bad)
        };
        let sweep = u64::from_str_radix(&field("sweep")?, 16).map_err(|_| bad())?;
        let shard: Shard = field("shard")?.parse().map_err(|_| bad())?;
        let points = field("points")?;
        let (range, total) = points.split_once('/').ok_or_else(bad)?;
        let (a, b) = range.split_once("..").ok_or_else(bad)?;
        let num = |t: &str| t.parse::<usize>().map_err(|_| bad());
        let (start, end, total) = (num(a)?, num(b)?, num(total)?);
        if start > end || end > total {
            return Err(bad());
        }
        Ok(ShardTag {
            sweep: SweepId(sweep),
            shard,
            start,
            end,
            total,
        })
    }
}

/// One point of a sweep on one device.
#[derive(Debug, Clone)]
pub struct Job {
    /// Index into [`Sweep::wls`].
    pub wl: usize,
    /// Index into [`Sweep::devs`].
    pub dev: usize,
    pub point: Point,
    /// Expected cost: warps launched x static instructions of the kernel.
    pub cost: u64,
}

/// Every job of a sweep, in output order, and its identity.
pub struct Sweep {
    pub devs: Vec<DeviceSpec>,
    pub wls: Vec<LoadedWorkload>,
    pub jobs: Vec<Job>,
    pub id: SweepId,
}

impl Sweep {
    /// The jobs of `points[w]` of each workload `w` on every device:
    /// workload-major, then device, then point (the rows' order).
    pub fn new(
        devs: Vec<DeviceSpec>,
        wls: Vec<LoadedWorkload>,
        points: Vec<Vec<Point>>,
        id: SweepId,
    ) -> Result<Sweep, Diag> {
        let mut jobs = Vec::new();
        for (w, (wl, pts)) in wls.iter().zip(points).enumerate() {
            let costs = pts
                .iter()
                .map(|p| expected_cost(wl, p))
                .collect::<Result<Vec<u64>, Diag>>()?;
            for d in 0..devs.len() {
                for (p, &cost) in pts.iter().zip(&costs) {
                    jobs.push(Job {
                        wl: w,
                        dev: d,
                        point: p.clone(),
                        cost,
                    });
                }
            }
        }
        Ok(Sweep {
            devs,
            wls,
            jobs,
            id,
        })
    }

    /// The rows `shard` runs: a contiguous run of jobs, cut where the
    /// running sum of expected costs crosses a multiple of total/N (each
    /// job goes to the part that holds the middle of its cost). Contiguous
    /// parts make merging a concatenation and let a shard file say what it
    /// holds in one range.
    pub fn shard_range(&self, shard: Shard) -> Range<usize> {
        let costs: Vec<u64> = self.jobs.iter().map(|j| j.cost.max(1)).collect();
        split(&costs, shard)
    }

    pub fn tag(&self, shard: Shard) -> ShardTag {
        let r = self.shard_range(shard);
        ShardTag {
            sweep: self.id,
            shard,
            start: r.start,
            end: r.end,
            total: self.jobs.len(),
        }
    }
}

/// Jobs of shard `s` when jobs cost `costs`; see [`Sweep::shard_range`].
pub fn split(costs: &[u64], s: Shard) -> Range<usize> {
    let total: u128 = costs.iter().map(|&c| u128::from(c)).sum();
    let n = s.count as u128;
    // part(i) = floor((prefix_i + cost_i / 2) * N / total), non-decreasing in i.
    let mut prefix = 0u128;
    let mut start = costs.len();
    let mut end = costs.len();
    let k = (s.index - 1) as u128;
    for (i, &c) in costs.iter().enumerate() {
        let c = u128::from(c);
        let part = ((2 * prefix + c) * n / (2 * total)).min(n - 1);
        prefix += c;
        if part >= k && start == costs.len() {
            start = i;
        }
        if part > k {
            end = i;
            break;
        }
    }
    start.min(end)..end
}

/// Warps launched x static instructions: what a point costs to simulate,
/// up to loops and the memory system's response.
fn expected_cost(wl: &LoadedWorkload, p: &Point) -> Result<u64, Diag> {
    let inst = wl.workload.instantiate(p).map_err(|d| wl.locate(d))?;
    let prog = &inst.program;
    let threads: u64 = prog.block_dim.iter().map(|&x| u64::from(x)).product();
    let blocks: u64 = prog.grid_dim.iter().map(|&x| u64::from(x)).product();
    let warps = blocks.saturating_mul(threads.div_ceil(32));
    Ok(warps.saturating_mul(prog.sources.len().max(1) as u64))
}

/// Set by the first SIGINT (Ctrl-C) or SIGTERM (what SLURM sends at a time
/// limit): no new point starts, the points in flight finish and are
/// journaled. A second signal ends the process at once; the journal is
/// still good (a torn last line is ignored on `--resume`).
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, Diag> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for (sig, code) in [(SIGINT, 130), (SIGTERM, 143)] {
        // Order matters: the shutdown check runs before the flag is set,
        // so only a signal that finds the flag already set exits.
        signal_hook::flag::register_conditional_shutdown(sig, code, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .map_err(|e| Diag::msg(format!("cannot install the signal handler: {e}")))?;
    }
    Ok(stop)
}

/// How to run a sweep's rows.
pub struct Plan<'a> {
    pub shard: Shard,
    /// Keep finished points here, one line each.
    pub journal: Option<&'a Path>,
    /// Continue from the journal if there is one.
    pub resume: bool,
}

/// The rows of a shard, in output order.
pub struct Done {
    pub tag: ShardTag,
    pub results: Vec<PointResult>,
    pub journal: Option<Journal>,
}

impl Done {
    /// The results of workload `w`, in output order.
    pub fn of_workload(&self, sweep: &Sweep, w: usize) -> Vec<PointResult> {
        sweep.jobs[self.tag.start..self.tag.end]
            .iter()
            .zip(&self.results)
            .filter(|(j, _)| j.wl == w)
            .map(|(_, r)| r.clone())
            .collect()
    }
}

/// Runs the rows of `plan.shard` on the current rayon pool, skipping those
/// the journal holds. The first error in row order is reported, whatever
/// the thread count: rows after a failed one are skipped.
pub fn execute(
    sweep: &Sweep,
    plan: &Plan,
    opts: &engine::RunOptions,
    progress: &crate::progress::Progress,
) -> Result<Done, Diag> {
    let tag = sweep.tag(plan.shard);
    let range = tag.start..tag.end;
    let mut slots: Vec<Option<PointResult>> = vec![None; range.len()];
    let journal =
        match plan.journal {
            Some(path) => {
                let (j, have) = Journal::open(path, &tag, plan.resume)?;
                for (i, r) in have {
                    slots[i - range.start] = Some(r);
                }
                Some(j)
            }
            None if plan.resume => return Err(Diag::msg(
                "--resume needs --csv or --json written to a file: the journal is kept beside it",
            )),
            None => None,
        };
    let pending: Vec<usize> = range
        .clone()
        .filter(|&i| slots[i - range.start].is_none())
        .collect();
    let resumed = range.len() - pending.len();
    if resumed > 0 {
        progress.println(&format!(
            "resuming: {resumed} of {} points are in the journal, {} to run",
            range.len(),
            pending.len()
        ));
    }
    progress.set_total(pending.len() as u64);
    // Only a journaled run stops gracefully; without one, Ctrl-C kills the
    // process as usual (no output file is half-written either way).
    let stop = match &journal {
        Some(_) => stop_on_signals()?,
        None => Arc::new(AtomicBool::new(false)),
    };
    let first_failed = AtomicUsize::new(usize::MAX);
    let finished = AtomicBool::new(false);
    let fresh: Vec<Option<Result<PointResult, Diag>>> = std::thread::scope(|s| {
        // Watches for a stop request; woken when the points are done, so
        // that the run does not wait out its last look.
        let watcher = s.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    progress.println(
                        "stopping after the points in flight (press Ctrl-C again to stop at once; \
                         the journal keeps every finished point either way)",
                    );
                    break;
                }
                std::thread::park_timeout(Duration::from_millis(100));
            }
        });
        // However the points end (a panic too), the watcher is told and
        // woken, so that the scope can join it.
        let _done = Finished(&finished, watcher.thread().clone());
        pending
            .par_iter()
            .map(|&i| {
                if i > first_failed.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                    return None;
                }
                let job = &sweep.jobs[i];
                let mut r = engine::run_point_with(
                    &sweep.devs[job.dev],
                    &sweep.wls[job.wl],
                    &job.point,
                    opts,
                );
                if let (Ok(res), Some(j)) = (&r, &journal) {
                    if let Err(e) = j.append(i, res) {
                        r = Err(e);
                    }
                }
                if r.is_err() {
                    first_failed.fetch_min(i, Ordering::Relaxed);
                }
                progress.inc();
                Some(r)
            })
            .collect()
    });
    // A journal that holds no finished point has nothing to resume: a run
    // that fails before any point finishes leaves none behind (it would
    // only stand in the way of the next run to the same output).
    let any_done =
        slots.iter().any(Option::is_some) || fresh.iter().any(|r| matches!(r, Some(Ok(_))));
    for (&i, r) in pending.iter().zip(fresh) {
        match r {
            Some(Ok(x)) => slots[i - range.start] = Some(x),
            Some(Err(e)) => {
                if let (false, Some(j)) = (any_done, journal) {
                    j.remove()?;
                }
                return Err(e);
            }
            None => {}
        }
    }
    let done = slots.iter().filter(|s| s.is_some()).count();
    if done < slots.len() {
        let where_ = journal
            .as_ref()
            .map(|j| format!("; they are kept in {}", j.path().display()))
            .unwrap_or_default();
        return Err(Diag::msg(format!(
            "interrupted after {done} of {} points{where_}: run the same command with --resume to finish",
            slots.len()
        )));
    }
    Ok(Done {
        tag,
        results: slots.into_iter().flatten().collect(),
        journal,
    })
}

/// Sets its flag and wakes its thread when dropped.
struct Finished<'a>(&'a AtomicBool, std::thread::Thread);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        self.1.unpark();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // From the FNV reference test suite (Fowler, Noll, Vo: test_fnv.c).
        assert_eq!(Fnv::new().finish(), 0xcbf29ce484222325);
        assert_eq!(Fnv::new().bytes(b"a").finish(), 0xaf63dc4c8601ec8c);
        assert_eq!(Fnv::new().bytes(b"foobar").finish(), 0x85944171f73967e8);
    }

    fn parts(costs: &[u64], n: usize) -> Vec<Range<usize>> {
        (1..=n)
            .map(|i| split(costs, Shard { index: i, count: n }))
            .collect()
    }

    #[test]
    fn shards_tile_the_sweep_in_order() {
        for costs in [
            vec![1; 64],
            vec![1; 3],
            vec![5, 1, 1, 1, 1, 9, 2, 7],
            vec![1],
        ] {
            for n in 1..=10 {
                let p = parts(&costs, n);
                assert_eq!(p[0].start, 0);
                assert_eq!(p[n - 1].end, costs.len());
                for w in p.windows(2) {
                    assert_eq!(w[0].end, w[1].start, "{costs:?} in {n}");
                }
            }
        }
    }

    #[test]
    fn equal_costs_give_equal_shards() {
        let p = parts(&[1; 64], 4);
        assert_eq!(p, vec![0..16, 16..32, 32..48, 48..64]);
        // 10 points in 4: no shard more than one point above another.
        let sizes: Vec<usize> = parts(&[1; 10], 4).iter().map(|r| r.len()).collect();
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
    }

    #[test]
    fn costs_balance_shards() {
        // One point costing as much as the eight others together: it is
        // half the work, so it is a shard of its own.
        let mut costs = vec![1; 8];
        costs.push(8);
        assert_eq!(parts(&costs, 2), vec![0..8, 8..9]);
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(
            "3/16".parse::<Shard>(),
            Ok(Shard {
                index: 3,
                count: 16
            })
        );
        for bad in ["0/4", "5/4", "1/0", "1", "a/4", "1/b"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn tag_round_trips() {
        let t = ShardTag {
            sweep: SweepId(0x0123_4567_89ab_cdef),
            shard: Shard { index: 2, count: 4 },
            start: 16,
            end: 32,
            total: 64,
        };
        assert_eq!(
            t.to_string(),
            "gpusim-shard sweep=0123456789abcdef shard=2/4 points=16..32/64"
        );
        assert_eq!(t.to_string().parse::<ShardTag>(), Ok(t));
        assert!("gpusim-shard sweep=12 shard=2/4 points=40..32/64"
            .parse::<ShardTag>()
            .is_err());
    }
}
