//! The timed simulation of one kernel launch.
//!
//! Event-driven at warp granularity: a binary heap orders warps by the time
//! they can next issue; a warp runs until it must wait (for a loaded value,
//! or after a short quantum so that warps stay near each other in time).
//! Shared units are modelled as servers that are *reserved* when a request
//! is issued: in-order units (SM issue, LSU, DRAM banks and buses) keep a
//! next-free time; units that see requests out of time order (L2 slice
//! ports, SM response ports) keep a calendar of per-interval capacity, so
//! that a request reserved far in the future (a DRAM miss) does not block
//! an earlier one (an L2 hit). Everything is integer picoseconds, so a run
//! is exactly reproducible.

use crate::spec::DeviceSpec;
use crate::Counters;
use cache::Cache;
use dram::{Calendar, Dram};
use lsu::{LineRequest, Rule};
use simt_core::{ExecError, MemKind, Program, Scratch, Step, Warp, WarpAccess};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A server with `k` identical units (MSHRs): a request takes the earliest free.
#[derive(Debug, Clone)]
struct Pool {
    free_at: BinaryHeap<Reverse<u64>>,
}

impl Pool {
    fn new(k: u32) -> Pool {
        Pool {
            free_at: (0..k).map(|_| Reverse(0)).collect(),
        }
    }
    fn acquire(&mut self, t: u64) -> u64 {
        let Reverse(f) = self.free_at.pop().unwrap_or(Reverse(0));
        t.max(f)
    }
    fn release(&mut self, t: u64) {
        self.free_at.push(Reverse(t));
    }
}

#[derive(Debug, Clone, Default)]
struct Slot {
    warp: Warp,
    sm: u32,
    block: u32,
    start: u64,
    last_load: u64,
    reg_ready: [u64; 32],
    pending: Option<WarpAccess>,
    done: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Block {
    sm: u32,
    warps_left: u32,
}

/// Per-SM state.
#[derive(Debug, Clone)]
struct Sm {
    launch_free: u64,
    issue_free: u64,
    lsu_free: u64,
    resident: u32,
    l1: Option<Cache>,
    mshr: Pool,
    port: Calendar,
}

/// Utilisation and latency figures of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bottlenecks {
    /// LSU busy fraction (line requests over capacity).
    pub lsu_util: f64,
    /// L1 lookups over capacity (same port as the LSU on these designs).
    pub l1_util: f64,
    /// Interconnect: bytes delivered to SMs over their ports' capacity.
    pub noc_util: f64,
    /// L2 slices: bytes served over capacity.
    pub l2_util: f64,
    /// DRAM: data-bus busy time over capacity.
    pub dram_util: f64,
    /// Mean cycles from a load's issue to its last byte.
    pub load_latency_cycles: f64,
    /// Mean resident warps per SM over max warps per SM.
    pub achieved_occupancy: f64,
    /// Blocks resident per SM by the occupancy limits.
    pub blocks_per_sm: u32,
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
}

/// The whole device for one launch, owned by value so that a run can move
/// to any worker thread.
pub struct Simulation<'a> {
    dev: &'a DeviceSpec,
    prog: &'a Program,
    regs_per_thread: u32,
    sms: Vec<Sm>,
    l2: Vec<Cache>,
    l2_port: Vec<Calendar>,
    dram: Dram,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    blocks: Vec<Block>,
    free_blocks: Vec<u32>,
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    scratch: Scratch,
    acc: WarpAccess,
    lines: Vec<LineRequest>,
    // Constants, ps.
    cycle: f64,
    alu_ps: u64,
    issue_ps: u64,
    lsu_ps: u64,
    l1_hit_ps: u64,
    l2_half_ps: u64,
    far_half_ps: u64,
    l2_partitions: usize,
    dram_half_ps: u64,
    launch_ps: u64,
    quantum_ps: u64,
    // Progress.
    next_block: u64,
    end: u64,
    counters: Counters,
    load_latency_sum: f64,
    loads: u64,
    warp_time: f64,
    lsu_lines: u64,
}

impl<'a> Simulation<'a> {
    /// Builds a cold device for `prog`.
    pub fn new(dev: &'a DeviceSpec, prog: &'a Program, regs_per_thread: u32) -> Simulation<'a> {
        let cycle = dev.cycle_ps();
        let c = |cycles: f64| (cycles * cycle).round() as u64;
        let bucket = c(32.0).max(1);
        let sms = (0..dev.sm.count)
            .map(|_| Sm {
                launch_free: 0,
                issue_free: 0,
                lsu_free: 0,
                resident: 0,
                l1: dev.l1.as_ref().map(|l| Cache::new(l.cache.clone())),
                mshr: Pool::new(dev.sm.max_pending_lines),
                port: Calendar::new(
                    bucket,
                    (dev.interconnect.sm_port_bytes_per_cycle * 32.0).round() as u64,
                ),
            })
            .collect();
        let (l2, l2_port) = match &dev.l2 {
            Some(l) => (
                (0..l.slices).map(|_| Cache::new(l.slice.clone())).collect(),
                (0..l.slices)
                    .map(|_| Calendar::new(bucket, (l.slice_bytes_per_cycle * 32.0).round() as u64))
                    .collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let l2_lat = dev.l2.as_ref().map(|l| l.hit_latency_cycles).unwrap_or(0) as f64;
        let d = &dev.dram;
        // The DRAM device's own part of an unloaded miss (row conflict, as
        // a pointer chase sees): the rest of the measured latency is the
        // path through the memory controller.
        let dram_core_ns = d.t_rp_ns + d.t_rcd_ns + d.t_cl_ns + d.burst_ps() as f64 / 1000.0;
        let path_cycles =
            (dev.dram_latency_cycles as f64 - l2_lat - dram_core_ns * 1000.0 / cycle).max(0.0);
        Simulation {
            dev,
            prog,
            regs_per_thread,
            sms,
            l2,
            l2_port,
            dram: Dram::new(dev.dram.clone()),
            slots: Vec::new(),
            free_slots: Vec::new(),
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            heap: BinaryHeap::new(),
            scratch: Scratch::default(),
            acc: WarpAccess::default(),
            lines: Vec::with_capacity(64),
            cycle,
            alu_ps: c(dev.sm.alu_latency_cycles as f64),
            issue_ps: c(1.0 / dev.sm.issue_per_cycle),
            lsu_ps: c(1.0 / dev.sm.lsu_lines_per_cycle),
            l1_hit_ps: c(dev.l1.as_ref().map(|l| l.hit_latency_cycles).unwrap_or(0) as f64),
            l2_half_ps: c(l2_lat / 2.0),
            far_half_ps: c(dev.l2.as_ref().map(|l| l.far_latency_cycles).unwrap_or(0) as f64 / 2.0),
            l2_partitions: dev.l2.as_ref().map(|l| l.partitions.max(1)).unwrap_or(1) as usize,
            dram_half_ps: c(path_cycles / 2.0),
            launch_ps: c(dev.launch.block_launch_cycles),
            quantum_ps: c(64.0),
            next_block: 0,
            end: 0,
            counters: Counters::default(),
            load_latency_sum: 0.0,
            loads: 0,
            warp_time: 0.0,
            lsu_lines: 0,
        }
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
        let regs = self.regs_per_thread * warps * 32;
        let by_regs = sm.registers.checked_div(regs).unwrap_or(u32::MAX);
        let n = sm
            .max_blocks
            .min(sm.max_warps / warps)
            .min(sm.max_threads / (warps * 32))
            .min(by_regs);
        if n == 0 {
            return Err(format!(
                "a block of {threads} threads with {} registers per thread does not fit on one \
                 SM ({} warps, {} registers)",
                self.regs_per_thread, sm.max_warps, sm.registers
            ));
        }
        Ok(n)
    }

    /// Runs the launch to completion.
    pub fn run(mut self) -> Result<(Counters, Bottlenecks), SimError> {
        let per_sm = self.blocks_per_sm().map_err(SimError::Launch)?;
        let total = self.prog.blocks();
        if total == 0 {
            return Err(SimError::Launch("the grid has no blocks".into()));
        }
        // First wave: round-robin over SMs.
        'fill: for _ in 0..per_sm {
            for sm in 0..self.dev.sm.count {
                if self.next_block == total {
                    break 'fill;
                }
                self.dispatch(sm, 0);
            }
        }
        let mut pops = 0u64;
        while let Some(Reverse((t, id))) = self.heap.pop() {
            pops += 1;
            if pops.is_multiple_of(1024) {
                for sm in &mut self.sms {
                    sm.port.advance(t);
                }
                for p in &mut self.l2_port {
                    p.advance(t);
                }
            }
            if self.slots[id as usize].done {
                self.retire(id, t);
            } else {
                self.run_warp(id, t)?;
            }
        }
        Ok(self.finish(per_sm))
    }

    fn dispatch(&mut self, sm: u32, t: u64) {
        let b = self.next_block;
        self.next_block += 1;
        // Each SM launches its blocks one at a time.
        let s = &mut self.sms[sm as usize];
        let at = t.max(s.launch_free) + self.launch_ps;
        s.launch_free = at;
        let [gx, gy, _] = self.prog.grid_dim;
        let (gx, gy) = (gx as u64, gy as u64);
        let idx = [
            (b % gx) as u32,
            ((b / gx) % gy) as u32,
            (b / (gx * gy)) as u32,
        ];
        let warps = self.prog.warps_per_block();
        let block = Block {
            sm,
            warps_left: warps,
        };
        let bid = match self.free_blocks.pop() {
            Some(i) => {
                self.blocks[i as usize] = block;
                i
            }
            None => {
                self.blocks.push(block);
                (self.blocks.len() - 1) as u32
            }
        };
        self.sms[sm as usize].resident += 1;
        for w in 0..warps {
            let id = match self.free_slots.pop() {
                Some(i) => i,
                None => {
                    self.slots.push(Slot::default());
                    (self.slots.len() - 1) as u32
                }
            };
            let s = &mut self.slots[id as usize];
            s.warp.reset(self.prog, idx, w);
            s.sm = sm;
            s.block = bid;
            s.start = at;
            s.last_load = at;
            s.pending = None;
            s.done = false;
            self.heap.push(Reverse((at, id)));
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
            self.free_blocks.push(bid);
            self.sms[sm as usize].resident -= 1;
            if self.next_block < self.prog.blocks() {
                self.dispatch(sm, t);
            }
        }
    }

    fn fault(&self, id: u32, err: ExecError) -> SimError {
        let s = &self.slots[id as usize];
        let warp_in_block = {
            // Recover the warp's index from threadIdx of lane 0.
            let r = &s.warp.regs;
            let [bx, by, _] = self.prog.block_dim;
            let t = r[0][0] as u32 + r[1][0] as u32 * bx + r[2][0] as u32 * bx * by;
            t / 32
        };
        let lane = err.lane as u32;
        let t = warp_in_block * 32 + lane;
        let [bx, by, _] = self.prog.block_dim;
        let r = &s.warp.regs;
        SimError::Exec {
            err,
            block: [r[3][0] as u32, r[4][0] as u32, r[5][0] as u32],
            thread: [t % bx, (t / bx) % by, t / (bx * by)],
        }
    }

    fn run_warp(&mut self, id: u32, t0: u64) -> Result<(), SimError> {
        let mut t = t0;
        let mut acc = self.slots[id as usize].pending.take();
        loop {
            let mut a = match acc.take() {
                Some(a) => a,
                None => {
                    let mut a = WarpAccess::default();
                    let step =
                        self.slots[id as usize]
                            .warp
                            .step(self.prog, &mut self.scratch, &mut a);
                    let step = match step {
                        Ok(x) => x,
                        Err(e) => return Err(self.fault(id, e)),
                    };
                    let s = &mut self.slots[id as usize];
                    match step {
                        Step::Alu => {
                            let sm = &mut self.sms[s.sm as usize];
                            let at = t.max(sm.issue_free);
                            sm.issue_free = at + self.issue_ps;
                            t = at + self.alu_ps;
                            self.counters.warp_instructions += 1;
                            self.acc = a;
                            if t - t0 > self.quantum_ps {
                                self.heap.push(Reverse((t, id)));
                                return Ok(());
                            }
                            continue;
                        }
                        Step::Done => {
                            self.acc = a;
                            let s = &mut self.slots[id as usize];
                            s.done = true;
                            let at = t.max(s.last_load);
                            self.heap.push(Reverse((at, id)));
                            return Ok(());
                        }
                        Step::Mem => {
                            self.counters.warp_instructions += 1;
                            a
                        }
                    }
                }
            };
            // A store waits for the values it stores.
            let s = &mut self.slots[id as usize];
            let mut ready = 0;
            let mut m = a.srcs;
            while m != 0 {
                ready = ready.max(s.reg_ready[m.trailing_zeros() as usize]);
                m &= m - 1;
            }
            if ready > t {
                a.srcs = 0;
                s.pending = Some(a);
                self.heap.push(Reverse((ready, id)));
                return Ok(());
            }
            t = self.memory(id, &a, t);
            self.acc = a;
            if t - t0 > self.quantum_ps {
                self.heap.push(Reverse((t, id)));
                return Ok(());
            }
        }
    }

    /// Issues one memory instruction at `t`; returns when the warp may issue again.
    fn memory(&mut self, id: u32, a: &WarpAccess, t: u64) -> u64 {
        let sm_i = self.slots[id as usize].sm as usize;
        let is_load = a.kind == MemKind::Load;
        let rule = if is_load {
            self.dev.load_rule
        } else {
            self.dev.store_rule
        };
        let mut lines = std::mem::take(&mut self.lines);
        rule.coalesce(
            &lsu::Access {
                width: a.width,
                mask: a.mask,
                addrs: &a.addrs,
            },
            &mut lines,
        );
        let sum = lsu::summarize(&lines);
        let c = &mut self.counters;
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
        let sm = &mut self.sms[sm_i];
        let issue = t.max(sm.issue_free);
        sm.issue_free = issue + self.issue_ps;
        let mut lsu_t = issue.max(sm.lsu_free);
        self.lsu_lines += lines.len() as u64;
        let l1_caches = is_load
            && self.dev.l1.is_some()
            && matches!(rule, Rule::Sectors | Rule::Lines { bytes: 128 });
        let mut done = issue;
        // Bring every set this instruction will look up into the host's
        // caches first, so that the lookups overlap their memory latency.
        for r in &lines {
            if l1_caches {
                if let Some(l1) = &self.sms[sm_i].l1 {
                    l1.prefetch(r.line);
                }
            }
            if !self.l2.is_empty() {
                self.l2[self.slice_of(r.line)].prefetch(r.line);
            }
        }
        for r in &lines {
            lsu_t += self.lsu_ps;
            let at = lsu_t;
            let arrive = if is_load {
                self.load_line(sm_i, r, at, l1_caches)
            } else {
                self.store_line(sm_i, r, at)
            };
            done = done.max(arrive);
        }
        self.sms[sm_i].lsu_free = lsu_t;
        self.lines = lines;
        let s = &mut self.slots[id as usize];
        if is_load {
            if let Some(d) = a.dst {
                s.reg_ready[d as usize] = done;
            }
            s.last_load = s.last_load.max(done);
            self.load_latency_sum += (done - issue) as f64;
            self.loads += 1;
        } else {
            self.end = self.end.max(done);
        }
        issue + self.issue_ps
    }

    fn load_line(&mut self, sm_i: usize, r: &LineRequest, t: u64, l1_caches: bool) -> u64 {
        if !l1_caches {
            return self.fetch(sm_i, r.line, r.sectors, r.size, t);
        }
        let l1 = self.sms[sm_i].l1.as_mut().expect("l1");
        let lk = l1.read(r.line, r.sectors, t);
        self.counters.l1_hits_ld += lk.hit.count_ones() as u64;
        let mut done = t + self.l1_hit_ps;
        if lk.hit != 0 {
            done = done.max(lk.ready);
        }
        if lk.miss != 0 {
            let start = self.sms[sm_i].mshr.acquire(t);
            let fill = self.fetch(sm_i, r.line, lk.miss, 32, start);
            let sm = &mut self.sms[sm_i];
            sm.mshr.release(fill);
            if let Some(l1) = sm.l1.as_mut() {
                l1.fill(lk.slot, lk.miss, fill);
            }
            done = done.max(fill);
        }
        done
    }

    fn slice_of(&self, line: u64) -> usize {
        let n = self.l2.len() as u64;
        let x = line / 128;
        // XOR-fold of the line number, so that strides spread over slices.
        let h = x ^ (x >> 7) ^ (x >> 14) ^ (x >> 21);
        (h % n) as usize
    }

    /// Brings `sectors` of `line` to SM `sm_i` (from L2 or DRAM); returns arrival.
    fn fetch(&mut self, sm_i: usize, line: u64, sectors: u8, size: u8, t: u64) -> u64 {
        let bytes = sectors.count_ones() * 32;
        self.counters.l2_read_sectors += sectors.count_ones() as u64;
        if self.l2.is_empty() {
            // No cache for global memory: the transaction goes to DRAM.
            let start = line + 32 * sectors.trailing_zeros() as u64;
            let issue = t + self.dram_half_ps;
            let done = if size == 32 {
                let mut d = issue;
                for s in 0..4 {
                    if sectors >> s & 1 == 1 {
                        d = d.max(self.dram.read(line + 32 * s, 32, issue));
                    }
                }
                d
            } else {
                self.dram.read(start, size as u32, issue)
            };
            self.counters.l2_read_sectors -= sectors.count_ones() as u64;
            return self.sms[sm_i]
                .port
                .reserve(done + self.dram_half_ps, bytes as u64);
        }
        let home = self.slice_of(line);
        let arrive = t + self.l2_half_ps;
        // The DRAM atom may span several sectors: missing siblings are
        // fetched along (the sector-promotion the H200 counters show).
        let per_atom = self.per_atom();
        let mut want = 0u8;
        for s in 0..4u8 {
            if sectors >> s & 1 == 1 {
                let first = s / per_atom * per_atom;
                want |= (((1u16 << per_atom) - 1) << first) as u8;
            }
        }
        let parts = self.l2_partitions;
        let per = self.l2.len() / parts;
        let near_part = sm_i * parts / self.sms.len();
        let k = near_part * per + home % per;
        let ready = if k == home {
            self.slice_lookup(home, line, want, sectors, arrive, true)
        } else {
            // The near partition keeps copies of lines homed in the far one;
            // a miss there goes across to the home slice (and so to DRAM).
            let lk = self.l2[k].read(line, want, arrive);
            self.counters.l2_read_hits += (lk.hit & sectors).count_ones() as u64;
            if let Some((vline, dirty)) = lk.victim {
                self.write_back(vline, dirty, arrive);
            }
            let mut ready = arrive;
            if lk.hit & sectors != 0 {
                ready = ready.max(lk.ready);
            }
            if lk.miss != 0 {
                let far = self.slice_lookup(
                    home,
                    line,
                    lk.miss,
                    lk.miss,
                    arrive + self.far_half_ps,
                    false,
                ) + self.far_half_ps;
                self.l2[k].fill(lk.slot, lk.miss, far);
                if lk.miss & sectors != 0 {
                    ready = ready.max(far);
                }
            }
            ready
        };
        let out = self.l2_port[k].reserve(ready, bytes as u64);
        self.sms[sm_i]
            .port
            .reserve(out + self.l2_half_ps, bytes as u64)
    }

    fn per_atom(&self) -> u8 {
        (self.dev.dram.access_bytes.clamp(32, 128) / 32) as u8
    }

    /// Looks `want` up in slice `k` at `arrive`, fetching misses from DRAM;
    /// returns when the `need`ed sectors are in the slice.
    fn slice_lookup(
        &mut self,
        k: usize,
        line: u64,
        want: u8,
        need: u8,
        arrive: u64,
        count: bool,
    ) -> u64 {
        let per_atom = self.per_atom();
        let atom = per_atom as u64 * 32;
        let lk = self.l2[k].read(line, want, arrive);
        if count {
            self.counters.l2_read_hits += (lk.hit & need).count_ones() as u64;
        }
        let mut ready = arrive;
        if lk.hit & need != 0 {
            ready = ready.max(lk.ready);
        }
        if let Some((vline, dirty)) = lk.victim {
            self.write_back(vline, dirty, arrive);
        }
        if lk.miss != 0 {
            let issue = arrive + self.dram_half_ps;
            let mut fill = issue;
            let mut s = 0u8;
            while s < 4 {
                let group = (((1u16 << per_atom) - 1) << s) as u8;
                if lk.miss & group != 0 {
                    fill = fill.max(self.dram.read(line + 32 * s as u64, atom as u32, issue));
                }
                s += per_atom;
            }
            fill += self.dram_half_ps;
            // Writing the fill into the slice's data array takes its port too.
            fill = self.l2_port[k].reserve(fill, lk.miss.count_ones() as u64 * 32);
            self.l2[k].fill(lk.slot, lk.miss, fill);
            if lk.miss & need != 0 {
                ready = ready.max(fill);
            }
        }
        ready
    }

    fn write_back(&mut self, line: u64, dirty: u8, t: u64) {
        let atom = self.dev.dram.access_bytes.clamp(32, 128) as u64;
        let per_atom = (atom / 32) as u8;
        let mut s = 0u8;
        while s < 4 {
            let group = (((1u16 << per_atom) - 1) << s) as u8;
            if dirty & group != 0 {
                self.dram.write(line + 32 * s as u64, atom as u32, t);
            }
            s += per_atom;
        }
    }

    fn store_line(&mut self, _sm_i: usize, r: &LineRequest, t: u64) -> u64 {
        let n = r.sectors.count_ones();
        if self.l2.is_empty() {
            let issue = t + self.dram_half_ps;
            if r.size == 32 {
                for s in 0..4 {
                    if r.sectors >> s & 1 == 1 {
                        self.dram.write(r.line + 32 * s, 32, issue);
                    }
                }
            } else {
                let start = r.line + 32 * r.sectors.trailing_zeros() as u64;
                self.dram.write(start, r.size as u32, issue);
            }
            return issue;
        }
        self.counters.l2_write_sectors += n as u64;
        let k = self.slice_of(r.line);
        let arrive = t + self.l2_half_ps;
        let done = self.l2_port[k].reserve(arrive, n as u64 * 32);
        if let Some((vline, dirty)) = self.l2[k].write(r.line, r.sectors, done) {
            self.write_back(vline, dirty, done);
        }
        done
    }

    fn finish(mut self, per_sm: u32) -> (Counters, Bottlenecks) {
        let end = self.end.max(1);
        let ds = self.dram.stats();
        self.counters.dram_bytes_read = ds.bytes_read;
        self.counters.dram_bytes_write = ds.bytes_written;
        let overhead_ps = (self.dev.launch.kernel_overhead_ns * 1000.0).round() as u64;
        self.counters.time_ps = end + overhead_ps;
        let n_sm = self.dev.sm.count as f64;
        let cycles = end as f64 / self.cycle;
        let bytes_to_sm: u64 = self.sms.iter().map(|s| s.port.busy()).sum();
        let l2_bytes: u64 = self.l2_port.iter().map(|p| p.busy()).sum();
        let lsu_util = self.lsu_lines as f64 / (n_sm * cycles * self.dev.sm.lsu_lines_per_cycle);
        let b = Bottlenecks {
            lsu_util,
            // L1 lookups go through the LSU's tag port.
            l1_util: if self.dev.l1.is_some() { lsu_util } else { 0.0 },
            noc_util: bytes_to_sm as f64
                / (n_sm * cycles * self.dev.interconnect.sm_port_bytes_per_cycle),
            l2_util: match &self.dev.l2 {
                Some(l) => l2_bytes as f64 / (l.slices as f64 * cycles * l.slice_bytes_per_cycle),
                None => 0.0,
            },
            dram_util: ds.busy_ps as f64 / (self.dev.dram.channels as f64 * end as f64),
            load_latency_cycles: if self.loads > 0 {
                self.load_latency_sum / self.loads as f64 / self.cycle
            } else {
                0.0
            },
            achieved_occupancy: self.warp_time / (end as f64 * n_sm * self.dev.sm.max_warps as f64),
            blocks_per_sm: per_sm,
        };
        (self.counters, b)
    }
}
