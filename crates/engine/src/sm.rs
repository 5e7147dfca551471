//! The SM's side of the memory path: block launch, warp issue, the
//! load/store unit (LSU) with its L1 and the entries for line requests in
//! flight beyond it.
//!
//! ```text
//!  warps ──▶ schedulers (`schedulers`, issue_per_cycle in all) ──▶ LSU input queue (lsu_queue_lines)
//!                                          │ one line request per 1/lsu_lines_per_cycle
//!                                          ▼
//!                       L1 tag stage ── hit ──▶ data after hit_latency_cycles
//!                                          │ miss, or any store
//!                                          ▼
//!             store data path (a store's beats, store_sectors_per_cycle)
//!                                          ▼
//!                     in-flight entries (max_pending_lines) ──▶ interconnect
//! ```
//!
//! Peaks per SM: `issue_per_cycle` warp instructions (each of the
//! `schedulers` issuing `issue_per_cycle / schedulers` of them for its own
//! warps, at most one of a warp at a time),
//! `lsu_lines_per_cycle` line requests (tag lookups) per SM cycle, and
//! `store_sectors_per_cycle` sectors of store data (a store line request
//! holds the data path one beat per sector it writes, and one beat more
//! for the byte mask of partly written sectors, while the tag stage looks
//! up the requests behind it). Back-pressure: a warp waits to issue a
//! memory instruction while the tag stage or the data path has more than
//! `lsu_queue_lines` lines' lookups of work queued; a line request that
//! leaves the SM waits while every in-flight entry is taken.

use crate::spec::{DeviceSpec, MAX_SCHEDULERS};
use cache::{Cache, Lookup};
use timing::Pool;

/// Picoseconds of `cycles` SM cycles, rounded up (so that a unit is never
/// modelled faster than its peak).
pub(crate) fn ps_up(cycles: f64, cycle_ps: f64) -> u64 {
    (cycles * cycle_ps).ceil() as u64
}

/// Picoseconds of `cycles` SM cycles, rounded to nearest (latencies).
pub(crate) fn ps(cycles: f64, cycle_ps: f64) -> u64 {
    (cycles * cycle_ps).round() as u64
}

/// Constants of an SM derived from the device file.
#[derive(Debug, Clone, Copy)]
pub struct SmTiming {
    /// Time per warp instruction one scheduler issues.
    pub issue_ps: u64,
    /// Result latency of an arithmetic instruction.
    pub alu_ps: u64,
    /// From a taken branch's issue until its warp may issue again.
    pub branch_ps: u64,
    /// Time per line request in the LSU.
    pub lsu_ps: u64,
    /// Time per beat of store data (a sector, or a byte mask) in the LSU,
    /// where the device gives its store rate.
    pub store_beat_ps: Option<u64>,
    /// Work the LSU input queue may hold ahead of a new instruction.
    pub lsu_window_ps: u64,
    /// L1 hit latency.
    pub l1_hit_ps: u64,
    /// Time to launch one block.
    pub launch_ps: u64,
    /// Time a block slot stands empty between a block's exit and the first
    /// instruction of the next block in it.
    pub refill_ps: u64,
    /// Interval in which in-flight entries are counted (32 cycles): an
    /// entry is given out up to this late.
    pub entry_interval_ps: u64,
}

impl SmTiming {
    /// From the device file.
    pub fn new(dev: &DeviceSpec) -> SmTiming {
        let cy = dev.cycle_ps();
        let sm = &dev.sm;
        let lsu_ps = ps_up(1.0 / sm.lsu_lines_per_cycle, cy);
        SmTiming {
            issue_ps: ps_up(sm.schedulers.unwrap_or(1) as f64 / sm.issue_per_cycle, cy),
            alu_ps: ps(sm.alu_latency_cycles as f64, cy),
            branch_ps: ps(
                sm.taken_branch_cycles.unwrap_or(sm.alu_latency_cycles) as f64,
                cy,
            ),
            lsu_ps,
            store_beat_ps: sm.store_sectors_per_cycle.map(|r| ps_up(1.0 / r, cy)),
            lsu_window_ps: lsu_ps * sm.lsu_queue_lines as u64,
            l1_hit_ps: ps(
                dev.l1.as_ref().map(|l| l.hit_latency_cycles).unwrap_or(0) as f64,
                cy,
            ),
            launch_ps: ps(dev.launch.block_launch_cycles, cy),
            refill_ps: ps(
                dev.launch
                    .slot_refill_cycles
                    .unwrap_or(dev.launch.block_launch_cycles),
                cy,
            ),
            entry_interval_ps: ps_up(32.0, cy),
        }
    }
}

/// One SM's state.
#[derive(Debug, Clone)]
pub struct Sm {
    t: SmTiming,
    launch_free: u64,
    /// Per scheduler, when it may issue next.
    issue_free: [u64; MAX_SCHEDULERS as usize],
    schedulers: u32,
    /// Warps started so far: the next one goes to scheduler `started %
    /// schedulers`.
    started: u32,
    lsu_free: u64,
    /// When the store data path is free.
    data_free: u64,
    /// Blocks resident now.
    pub resident: u32,
    l1: Option<Cache>,
    inflight: Pool,
    lsu_lines: u64,
    /// Time the data path was busy (store beats, shared wavefronts).
    store_data_ps: u64,
    lsu_wait_ps: u64,
    /// When the latest line request left the SM (requests leave in order
    /// where `interconnect.requests_beyond_sms` bounds them).
    left: u64,
}

impl Sm {
    /// An idle SM with a cold L1 of geometry `l1` (none: no L1).
    pub fn new(dev: &DeviceSpec, t: SmTiming, l1: Option<cache::CacheSpec>) -> Sm {
        Sm {
            t,
            launch_free: 0,
            issue_free: [0; MAX_SCHEDULERS as usize],
            schedulers: dev.sm.schedulers.unwrap_or(1).clamp(1, MAX_SCHEDULERS),
            started: 0,
            lsu_free: 0,
            data_free: 0,
            resident: 0,
            l1: l1.map(Cache::new),
            inflight: Pool::new(dev.sm.max_pending_lines, t.entry_interval_ps),
            lsu_lines: 0,
            store_data_ps: 0,
            lsu_wait_ps: 0,
            left: 0,
        }
    }

    /// Launches a block asked for at `t`: one of the kernel's first wave,
    /// or (`refill`) one into the slot of a block that exited at `t`.
    /// Returns when its warps may start: once the launch time (or the
    /// slot's refill time) has passed and the SM, which launches its blocks
    /// one at a time, has launched the blocks before it.
    pub fn launch(&mut self, t: u64, refill: bool) -> u64 {
        let wait = if refill {
            self.t.refill_ps
        } else {
            self.t.launch_ps
        };
        let at = (t + wait).max(self.launch_free + self.t.launch_ps);
        self.launch_free = at;
        at
    }

    /// The scheduler of the next warp to start (round-robin).
    pub fn next_scheduler(&mut self) -> u8 {
        let k = self.started % self.schedulers;
        self.started = self.started.wrapping_add(1);
        k as u8
    }

    /// Issues an arithmetic instruction of a warp of scheduler `k`, ready
    /// at `t`; returns when its result is ready, or, for a taken branch
    /// (`jump`), when the warp may issue again.
    pub fn issue_alu(&mut self, t: u64, k: u8, jump: bool) -> u64 {
        self.issue(t, k)
            + if jump {
                self.t.branch_ps
            } else {
                self.t.alu_ps
            }
    }

    /// Issues an instruction without a result (a barrier) of a warp of
    /// scheduler `k`, ready at `t`; returns its issue time.
    pub fn issue(&mut self, t: u64, k: u8) -> u64 {
        let free = &mut self.issue_free[k as usize];
        let at = t.max(*free);
        *free = at + self.t.issue_ps;
        at
    }

    /// The earliest time at or after `t` at which a memory instruction may
    /// issue: the LSU input queue has room and an in-flight entry is free
    /// (a full miss path stalls the LSU, and the LSU the warps). A warp that
    /// must wait goes back to the scheduler until then; the wait is counted
    /// against the unit that was full.
    pub fn mem_room(&mut self, t: u64) -> u64 {
        self.mem_room_for(t, 1)
    }

    /// [`Sm::mem_room`] asked by `n` warps at `t` (each finds the same
    /// answer, and each wait counts).
    pub fn mem_room_for(&mut self, t: u64, n: u64) -> u64 {
        let lsu = self.lsu_busy().saturating_sub(self.t.lsu_window_ps).max(t);
        let entry = self.inflight.free_at(t);
        if entry > lsu {
            self.inflight.add_wait(n * (entry - t));
        } else {
            self.lsu_wait_ps += n * (lsu - t);
        }
        lsu.max(entry)
    }

    /// [`Sm::mem_room`] for a shared-memory instruction, which needs room
    /// in the LSU queue but no in-flight entry.
    pub fn lsu_room(&mut self, t: u64) -> u64 {
        self.lsu_room_for(t, 1)
    }

    /// [`Sm::lsu_room`] asked by `n` warps at `t` (each finds the same
    /// answer, and each wait counts).
    pub fn lsu_room_for(&mut self, t: u64, n: u64) -> u64 {
        let lsu = self.lsu_busy().saturating_sub(self.t.lsu_window_ps).max(t);
        self.lsu_wait_ps += n * (lsu - t);
        lsu
    }

    /// Issues a memory instruction of a warp of scheduler `k`, ready at
    /// `t`, once the LSU queue has room; returns the issue time.
    pub fn issue_mem(&mut self, t: u64, k: u8) -> u64 {
        let slot = t.max(self.issue_free[k as usize]);
        let room = self.lsu_busy().saturating_sub(self.t.lsu_window_ps);
        let at = slot.max(room);
        self.lsu_wait_ps += at - slot;
        self.issue_free[k as usize] = at + self.t.issue_ps;
        at
    }

    /// When a warp may issue its next instruction after one issued at `t`.
    pub fn next_issue(&self, t: u64) -> u64 {
        t + self.t.issue_ps
    }

    /// Takes the LSU's next line slot for an instruction issued at `t`;
    /// returns the time of its tag lookup.
    pub fn lsu_line(&mut self, t: u64) -> u64 {
        self.take_lsu(t, self.t.lsu_ps)
    }

    /// Holds the tag stage for `hold` from the first time at or after `t`
    /// it is free, for one line request; returns when its lookup is done.
    fn take_lsu(&mut self, t: u64, hold: u64) -> u64 {
        let at = t.max(self.lsu_free) + hold;
        self.lsu_free = at;
        self.lsu_lines += 1;
        at
    }

    /// Takes the LSU's next line slot for a store line request issued at
    /// `t` that sends `beats` beats of data (its sectors, and its byte
    /// mask if some are partly written); returns when the request leaves
    /// the LSU. Its tag lookup takes the tag stage; then its beats take
    /// the store data path, beside the lookups of the requests behind it
    /// (without a store rate: the lookup alone).
    pub fn lsu_store_line(&mut self, t: u64, beats: u64) -> u64 {
        let tag = self.take_lsu(t, self.t.lsu_ps);
        match self.t.store_beat_ps {
            Some(b) => self.take_data(tag, beats * b),
            None => tag,
        }
    }

    /// Holds the store data path for `hold` from the first time at or
    /// after `t` it is free; returns when it is done.
    fn take_data(&mut self, t: u64, hold: u64) -> u64 {
        self.store_data_ps += hold;
        let done = t.max(self.data_free) + hold;
        self.data_free = done;
        done
    }

    /// Takes `n` byte-mask beats of stores merged in the L1 on the store
    /// data path at or after `t` (none without a store rate); returns when
    /// they are done.
    pub fn store_masks(&mut self, t: u64, n: u64) -> u64 {
        match self.t.store_beat_ps {
            Some(b) => self.take_data(t, n * b),
            None => t,
        }
    }

    /// Takes one shared-memory wavefront at or after `t`; returns when it
    /// is done. Where the SM has a store data path (`store_sectors_per_cycle`)
    /// a wavefront takes it, as the data array it reads or writes is the
    /// one store data passes; else it takes the LSU's one stage.
    pub fn shared_wavefront(&mut self, t: u64) -> u64 {
        if self.t.store_beat_ps.is_none() {
            return self.lsu_line(t);
        }
        self.take_data(t, self.t.lsu_ps)
    }

    /// Time per beat of the store data path (0 without a store rate).
    pub fn store_beat_ps(&self) -> u64 {
        self.t.store_beat_ps.unwrap_or(0)
    }

    /// When the LSU may take more work: the later of its tag stage and
    /// its store data path.
    fn lsu_busy(&self) -> u64 {
        self.lsu_free.max(self.data_free)
    }

    /// Takes an in-flight entry for a line request looked up at `t`;
    /// returns when the request holds the entry (later than `t` only when
    /// one instruction's lines outnumber the free entries).
    pub fn acquire(&mut self, t: u64) -> u64 {
        self.inflight.acquire(t)
    }

    /// Gives back an in-flight entry held from `from` (as returned by
    /// [`Sm::acquire`]) to `to`.
    pub fn release(&mut self, from: u64, to: u64) {
        self.inflight.release(from, to);
    }

    /// The earliest time at or after `t` at which a line request may
    /// leave the SM, in order: not before the one sent before it.
    pub fn next_leave(&self, t: u64) -> u64 {
        t.max(self.left)
    }

    /// A line request left the SM at `t`.
    pub fn leave(&mut self, t: u64) {
        self.left = self.left.max(t);
    }

    /// Forgets bookings before `t` (every request from now on is later).
    pub fn advance(&mut self, t: u64) {
        self.inflight.advance(t);
    }

    /// The L1, where global loads are cached.
    pub fn l1(&mut self) -> Option<&mut Cache> {
        self.l1.as_mut()
    }

    /// Looks `sectors` of `line` up in the L1 at `t`.
    pub fn l1_read(&mut self, line: u64, sectors: u8, t: u64) -> Option<Lookup> {
        self.l1.as_mut().map(|c| c.read(line, sectors, t))
    }

    /// Time per line request (or shared wavefront) in the LSU.
    pub fn lsu_ps(&self) -> u64 {
        self.t.lsu_ps
    }

    /// L1 hit latency.
    pub fn l1_hit_ps(&self) -> u64 {
        self.t.l1_hit_ps
    }

    /// Hints the host cache about the L1 set of `line`.
    pub fn prefetch(&self, line: u64) {
        if let Some(c) = &self.l1 {
            c.prefetch(line);
        }
    }

    /// Line requests handled by the LSU so far.
    pub fn lsu_lines(&self) -> u64 {
        self.lsu_lines
    }

    /// Time the data path was busy (store line requests' beats, shared
    /// wavefronts where it takes them), ps.
    pub fn store_data_ps(&self) -> u64 {
        self.store_data_ps
    }

    /// When the LSU finishes the work booked so far.
    pub fn lsu_free(&self) -> u64 {
        self.lsu_free
    }

    /// Total time warps waited for room in the LSU queue, ps.
    pub fn lsu_wait_ps(&self) -> u64 {
        self.lsu_wait_ps
    }

    /// Total time the LSU waited for an in-flight entry, ps.
    pub fn inflight_wait_ps(&self) -> u64 {
        self.inflight.wait_ps()
    }
}

/// Byte mask per 32-byte sector of the bytes the active lanes write in
/// `line` (128-byte aligned): one line of [`written_lines`], lane by lane,
/// which the tests check it against.
#[cfg(test)]
pub fn written_bytes(width: u8, mask: u32, addrs: &[u64; 32], line: u64) -> [u32; 4] {
    let mut out = [0u32; 4];
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = addrs[lane];
        if a / 128 * 128 == line {
            add_word(&mut out, width, (a - line) as usize);
        }
    }
    out
}

/// Marks a word of `width` bytes at byte `off` of a line as written.
#[inline]
fn add_word(out: &mut [u32; 4], width: u8, off: usize) {
    let bits: u64 = if width >= 32 {
        u32::MAX as u64
    } else {
        (1u64 << width) - 1
    };
    // A word never crosses a sector (natural alignment, width <= 16).
    out[off / 32] |= (bits << (off % 32)) as u32;
}

/// `written_bytes` (the reference the tests hold it to) of every line a store instruction writes, in one pass
/// over its lanes: `(line, bytes)` in order of each line's first lane.
pub fn written_lines(width: u8, mask: u32, addrs: &[u64; 32], out: &mut Vec<(u64, [u32; 4])>) {
    out.clear();
    let mut m = mask;
    let mut last = usize::MAX;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = addrs[lane];
        let line = a / 128 * 128;
        let k = match out.get(last) {
            Some(&(l, _)) if l == line => last,
            _ => match out.iter().position(|&(l, _)| l == line) {
                Some(k) => k,
                None => {
                    out.push((line, [0; 4]));
                    out.len() - 1
                }
            },
        };
        add_word(&mut out[k].1, width, (a - line) as usize);
        last = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> DeviceSpec {
        crate::load_device(&std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/h200.ron"
        )))
        .expect("config")
    }

    #[test]
    fn a_warp_waits_when_the_lsu_queue_is_full() {
        let d = dev();
        let t = SmTiming::new(&d);
        let mut sm = Sm::new(&d, t, d.l1.as_ref().map(|l| l.cache.clone()));
        // Book twice the queue's worth of lines at time 0.
        let issue = sm.issue_mem(0, 0);
        for _ in 0..2 * d.sm.lsu_queue_lines {
            sm.lsu_line(issue);
        }
        let next = sm.issue_mem(0, 0);
        assert_eq!(next, sm.lsu_free() - t.lsu_window_ps);
        assert!(sm.lsu_wait_ps() > 0);
    }

    #[test]
    fn a_slot_refills_after_its_refill_time_at_the_launch_rate() {
        let mut d = dev();
        d.launch.slot_refill_cycles = Some(330.0);
        let t = SmTiming::new(&d);
        assert!(t.refill_ps > t.launch_ps);
        let mut sm = Sm::new(&d, t, d.l1.as_ref().map(|l| l.cache.clone()));
        let exit = 1_000_000;
        // One block exits alone: its slot is empty for the refill time.
        assert_eq!(sm.launch(exit, true), exit + t.refill_ps);
        // Three exit together: the SM launches one block per launch time.
        let later = 2_000_000;
        let a = sm.launch(later, true);
        let b = sm.launch(later, true);
        let c = sm.launch(later, true);
        assert_eq!(a, later + t.refill_ps);
        assert_eq!((b - a, c - b), (t.launch_ps, t.launch_ps));
        // Without the field a slot refills after the launch time, as a
        // first-wave block launches.
        let d0 = dev_without_refill();
        let t0 = SmTiming::new(&d0);
        let (mut x, mut y) = (
            Sm::new(&d0, t0, d0.l1.as_ref().map(|l| l.cache.clone())),
            Sm::new(&d0, t0, d0.l1.as_ref().map(|l| l.cache.clone())),
        );
        for at in [0, 5, 5, 10_000] {
            assert_eq!(x.launch(at, true), y.launch(at, false));
        }
    }

    fn dev_without_refill() -> DeviceSpec {
        let mut d = dev();
        d.launch.slot_refill_cycles = None;
        d
    }

    #[test]
    fn a_request_waits_while_every_inflight_entry_is_taken() {
        let d = dev();
        let t = SmTiming::new(&d);
        let mut sm = Sm::new(&d, t, d.l1.as_ref().map(|l| l.cache.clone()));
        // Holds ending on an interval boundary.
        let end = 100 * t.entry_interval_ps;
        for _ in 0..d.sm.max_pending_lines {
            let at = sm.acquire(0);
            assert_eq!(at, 0);
            sm.release(at, end);
        }
        assert_eq!(sm.acquire(0), end);
        assert_eq!(sm.inflight_wait_ps(), end);
    }

    #[test]
    fn a_store_line_holds_the_data_path_for_its_beats() {
        // The H200's measured store path: a beat a cycle.
        let d = dev();
        assert_eq!(d.sm.store_sectors_per_cycle, Some(1.0));
        let t = SmTiming::new(&d);
        let beat = t.store_beat_ps.unwrap();
        let mut sm = Sm::new(&d, t, None);
        // A whole line (four sectors) holds the data path four beats, a
        // lone partly written sector two (its data and its byte mask):
        // 0.25 and 0.5 line requests a cycle, as tools/measure/mlp
        // measured. Each first takes its tag lookup.
        assert_eq!(sm.lsu_store_line(0, 4), t.lsu_ps + 4 * beat);
        assert_eq!(sm.lsu_store_line(0, 2), t.lsu_ps + 6 * beat);
        // A load's lookup takes the tag stage alone, beside their beats;
        // a one-beat store's data waits for theirs.
        assert_eq!(sm.lsu_line(0), 3 * t.lsu_ps);
        assert_eq!(sm.lsu_store_line(0, 1), t.lsu_ps + 7 * beat);
        assert_eq!(sm.store_data_ps(), 7 * beat);
        // The tag stage has taken three lookups and the data path seven
        // beats: the next instruction waits for the later of the two.
        assert_eq!(sm.lsu_busy(), t.lsu_ps + 7 * beat);
        // Without a store rate a store line takes a lookup's time.
        let mut d0 = dev();
        d0.sm.store_sectors_per_cycle = None;
        let t0 = SmTiming::new(&d0);
        let mut sm0 = Sm::new(&d0, t0, None);
        assert_eq!(sm0.lsu_store_line(0, 4), t0.lsu_ps);
        assert_eq!(sm0.store_data_ps(), 0);
    }

    #[test]
    fn a_warp_is_held_back_while_the_miss_path_is_full() {
        let d = dev();
        let t = SmTiming::new(&d);
        let mut sm = Sm::new(&d, t, d.l1.as_ref().map(|l| l.cache.clone()));
        assert_eq!(sm.mem_room(0), 0);
        let end = 300 * t.entry_interval_ps;
        for _ in 0..d.sm.max_pending_lines {
            let at = sm.acquire(0);
            sm.release(at, end);
        }
        // Every entry is held: the next instruction waits (and the wait is
        // counted against the miss path, not the LSU queue).
        assert_eq!(sm.mem_room(1000), end);
        assert_eq!(sm.inflight_wait_ps(), end - 1000);
        assert_eq!(sm.lsu_wait_ps(), 0);
    }

    #[test]
    fn written_bytes_of_a_strided_store() {
        let mut addrs = [0u64; 32];
        for (i, a) in addrs.iter_mut().enumerate() {
            *a = 4096 + 16 * i as u64; // 4 bytes every 16
        }
        let b = written_bytes(4, u32::MAX, &addrs, 4096);
        assert_eq!(b, [0x000f_000f; 4]);
        let full = written_bytes(16, 0b11, &addrs, 4096);
        assert_eq!(full[0], 0xffff_ffff);
        // Every line's bytes in one pass, the same as line by line.
        addrs[5] = 8192 + 100;
        addrs[9] = 4096 + 16 * 3;
        let mut lines = Vec::new();
        written_lines(4, u32::MAX, &addrs, &mut lines);
        assert_eq!(lines.len(), 5);
        for &(l, b) in &lines {
            assert_eq!(b, written_bytes(4, u32::MAX, &addrs, l), "line {l}");
        }
    }
    /// tools/measure/l1ways: one thread of the H200 walks N lines S bytes
    /// apart round and round, its loads cached in the L1, with the L1 of a
    /// kernel without shared memory (248 KiB) and beside 99 KiB of it. Up
    /// to 512 lines at any stride of 1 to 16,384 lines (powers of two, and
    /// 3, 5, 31, 62, 124, 248, 496, 992, 1984 and 2049 lines) every load
    /// hits (32-41 cycles a load against 267-288 past the L1; 35-40 at
    /// three points of 384 and 512 lines: under 4% missed), where an L1
    /// whose set is the line number modulo its sets would put such lines
    /// in a few sets and miss all of them. The L1 the config builds for
    /// each case, fed the same walk (two laps to warm, four counted),
    /// misses at most 4% of its loads on every case (the H200's largest,
    /// 3.2%, at 512 lines 248 KiB apart).
    #[test]
    fn h200_l1_misses_no_line_of_a_chase_that_the_h200_holds() {
        let d = dev();
        let l1 = d.l1.as_ref().unwrap();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tools/measure/l1ways/results/l1ways.csv"
        ))
        .unwrap();
        let base = 0x7ff5_2600_0000u64; // the buffer's address on the H200
        let mut cases = 0;
        for row in text.lines().filter(|l| l.starts_with("R,ca,")) {
            let f: Vec<&str> = row.split(',').collect();
            let (smem, stride, n): (u64, u64, u64) = (
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            );
            let mut c = cache::Cache::new(l1.for_kernel(&d.shared, 1, smem));
            let mut misses = 0;
            for lap in 0..6 {
                for i in 0..n {
                    let l = c.read(base + i * stride, 1, 0);
                    if l.miss != 0 {
                        c.fill(l.slot, l.miss, 0);
                        misses += u64::from(lap >= 2);
                    }
                }
            }
            let missed = misses as f64 / (4 * n) as f64;
            assert!(
                missed <= 0.04,
                "{smem} B of shared memory, {n} lines {stride} B apart: {:.1}% missed",
                100.0 * missed
            );
            cases += 1;
        }
        assert_eq!(cases, 2876);
    }
}
