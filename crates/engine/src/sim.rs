//! The timed simulation of one kernel launch: the wiring of the units.
//!
//! Event-driven at warp granularity: a binary heap orders warps by the time
//! they can next issue; a warp issues instructions while its time is the
//! heap's (the earliest), and goes back to the heap as soon as its next
//! instruction is later, so that every warp books the SM's issue slots, LSU
//! and the units beyond in time order (a warp running ahead would take
//! slots that warps ready earlier should have had). Among warps that can go
//! at the same time the oldest (the earliest started) goes first, as a
//! greedy-then-oldest scheduler picks them, so that no warp waits while
//! younger ones take its SM's room again and again.
//! Each memory instruction is coalesced ([`lsu::Rule`]) into line requests,
//! which the units reserve along their path when the instruction issues:
//!
//! ```text
//!  Sm (issue, LSU, L1, in-flight entries) ──▶ Noc (request port) ──▶ L2 (slice, MSHRs)
//!        ▲                                                           │
//!        └────────── Noc (response port) ◀── data / ack ◀────────────┤
//!                                                                    ▼
//!                                          dram::Dram (queues, banks, bus)
//! ```
//!
//! On cards without an L2 for global data the interconnect leads straight
//! to the memory controllers. Every unit is a [`timing::Calendar`] (a
//! throughput) or a [`timing::Pool`] (entries), so no unit does more than
//! its capacity, and a full pool makes its sender wait. Back-pressure
//! reaches the warp: a warp whose SM has no room in its LSU queue or no
//! free in-flight entry goes back to the scheduler until there is (a store
//! holds its entry until the L2, or the memory controller where there is
//! none, has accepted it: the buffers between them are bounded), so units
//! are booked close to time order (a warp that booked ahead of the others
//! would make their earlier requests queue behind its later ones). The kernel ends when every warp has retired, every store has
//! been acknowledged (by the L2, or by the memory controller where there is
//! none) and the DRAM has written what its queues hold. Everything is
//! integer picoseconds, so a run is exactly reproducible.

use crate::l2::L2;
use crate::noc::Noc;
use crate::sample::{Mark, Sampler, Sampling, Steady};
use crate::sm::{ps, written_lines, Sm, SmTiming};
use crate::spec::DeviceSpec;
use crate::Counters;
use dram::Dram;
use lsu::{LineRequest, Rule};
use simt_core::affine::{AffineTrace, TracedStep};
use simt_core::{
    ExecError, ExecFault, MemKind, MemSpace, Program, Scratch, Step, Warp, WarpAccess,
};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use timing::Pool;

#[derive(Debug, Clone, Default)]
struct Slot {
    warp: Warp,
    sm: u32,
    /// Its SM's warp scheduler that issues it.
    sched: u8,
    block: u32,
    start: u64,
    last_load: u64,
    /// When its shared-memory stores so far are done (a barrier waits for them).
    shared_done: u64,
    reg_ready: [u64; 32],
    /// The access held back, as its place in [`Simulation::parked`].
    pending: Option<u32>,
    done: bool,
    /// Where the kernel is block-affine: the warp replays its traced
    /// instructions instead of executing (the same steps and addresses).
    replay: Option<Replay>,
    /// Held back with its SM's other [`Waiters`] (of this kind).
    waiting_room: Option<Wait>,
}

/// The most recent stores an SM keeps for merging within the window.
const RECENT_STORES: usize = 64;

/// The data of a warp's open run that has not yet left its SM: the bytes
/// written so far in each of its lines (by sector), and the sectors its
/// first store sent as its own. A line's byte mask takes its beat on the
/// SM's store data path when the run closes, and only if a sector sent is
/// then still partly written: stores merged into a run complete its
/// sectors before the data leaves (`tools/measure/wmerge`: one SM merging
/// pairs or fours of partial stores moves a whole sector a cycle, as
/// whole stores do, not the 0.8 a cycle that a mask beat a line would
/// allow).
#[derive(Debug, Clone, Copy, Default)]
struct RunData {
    bytes: [[u32; 4]; 32],
    sent: [u8; 32],
}

/// A run of one warp's stores that the L1 merges: the line requests of
/// the store that began it (at most [`crate::spec::StoreMerge::run_sectors`]
/// sectors, so at most 32 lines), under a number that tells it from the
/// warp's earlier runs.
#[derive(Debug, Clone, Copy)]
struct Run {
    id: u32,
    /// Sectors it writes.
    sectors: u32,
    /// Until when a store of the warp may join it: when its latest
    /// store's data has left the SM, with `StoreMerge::close_when_sent`
    /// (else never closed by time).
    open_until: u64,
    n: u8,
    lines: [(u64, u8); 32],
}

impl Run {
    /// The sectors the run writes in `line`.
    fn sectors_of(&self, line: u64) -> u8 {
        self.lines[..self.n as usize]
            .iter()
            .filter(|&&(l, _)| l == line)
            .fold(0, |acc, &(_, s)| acc | s)
    }

    /// Whether every sector of `lines` is one the run writes.
    fn covers(&self, lines: &[LineRequest]) -> bool {
        let mine = &self.lines[..self.n as usize];
        lines.iter().all(|r| {
            r.size == 32
                && mine
                    .iter()
                    .any(|&(l, s)| l == r.line && r.sectors & !s == 0)
        })
    }
}

/// The warps of one SM whose access waits for room until the same time:
/// a global access for room in the LSU or miss path, or a shared one for
/// room in the LSU (one group of each per SM). Only the first of a group
/// is in the event heap: nothing that needs room can issue at a time
/// when the first finds none, so neither would the rest find any, and
/// they all move on to the next time at once instead of each going
/// through the heap. (A shared-memory access takes the LSU without an
/// in-flight entry, so it can issue while a global one waits for an
/// entry and move the global waiters' time: kernels that access shared
/// memory do not group their global waiters.)
#[derive(Debug, Clone, Default)]
struct Waiters {
    wake: u64,
    /// Warp ids, the youngest first (by [`Events::rank`]): the next to
    /// check is the last.
    ids: Vec<u32>,
}

/// What a held-back access waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// The values it reads (its own time; nothing to group).
    Values,
    /// Room in the LSU or miss path, for a global access.
    Room,
    /// Room in the LSU, for a shared-memory access.
    Lsu,
}

impl Wait {
    /// Which of an SM's two [`Waiters`] groups it joins.
    fn group(self) -> usize {
        (self == Wait::Lsu) as usize
    }
}

/// A warp's place in its block's trace ([`simt_core::affine`]).
#[derive(Debug, Clone, Copy)]
struct Replay {
    warp: u32,
    cursor: u32,
    block: [u32; 3],
}

#[derive(Debug, Clone, Default)]
struct Block {
    sm: u32,
    /// When it was launched on its SM.
    start: u64,
    /// Warps not yet retired.
    warps_left: u32,
    /// Warps that have not finished their instructions.
    running: u32,
    /// The barrier being gathered: warps waiting at it, the op, and when
    /// the last one so far arrived.
    waiting: Vec<u32>,
    bar_pc: u32,
    bar_time: u64,
    /// When the barrier has registered the arrivals so far.
    bar_free: u64,
}

/// Utilisation, back-pressure and latency figures of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bottlenecks {
    /// LSU busy fraction (line requests over capacity).
    pub lsu_util: f64,
    /// L1 lookups over capacity (same port as the LSU on these designs).
    pub l1_util: f64,
    /// Interconnect: bytes through the SM ports over their capacity, in the
    /// busier direction.
    pub noc_util: f64,
    /// L2 slices: bytes through their read ports over capacity, or through
    /// their write paths (where they have their own), whichever is busier.
    pub l2_util: f64,
    /// DRAM: data-bus busy time over capacity.
    pub dram_util: f64,
    /// Warps waiting to issue into a full LSU queue, mean per SM.
    pub lsu_stall: f64,
    /// Line requests the LSU holds back because every in-flight entry
    /// (MSHR) is taken, mean per SM.
    pub inflight_stall: f64,
    /// L2 misses waiting for an MSHR, mean per slice.
    pub l2_mshr_stall: f64,
    /// Requests waiting for a DRAM read- or write-queue entry, mean per channel.
    pub dram_queue_stall: f64,
    /// Mean cycles from a load's issue to its last byte.
    pub load_latency_cycles: f64,
    /// Mean resident warps per SM over max warps per SM.
    pub achieved_occupancy: f64,
    /// DRAM accesses that found their row open, over all DRAM accesses
    /// (0 when there were none): how much of the traffic paid no
    /// precharge and activation.
    pub dram_row_hit_rate: f64,
    /// Blocks resident per SM by the occupancy limits.
    pub blocks_per_sm: u32,
}

/// How much of the grid the timed model ran (see [`crate::sample`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleInfo {
    /// Blocks in the grid.
    pub blocks: u64,
    /// Blocks the timed model ran; the others' time was extrapolated.
    pub blocks_timed: u64,
    /// Estimated error of the extrapolated time, ps (0 for a full run).
    pub time_error_ps: u64,
}

impl SampleInfo {
    /// Fraction of the blocks that were timed.
    pub fn fraction(&self) -> f64 {
        if self.blocks == 0 {
            1.0
        } else {
            self.blocks_timed as f64 / self.blocks as f64
        }
    }
}

/// The global loads of one instruction of the kernel (of the blocks timed).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSite {
    /// Index of the instruction in the program (program order).
    pub pc: u32,
    /// The statement in the workload file (`kernel[4].then[0].body[1]`).
    pub path: String,
    /// Warp-level loads it issued.
    pub loads: u64,
    /// Their mean cycles from issue to last byte.
    pub latency_cycles: f64,
    /// The 10th, 50th, 90th and 99th percentiles of those cycles, to
    /// [`LATENCY_BIN_CYCLES`] (each the middle of its bin).
    pub latency_percentiles_cycles: [f64; 4],
}

/// Width of the bins in which load latencies are counted for their
/// percentiles, SM cycles.
pub const LATENCY_BIN_CYCLES: u32 = 8;
/// Latencies past this many bins count in the last.
const LATENCY_BINS: usize = 1 << 13;

/// The percentiles `LoadSite::latency_percentiles_cycles` names, from a
/// histogram of `LATENCY_BIN_CYCLES`-wide bins.
fn percentiles(hist: &[u32]) -> [f64; 4] {
    let n: u64 = hist.iter().map(|&c| c as u64).sum();
    let mut out = [0.0; 4];
    if n == 0 {
        return out;
    }
    for (o, q) in out.iter_mut().zip([10u64, 50, 90, 99]) {
        // The first bin holding the ceil(q n / 100)-th latency.
        let rank = (q * n).div_ceil(100).max(1);
        let mut seen = 0u64;
        for (i, &c) in hist.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                *o = (i as f64 + 0.5) * LATENCY_BIN_CYCLES as f64;
                break;
            }
        }
    }
    out
}

/// One SM's share of a run ([`Outcome::per_sm`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SmShare {
    /// Blocks timed that ran on the SM.
    pub blocks: u64,
    /// Mean cycles from issue to data of its global loads (0: none).
    pub load_latency_cycles: f64,
}

/// What a run gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Counters (L2 and DRAM ones extrapolated when sampled).
    pub counters: Counters,
    /// Utilisations and stalls (of the blocks timed).
    pub bottlenecks: Bottlenecks,
    /// How much was timed.
    pub sample: SampleInfo,
    /// The global load instructions that ran, in program order, each with
    /// its mean latency: which load of a kernel waits.
    pub load_sites: Vec<LoadSite>,
    /// When each whole wave of blocks (`SMs x blocks per SM`) of the blocks
    /// timed had retired, ps from the launch: the time the `k x wave`-th
    /// block to retire did. The kernel's course: its ramp, steady rate and
    /// any change of pace (what the sampler looks for, and what
    /// `tools/measure/waves` measures on the H200).
    pub wave_ends_ps: Vec<u64>,
    /// Per SM, in the order of their numbers, the blocks timed that ran
    /// there and the mean cycles from issue to data of their global loads
    /// (0 where it ran none): how evenly the SMs shared the work
    /// (`tools/measure/loadlat` call 4 measures the H200's).
    pub per_sm: Vec<SmShare>,
    /// The longest any block timed stayed resident, ps from its launch on
    /// its SM to its last warp's retirement (with the oldest warp first
    /// among those that can go at once, no block waits while wave after
    /// wave of younger ones passes it).
    pub longest_block_ps: u64,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// A fault in the kernel, with the block and thread that raised it.
    Exec {
        /// The fault.
        err: ExecError,
        /// blockIdx.
        block: [u32; 3],
        /// threadIdx of the faulting lane.
        thread: [u32; 3],
    },
    /// The launch cannot run on this device.
    Launch(String),
    /// The kernel executed more warp instructions than its budget.
    Budget(u64),
}

/// The whole device for one launch, owned by value so that a run can move
/// to any worker thread.
pub struct Simulation<'a> {
    dev: &'a DeviceSpec,
    prog: &'a Program,
    regs_per_thread: u32,
    sms: Vec<Sm>,
    /// Entries for the line requests beyond the SMs
    /// (`interconnect.requests_beyond_sms`; none: unbounded).
    beyond: Option<Pool>,
    noc: Noc,
    l2: Option<L2>,
    dram: Dram,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    /// The accesses warps hold back, apart from the warps' slots: few are
    /// held at once, and places are reused last-freed first, so they stay
    /// in the host's caches where a slot would not.
    parked: Vec<WarpAccess>,
    free_parked: Vec<u32>,
    blocks: Vec<Block>,
    free_blocks: Vec<u32>,
    heap: Events,
    scratch: Scratch,
    lines: Vec<LineRequest>,
    /// The SMs' runs of merged stores, oldest first: (warp, run), some
    /// closed since; and the sectors of those still open, per SM.
    runs: Vec<std::collections::VecDeque<(u32, u32)>>,
    runs_open: Vec<u32>,
    next_run: u32,
    /// Per SM, the stores that began a run in the last few SM cycles
    /// (each one's cycle, scheduler and run), oldest first: the sectors
    /// that a store of another scheduler within the merge window writes
    /// among them leave with them.
    recent: Vec<std::collections::VecDeque<(u64, u8, u32, Run)>>,
    /// Per warp slot, the run of stores its last memory instruction
    /// began, still open ([`crate::spec::StoreMerge`]): beside the slots,
    /// not in them, as only kernels that store use it and the warp that
    /// runs next is fetched whole.
    open_runs: Vec<Option<Run>>,
    /// Per warp slot, the data of its open run ([`RunData`]).
    run_data: Vec<RunData>,
    /// The other warps' open runs a store's sectors join: (warp, run,
    /// line, sectors).
    joined: Vec<(u32, u32, u64, u8)>,
    /// The coalescer's results by lane pattern.
    memo: lsu::Memo,
    /// The bytes a store instruction writes, per line.
    written: Vec<(u64, [u32; 4])>,
    cycle: f64,
    /// Shared-memory load latency.
    shared_ps: u64,
    /// A barrier's time per arrival, and from the last to the release.
    bar_arrival_ps: u64,
    bar_latency_ps: u64,
    /// Whether a run of merged stores closes once its latest store's data
    /// has left the SM (`StoreMerge::close_when_sent`).
    run_closes_when_sent: bool,
    // Progress.
    next_block: u64,
    /// Whether the L1s' and the L2's state is too large for the host's
    /// caches, so that prefetching a set before its lookup pays.
    prefetch: [bool; 2],
    end: u64,
    counters: Counters,
    /// Per instruction: latency sum (ps) and count of its global loads
    /// (whole picoseconds, so the sums are exact and their total is the
    /// kernel's).
    load_sites: Vec<(f64, u64)>,
    /// Per instruction: its global loads' latencies counted in bins of
    /// `LATENCY_BIN_CYCLES` (allocated at its first load).
    load_hist: Vec<Vec<u32>>,
    warp_time: f64,
    // Sampling.
    mode: Sampling,
    budget: u64,
    /// Blocks dispatched at most (the grid, or the sample).
    limit: u64,
    retired_blocks: u64,
    /// Blocks per wave (`SMs x blocks per SM`), and when each wave ended.
    wave_blocks: u64,
    wave_ends: Vec<u64>,
    /// Per SM: blocks retired, and the latency sum (ps) and count of its
    /// global loads.
    sm_shares: Vec<(u64, u64, u64)>,
    /// [`Outcome::longest_block_ps`] so far.
    longest_block: u64,
    sampler: Option<Sampler>,
    steady: Option<Steady>,
    /// Each warp of a block, traced, where the kernel is block-affine
    /// (else empty: warps execute).
    traces: Vec<AffineTrace>,
    /// Per SM, the warps waiting for room together: global accesses
    /// (unused where the kernel accesses shared memory), shared ones.
    waiters: Vec<[Waiters; 2]>,
    /// Whether each of the two kinds of waiters is grouped (the tests
    /// compare a run where neither is, every waiter going through the
    /// heap).
    group: [bool; 2],
    /// Events handled so far, counting each waiter moved on at once: every
    /// 1024 the units forget their past.
    pops: u64,
    /// How long after its start a warp's thread and block indices can be
    /// read (`sm.special_register_cycles`).
    special_ps: u64,
}

/// How much more work each kind of unit does, and how much longer the
/// kernel runs, than the blocks timed (1 when every block is timed).
#[derive(Debug, Clone, Copy)]
struct Scale {
    /// L1 sectors (the LSU's lines and the interconnect's bytes follow them).
    sectors: f64,
    /// L2 read and write sectors.
    l2: f64,
    /// DRAM bytes.
    dram: f64,
    /// Kernel time, less the launch overhead.
    time: f64,
}

impl Default for Scale {
    fn default() -> Scale {
        Scale {
            sectors: 1.0,
            l2: 1.0,
            dram: 1.0,
            time: 1.0,
        }
    }
}

/// Warps ordered by the time they next run, ties by age: a min-heap of
/// `(time, age, id)` packed into one integer, so that each comparison is
/// one. A warp's age is its place in the order warps were started (the
/// grid's order: block by block, warps in order within one), modulo 2^32;
/// among warps that can go at the same time the oldest goes first, as a
/// greedy-then-oldest scheduler picks them. (Ties by warp slot instead
/// let the warps of the highest slots lose every contest for room in
/// their SM's miss path: a block of them could wait for tens of waves.)
#[derive(Debug, Default)]
struct Events {
    heap: BinaryHeap<Reverse<u128>>,
    /// Age of the warp in each slot.
    age: Vec<u32>,
}

impl Events {
    /// The warp in slot `id` is the `age`-th started (modulo 2^32).
    fn set_age(&mut self, id: u32, age: u32) {
        let i = id as usize;
        if i >= self.age.len() {
            self.age.resize(i + 1, 0);
        }
        self.age[i] = age;
    }

    /// Warp `id`'s rank among warps that can go at one time: lower goes first.
    #[inline]
    fn rank(&self, id: u32) -> u64 {
        (self.age[id as usize] as u64) << 32 | id as u64
    }

    fn push(&mut self, t: u64, id: u32) {
        self.heap
            .push(Reverse((t as u128) << 64 | self.rank(id) as u128));
    }

    fn pop(&mut self) -> Option<(u64, u32)> {
        self.heap
            .pop()
            .map(|Reverse(k)| ((k >> 64) as u64, k as u32))
    }

    /// The warp that runs next, if any.
    fn next_id(&self) -> Option<u32> {
        self.heap.peek().map(|Reverse(k)| *k as u32)
    }
}

/// blockIdx of the `b`-th block of `prog`'s grid (x fastest).
fn block_index(prog: &Program, b: u64) -> [u32; 3] {
    let [gx, gy, _] = prog.grid_dim;
    let (gx, gy) = (gx as u64, gy as u64);
    [
        (b % gx) as u32,
        ((b / gx) % gy) as u32,
        (b / (gx * gy)) as u32,
    ]
}

/// The fault `err` of `warp` with the block and thread that raised it.
fn fault_of(prog: &Program, warp: &Warp, err: ExecError) -> SimError {
    let t = warp.warp_in_block() * 32 + err.lane as u32;
    SimError::Exec {
        block: warp.block(),
        thread: prog.thread_index(t),
        err,
    }
}

/// When a memory access of a warp whose registers are ready at
/// `reg_ready` may issue on `sm`, asked at `t` (`t` if it may now). A
/// store waits for the values it stores (and then no longer: `srcs` is
/// cleared); then back-pressure: a full LSU queue or miss path holds the
/// warp back, and it retries when there is room (so that every unit is
/// booked in time order, not ahead of requests still to come).
/// Also says what the access waits for.
fn wake_at(reg_ready: &[u64; 32], sm: &mut Sm, a: &mut WarpAccess, t: u64) -> (u64, Wait) {
    let mut ready = 0;
    let mut m = a.srcs;
    while m != 0 {
        ready = ready.max(reg_ready[m.trailing_zeros() as usize]);
        m &= m - 1;
    }
    if ready > t {
        a.srcs = 0;
        return (ready, Wait::Values);
    }
    if a.space == MemSpace::Shared {
        (sm.lsu_room(t), Wait::Lsu)
    } else {
        (sm.mem_room(t), Wait::Room)
    }
}

/// Coalesces `a` by the device's rule for its kind into `lines`; returns
/// whether it is a load, and the rule.
pub(crate) fn coalesce(
    dev: &DeviceSpec,
    a: &WarpAccess,
    lines: &mut Vec<LineRequest>,
) -> (bool, Rule) {
    let (is_load, rule) = rule_of(dev, a);
    rule.coalesce(&access(a), lines);
    (is_load, rule)
}

/// [`coalesce`], through `memo`: a lane pattern seen before takes its
/// requests from the table (the same requests, [`lsu::Memo`]).
fn coalesce_memo(
    dev: &DeviceSpec,
    a: &WarpAccess,
    lines: &mut Vec<LineRequest>,
    memo: &mut lsu::Memo,
) -> (bool, Rule) {
    let (is_load, rule) = rule_of(dev, a);
    memo.coalesce(rule, &access(a), lines);
    (is_load, rule)
}

/// Whether `a` is a load, and the device's rule for its kind.
fn rule_of(dev: &DeviceSpec, a: &WarpAccess) -> (bool, Rule) {
    let is_load = a.kind == MemKind::Load;
    let rule = if is_load {
        dev.load_rule
    } else {
        dev.store_rule
    };
    (is_load, rule)
}

fn access(a: &WarpAccess) -> lsu::Access<'_> {
    lsu::Access {
        width: a.width,
        mask: a.mask,
        addrs: &a.addrs,
    }
}

/// Counts one shared-memory instruction's wavefronts.
pub(crate) fn count_shared(c: &mut Counters, is_load: bool, w: lsu::Wavefronts) {
    if is_load {
        c.shared_requests_ld += 1;
        c.shared_wavefronts_ld += w.wavefronts as u64;
        c.shared_conflicts_ld += w.conflicts as u64;
    } else {
        c.shared_requests_st += 1;
        c.shared_wavefronts_st += w.wavefronts as u64;
        c.shared_conflicts_st += w.conflicts as u64;
    }
}

/// The banks' passes for shared access `a`.
pub(crate) fn shared_wavefronts(dev: &DeviceSpec, a: &WarpAccess) -> lsu::Wavefronts {
    dev.shared.banks().wavefronts(
        &lsu::Access {
            width: a.width,
            mask: a.mask,
            addrs: &a.addrs,
        },
        a.kind == MemKind::Load,
    )
}

/// The error for warps of a block that reach different barriers.
fn barrier_mismatch(pc: u32, detail: String) -> ExecError {
    ExecError {
        fault: ExecFault::BarrierMismatch { detail },
        pc,
        lane: 0,
    }
}

/// The bytes of each sector of `line` that a store writes, from its
/// [`written_lines`] (none where it writes nothing there).
fn bytes_of(written: &[(u64, [u32; 4])], line: u64) -> [u32; 4] {
    written.iter().find(|w| w.0 == line).map_or([0; 4], |w| w.1)
}

/// Beats of store data a store line request sends from its SM: one per
/// sector it writes, and one more for the byte mask where any of those
/// sectors is partly written (`bytes`: the bytes written, by sector).
/// Measured on the H200 (`tools/measure/mlp`, one SM storing into the L2):
/// 1.01 whole sectors a cycle in lines of 2 and 4 sectors, 0.50 lines a
/// cycle of one partly written sector (4 or 16 bytes of it), 0.34 lines a
/// cycle of two half-written sectors.
pub(crate) fn store_beats(r: &LineRequest, bytes: &[u32; 4]) -> u64 {
    (r.sectors & 0xf).count_ones() as u64 + partly_written(r.sectors, bytes) as u64
}

/// Whether some byte of `sectors` is not among `bytes` (by sector): the
/// store then sends a byte mask.
fn partly_written(sectors: u8, bytes: &[u32; 4]) -> bool {
    (0..4).any(|s| sectors >> s & 1 == 1 && bytes[s] != u32::MAX)
}

/// Counts one coalesced memory instruction.
pub(crate) fn count_instruction(c: &mut Counters, is_load: bool, lines: &[LineRequest]) {
    let sum = lsu::summarize(lines);
    for k in 0..3 {
        c.transactions[k] += sum.transactions[k] as u64;
    }
    if is_load {
        c.requests_ld += 1;
        c.sectors_ld += sum.sectors as u64;
    } else {
        c.requests_st += 1;
        c.sectors_st += sum.sectors as u64;
    }
}

/// Executes and coalesces every warp of `prog`'s grid without the timed
/// model: the counts that do not depend on time (requests, sectors,
/// transactions, warp instructions), exact.
/// Stops with [`SimError::Budget`] past `budget` warp instructions.
pub fn count_functional(
    dev: &DeviceSpec,
    prog: &Program,
    budget: u64,
) -> Result<Counters, SimError> {
    if let Some(c) = crate::functional::count_affine(dev, prog, budget)? {
        return Ok(c);
    }
    count_each_warp(dev, prog, budget)
}

/// [`count_functional`] by running every warp of the grid.
pub fn count_each_warp(
    dev: &DeviceSpec,
    prog: &Program,
    budget: u64,
) -> Result<Counters, SimError> {
    let mut c = Counters::default();
    let mut warp = Warp::default();
    let mut scratch = Scratch::default();
    let mut lines = Vec::with_capacity(64);
    let mut a = WarpAccess::default();
    // The barriers (ops) each warp of a block reaches, in order: every
    // warp must reach the same ones.
    let (mut first, mut mine): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for b in 0..prog.blocks() {
        let idx = block_index(prog, b);
        for w in 0..prog.warps_per_block() {
            warp.reset(prog, idx, w);
            mine.clear();
            loop {
                if c.warp_instructions > budget {
                    return Err(SimError::Budget(budget));
                }
                match warp.step(prog, &mut scratch, &mut a) {
                    Ok(Step::Done) => break,
                    Ok(Step::Alu | Step::Jump) => c.warp_instructions += 1,
                    Ok(Step::Sync) => {
                        c.warp_instructions += 1;
                        mine.push(warp.next_pc().unwrap_or(0).saturating_sub(1));
                    }
                    Ok(Step::Mem) => {
                        c.warp_instructions += 1;
                        if a.space == MemSpace::Shared {
                            count_shared(
                                &mut c,
                                a.kind == MemKind::Load,
                                shared_wavefronts(dev, &a),
                            );
                        } else {
                            let (is_load, _) = coalesce(dev, &a, &mut lines);
                            count_instruction(&mut c, is_load, &lines);
                        }
                    }
                    Err(e) => return Err(fault_of(prog, &warp, e)),
                }
            }
            if w == 0 {
                std::mem::swap(&mut first, &mut mine);
            } else if mine != first {
                let k = first.iter().zip(&mine).take_while(|(x, y)| x == y).count();
                let at = |v: &Vec<u32>| {
                    v.get(k).map_or("finishes".to_string(), |pc| {
                        format!(
                            "reaches `{}` ({})",
                            prog.sources[*pc as usize].text, prog.sources[*pc as usize].path
                        )
                    })
                };
                let pc = *first.get(k).or(mine.get(k)).unwrap_or(&0);
                let detail = format!(
                    "after {k} barrier(s), warp 0 {} while warp {w} {}",
                    at(&first),
                    at(&mine)
                );
                return Err(fault_of(prog, &warp, barrier_mismatch(pc, detail)));
            }
        }
    }
    Ok(c)
}

/// Whether the L1s' and the L2's state outgrows the host's caches
/// ([`cache::HOST_CACHE_BYTES`]; a line's place takes about 48 bytes of
/// tag, recency and sector state).
fn host_prefetch(dev: &DeviceSpec) -> [bool; 2] {
    let ways = |c: &cache::CacheSpec| c.size_bytes / c.line_bytes.max(1) as u64;
    let l1 = dev
        .l1
        .as_ref()
        .map_or(0, |l| ways(&l.cache) * dev.sm.count as u64 * 48);
    let l2 = dev
        .l2
        .as_ref()
        .map_or(0, |l| ways(&l.slice) * l.slices as u64 * 48);
    [l1, l2].map(|b| b > cache::HOST_CACHE_BYTES)
}

/// The launch's dimensions against the compute capability's limits (CUDA
/// C++ Programming Guide, "Technical Specifications per Compute
/// Capability"): a grid of at most 65535 blocks in x before CC 3.0 and
/// 2^31 - 1 from it, 65535 in y and z (z 1 before CC 2.0); a block of at
/// most 512 threads in x and y before CC 2.0 and 1024 from it, 64 in z.
/// A launch past them fails on the device, so it is refused rather than
/// timed.
fn launch_limits(cc: (u32, u32), grid: [u32; 3], block: [u32; 3]) -> Result<(), String> {
    let grid_x = if cc.0 < 3 { 65535 } else { i32::MAX as u32 };
    let grid_z = if cc.0 < 2 { 1 } else { 65535 };
    let block_xy = if cc.0 < 2 { 512 } else { 1024 };
    let (major, minor) = cc;
    for (what, dims, limits) in [
        ("grid", grid, [grid_x, 65535, grid_z]),
        ("block", block, [block_xy, block_xy, 64]),
    ] {
        for (k, axis) in ["x", "y", "z"].iter().enumerate() {
            if dims[k] > limits[k] {
                return Err(format!(
                    "the {what}'s {axis} dimension is {}, past compute capability \
                     {major}.{minor}'s limit of {} (CUDA C++ Programming Guide, technical \
                     specifications): the launch would fail on the device",
                    dims[k], limits[k]
                ));
            }
        }
    }
    Ok(())
}

impl<'a> Simulation<'a> {
    /// Builds a cold device for `prog`.
    pub fn new(dev: &'a DeviceSpec, prog: &'a Program, regs_per_thread: u32) -> Simulation<'a> {
        let cycle = dev.cycle_ps();
        let l2_lat = dev.l2.as_ref().map(|l| l.hit_latency_cycles).unwrap_or(0) as f64;
        let d = &dev.dram;
        // The DRAM device's own part of an unloaded miss (row conflict, as
        // a pointer chase sees): the rest of the measured latency is the
        // path through the memory controller.
        let dram_core_ns = d.t_rp_ns + d.t_rcd_ns + d.t_cl_ns + d.burst_ps() as f64 / 1000.0;
        // The chase's mean also holds what some of its loads pay on top:
        // the hop to the other L2 partitions for the lines homed there
        // (all but 1 in `partitions`), and the wait for a bank being
        // refreshed (a load finds its bank so t_rfc / t_refi of the time,
        // and waits t_rfc / 2 on average).
        let far_share = dev.l2.as_ref().map_or(0.0, |l| {
            let p = l.partitions.max(1) as f64;
            (p - 1.0) / p * l.far_latency_cycles as f64
        });
        let refresh_ns = if d.t_refi_ns > 0.0 {
            d.t_rfc_ns * d.t_rfc_ns / (2.0 * d.t_refi_ns)
        } else {
            0.0
        };
        let path_cycles = (dev.dram_latency_cycles as f64
            - l2_lat
            - far_share
            - (dram_core_ns + refresh_ns) * 1000.0 / cycle)
            .max(0.0);
        let mem_half_ps = ps(path_cycles / 2.0, cycle);
        let l2 = L2::new(dev, mem_half_ps);
        // One hop of the interconnect: to the L2 slices, or straight to the
        // memory controllers.
        let hop_ps = if l2.is_some() {
            ps(l2_lat / 2.0, cycle)
        } else {
            mem_half_ps
        };
        let mut sim = Simulation {
            dev,
            prog,
            regs_per_thread,
            sms: Vec::new(),
            beyond: None,
            noc: Noc::new(dev, hop_ps),
            l2,
            dram: Dram::new(dev.dram.clone()),
            slots: Vec::new(),
            free_slots: Vec::new(),
            parked: Vec::new(),
            free_parked: Vec::new(),
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            heap: Events::default(),
            scratch: Scratch::default(),
            lines: Vec::with_capacity(64),
            runs: vec![Default::default(); dev.sm.count as usize],
            runs_open: vec![0; dev.sm.count as usize],
            next_run: 0,
            recent: vec![Default::default(); dev.sm.count as usize],
            open_runs: Vec::new(),
            run_data: Vec::new(),
            joined: Vec::new(),
            memo: lsu::Memo::new(),
            written: Vec::with_capacity(32),
            cycle,
            shared_ps: ps(dev.shared.latency_cycles as f64, cycle),
            bar_arrival_ps: ps(dev.sm.barrier_arrival_cycles, cycle),
            bar_latency_ps: ps(dev.sm.barrier_latency_cycles as f64, cycle),
            run_closes_when_sent: dev.sm.store_merge.is_some_and(|m| m.close_when_sent),
            next_block: 0,
            prefetch: host_prefetch(dev),
            end: 0,
            counters: Counters::default(),
            load_sites: vec![(0.0, 0); prog.len()],
            load_hist: vec![Vec::new(); prog.len()],
            warp_time: 0.0,
            mode: Sampling::Off,
            budget: u64::MAX,
            limit: prog.blocks(),
            retired_blocks: 0,
            wave_blocks: 0,
            wave_ends: Vec::new(),
            sm_shares: vec![(0, 0, 0); dev.sm.count as usize],
            longest_block: 0,
            sampler: None,
            steady: None,
            traces: Vec::new(),
            waiters: vec![Default::default(); dev.sm.count as usize],
            group: [
                !(0..prog.len())
                    .any(|pc| prog.mem_op(pc).is_some_and(|m| m.space == MemSpace::Shared)),
                true,
            ],
            pops: 0,
            special_ps: ps(dev.sm.special_register_cycles.unwrap_or(0.0), cycle),
        };
        // The L1 is what the kernel's shared memory leaves of the array the
        // two share (a kernel that cannot launch is refused by the run).
        let per_sm = sim.blocks_per_sm().unwrap_or(1);
        let l1 = dev
            .l1
            .as_ref()
            .map(|l| l.for_kernel(&dev.shared, per_sm, prog.shared_bytes));
        let t = SmTiming::new(dev);
        // Counted in the intervals of the SMs' own in-flight entries.
        sim.beyond = dev
            .interconnect
            .requests_beyond_sms
            .map(|k| Pool::new(k, t.entry_interval_ps));
        sim.sms = (0..dev.sm.count)
            .map(|_| Sm::new(dev, t, l1.clone()))
            .collect();
        sim
    }

    /// Stops the run with [`SimError::Budget`] once it has executed more
    /// than `n` warp instructions (no limit by default).
    pub fn budget(mut self, n: u64) -> Simulation<'a> {
        self.budget = n;
        self
    }

    /// Times only a sample of the grid's waves where `mode` allows (see
    /// [`crate::sample`]); a new simulation times every block.
    pub fn sampling(mut self, mode: Sampling) -> Simulation<'a> {
        self.mode = mode;
        self
    }

    /// Blocks that fit on one SM at once.
    pub fn blocks_per_sm(&self) -> Result<u32, String> {
        let sm = &self.dev.sm;
        let threads = self.prog.threads_per_block();
        let warps = self.prog.warps_per_block();
        if threads > sm.max_threads_per_block {
            return Err(format!(
                "a block of {threads} threads exceeds the device's {} threads per block",
                sm.max_threads_per_block
            ));
        }
        launch_limits(
            self.dev.compute_capability,
            self.prog.grid_dim,
            self.prog.block_dim,
        )?;
        let by_regs = self.dev.blocks_by_registers(self.regs_per_thread, warps);
        let sh = &self.dev.shared;
        let shared = self.prog.shared_bytes;
        if shared > sh.max_bytes_per_block as u64 {
            return Err(format!(
                "the block's shared memory ({shared} bytes) exceeds the device's {} bytes per \
                 block (shared.max_bytes_per_block)",
                sh.max_bytes_per_block
            ));
        }
        let by_shared = (sh.bytes_per_sm as u64)
            .checked_div(sh.block_allocation(shared))
            .map_or(u32::MAX, |n| n.min(u32::MAX as u64) as u32);
        let n = sm
            .max_blocks
            .min(sm.max_warps / warps)
            .min(sm.max_threads / (warps * 32))
            .min(by_regs)
            .min(by_shared);
        let max_regs = self.dev.register_allocation().max_per_thread;
        if self.regs_per_thread > max_regs {
            return Err(format!(
                "{} registers per thread: the device lets a thread use at most {max_regs} \
                 (sm.register_allocation.max_per_thread, or its compute capability's)",
                self.regs_per_thread
            ));
        }
        if n == 0 {
            return Err(format!(
                "a block of {threads} threads with {} registers per thread and {shared} bytes of \
                 shared memory does not fit on one SM ({} warps, {} registers, {} bytes of shared \
                 memory)",
                self.regs_per_thread, sm.max_warps, sm.registers, sh.bytes_per_sm
            ));
        }
        Ok(n)
    }

    /// Runs the launch to completion: counters and utilisations.
    pub fn run(self) -> Result<(Counters, Bottlenecks), SimError> {
        self.run_outcome().map(|o| (o.counters, o.bottlenecks))
    }

    /// Runs the launch to completion (or, when sampling, its sample and
    /// the extrapolation).
    pub fn run_outcome(mut self) -> Result<Outcome, SimError> {
        let per_sm = self.blocks_per_sm().map_err(SimError::Launch)?;
        let total = self.prog.blocks();
        if total == 0 {
            return Err(SimError::Launch("the grid has no blocks".into()));
        }
        let wave = per_sm as u64 * self.dev.sm.count as u64;
        self.wave_blocks = wave;
        let mut exact = None;
        // Traced once: the functional pass counts from the traces, and the
        // warps replay them.
        self.traces = crate::functional::block_traces(self.prog).unwrap_or_default();
        if Sampler::wanted(self.mode, total, wave) {
            // Every warp still counts functionally: exact counts, and every
            // fault found, whichever blocks are timed.
            let traced = if self.traces.is_empty() {
                None
            } else {
                crate::functional::count_traced(self.dev, self.prog, &self.traces, self.budget)?
            };
            let c = match traced {
                Some(c) => c,
                None => count_each_warp(self.dev, self.prog, self.budget)?,
            };
            // At most this many bytes are touched; beyond the L2's
            // capacity the steady state includes its evictions. Likewise,
            // a kernel that may store more than the L2 keeps dirty reaches
            // its steady state only once the L2 writes back.
            let touched = (c.sectors_ld + c.sectors_st) * 32;
            let stored = c.sectors_st * 32;
            let (turnover, writeback) = match &self.dev.l2 {
                Some(l) => (
                    touched > l.slice.size_bytes * l.slices as u64,
                    l.dirty_lines.is_some_and(|d| {
                        stored > d as u64 * l.slice.line_bytes as u64 * l.slices as u64
                    }),
                ),
                None => (false, false),
            };
            self.sampler = Some(Sampler::new(wave, turnover, writeback).for_grid(total));
            exact = Some(c);
        }
        // First wave: round-robin over SMs.
        'fill: for _ in 0..per_sm {
            for sm in 0..self.dev.sm.count {
                if self.next_block == self.limit {
                    break 'fill;
                }
                self.dispatch(sm, 0, false);
            }
        }
        while let Some((t, id)) = self.heap.pop() {
            // The next warp's slot is in the host's caches by the time it runs.
            if let Some(next) = self.heap.next_id() {
                cache::prefetch_range(std::slice::from_ref(&self.slots[next as usize]));
            }
            self.count_events(1, t);
            let s = &self.slots[id as usize];
            if s.done {
                self.retire(id, t);
            } else if let Some(why) = s.waiting_room {
                self.run_waiters(id, t, why)?;
            } else {
                self.run_warp(id, t)?;
            }
        }
        self.finish(per_sm, exact)
    }

    /// Counts `n` events handled at `t`; every 1024 the units forget
    /// their bookings before `t`.
    fn count_events(&mut self, n: u64, t: u64) {
        let before = self.pops;
        self.pops += n;
        if self.pops / 1024 != before / 1024 {
            self.noc.advance(t);
            if let Some(b) = self.beyond.as_mut() {
                b.advance(t);
            }
            if let Some(l2) = &mut self.l2 {
                l2.advance(t);
            }
            for sm in &mut self.sms {
                sm.advance(t);
            }
            self.dram.advance(t);
        }
    }

    /// Holds warp `id` back until `wake`, waiting for `why`: a warp that
    /// waits for room joins its SM's [`Waiters`] of that kind for that
    /// time where it can (it checks after the first of them).
    fn hold(&mut self, id: u32, wake: u64, why: Wait) {
        if why != Wait::Values && self.group[why.group()] {
            let sm = self.slots[id as usize].sm as usize;
            let g = &mut self.waiters[sm][why.group()];
            match g.ids.last() {
                None => {
                    g.wake = wake;
                    g.ids.push(id);
                }
                Some(&first) if g.wake == wake && self.heap.rank(id) > self.heap.rank(first) => {
                    let heap = &self.heap;
                    let at = g.ids.partition_point(|&x| heap.rank(x) > heap.rank(id));
                    g.ids.insert(at, id);
                    self.slots[id as usize].waiting_room = Some(why);
                    return;
                }
                Some(_) => {
                    self.heap.push(wake, id);
                    return;
                }
            }
            self.slots[id as usize].waiting_room = Some(why);
        }
        self.heap.push(wake, id);
    }

    /// The first of its SM's waiters, `id`, checks for room at `t`: if
    /// there is none, every waiter moves on to when there is; if there
    /// is, it goes on, and the next waiter checks after it.
    fn run_waiters(&mut self, id: u32, t: u64, why: Wait) -> Result<(), SimError> {
        let s = &mut self.slots[id as usize];
        let (sm, w) = (s.sm as usize, why.group());
        debug_assert_eq!(self.waiters[sm][w].wake, t);
        debug_assert_eq!(self.waiters[sm][w].ids.last(), Some(&id));
        let k = s.pending.expect("a waiter holds an access");
        let a = &mut self.parked[k as usize];
        let (wake, kind) = wake_at(&s.reg_ready, &mut self.sms[sm], a, t);
        debug_assert_eq!(kind, why);
        if wake > t {
            let rest = self.waiters[sm][w].ids.len() as u64 - 1;
            if rest > 0 {
                match why {
                    Wait::Lsu => self.sms[sm].lsu_room_for(t, rest),
                    _ => self.sms[sm].mem_room_for(t, rest),
                };
                self.count_events(rest, t);
            }
            self.waiters[sm][w].wake = wake;
            self.heap.push(wake, id);
            return Ok(());
        }
        let g = &mut self.waiters[sm][w];
        g.ids.pop();
        if let Some(&next) = g.ids.last() {
            self.heap.push(t, next);
        }
        self.slots[id as usize].waiting_room = None;
        self.run_ready(id, t)
    }

    /// Starts the next block on `sm`, asked for at `t`: into the slot of a
    /// block that exited at `t` (`refill`), or as part of the first wave.
    /// Its warps start when [`Sm::launch`] says.
    fn dispatch(&mut self, sm: u32, t: u64, refill: bool) {
        let b = self.next_block;
        self.next_block += 1;
        let at = self.sms[sm as usize].launch(t, refill);
        let idx = block_index(self.prog, b);
        let warps = self.prog.warps_per_block();
        let bid = match self.free_blocks.pop() {
            Some(i) => i,
            None => {
                self.blocks.push(Block::default());
                (self.blocks.len() - 1) as u32
            }
        };
        let block = &mut self.blocks[bid as usize];
        block.sm = sm;
        block.start = at;
        block.warps_left = warps;
        block.running = warps;
        block.waiting.clear();
        block.bar_free = 0;
        self.sms[sm as usize].resident += 1;
        for w in 0..warps {
            let id = match self.free_slots.pop() {
                Some(i) => i,
                None => {
                    self.slots.push(Slot::default());
                    (self.slots.len() - 1) as u32
                }
            };
            // Warps start in the grid's order: block b's warp w is the
            // (b x warps + w)-th.
            self.heap
                .set_age(id, (b as u32).wrapping_mul(warps).wrapping_add(w));
            let s = &mut self.slots[id as usize];
            if self.traces.is_empty() {
                s.warp.reset(self.prog, idx, w);
                s.replay = None;
            } else {
                s.replay = Some(Replay {
                    warp: w,
                    cursor: 0,
                    block: idx,
                });
            }
            s.sm = sm;
            s.sched = self.sms[sm as usize].next_scheduler();
            s.block = bid;
            s.start = at;
            s.last_load = at;
            s.shared_done = at;
            s.reg_ready = [at; 32];
            s.pending = None;
            s.done = false;
            s.waiting_room = None;
            // A warp whose first instruction reads its indices runs first
            // when they are there ([`Simulation::run_ready`] would hold it
            // until then; this saves the event).
            let wait = if self
                .next_pc(id)
                .is_some_and(|pc| self.prog.reads_builtins(pc))
            {
                self.special_ps
            } else {
                0
            };
            self.heap.push(at + wait, id);
        }
    }

    fn retire(&mut self, id: u32, t: u64) {
        let (bid, start) = {
            let s = &self.slots[id as usize];
            (s.block, s.start)
        };
        self.warp_time += (t - start) as f64;
        self.free_slots.push(id);
        self.end = self.end.max(t);
        let b = &mut self.blocks[bid as usize];
        b.warps_left -= 1;
        if b.warps_left == 0 {
            let sm = b.sm;
            self.sm_shares[sm as usize].0 += 1;
            self.longest_block = self.longest_block.max(t - b.start);
            self.free_blocks.push(bid);
            self.sms[sm as usize].resident -= 1;
            self.retired_blocks += 1;
            if self.retired_blocks.is_multiple_of(self.wave_blocks.max(1)) {
                self.wave_ends.push(t);
            }
            self.watch_waves(t);
            if self.next_block < self.limit {
                self.dispatch(sm, t, true);
            }
        }
    }

    /// At the end of every wave of blocks, hands the time and counters to
    /// the sampler; once it finds the steady state, no more blocks start.
    fn watch_waves(&mut self, t: u64) {
        let Some(s) = &mut self.sampler else {
            return;
        };
        if s.exhausted() {
            self.sampler = None;
            return;
        }
        if !s.block_done(t) {
            return;
        }
        let ds = self.dram.stats();
        let (l2, turned_over) = match (&self.l2, &self.dev.l2) {
            (Some(l2), Some(spec)) => {
                // Where a line may be held twice (a near copy and at its
                // home slice, in an L2 of several partitions), the contents
                // have turned over once twice the lines the L2 holds have
                // been replaced; in one partition, once they all have.
                let lines = spec.slice.size_bytes / spec.slice.line_bytes as u64;
                let copies = if spec.partitions > 1 { 2 } else { 1 };
                (
                    l2.stats(),
                    l2.evictions() >= copies * lines * spec.slices as u64,
                )
            }
            _ => (Default::default(), false),
        };
        let work = self
            .dram
            .last_done()
            .max(self.noc.last_done())
            .max(self.l2.as_ref().map_or(0, |l| l.last_done()));
        let m = Mark {
            t,
            work,
            c: [
                self.counters.l1_hits_ld,
                l2.read_sectors,
                l2.read_hits,
                l2.write_sectors,
                ds.bytes_read,
                ds.bytes_written,
                self.counters.sectors_ld + self.counters.sectors_st,
            ],
            dirty: self.l2.as_ref().map_or(0, |l| l.dirty_sectors()),
        };
        if let Some(st) = s.wave_done(m, turned_over, ds.bytes_written > 0) {
            self.steady = Some(st);
            self.sampler = None;
            self.limit = self.next_block;
        }
    }

    /// The op warp `id` runs next (its trace's next step, or what its
    /// stack says), `None` when it is done.
    fn next_pc(&mut self, id: u32) -> Option<u32> {
        let s = &mut self.slots[id as usize];
        match &s.replay {
            Some(r) => self.traces[r.warp as usize]
                .steps
                .get(r.cursor as usize)
                .map(|x| x.pc()),
            None => s.warp.next_op(self.prog),
        }
    }

    fn fault(&self, id: u32, err: ExecError) -> SimError {
        fault_of(self.prog, &self.slots[id as usize].warp, err)
    }

    /// Whether the access warp `id` holds back (a store's values, room in
    /// the LSU or miss path) can issue at `t`; if not, the warp goes back
    /// to the scheduler until it may, and the access stays where it is.
    fn pending_ready(&mut self, id: u32, t: u64) -> bool {
        let s = &mut self.slots[id as usize];
        let Some(k) = s.pending else {
            return true;
        };
        let a = &mut self.parked[k as usize];
        let (wake, why) = wake_at(&s.reg_ready, &mut self.sms[s.sm as usize], a, t);
        if wake > t {
            self.hold(id, wake, why);
            return false;
        }
        true
    }

    fn run_warp(&mut self, id: u32, t0: u64) -> Result<(), SimError> {
        if !self.pending_ready(id, t0) {
            return Ok(());
        }
        self.run_ready(id, t0)
    }

    /// Runs warp `id` from `t0`, its held-back access (if any) found ready.
    fn run_ready(&mut self, id: u32, t0: u64) -> Result<(), SimError> {
        let mut t = t0;
        // A held-back access just found ready issues without a second
        // check, read where it is parked (the parked accesses are set
        // aside meanwhile: issuing one parks none).
        if let Some(k) = self.slots[id as usize].pending.take() {
            self.free_parked.push(k);
            let parked = std::mem::take(&mut self.parked);
            t = self.memory(id, &parked[k as usize], t);
            self.parked = parked;
            if t > t0 {
                self.heap.push(t, id);
                return Ok(());
            }
        }
        loop {
            let mut a = {
                if self.prog.has_alu_waits {
                    // An instruction that computes with a loaded value
                    // waits for it.
                    let mut m = self.next_pc(id).map_or(0, |pc| self.prog.waits(pc));
                    let s = &self.slots[id as usize];
                    let mut ready = 0;
                    while m != 0 {
                        ready = ready.max(s.reg_ready[m.trailing_zeros() as usize]);
                        m &= m - 1;
                    }
                    if ready > t {
                        self.heap.push(ready, id);
                        return Ok(());
                    }
                }
                // The thread and block indices are read at the warp's
                // start: an instruction that uses them waits for them.
                let special = self.slots[id as usize].start + self.special_ps;
                if special > t
                    && self
                        .next_pc(id)
                        .is_some_and(|pc| self.prog.reads_builtins(pc))
                {
                    self.heap.push(special, id);
                    return Ok(());
                }
                let mut a = WarpAccess::default();
                let s = &mut self.slots[id as usize];
                let step = match &mut s.replay {
                    Some(r) => {
                        let tr = &self.traces[r.warp as usize];
                        let x = tr.steps.get(r.cursor as usize).copied();
                        r.cursor += 1;
                        match x {
                            None => Step::Done,
                            Some(TracedStep::Alu { .. }) => Step::Alu,
                            Some(TracedStep::Jump { .. }) => Step::Jump,
                            Some(TracedStep::Sync { .. }) => Step::Sync,
                            Some(TracedStep::Mem { access, .. }) => {
                                tr.accesses[access as usize].at(r.block, &mut a);
                                Step::Mem
                            }
                        }
                    }
                    None => match s.warp.step(self.prog, &mut self.scratch, &mut a) {
                        Ok(x) => x,
                        Err(e) => return Err(self.fault(id, e)),
                    },
                };
                let s = &mut self.slots[id as usize];
                match step {
                    Step::Alu | Step::Jump => {
                        t = self.sms[s.sm as usize].issue_alu(t, s.sched, step == Step::Jump);
                        self.counters.warp_instructions += 1;
                        if self.counters.warp_instructions > self.budget {
                            return Err(SimError::Budget(self.budget));
                        }
                        if t > t0 {
                            self.heap.push(t, id);
                            return Ok(());
                        }
                        continue;
                    }
                    Step::Sync => {
                        self.counters.warp_instructions += 1;
                        if self.counters.warp_instructions > self.budget {
                            return Err(SimError::Budget(self.budget));
                        }
                        let s = &self.slots[id as usize];
                        let pc = match &s.replay {
                            // The step just taken, a barrier.
                            Some(r) => self.traces[r.warp as usize]
                                .steps
                                .get((r.cursor as usize).wrapping_sub(1))
                                .map_or(0, |x| x.pc()),
                            None => s.warp.next_pc().unwrap_or(0).saturating_sub(1),
                        };
                        let issued = self.sms[s.sm as usize].issue(t, s.sched);
                        self.close_run(id, issued);
                        return self.arrive(id, pc, issued);
                    }
                    Step::Done => {
                        self.close_run(id, t);
                        let s = &mut self.slots[id as usize];
                        s.done = true;
                        let at = t.max(s.last_load);
                        let b = &mut self.blocks[s.block as usize];
                        b.running -= 1;
                        if let Some(&w) = b.waiting.first() {
                            let pc = b.bar_pc;
                            let detail = format!(
                                "a warp finishes while others wait at `{}` ({})",
                                self.prog.sources[pc as usize].text,
                                self.prog.sources[pc as usize].path
                            );
                            return Err(self.fault(w, barrier_mismatch(pc, detail)));
                        }
                        self.heap.push(at, id);
                        return Ok(());
                    }
                    Step::Mem => {
                        self.counters.warp_instructions += 1;
                        if self.counters.warp_instructions > self.budget {
                            return Err(SimError::Budget(self.budget));
                        }
                        a
                    }
                }
            };
            let s = &mut self.slots[id as usize];
            let (wake, why) = wake_at(&s.reg_ready, &mut self.sms[s.sm as usize], &mut a, t);
            if wake > t {
                let k = match self.free_parked.pop() {
                    Some(k) => {
                        self.parked[k as usize] = a;
                        k
                    }
                    None => {
                        self.parked.push(a);
                        (self.parked.len() - 1) as u32
                    }
                };
                self.slots[id as usize].pending = Some(k);
                self.hold(id, wake, why);
                return Ok(());
            }
            t = self.memory(id, &a, t);
            if t > t0 {
                self.heap.push(t, id);
                return Ok(());
            }
        }
    }

    /// Warp `id` reaches the barrier at op `pc` at `t` (its shared stores
    /// done first); the last warp of the block to arrive releases them all.
    fn arrive(&mut self, id: u32, pc: u32, t: u64) -> Result<(), SimError> {
        let s = &self.slots[id as usize];
        let t = t.max(s.shared_done);
        let b = &mut self.blocks[s.block as usize];
        let warps = self.prog.warps_per_block();
        let mismatch = if b.running < warps {
            Some("a warp of the block has finished without reaching it".to_string())
        } else if !b.waiting.is_empty() && b.bar_pc != pc {
            Some(format!(
                "other warps wait at `{}` ({})",
                self.prog.sources[b.bar_pc as usize].text,
                self.prog.sources[b.bar_pc as usize].path
            ))
        } else {
            None
        };
        if let Some(m) = mismatch {
            let detail = format!(
                "a warp reaches `{}` ({}) while {m}",
                self.prog.sources[pc as usize].text, self.prog.sources[pc as usize].path
            );
            return Err(self.fault(id, barrier_mismatch(pc, detail)));
        }
        if b.waiting.is_empty() {
            b.bar_pc = pc;
            b.bar_time = 0;
        }
        // Arrivals are registered one at a time.
        let registered = t.max(b.bar_free) + self.bar_arrival_ps;
        b.bar_free = registered;
        b.bar_time = b.bar_time.max(registered);
        b.waiting.push(id);
        if b.waiting.len() as u32 == b.running {
            let at = b.bar_time + self.bar_latency_ps;
            for w in b.waiting.drain(..) {
                self.heap.push(at, w);
            }
        }
        Ok(())
    }

    /// Issues one memory instruction at `t`; returns when the warp may issue again.
    fn memory(&mut self, id: u32, a: &WarpAccess, t: u64) -> u64 {
        let sm_i = self.slots[id as usize].sm as usize;
        if a.space == MemSpace::Shared {
            self.close_run(id, t);
            return self.shared(id, sm_i, a, t);
        }
        let mut lines = std::mem::take(&mut self.lines);
        let (is_load, rule) = coalesce_memo(self.dev, a, &mut lines, &mut self.memo);
        count_instruction(&mut self.counters, is_load, &lines);
        let sched = self.slots[id as usize].sched;
        let issue = self.sms[sm_i].issue_mem(t, sched);
        // A store the L1 merges into its warp's open run.
        let merge = self
            .dev
            .sm
            .store_merge
            .filter(|_| rule == Rule::Sectors && self.l2.is_some());
        // Per line request, the sectors that stores of other schedulers
        // issued within the window write (where some are and some not).
        let mut cov = [0u8; 32];
        // Whether this store begins a run (its byte masks then wait for
        // the run's end).
        let mut opens = false;
        if !is_load {
            let mut written = std::mem::take(&mut self.written);
            written_lines(a.width, a.mask, &a.addrs, &mut written);
            self.written = written;
        }
        self.joined.clear();
        if let Some(m) = merge {
            let joins = !is_load
                && self
                    .run_of(id)
                    .is_some_and(|r| issue <= r.open_until && r.covers(&lines));
            if joins {
                let run = self.run_of(id).map_or(0, |r| r.id);
                for r in &lines {
                    self.joined.push((id, run, r.line, r.sectors));
                }
                let next = self.merge_store(id, sm_i, &lines, issue);
                self.lines = lines;
                return next;
            }
            self.close_run(id, issue);
            let n: u32 = lines.iter().map(|r| r.sectors.count_ones()).sum();
            if !is_load && n <= m.run_sectors && lines.len() <= 32 && n > 0 {
                // Warps of different schedulers that store to the same
                // sectors within the window: the L1 sends their bytes as one.
                let cycle = (issue as f64 / self.cycle) as u64;
                let w = m.window_cycles as u64;
                let recent = &mut self.recent[sm_i];
                while recent
                    .front()
                    .is_some_and(|e| e.0 + w < cycle || recent.len() > RECENT_STORES)
                {
                    recent.pop_front();
                }
                let mut all = true;
                for (c, r) in cov.iter_mut().zip(lines.iter()) {
                    if r.size == 32 {
                        // Each sector joins the oldest run that writes it.
                        for (at, k, wid, run) in recent.iter() {
                            if *k != sched && at.abs_diff(cycle) <= w {
                                let new = run.sectors_of(r.line) & r.sectors & !*c;
                                if new != 0 {
                                    self.joined.push((*wid, run.id, r.line, new));
                                }
                                *c |= new;
                            }
                        }
                    }
                    all &= *c == r.sectors;
                }
                if all {
                    let next = self.merge_store(id, sm_i, &lines, issue);
                    self.lines = lines;
                    return next;
                }
                self.open_run(id, sm_i, &lines, n, m.open_sectors, issue);
                opens = true;
                if let Some(&run) = self.run_of(id) {
                    self.recent[sm_i].push_back((cycle, sched, id, run));
                }
            }
        }
        self.join_run_bytes();
        let l1_caches = is_load
            && !a.l2_only
            && self.dev.l1.is_some()
            && matches!(rule, Rule::Sectors | Rule::Lines { bytes: 128 });
        // Bring every set this instruction will look up (and, for a load,
        // the DRAM bank its line maps to) into the host's caches first, so
        // that the lookups overlap their memory latency: where that state
        // outgrows the host's caches (`host_prefetch`, `Dram::prefetch`).
        let [pf_l1, pf_l2] = self.prefetch;
        let part = self
            .l2
            .as_ref()
            .map_or(0, |l2| l2.partition_of(sm_i, self.sms.len()));
        for r in &lines {
            if l1_caches && pf_l1 {
                self.sms[sm_i].prefetch(r.line);
            }
            if let Some(l2) = self.l2.as_ref().filter(|_| pf_l2) {
                l2.prefetch(part, r.line);
            }
            if is_load {
                self.dram.prefetch(r.line);
            }
        }
        let written = std::mem::take(&mut self.written);
        let mut done = issue;
        // When the store's data has left the LSU.
        let mut sent = issue;
        for (i, r) in lines.iter().enumerate() {
            let arrive = if is_load {
                let at = self.sms[sm_i].lsu_line(issue);
                self.load_line(sm_i, r, at, l1_caches)
            } else {
                let bytes = bytes_of(&written, r.line);
                // Sectors that leave with another warp's store join it;
                // the rest leave as a store of their own.
                let joined = cov.get(i).copied().unwrap_or(0);
                let rest = LineRequest {
                    sectors: r.sectors & !joined,
                    ..*r
                };
                let beats = if opens {
                    // The byte mask waits for the run's end.
                    let d = &mut self.run_data[id as usize];
                    d.bytes[i] = bytes;
                    d.sent[i] = rest.sectors;
                    rest.sectors.count_ones() as u64
                } else {
                    store_beats(&rest, &bytes)
                };
                let sm = &mut self.sms[sm_i];
                let at = if rest.sectors == 0 {
                    sm.lsu_line(issue)
                } else {
                    sm.lsu_store_line(issue, beats)
                };
                sent = sent.max(at);
                let mut done = at;
                if joined != 0 {
                    let mine = LineRequest {
                        sectors: joined,
                        ..*r
                    };
                    done = self.join(sm_i, &mine, bytes, at);
                }
                if rest.sectors != 0 {
                    done = done.max(self.store_line(sm_i, &rest, bytes, at));
                }
                done
            };
            done = done.max(arrive);
        }
        self.lines = lines;
        self.written = written;
        if opens && self.run_closes_when_sent {
            if let Some(run) = self.run_mut(id) {
                run.open_until = sent;
            }
        }
        let s = &mut self.slots[id as usize];
        if is_load {
            if let Some(d) = a.dst {
                s.reg_ready[d as usize] = done;
            }
            s.last_load = s.last_load.max(done);
            let site = &mut self.load_sites[a.pc as usize];
            site.0 += (done - issue) as f64;
            site.1 += 1;
            let share = &mut self.sm_shares[sm_i];
            share.1 += done - issue;
            share.2 += 1;
            let hist = &mut self.load_hist[a.pc as usize];
            if hist.is_empty() {
                hist.resize(LATENCY_BINS, 0);
            }
            let bin = ((done - issue) as f64 / self.cycle) as usize / LATENCY_BIN_CYCLES as usize;
            hist[bin.min(LATENCY_BINS - 1)] += 1;
        } else {
            // The warp goes on; the kernel waits for the acknowledgement.
            self.end = self.end.max(done);
        }
        self.sms[sm_i].next_issue(issue)
    }

    /// Warp `id`'s open run of merged stores, if any.
    fn run_of(&self, id: u32) -> Option<&Run> {
        self.open_runs.get(id as usize)?.as_ref()
    }

    /// The same, to change.
    fn run_mut(&mut self, id: u32) -> Option<&mut Run> {
        self.open_runs.get_mut(id as usize)?.as_mut()
    }

    /// Closes warp `id`'s open run of merged stores, if any, at `t`: the
    /// byte mask of each line whose sectors sent are still partly written
    /// takes its beat on the SM's store data path.
    fn close_run(&mut self, id: u32, t: u64) {
        if let Some(r) = self.open_runs.get_mut(id as usize).and_then(Option::take) {
            let sm_i = self.slots[id as usize].sm as usize;
            self.runs_open[sm_i] -= r.sectors;
            let d = &self.run_data[id as usize];
            let masks = (0..r.n as usize)
                .filter(|&k| partly_written(d.sent[k], &d.bytes[k]))
                .count() as u64;
            if masks > 0 {
                let done = self.sms[sm_i].store_masks(t, masks);
                self.end = self.end.max(done);
            }
        }
    }

    /// Adds the bytes of the sectors in [`Simulation::joined`] to the
    /// data of the runs they join, where those are still open.
    fn join_run_bytes(&mut self) {
        for &(w, run, line, sectors) in &self.joined {
            let Some(r) = self
                .open_runs
                .get(w as usize)
                .and_then(Option::as_ref)
                .filter(|r| r.id == run)
            else {
                continue;
            };
            let bytes = bytes_of(&self.written, line);
            let d = &mut self.run_data[w as usize];
            for (k, _) in r.lines[..r.n as usize]
                .iter()
                .enumerate()
                .filter(|(_, l)| l.0 == line)
            {
                for (s, (b, new)) in d.bytes[k].iter_mut().zip(bytes).enumerate() {
                    if sectors >> s & 1 == 1 {
                        *b |= new;
                    }
                }
            }
        }
    }

    /// Warp `id`'s store of `lines` (`n` sectors) begins a run on SM
    /// `sm_i`; the SM's oldest runs close while more than `cap` sectors
    /// are open.
    fn open_run(&mut self, id: u32, sm_i: usize, lines: &[LineRequest], n: u32, cap: u32, t: u64) {
        if self.run_data.len() <= id as usize {
            self.run_data.resize(id as usize + 1, RunData::default());
            self.open_runs.resize(id as usize + 1, None);
        }
        let mut run = Run {
            id: self.next_run,
            sectors: n,
            open_until: u64::MAX,
            n: lines.len() as u8,
            lines: [(0, 0); 32],
        };
        self.next_run = self.next_run.wrapping_add(1);
        for (k, r) in lines.iter().enumerate() {
            run.lines[k] = (r.line, r.sectors);
        }
        self.open_runs[id as usize] = Some(run);
        self.runs[sm_i].push_back((id, run.id));
        self.runs_open[sm_i] += n;
        // Oldest first; entries of runs already closed go as they come.
        while let Some(&(w, r)) = self.runs[sm_i].front() {
            let open = self.run_of(w).is_some_and(|x| x.id == r);
            if open && self.runs_open[sm_i] <= cap {
                break;
            }
            self.runs[sm_i].pop_front();
            if open {
                self.close_run(w, t);
            }
        }
    }

    /// A store instruction issued at `issue` whose every sector is in its
    /// warp's open run: its bytes join the run's in the L2 (sent as a store of its own only
    /// where the L2 no longer holds the line). Returns when the warp may
    /// issue again.
    fn merge_store(&mut self, id: u32, sm_i: usize, lines: &[LineRequest], issue: u64) -> u64 {
        self.join_run_bytes();
        let written = std::mem::take(&mut self.written);
        let mut looked = issue;
        for r in lines {
            let bytes = bytes_of(&written, r.line);
            // Its data left with the run's first store, but its tag
            // lookup takes its slot (the L1's tag stage counts its sectors).
            let at = self.sms[sm_i].lsu_line(issue);
            looked = looked.max(at);
            let done = self.join(sm_i, r, bytes, at);
            self.end = self.end.max(done);
        }
        self.written = written;
        if self.run_closes_when_sent {
            // The run stays open while the data of this store, merged into
            // it, would be on the store data path.
            let beats: u64 = lines.iter().map(|r| r.sectors.count_ones() as u64).sum();
            let sent = looked + beats * self.sms[sm_i].store_beat_ps();
            if let Some(run) = self.run_mut(id) {
                run.open_until = run.open_until.max(sent);
            }
        }
        self.sms[sm_i].next_issue(issue)
    }

    /// The sectors `r` of a store whose data left with an earlier store
    /// of its SM, past the tag stage at `at`: their bytes join that
    /// store's line in the L2 (sent as a store of their own only where
    /// the L2 no longer holds the line). Returns when the L2 has them.
    fn join(&mut self, sm_i: usize, r: &LineRequest, bytes: [u32; 4], at: u64) -> u64 {
        let merged = self
            .l2
            .as_mut()
            .and_then(|l2| l2.merge(r.line, r.sectors, bytes, at, &mut self.dram));
        match merged {
            Some(done) => done,
            None => self.store_line(sm_i, r, bytes, at),
        }
    }

    /// A shared-memory instruction at `t`: each wavefront takes the LSU's
    /// data stage for one slot, and an instruction with none (no lane
    /// active: predicated off) one all the same, as the H200's take one
    /// pass each (tools/measure/kernels, DEVIATIONS.md 33); the data is
    /// ready `shared.latency_cycles` after an unhindered issue. Returns
    /// when the warp may issue again.
    fn shared(&mut self, id: u32, sm_i: usize, a: &WarpAccess, t: u64) -> u64 {
        let is_load = a.kind == MemKind::Load;
        let w = shared_wavefronts(self.dev, a);
        count_shared(&mut self.counters, is_load, w);
        let sched = self.slots[id as usize].sched;
        let sm = &mut self.sms[sm_i];
        let issue = sm.issue_mem(t, sched);
        let mut last = issue;
        for _ in 0..w.wavefronts.max(1) {
            last = sm.shared_wavefront(issue);
        }
        let done = issue + self.shared_ps + last.saturating_sub(issue + sm.lsu_ps());
        let s = &mut self.slots[id as usize];
        if is_load {
            if let Some(d) = a.dst {
                s.reg_ready[d as usize] = done;
            }
            s.last_load = s.last_load.max(done);
        } else {
            s.shared_done = s.shared_done.max(done);
        }
        self.sms[sm_i].next_issue(issue)
    }

    /// A load's line request at its LSU slot `t`; returns when its data is
    /// in the SM.
    fn load_line(&mut self, sm_i: usize, r: &LineRequest, t: u64, l1_caches: bool) -> u64 {
        if !l1_caches {
            let at = self.sms[sm_i].acquire(t);
            let out = self.leave(sm_i, at);
            let data = self.fetch(sm_i, r.line, r.sectors, r.size, out);
            self.back(out, data);
            self.sms[sm_i].release(at, data);
            return data;
        }
        let sm = &mut self.sms[sm_i];
        let lk = sm.l1_read(r.line, r.sectors, t).expect("l1");
        self.counters.l1_hits_ld += lk.hit.count_ones() as u64;
        let mut done = t + sm.l1_hit_ps();
        if lk.hit != 0 {
            done = done.max(lk.ready);
        }
        if lk.miss != 0 {
            let at = self.sms[sm_i].acquire(t);
            let out = self.leave(sm_i, at);
            let fill = self.fetch(sm_i, r.line, lk.miss, 32, out);
            self.back(out, fill);
            let sm = &mut self.sms[sm_i];
            sm.release(at, fill);
            if let Some(l1) = sm.l1() {
                l1.fill(lk.slot, lk.miss, fill);
            }
            done = done.max(fill);
        }
        done
    }

    /// Brings `sectors` of `line` (transactions of `size` bytes) to SM
    /// `sm_i`, asked at `t`; returns when they have entered the SM.
    fn fetch(&mut self, sm_i: usize, line: u64, sectors: u8, size: u8, t: u64) -> u64 {
        let bytes = sectors.count_ones() as u64 * 32;
        let arrive = self.noc.send(sm_i, t, 0);
        let ready = match &mut self.l2 {
            Some(l2) => {
                let part = l2.partition_of(sm_i, self.sms.len());
                l2.read(part, line, sectors, arrive, &mut self.dram)
            }
            None => {
                // No cache for global memory: the transactions go to DRAM.
                if size == 32 {
                    let mut d = arrive;
                    for s in 0..4 {
                        if sectors >> s & 1 == 1 {
                            d = d.max(self.dram.read(line + 32 * s, 32, arrive));
                        }
                    }
                    d
                } else {
                    let start = line + 32 * sectors.trailing_zeros() as u64;
                    self.dram.read(start, size as u32, arrive)
                }
            }
        };
        self.noc.reply_load(sm_i, ready, bytes)
    }

    /// A store's line request at its LSU slot `t`, writing `bytes` of each
    /// sector; returns when its acknowledgement is back in the SM.
    fn store_line(&mut self, sm_i: usize, r: &LineRequest, bytes: [u32; 4], t: u64) -> u64 {
        let entry = self.sms[sm_i].acquire(t);
        let at = self.leave(sm_i, entry);
        let data = if r.size == 32 {
            r.sectors.count_ones() as u64 * 32
        } else {
            r.size as u64
        };
        let arrive = self.noc.send(sm_i, at, data);
        let accepted = match &mut self.l2 {
            Some(l2) => {
                let part = l2.partition_of(sm_i, self.sms.len());
                l2.write(part, r.line, r.sectors, bytes, arrive, &mut self.dram)
            }
            None => {
                // Straight to the memory controller, one write per
                // transaction, byte-masked.
                let mut acc = arrive;
                if r.size == 32 {
                    let last = 7 - r.sectors.leading_zeros() as u64;
                    for s in 0..4 {
                        if r.sectors >> s & 1 == 1 {
                            let partial = bytes[s as usize] != u32::MAX;
                            let w =
                                self.dram
                                    .write(r.line + 32 * s, 32, partial, s == last, arrive);
                            acc = acc.max(w);
                        }
                    }
                } else {
                    let first = r.sectors.trailing_zeros() as usize;
                    let n = r.size as usize / 32;
                    let partial = bytes[first..first + n].iter().any(|&b| b != u32::MAX);
                    acc = self.dram.write(
                        r.line + 32 * first as u64,
                        r.size as u32,
                        partial,
                        true,
                        arrive,
                    );
                }
                acc
            }
        };
        // The entry is held until the L2 (or the memory controller) has
        // accepted the store: the buffers between them are bounded, so a
        // store that cannot be accepted keeps its place in the SM.
        self.back(at, accepted);
        self.sms[sm_i].release(entry, accepted);
        self.noc.reply(sm_i, accepted, 0)
    }

    /// When a line request of SM `sm_i` holding its in-flight entry from
    /// `t` leaves the SM: at once, unless the requests beyond the SMs are
    /// bounded; then in the order the SM sent them, and once an entry of
    /// the bound is free (taken until [`Simulation::back`]).
    fn leave(&mut self, sm_i: usize, t: u64) -> u64 {
        let Some(beyond) = self.beyond.as_mut() else {
            return t;
        };
        let sm = &mut self.sms[sm_i];
        let out = beyond.acquire(sm.next_leave(t));
        sm.leave(out);
        out
    }

    /// A request that left its SM at `out` is answered at `done`: its
    /// entry of the bound on requests beyond the SMs is free again.
    fn back(&mut self, out: u64, done: u64) {
        if let Some(beyond) = self.beyond.as_mut() {
            beyond.release(out, done);
        }
    }

    fn finish(mut self, per_sm: u32, exact: Option<Counters>) -> Result<Outcome, SimError> {
        // The DRAM writes what its queues still hold.
        let end = self.dram.drain(self.end).max(self.end).max(1);
        let ds = self.dram.stats();
        self.counters.dram_bytes_read = ds.bytes_read;
        self.counters.dram_bytes_write = ds.bytes_written;
        if let Some(l2) = &self.l2 {
            let s = l2.stats();
            self.counters.l2_read_sectors = s.read_sectors;
            self.counters.l2_read_hits = s.read_hits;
            self.counters.l2_write_sectors = s.write_sectors;
        }
        let overhead_ps = (self.dev.launch.kernel_overhead_ns * 1000.0).round() as u64;
        self.counters.time_ps = end + overhead_ps;
        let total = self.prog.blocks();
        let mut sample = SampleInfo {
            blocks: total,
            blocks_timed: self.next_block,
            time_error_ps: 0,
        };
        // The utilisations below are over the timed blocks; a sampled run
        // scales each unit's work by its counter's extrapolation and the
        // time by the kernel's, so that they agree with the counters given.
        let mut scale = Scale::default();
        let rest = total - self.next_block;
        if let (Some(st), Some(e), true) = (self.steady, exact, rest > 0) {
            let c = &mut self.counters;
            let timed = [
                c.sectors_ld + c.sectors_st,
                c.l2_read_sectors + c.l2_write_sectors,
                c.dram_bytes_read + c.dram_bytes_write,
            ];
            let (dt, err, mut add) = st.extrapolate(
                rest,
                (e.sectors_ld + e.sectors_st) - (c.sectors_ld + c.sectors_st),
            );
            // The DRAM moves whole accesses.
            let access = self.dev.dram.access_bytes.max(1) as u64;
            for a in &mut add[4..6] {
                *a = (*a + access / 2) / access * access;
            }
            // A time past u64 picoseconds (213 days) is not a result.
            c.time_ps = c
                .time_ps
                .checked_add(dt)
                .filter(|&t| t < u64::MAX)
                .ok_or_else(|| {
                    SimError::Launch(format!(
                        "the kernel's {total} blocks would take about {:.3e} s, longer than \
                     gpusim can count in picoseconds",
                        st.block_ps * total as f64 * 1e-12
                    ))
                })?;
            sample.time_error_ps = err;
            for (x, a) in [
                &mut c.l1_hits_ld,
                &mut c.l2_read_sectors,
                &mut c.l2_read_hits,
                &mut c.l2_write_sectors,
                &mut c.dram_bytes_read,
                &mut c.dram_bytes_write,
            ]
            .into_iter()
            .zip(add)
            {
                *x += a;
            }
            c.requests_ld = e.requests_ld;
            c.requests_st = e.requests_st;
            c.sectors_ld = e.sectors_ld;
            c.sectors_st = e.sectors_st;
            c.transactions = e.transactions;
            c.warp_instructions = e.warp_instructions;
            c.shared_requests_ld = e.shared_requests_ld;
            c.shared_requests_st = e.shared_requests_st;
            c.shared_wavefronts_ld = e.shared_wavefronts_ld;
            c.shared_wavefronts_st = e.shared_wavefronts_st;
            c.shared_conflicts_ld = e.shared_conflicts_ld;
            c.shared_conflicts_st = e.shared_conflicts_st;
            let ratio = |sample: u64, all: u64| all as f64 / sample.max(1) as f64;
            scale = Scale {
                sectors: ratio(timed[0], c.sectors_ld + c.sectors_st),
                l2: ratio(timed[1], c.l2_read_sectors + c.l2_write_sectors),
                dram: ratio(timed[2], c.dram_bytes_read + c.dram_bytes_write),
                time: (end + dt) as f64 / end as f64,
            };
        }
        let dev = self.dev;
        let n_sm = dev.sm.count as f64;
        let cycles = end as f64 / self.cycle;
        let endf = end as f64;
        let lines: u64 = self.sms.iter().map(|s| s.lsu_lines()).sum();
        let store_data: u64 = self.sms.iter().map(|s| s.store_data_ps()).sum();
        // The busier of the LSU's two stages: tag lookups, data (store
        // beats and shared wavefronts).
        let lsu_util = (lines as f64 / (n_sm * cycles * dev.sm.lsu_lines_per_cycle))
            .max(store_data as f64 / (n_sm * endf))
            * scale.sectors
            / scale.time;
        let (req, resp) = self.noc.bytes();
        let sum = |f: fn(&Sm) -> u64| self.sms.iter().map(f).sum::<u64>() as f64;
        let (latency_sum, loads) = self
            .load_sites
            .iter()
            .fold((0.0, 0), |(s, n), &(ls, ln)| (s + ls, n + ln));
        let b = Bottlenecks {
            lsu_util,
            // L1 lookups go through the LSU's tag port.
            l1_util: if dev.l1.is_some() { lsu_util } else { 0.0 },
            noc_util: req.max(resp) as f64 * scale.sectors
                / (n_sm * cycles * scale.time * dev.interconnect.sm_port_bytes_per_cycle),
            l2_util: match (&dev.l2, &self.l2) {
                (Some(l), Some(u)) => {
                    // The busier of the read ports and the write paths.
                    let (read, write) = u.port_bytes();
                    let cap = l.slices as f64 * cycles * scale.time / scale.l2;
                    (read as f64 / (cap * l.slice_bytes_per_cycle)).max(
                        l.slice_write_bytes_per_cycle
                            .map_or(0.0, |w| write as f64 / (cap * w)),
                    )
                }
                _ => 0.0,
            },
            dram_util: ds.busy_ps as f64 * scale.dram
                / (dev.dram.channels as f64 * endf * scale.time),
            lsu_stall: sum(Sm::lsu_wait_ps) / (n_sm * endf),
            inflight_stall: sum(Sm::inflight_wait_ps) / (n_sm * endf),
            l2_mshr_stall: match &self.l2 {
                Some(u) => {
                    let (w, n) = u.mshr_wait();
                    w as f64 / (n as f64 * endf)
                }
                None => 0.0,
            },
            dram_queue_stall: ds.queue_wait_ps as f64 / (dev.dram.channels as f64 * endf),
            load_latency_cycles: if loads > 0 {
                latency_sum / loads as f64 / self.cycle
            } else {
                0.0
            },
            achieved_occupancy: self.warp_time / (endf * n_sm * dev.sm.max_warps as f64),
            dram_row_hit_rate: ds.row_hits as f64 / (ds.row_hits + ds.row_misses).max(1) as f64,
            blocks_per_sm: per_sm,
        };
        debug_assert!(self.noc.last_done() <= end);
        debug_assert!(self.l2.as_ref().map_or(0, |l| l.last_done()) <= end);
        let cycle = self.cycle;
        Ok(Outcome {
            counters: self.counters,
            bottlenecks: b,
            sample,
            load_sites: self
                .load_sites
                .iter()
                .enumerate()
                .filter(|(_, s)| s.1 > 0)
                .map(|(pc, &(sum, n))| LoadSite {
                    pc: pc as u32,
                    path: self.prog.sources[pc].path.clone(),
                    loads: n,
                    latency_cycles: sum / n as f64 / cycle,
                    latency_percentiles_cycles: percentiles(&self.load_hist[pc]),
                })
                .collect(),
            wave_ends_ps: self.wave_ends,
            per_sm: self
                .sm_shares
                .iter()
                .map(|&(blocks, sum, n)| SmShare {
                    blocks,
                    load_latency_cycles: if n > 0 {
                        sum as f64 / n as f64 / cycle
                    } else {
                        0.0
                    },
                })
                .collect(),
            longest_block_ps: self.longest_block,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_sends_a_beat_per_sector_and_one_for_a_byte_mask() {
        let req = |sectors: u8| LineRequest {
            line: 0,
            sectors,
            size: 32,
            request: 0,
        };
        let full = [u32::MAX; 4];
        assert_eq!(store_beats(&req(0b1111), &full), 4);
        assert_eq!(store_beats(&req(0b0001), &full), 1);
        // 4 bytes of one sector; every other word of two.
        assert_eq!(store_beats(&req(0b0001), &[0xf, 0, 0, 0]), 2);
        assert_eq!(store_beats(&req(0b0011), &[0x0f0f_0f0f; 4]), 3);
        // Bytes outside the request's sectors do not count.
        assert_eq!(store_beats(&req(0b0010), &[0, u32::MAX, 0, 0]), 1);
    }

    #[test]
    fn latency_percentiles_come_from_the_bins_they_fall_in() {
        // 100 latencies: 90 in bin 10 (80-87 cycles), 9 in bin 20, 1 in bin 100.
        let mut h = vec![0u32; 128];
        h[10] = 90;
        h[20] = 9;
        h[100] = 1;
        let w = LATENCY_BIN_CYCLES as f64;
        assert_eq!(percentiles(&h), [10.5 * w, 10.5 * w, 10.5 * w, 20.5 * w]);
        h[10] = 89;
        h[20] = 10;
        assert_eq!(percentiles(&h), [10.5 * w, 10.5 * w, 20.5 * w, 20.5 * w]);
        assert_eq!(percentiles(&[0; 4]), [0.0; 4]);
    }
    use proptest::prelude::*;
    use std::path::PathBuf;

    proptest! {
        /// The event queue pops in (time, age, id) order, whatever the
        /// order of pushes: later than the last popped, or at its time
        /// with a lower age (or the same age and a lower id).
        #[test]
        fn events_pop_in_time_then_age_order(ops in prop::collection::vec((0u64..3, 0u64..2000, 0u32..300), 1..400), ages in prop::collection::vec(0u32..50, 300)) {
            let mut q = Events::default();
            for (id, &age) in ages.iter().enumerate() {
                q.set_age(id as u32, age);
            }
            let mut reference: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32, u32)>> =
                std::collections::BinaryHeap::new();
            let mut now = 0;
            let mut held = std::collections::HashSet::new();
            for (op, dt, id) in ops {
                if op == 0 && !reference.is_empty() {
                    let std::cmp::Reverse((t, _, id)) = reference.pop().unwrap();
                    prop_assert_eq!(q.next_id(), Some(id));
                    prop_assert_eq!(q.pop(), Some((t, id)));
                    held.remove(&id);
                    now = t;
                } else if held.insert(id) {
                    // Mostly at or after now; sometimes at now itself with
                    // any age (below the last key popped).
                    let t = if op == 1 { now + dt } else { now };
                    q.push(t, id);
                    reference.push(std::cmp::Reverse((t, ages[id as usize], id)));
                }
            }
            while let Some(std::cmp::Reverse((t, _, id))) = reference.pop() {
                prop_assert_eq!(q.pop(), Some((t, id)));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }

    /// Runs `workload` at `set` on `device` (files of this repository),
    /// with the SM's waiters moved on together or each checking alone.
    fn outcome(device: &str, workload: &str, set: &[(&str, i64)], group: bool) -> Outcome {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dev = crate::load_device(&root.join(format!("configs/{device}.ron"))).unwrap();
        let wl = crate::load_workload(&root.join(format!("workloads/{workload}.ron"))).unwrap();
        let o: Vec<(String, Vec<i64>)> =
            set.iter().map(|(n, v)| (n.to_string(), vec![*v])).collect();
        let point = wl.points(&o).unwrap().remove(0);
        let inst = wl.workload.instantiate(&point).unwrap();
        let mut sim = Simulation::new(&dev, &inst.program, inst.regs_per_thread);
        sim.group = [group; 2];
        sim.run_outcome().unwrap()
    }

    /// Among warps that can go at one time the oldest goes first, so that
    /// in a kernel that keeps the memory system saturated for waves on end
    /// no block stays resident while wave after wave of younger ones
    /// passes it. On the H200 (`tools/measure/waves`, `run.sh OUT blocks`)
    /// no block of this kernel at 256 MiB stayed more than 4.44 waves; with
    /// ties going to the lowest warp slot, gpusim's warps of the highest
    /// slots lost every contest for room in their SM's miss path, and a
    /// block stayed up to 44 waves.
    #[test]
    fn no_block_stays_while_waves_of_younger_ones_pass() {
        let o = outcome(
            "h200",
            "stride",
            &[("nMB", 16), ("elem", 8), ("stride", 21)],
            true,
        );
        let w = &o.wave_ends_ps;
        assert!(w.len() >= 7, "{} waves", w.len());
        let per_wave = (w[w.len() - 1] - w[1]) as f64 / (w.len() - 2) as f64;
        let longest = o.longest_block_ps as f64 / per_wave;
        assert!(longest <= 4.44, "a block stayed {longest:.2} waves");
    }

    /// Grouping the warps that wait for room ([`Waiters`]) saves events,
    /// not time: a run is the same with every waiter going through the
    /// heap, for global accesses (a kernel without shared memory, and one
    /// with shared memory it never accesses) and for shared ones (with
    /// global accesses beside them, whose waiters are then not grouped).
    #[test]
    fn grouped_waiters_run_as_each_one_alone() {
        for (dev, wl, set) in [
            (
                "h200",
                "stride",
                &[("nMB", 1), ("elem", 4), ("stride", 8)][..],
            ),
            (
                "c2050",
                "offset",
                &[("nMB", 1), ("elem", 4), ("offset", 1)][..],
            ),
            (
                "h200",
                "stride_smem",
                &[("nMB", 1), ("elem", 8), ("stride", 8), ("smem", 36864)][..],
            ),
            (
                "h200",
                "shared_pred",
                &[("flag", 1), ("op", 0), ("trips", 4)][..],
            ),
            (
                "h200",
                "shared_pred",
                &[("flag", 0), ("op", 0), ("trips", 4)][..],
            ),
            ("h200", "transpose_tiled", &[("n", 512)][..]),
            ("c2050", "reduce", &[("nMB", 1)][..]),
        ] {
            let grouped = outcome(dev, wl, set, true);
            assert_eq!(grouped, outcome(dev, wl, set, false), "{dev} {wl} {set:?}");
        }
    }

    #[test]
    fn ties_go_to_the_oldest_warp() {
        let mut e = Events::default();
        // Slots 0..4 hold warps started in the order 3, 1, 0, 2.
        for (id, age) in [(0, 3), (1, 1), (2, 0), (3, 2)] {
            e.set_age(id, age);
        }
        for id in 0..4 {
            e.push(10, id);
        }
        e.push(5, 0);
        let order: Vec<_> = std::iter::from_fn(|| e.pop()).collect();
        assert_eq!(order, [(5, 0), (10, 2), (10, 1), (10, 3), (10, 0)]);
    }

    /// One warp of one block, on the H200 with `special` cycles for its
    /// thread and block indices: the kernel's time in ps.
    fn one_warp(kernel: &str, special: Option<f64>) -> u64 {
        let mut dev = h200();
        dev.sm.special_register_cycles = special;
        let text = format!(
            r#"Workload(name: "w", params: [], buffers: [(name: "a", bytes: "4096")],
               grid: ["1"], block: ["32"], regs_per_thread: 8, useful_bytes: "128",
               kernel: [{kernel}])"#
        );
        let program = program_of(&text);
        let sim = Simulation::new(&dev, &program, 8);
        sim.run_outcome().unwrap().counters.time_ps
    }

    #[test]
    fn the_indices_are_read_once_at_a_warps_start() {
        let cycle = h200().cycle_ps();
        let at = |cycles: f64| ps(cycles, cycle);
        // The first instruction reads threadIdx: it waits the whole time,
        // and the rest follows it.
        let uses = r#"Let("i", "threadIdx.x"), Store(buf: "a", index: "i", width: "4")"#;
        assert_eq!(one_warp(uses, Some(40.0)) - one_warp(uses, None), at(40.0));
        // A second instruction that reads them again does not wait again.
        let twice = r#"Let("i", "threadIdx.x"), Let("j", "i + blockIdx.x"),
            Store(buf: "a", index: "j", width: "4")"#;
        assert_eq!(
            one_warp(twice, Some(40.0)) - one_warp(twice, None),
            at(40.0)
        );
        // Work that does not need them goes first: the wait overlaps it.
        let later = r#"Let("k", "7"), Let("m", "k * 3"), Let("i", "threadIdx.x + m"),
            Store(buf: "a", index: "i", width: "4")"#;
        assert_eq!(
            one_warp(later, Some(40.0)) - one_warp(later, None),
            at(40.0 - 8.0)
        );
        // A kernel that never reads them does not wait.
        let none = r#"Store(buf: "a", index: "5", width: "4")"#;
        assert_eq!(one_warp(none, Some(40.0)), one_warp(none, None));
    }

    /// The kernel of a workload file's text, at its first point.
    fn program_of(text: &str) -> simt_core::Program {
        let wl = match crate::workload_from_str(std::path::Path::new("w.ron"), text.into()) {
            Ok(w) => w,
            Err(e) => panic!("{e}"),
        };
        let point = wl.points(&[]).unwrap().remove(0);
        wl.workload.instantiate(&point).unwrap().program
    }

    fn h200() -> DeviceSpec {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        crate::load_device(&root.join("configs/h200.ron")).unwrap()
    }

    /// A store stream into an L2 whose slices write `write_bytes_per_cycle`:
    /// its outcome.
    /// A store stream on the H200 with its slices' write paths `slow`
    /// times slower (every store's cycles, and the fills' rate).
    fn store_stream(slow: f64) -> Outcome {
        let mut dev = h200();
        let l2 = dev.l2.as_mut().unwrap();
        l2.slice_write_bytes_per_cycle = l2.slice_write_bytes_per_cycle.map(|w| w / slow);
        l2.store_sector_cycles = l2.store_sector_cycles.map(|c| c * slow);
        l2.store_request_cycles *= slow;
        l2.store_mask_cycles *= slow;
        // 32 MiB: about 1,990 line requests an SM, more than its entries.
        one_statement(
            &dev,
            "33554432",
            "32768",
            r#"Store(buf: "a", index: "blockIdx.x * 256 + threadIdx.x", width: "4")"#,
        )
    }

    /// A kernel of blocks of 256 threads running `stmt` over a buffer `a`
    /// of `bytes`, on `dev`: its outcome.
    fn one_statement(dev: &DeviceSpec, bytes: &str, grid: &str, stmt: &str) -> Outcome {
        let text = format!(
            r#"Workload(name: "w", params: [], buffers: [(name: "a", bytes: "{bytes}")],
               grid: ["{grid}"], block: ["256"], regs_per_thread: 8, useful_bytes: "{bytes}",
               kernel: [{stmt}])"#
        );
        Simulation::new(dev, &program_of(&text), 8)
            .run_outcome()
            .unwrap()
    }

    /// L2 write sectors over L1 store sectors of `stmts` (blocks of 256
    /// over 2 MiB) on the H200, with the L1's store merging (`sm.store_merge`
    /// as `tools/measure/wmerge` measured it) or without.
    fn l2_over_l1_stores(stmts: &str, merge: bool) -> f64 {
        l2_over_l1_stores_open(stmts, merge.then_some(256))
    }

    /// [`l2_over_l1_stores`] with `open` sectors of runs an SM holds.
    fn l2_over_l1_stores_open(stmts: &str, open: Option<u32>) -> f64 {
        let mut dev = h200();
        dev.sm.store_merge = open.map(|open_sectors| crate::spec::StoreMerge {
            open_sectors,
            ..dev.sm.store_merge.expect("the H200 merges stores")
        });
        let o = one_statement(&dev, "2097152", "256", stmts);
        let c = &o.counters;
        c.l2_write_sectors as f64 / c.sectors_st as f64
    }

    #[test]
    fn a_warps_back_to_back_stores_to_its_sectors_leave_the_sm_as_one() {
        let pair = r#"Let("t", "blockIdx.x * 256 + threadIdx.x"),
            Store(buf: "a", index: "t * 2", width: "4"),
            Store(buf: "a", index: "t * 2 + 1", width: "4")"#;
        assert_eq!(l2_over_l1_stores(pair, false), 1.0);
        assert_eq!(l2_over_l1_stores(pair, true), 0.5);
        // Four of 16 sectors each: one run (the loop unrolled, as nvcc
        // does: kept a loop, its compare and branch between the stores
        // close each run before the next store, as on the H200,
        // `tools/measure/wcomb`'s `m_runspin`).
        let four = r#"Let("t", "blockIdx.x * 256 + threadIdx.x"),
            For(var: "j", from: "0", to: "4", unroll: true, body: [Store(buf: "a", index: "t * 4 + j", width: "4")])"#;
        assert_eq!(l2_over_l1_stores(four, true), 0.25);
        // An SM that holds one run of 8 sectors open: the next warp's run
        // closes it, unless the warp's second store comes first.
        let one = l2_over_l1_stores_open(pair, Some(8));
        assert!(one > 0.5 && one <= 1.0, "{one}");
    }

    /// L2 write sectors over L1 store sectors of one warp alone on the
    /// H200 writing floats `t * k .. t * k + k - 1` with `k` stores a
    /// thread, `n` dependent additions (4 cycles each) before each store
    /// but the first, runs closing once sent (`close_when_sent`) or not.
    fn lone_warp_merged(k: u32, n: u32, close: bool) -> f64 {
        let chain = (0..n).map(|_| r#"Let("x", "x + 1"),"#).collect::<String>();
        let stores = (0..k)
            .map(|j| {
                let gap = if j == 0 { "" } else { chain.as_str() };
                format!(r#"{gap} Store(buf: "a", index: "threadIdx.x * {k} + {j}", width: "4"),"#)
            })
            .collect::<String>();
        let text = format!(
            r#"Workload(name: "w", params: [], buffers: [(name: "a", bytes: "4096")],
            grid: ["1"], block: ["32"], regs_per_thread: 8, useful_bytes: "4096",
            kernel: [Let("x", "threadIdx.x"), {stores}])"#
        );
        let program = program_of(&text);
        let mut dev = h200();
        dev.sm.store_merge.as_mut().unwrap().close_when_sent = close;
        let o = Simulation::new(&dev, &program, 1).run_outcome().unwrap();
        o.counters.l2_write_sectors as f64 / o.counters.sectors_st as f64
    }

    #[test]
    fn a_run_closes_once_its_latest_stores_data_has_left() {
        // tools/measure/mgap (one warp alone, 4-byte stores of one word a
        // sector): stores of 8 sectors merge in pairs with one dependent
        // IMAD between them and not with 2 or more; stores of 16 sectors
        // merge all four with up to 3 between, and none with 14 or more.
        // A run stays open while its latest store's data would be on the
        // store data path (a sector a cycle, after the tag lookups).
        assert_eq!(lone_warp_merged(2, 1, true), 0.5);
        assert_eq!(lone_warp_merged(2, 4, true), 1.0);
        assert_eq!(lone_warp_merged(4, 3, true), 0.25);
        assert_eq!(lone_warp_merged(4, 14, true), 1.0);
        // Without it the run stays open however long the gap.
        assert_eq!(lone_warp_merged(4, 14, false), 0.25);
    }

    #[test]
    fn a_taken_branch_holds_its_warp_for_the_branch_latency() {
        // One warp alone runs a loop of 1,000 trips of one addition: each
        // trip ends with the jump back, and the loop with its test's jump
        // out, 1,001 taken branches. Each holds the warp
        // `sm.taken_branch_cycles` where an arithmetic instruction holds
        // it `sm.alu_latency_cycles` (tools/measure/loopcost: a lone
        // warp's loop of four instructions takes 29 cycles a trip on the
        // H200, 21 of them after its branch).
        let text = r#"Workload(name: "w", params: [], buffers: [(name: "a", bytes: "128")],
            grid: ["1"], block: ["32"], regs_per_thread: 8, useful_bytes: "128",
            kernel: [Let("x", "threadIdx.x"),
                For(var: "i", from: "0", to: "1000", body: [Let("x", "x + i")]),
                Store(buf: "a", index: "threadIdx.x", width: "4")])"#;
        let program = program_of(text);
        let time = |branch: Option<u32>| {
            let mut dev = h200();
            dev.sm.taken_branch_cycles = branch;
            let o = Simulation::new(&dev, &program, 1).run_outcome().unwrap();
            (o.counters.time_ps, crate::sm::SmTiming::new(&dev))
        };
        let (with, t) = time(Some(21));
        let (without, t0) = time(None);
        assert_eq!(t0.branch_ps, t0.alu_ps);
        assert_eq!(with - without, 1001 * (t.branch_ps - t.alu_ps));
    }

    #[test]
    fn a_run_completed_by_merged_stores_sends_no_byte_mask() {
        // One SM (one block of 8 warps) storing 512 KiB: each thread writes
        // two floats with two stores (half of each sector each, merged into
        // one run), or one 8-byte store (whole sectors). The merged run's
        // sectors are whole when its data leaves the SM, so it holds the
        // store data path a beat a sector and none for a byte mask, as the
        // whole stores do (tools/measure/wmerge, one SM: warps storing
        // pairs move a whole sector a cycle, as whole stores do,
        // tools/measure/mlp). Apart, each of the two stores sends its 8
        // half-written sectors and a mask beat for each of its 2 lines.
        let pair = r#"For(var: "i", from: "0", to: "256", body: [
                Store(buf: "a", index: "i * 2048 + threadIdx.x * 2", width: "4"),
                Store(buf: "a", index: "i * 2048 + threadIdx.x * 2 + 1", width: "4"),
            ])"#;
        let whole = r#"For(var: "i", from: "0", to: "256", body: [
                Store(buf: "a", index: "i * 1024 + threadIdx.x", width: "8"),
            ])"#;
        // The SM's store data path's busy time, in beats (the kernel's
        // fixed launch cost set aside: the utilisation is over the rest).
        let beats = |merge: bool, k: &str| {
            let mut dev = h200();
            dev.launch.kernel_overhead_ns = 0.0;
            // Runs that stay open until the warp's next store: the byte
            // masks alone (how long a run stays open is the test below).
            dev.sm.store_merge.as_mut().unwrap().close_when_sent = false;
            if !merge {
                dev.sm.store_merge = None;
            }
            let beat = crate::sm::SmTiming::new(&dev).store_beat_ps.unwrap() as f64;
            let o = one_statement(&dev, "2097152", "1", k);
            let busy = o.bottlenecks.lsu_util * dev.sm.count as f64 * o.counters.time_ps as f64;
            (busy / beat).round()
        };
        // 8 warps x 256 trips x 8 sectors.
        let sectors = 16384.0;
        assert_eq!(beats(true, whole), sectors);
        assert_eq!(beats(true, pair), sectors);
        assert_eq!(beats(false, pair), 2.0 * sectors * 5.0 / 4.0);
    }

    #[test]
    fn stores_of_two_schedulers_in_one_cycle_to_the_same_sectors_leave_as_one() {
        // Blocks of 8 warps: warp w issues from scheduler w % 4. Warps 2k
        // and 2k + 1 (two schedulers) write the same 4 sectors in the same
        // cycle: one write reaches the L2 (tools/measure/wmerge, m_set:
        // 0.500).
        let pairs = r#"Store(buf: "a", index: "(blockIdx.x * 4 + threadIdx.x / 64) * 32 + threadIdx.x % 32", width: "4")"#;
        assert_eq!(l2_over_l1_stores(pairs, true), 0.5);
        // Warps w and w + 4 (one scheduler): each its own (m_set: 1.000).
        let one = r#"Store(buf: "a", index: "(blockIdx.x * 4 + threadIdx.x / 32 % 4) * 32 + threadIdx.x % 32", width: "4")"#;
        assert_eq!(l2_over_l1_stores(one, true), 1.0);
        // Four schedulers, four warps on the same sectors: one (m_set:
        // 0.250).
        let four = r#"Store(buf: "a", index: "(blockIdx.x * 2 + threadIdx.x / 128) * 32 + threadIdx.x % 32", width: "4")"#;
        assert_eq!(l2_over_l1_stores(four, true), 0.25);
    }

    #[test]
    fn stores_of_two_schedulers_sharing_some_sectors_merge_those() {
        // Warps 2k and 2k + 1 (two schedulers) each write 4 sectors, the
        // second's starting `sh` sectors after the first's: the 4 - sh
        // they share leave once (tools/measure/xwin, sh = 1, 2, 3, 4:
        // 0.625, 0.750, 0.875, 1.000).
        for (sh, want) in [(0, 0.5), (1, 0.625), (2, 0.75), (3, 0.875), (4, 1.0)] {
            let k = format!(
                r#"Store(buf: "a", index: "((blockIdx.x * 4 + threadIdx.x / 64) * 8 + threadIdx.x / 32 % 2 * {sh} + threadIdx.x % 4) * 8 + (threadIdx.x / 32 % 2 + threadIdx.x % 32 / 4) % 8", width: "4")"#
            );
            assert_eq!(l2_over_l1_stores(&k, true), want, "sh = {sh}");
        }
    }

    #[test]
    fn warps_of_different_schedulers_issue_in_the_same_cycle() {
        let dev = h200();
        let t = crate::sm::SmTiming::new(&dev);
        let mut sm = crate::sm::Sm::new(&dev, t, None);
        let k: Vec<u8> = (0..8).map(|_| sm.next_scheduler()).collect();
        assert_eq!(k, [0, 1, 2, 3, 0, 1, 2, 3]);
        // Four schedulers issue at 0; the fifth instruction, of scheduler
        // 0 again, one cycle (a quarter of the SM's 4 a cycle each) later.
        let at: Vec<u64> = k.iter().map(|&k| sm.issue(0, k)).collect();
        assert_eq!(&at[..4], &[0; 4]);
        assert_eq!(at[4], t.issue_ps);
        assert_eq!(t.issue_ps, (dev.cycle_ps()).ceil() as u64);
    }

    #[test]
    fn stores_wider_than_a_run_or_apart_are_not_merged() {
        // 32 sectors an instruction: more than a run holds.
        let eight = r#"Let("t", "blockIdx.x * 256 + threadIdx.x"),
            For(var: "j", from: "0", to: "8", body: [Store(buf: "a", index: "t * 8 + j", width: "4")])"#;
        assert_eq!(l2_over_l1_stores(eight, true), 1.0);
        // A load between the two stores closes the run.
        let apart = r#"Let("t", "blockIdx.x * 256 + threadIdx.x"),
            Store(buf: "a", index: "t * 2", width: "4"),
            Load(buf: "a", index: "t", width: "4", dst: "x"),
            Store(buf: "a", index: "t * 2 + 1", width: "4")"#;
        assert_eq!(l2_over_l1_stores(apart, true), 1.0);
    }

    #[test]
    fn each_sms_share_counts_its_blocks_and_its_loads_latency() {
        // 4 MiB read at seed 002's float stride 32 on the H200: 4,096
        // blocks over 132 SMs, every one of them timed.
        let o = one_statement(
            &h200(),
            "138412032",
            "4096",
            r#"Load(buf: "a", index: "(blockIdx.x * 256 + threadIdx.x) * 32", width: "4", dst: "v")"#,
        );
        assert_eq!(o.per_sm.len(), 132);
        assert_eq!(o.per_sm.iter().map(|p| p.blocks).sum::<u64>(), 4096);
        // Every SM ran loads; the loads' mean over the SMs, weighted by
        // their blocks (8 warps and one load each), is the kernel's.
        assert!(o.per_sm.iter().all(|p| p.load_latency_cycles > 0.0));
        let weighted = o
            .per_sm
            .iter()
            .map(|p| p.blocks as f64 * p.load_latency_cycles)
            .sum::<f64>()
            / 4096.0;
        let whole = o.bottlenecks.load_latency_cycles;
        assert!(
            (weighted - whole).abs() < 1e-6 * whole,
            "{weighted} {whole}"
        );
    }

    #[test]
    fn a_store_the_l2_cannot_take_yet_keeps_its_entry_in_the_sm() {
        // With the slices' write paths at a fiftieth of the H200's, the
        // stores arrive far faster than the slices take them: each waits in
        // its SM, holding an in-flight entry, so the SMs' entries run out
        // and the warps are held back (the buffers between the SMs and the
        // L2 are bounded). At the H200's own rate they never run out.
        let slow = store_stream(50.0);
        assert!(
            slow.bottlenecks.inflight_stall > 1.0,
            "{:?}",
            slow.bottlenecks
        );
        let fast = store_stream(1.0);
        assert_eq!(
            fast.bottlenecks.inflight_stall, 0.0,
            "{:?}",
            fast.bottlenecks
        );
        // The kernel still ends when the slices have taken every store: a
        // line request of four whole sectors each.
        let l2 = h200().l2.unwrap();
        let per_line = 4.0 * l2.store_sector_cycles.unwrap() + l2.store_request_cycles;
        let lines = slow.counters.l2_write_sectors as f64 / 4.0;
        let cycles = lines * per_line * 50.0 / l2.slices as f64;
        assert!(slow.counters.time_ps as f64 >= cycles * h200().cycle_ps());
    }

    /// A load stream of one line request a warp on the H200, with at most
    /// `beyond` requests beyond the SMs at once.
    fn load_stream(beyond: Option<u32>) -> Outcome {
        let mut dev = h200();
        dev.interconnect.requests_beyond_sms = beyond;
        // 4 MiB of floats read once: 32,768 line requests.
        one_statement(
            &dev,
            "4194304",
            "4096",
            r#"Load(buf: "a", index: "blockIdx.x * 256 + threadIdx.x", width: "4")"#,
        )
    }

    #[test]
    fn requests_beyond_the_sms_are_bounded() {
        // One at a time: every line request waits for the one before it
        // (of any SM) to be answered, so the kernel takes at least its
        // requests times the trip to an L2 slice and back (the L2's hit
        // latency; these loads miss, and take longer), where without a
        // bound it streams at the DRAM's rate.
        let free = load_stream(None);
        let one = load_stream(Some(1));
        assert_eq!(free.counters.requests_ld, one.counters.requests_ld);
        let requests = one.counters.requests_ld as f64;
        let dev = h200();
        let trip = dev.l2.as_ref().unwrap().hit_latency_cycles as f64 * dev.cycle_ps();
        assert!(one.counters.time_ps as f64 >= requests * trip, "{one:?}");
        assert!(
            free.counters.time_ps * 100 < one.counters.time_ps,
            "{free:?} {one:?}"
        );
        // A bound above what the kernel ever has beyond the SMs changes
        // nothing.
        let wide = load_stream(Some(timing::MAX_ENTRIES));
        assert_eq!(wide.counters.time_ps, free.counters.time_ps);
    }

    #[test]
    fn waiters_moved_on_together_give_what_each_checking_alone_gives() {
        // Uncoalesced half-warps on the C870 and a strided stream on the
        // C2050 keep most warps of an SM waiting for in-flight entries.
        for (device, workload, set) in [
            ("c870", "offset", [("offset", 1), ("nMB", 1)]),
            ("c2050", "stride", [("stride", 8), ("nMB", 1)]),
        ] {
            let alone = outcome(device, workload, &set, false);
            let together = outcome(device, workload, &set, true);
            assert_eq!(alone, together, "{device} {workload}");
            assert!(together.bottlenecks.inflight_stall > 0.0, "{together:?}");
        }
    }
}
