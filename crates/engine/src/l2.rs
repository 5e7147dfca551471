//! The L2: slices (each a sectored cache with a data port and MSHRs),
//! grouped into partitions, backed by the memory controllers.
//!
//! ```text
//!  request from SM (partition p) ──▶ slice k = near copy in p, or the home slice
//!     near slice: hit ─────────────────────────────▶ port ──▶ reply
//!                 miss ── far hop ──▶ home slice ──┐
//!     home slice: hit ─────────────────────────────┤
//!                 miss ── MSHR ──▶ DRAM read(s) ──▶ fill (port) ──▶ port ──▶ reply
//!                 dirty victim ── port (read out) ──▶ DRAM write queue
//!                     (the allocation waits for acceptance)
//!  store ──▶ near slice (far home: keeps a copy of the sectors written whole)
//!        ──▶ home slice: write path (data, command, byte mask) ──▶ acknowledged
//!     more than `partial_lines` lines partly written: the earliest is completed
//!         (its partial sectors read from DRAM, 32 B each); it stays dirty
//!     more than `dirty_lines` dirty lines: the earliest is written back and
//!         kept clean (the store's acceptance waits for the controller)
//! ```
//!
//! Peak: `slices x slice_bytes_per_cycle x clock` bytes read out of the
//! slices (hits to the SMs, and dirty victims to DRAM). Where the spec gives a write rate
//! (`slice_write_bytes_per_cycle`), a slice writes its data array through a
//! path of its own: stores and fills from DRAM together at most
//! `slices x slice_write_bytes_per_cycle x clock`, beside the reads (the
//! H200's L2-resident copy moves 8.0 TB/s, more than one shared port
//! allows). Without it, one port per slice carries hits, fills and stores.
//! A store request holds the path `store_sector_cycles` a sector (by
//! default its 32 bytes' time), `store_request_cycles` for its command and,
//! where some byte of its sectors is not written, `store_mask_cycles` for
//! its byte mask: a slice takes at most one store request of `s` sectors
//! in `s x sector + request (+ mask)` cycles.
//! A slice fetches whole fetch units (`l2.fetch_bytes`, by default the
//! DRAM access): missing sibling sectors of a unit are fetched along.
//! Write-backs go by DRAM access (`dram.access_bytes`). Dirty sectors of which
//! only some bytes were written leave as partial writes.
//!
//! A slice indexes its sets by the line number divided by the number of
//! slices, the bits above those that chose it, so that a contiguous range
//! fills every set evenly and a footprint is lost as a cliff once it
//! outgrows the L2, as on the H200 (`tools/measure/l2repl`).

use crate::sm::ps;
use crate::spec::DeviceSpec;
use cache::{Cache, Victim};
use dram::Dram;
use std::collections::VecDeque;
use timing::{Calendar, Pool};

/// Counts of the L2, named after Nsight Compute's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Stats {
    /// `lts__t_sectors_srcunit_tex_op_read.sum`.
    pub read_sectors: u64,
    /// `lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum`.
    pub read_hits: u64,
    /// `lts__t_sectors_srcunit_tex_op_write.sum`.
    pub write_sectors: u64,
}

/// The write path's bytes a store request takes: per sector, for its
/// command, and for its byte mask where it writes part of a sector.
#[derive(Debug, Clone, Copy)]
struct StoreCost {
    sector: f64,
    request: f64,
    mask: f64,
}

/// The L2 of one device.
#[derive(Debug, Clone)]
pub struct L2 {
    slices: Vec<Cache>,
    /// What a store request takes of its slice's write path, in the
    /// path's bytes.
    store_cost: StoreCost,
    ports: Vec<Calendar>,
    /// The write paths, where the spec gives a write rate (else writes
    /// take `ports`).
    write_ports: Option<Vec<Calendar>>,
    mshrs: Vec<Pool>,
    partitions: usize,
    far_half_ps: u64,
    /// Half of the path from a slice through the memory controller.
    mem_half_ps: u64,
    /// Sectors the slice fetches from DRAM together (`l2.fetch_bytes`).
    per_atom: u8,
    /// Sectors of one DRAM access: the unit of write-backs.
    per_write: u8,
    /// Sectors in one write unit of the controller (at least `per_write`).
    per_unit: u8,
    /// Per slice, where the spec limits the dirty lines a slice keeps.
    dirty: Vec<DirtyLines>,
    dirty_limit: u32,
    partial_limit: u32,
    stats: L2Stats,
    /// Dirty sectors the slices hold: a store adds those it makes dirty,
    /// an eviction or a write-back that keeps its line clean takes them.
    dirty_sectors: u64,
}

/// The dirty lines of one slice, in the order they became dirty (and, of
/// those, the ones with a partly written sector). A queue may hold lines
/// since cleaned or evicted; they are skipped when they reach its front.
#[derive(Debug, Clone, Default)]
struct DirtyLines {
    order: VecDeque<u64>,
    partial_order: VecDeque<u64>,
    count: u32,
    partial: u32,
}

impl DirtyLines {
    /// A dirty line `v` left the slice (evicted or cleaned).
    fn left(&mut self, v: &Victim) {
        self.count -= 1;
        if v.dirty & v.partial != 0 {
            self.partial -= 1;
        }
    }
}

impl L2 {
    /// Cold slices, or `None` where the device has no L2 for global data.
    /// `mem_half_ps` is half the controller path's latency.
    pub fn new(dev: &DeviceSpec, mem_half_ps: u64) -> Option<L2> {
        let l = dev.l2.as_ref()?;
        let cy = dev.cycle_ps();
        let bucket = (32.0 * cy).ceil() as u64;
        let cap = (l.slice_bytes_per_cycle * 32.0).floor() as u64;
        Some(L2 {
            slices: (0..l.slices)
                .map(|_| Cache::interleaved(l.slice.clone(), l.slices as u64))
                .collect(),
            ports: vec![Calendar::new(bucket, cap.max(1)); l.slices as usize],
            write_ports: l.slice_write_bytes_per_cycle.map(|w| {
                vec![Calendar::new(bucket, ((w * 32.0).floor() as u64).max(1)); l.slices as usize]
            }),
            mshrs: vec![Pool::new(l.mshrs, bucket); l.slices as usize],
            store_cost: {
                // The path's bytes a cycle, and each part of a store in them.
                let w = l
                    .slice_write_bytes_per_cycle
                    .unwrap_or(l.slice_bytes_per_cycle);
                StoreCost {
                    sector: l.store_sector_cycles.map_or(32.0, |c| c * w),
                    request: l.store_request_cycles * w,
                    mask: l.store_mask_cycles * w,
                }
            },
            partitions: l.partitions.max(1) as usize,
            far_half_ps: ps(l.far_latency_cycles as f64 / 2.0, cy),
            mem_half_ps,
            per_atom: (l
                .fetch_bytes
                .unwrap_or(dev.dram.access_bytes)
                .clamp(32, 128)
                / 32) as u8,
            per_write: (dev.dram.access_bytes.clamp(32, 128) / 32) as u8,
            // (The spec keeps a unit it names within one line.)
            per_unit: (dev
                .dram
                .write_unit_bytes
                .map_or(0, |u| u.min(128))
                .max(dev.dram.access_bytes.clamp(32, 128))
                / 32) as u8,
            dirty: if l.dirty_lines.is_some() || l.partial_lines.is_some() {
                vec![DirtyLines::default(); l.slices as usize]
            } else {
                Vec::new()
            },
            dirty_limit: l.dirty_lines.unwrap_or(u32::MAX),
            partial_limit: l.partial_lines.unwrap_or(u32::MAX),
            stats: L2Stats::default(),
            dirty_sectors: 0,
        })
    }

    /// Notes a dirty line that slice `k` evicted.
    fn evicted(&mut self, k: usize, v: &Victim) {
        self.dirty_sectors -= v.dirty.count_ones() as u64;
        if let Some(d) = self.dirty.get_mut(k) {
            d.left(v);
        }
    }

    /// After a store to `line` in slice `k` whose state before was
    /// `before` and is `now`: counts the line, then writes back the earliest dirtied
    /// lines while the slice keeps more than its limits. Returns when the
    /// memory controller has accepted those writes (`t` if none).
    fn limit_dirty(
        &mut self,
        k: usize,
        line: u64,
        before: Option<Victim>,
        now: Victim,
        t: u64,
        mem: &mut Dram,
    ) -> u64 {
        if self.dirty.is_empty() {
            return t;
        }
        let was_dirty = before.is_some_and(|b| b.dirty != 0);
        let was_partial = before.is_some_and(|b| b.partial != 0);
        let is_partial = now.partial != 0;
        let d = &mut self.dirty[k];
        if !was_dirty {
            d.count += 1;
            d.order.push_back(line);
        }
        if is_partial && !was_partial {
            d.partial += 1;
            d.partial_order.push_back(line);
        } else if was_partial && !is_partial {
            d.partial -= 1;
        }
        let mut accepted = t;
        loop {
            let d = &mut self.dirty[k];
            let next = if d.partial > self.partial_limit {
                d.partial_order.pop_front()
            } else if d.count > self.dirty_limit {
                d.order.pop_front()
            } else {
                break;
            };
            let over_partial = d.partial > self.partial_limit;
            let Some(old) = next else { break };
            if over_partial {
                match self.slices[k].dirty_state(old) {
                    Some(st) if st.partial != 0 => {}
                    _ => continue,
                }
                // The slice fetches the bytes its partly written sectors
                // lack and merges them: the line stays dirty, now whole.
                let fetched = self.slices[k].complete(old);
                self.dirty[k].partial -= 1;
                let mut fill = t;
                for s in 0..4u8 {
                    if fetched >> s & 1 == 1 {
                        let d = mem.read(old + 32 * s as u64, 32, t + self.mem_half_ps);
                        fill = fill.max(d + self.mem_half_ps);
                    }
                }
                // The fetched bytes enter the data array as a fill's do,
                // through the slice's write path.
                if fetched != 0 {
                    fill = self
                        .write_port(k)
                        .reserve(fill, fetched.count_ones() as u64 * 32);
                }
                accepted = accepted.max(fill);
                continue;
            }
            // Written back if still present and dirty.
            let Some(v) = self.slices[k].clean(old) else {
                continue;
            };
            self.dirty_sectors -= v.dirty.count_ones() as u64;
            self.dirty[k].left(&v);
            accepted = accepted.max(self.write_back(k, v, t, mem));
        }
        // The line most likely written back next is the oldest one made
        // dirty (the queue may still hold it after it was cleaned or
        // evicted), long out of the host's caches: bring its set in before
        // the slice's next write.
        if let Some(&next) = self.dirty[k].order.front() {
            self.slices[k].prefetch(next);
        }
        accepted
    }

    /// The partition an SM is connected to.
    pub fn partition_of(&self, sm: usize, sms: usize) -> usize {
        sm * self.partitions / sms.max(1)
    }

    /// The home slice of a line.
    pub fn slice_of(&self, line: u64) -> usize {
        let n = self.slices.len() as u64;
        let x = line / 128;
        // XOR-fold of the line number, so that strides spread over slices.
        let h = x ^ (x >> 7) ^ (x >> 14) ^ (x >> 21);
        (h % n) as usize
    }

    /// The slice an SM of partition `part` asks for `line`.
    fn near_slice(&self, part: usize, home: usize) -> usize {
        let per = self.slices.len() / self.partitions;
        part * per + home % per
    }

    /// Hints the host cache about what a request of partition `part` for
    /// `line` looks up: the line's set in the slice it asks (and in the
    /// home slice, where that is another), and that slice's port.
    pub fn prefetch(&self, part: usize, line: u64) {
        let home = self.slice_of(line);
        let k = self.near_slice(part, home);
        self.slices[k].prefetch(line);
        if k != home {
            self.slices[home].prefetch(line);
        }
        cache::prefetch_range(std::slice::from_ref(&self.ports[k]));
    }

    /// The sectors of whole DRAM atoms covering `sectors`.
    fn atoms_of(&self, sectors: u8) -> u8 {
        let p = self.per_atom;
        let mut want = 0u8;
        for s in 0..4u8 {
            if sectors >> s & 1 == 1 {
                let first = s / p * p;
                want |= (((1u16 << p) - 1) << first) as u8;
            }
        }
        want
    }

    /// Reads `sectors` of `line` for an SM of partition `part`, the request
    /// arriving at `t`; returns when the data has left the slice's port.
    pub fn read(&mut self, part: usize, line: u64, sectors: u8, t: u64, mem: &mut Dram) -> u64 {
        let bytes = sectors.count_ones() as u64 * 32;
        self.stats.read_sectors += sectors.count_ones() as u64;
        let home = self.slice_of(line);
        let want = self.atoms_of(sectors);
        let k = self.near_slice(part, home);
        let ready = if k == home {
            self.home_lookup(home, line, want, sectors, t, true, mem)
        } else {
            // The near partition keeps copies of lines homed in the far one;
            // a miss there goes across to the home slice (and so to DRAM).
            let lk = self.slices[k].read(line, want, t);
            self.stats.read_hits += (lk.hit & sectors).count_ones() as u64;
            let mut at = t;
            if let Some(v) = lk.victim {
                self.evicted(k, &v);
                at = at.max(self.write_back(k, v, t, mem));
            }
            let mut ready = at;
            if lk.hit & sectors != 0 {
                ready = ready.max(lk.ready);
            }
            if lk.miss != 0 {
                let far = self.home_lookup(
                    home,
                    line,
                    lk.miss,
                    lk.miss,
                    at + self.far_half_ps,
                    false,
                    mem,
                ) + self.far_half_ps;
                self.slices[k].fill(lk.slot, lk.miss, far);
                if lk.miss & sectors != 0 {
                    ready = ready.max(far);
                }
            }
            ready
        };
        self.ports[k].reserve(ready, bytes)
    }

    /// Looks `want` up in slice `k` at `t`, fetching misses from DRAM;
    /// returns when the `need`ed sectors are in the slice.
    #[allow(clippy::too_many_arguments)]
    fn home_lookup(
        &mut self,
        k: usize,
        line: u64,
        want: u8,
        need: u8,
        t: u64,
        count: bool,
        mem: &mut Dram,
    ) -> u64 {
        let p = self.per_atom;
        let atom = p as u32 * 32;
        let lk = self.slices[k].read(line, want, t);
        if count {
            self.stats.read_hits += (lk.hit & need).count_ones() as u64;
        }
        let mut ready = t;
        if lk.hit & need != 0 {
            ready = ready.max(lk.ready);
        }
        let mut at = t;
        if let Some(v) = lk.victim {
            self.evicted(k, &v);
            at = at.max(self.write_back(k, v, t, mem));
        }
        if lk.miss != 0 {
            let start = self.mshrs[k].acquire(at);
            let issue = start + self.mem_half_ps;
            let mut fill = issue;
            let mut s = 0u8;
            while s < 4 {
                let group = (((1u16 << p) - 1) << s) as u8;
                if lk.miss & group != 0 {
                    fill = fill.max(mem.read(line + 32 * s as u64, atom, issue));
                }
                s += p;
            }
            fill += self.mem_half_ps;
            // Writing the fill into the slice's data array takes its write path.
            fill = self
                .write_port(k)
                .reserve(fill, lk.miss.count_ones() as u64 * 32);
            self.mshrs[k].release(start, fill);
            self.slices[k].fill(lk.slot, lk.miss, fill);
            if lk.miss & need != 0 {
                ready = ready.max(fill);
            }
        }
        ready
    }

    /// Hands a dirty victim of slice `k` to the memory controller at `t`,
    /// once its dirty sectors have been read out of the data array through
    /// the slice's read port; returns when the controller has accepted
    /// every atom (the slot is free then).
    fn write_back(&mut self, k: usize, v: Victim, t: u64, mem: &mut Dram) -> u64 {
        // The victim's dirty sectors are read out of the data array.
        let t = self.ports[k].reserve(t, v.dirty.count_ones() as u64 * 32);
        let p = self.per_write;
        let mut accepted = t;
        let mut s = 0u8;
        // The line's write-back is one request to the controller.
        let last = 7 - v.dirty.leading_zeros() as u8;
        let u = self.per_unit;
        if u > p {
            // The controller writes whole units: a unit with any dirty
            // sector goes as one, its clean atoms masked.
            while s < 4 {
                let unit = (((1u16 << u) - 1) << s) as u8;
                if v.dirty & unit != 0 {
                    let (mut dirty, mut partial) = (0u8, 0u8);
                    for j in 0..u / p {
                        let atom = (((1u16 << p) - 1) << (s + j * p)) as u8;
                        dirty |= u8::from(v.dirty & atom != 0) << j;
                        partial |= u8::from(v.partial & atom != 0) << j;
                    }
                    accepted = accepted.max(mem.write_unit(
                        v.line + 32 * s as u64,
                        dirty,
                        partial,
                        s + u > last,
                        t + self.mem_half_ps,
                    ));
                }
                s += u;
            }
            return accepted;
        }
        while s < 4 {
            let group = (((1u16 << p) - 1) << s) as u8;
            if v.dirty & group != 0 {
                // An atom is written whole only if every sector of it is
                // entirely in the slice.
                let partial = v.partial & group != 0;
                accepted = accepted.max(mem.write(
                    v.line + 32 * s as u64,
                    p as u32 * 32,
                    partial,
                    s + p > last,
                    t + self.mem_half_ps,
                ));
            }
            s += p;
        }
        accepted
    }

    /// Writes the bytes `bytes` of `sectors` of `line` from an SM of
    /// partition `part`, the request arriving at `t`; returns when the home
    /// slice has accepted it (the acknowledgement leaves then, back across
    /// the partitions if the home is far).
    pub fn write(
        &mut self,
        part: usize,
        line: u64,
        sectors: u8,
        bytes: [u32; 4],
        t: u64,
        mem: &mut Dram,
    ) -> u64 {
        let n = sectors.count_ones() as u64;
        self.stats.write_sectors += n;
        let home = self.slice_of(line);
        let near = self.near_slice(part, home);
        let far = near != home;
        let mut accepted = t;
        if far {
            // The store passes the near partition's slice, which keeps a
            // copy of the sectors it writes whole, as it keeps the lines
            // its SMs read (tools/measure/l2repl: lines written whole evict
            // the lines read before them exactly as lines read do).
            let whole = (0..4u8)
                .filter(|&s| sectors >> s & 1 == 1 && bytes[s as usize] == cache::FULL_SECTOR)
                .fold(0u8, |m, s| m | 1 << s);
            if let Some(v) = self.slices[near].keep_copy(line, sectors, whole, t) {
                self.evicted(near, &v);
                accepted = self.write_back(near, v, t, mem);
            }
        }
        let arrive = if far { t + self.far_half_ps } else { t };
        // The write path takes the sectors' data, the request's command
        // and, where some byte is not written, its byte mask.
        let partial = (0..4).any(|s| sectors >> s & 1 == 1 && bytes[s] != cache::FULL_SECTOR);
        let c = &self.store_cost;
        let cost = (n as f64 * c.sector + c.request + if partial { c.mask } else { 0.0 }).round();
        let done = self.write_port(home).reserve(arrive, cost as u64);
        accepted = accepted.max(done);
        let w = self.slices[home].write_tracked(line, sectors, bytes, done);
        let was = w.before.map_or(0, |b| b.dirty);
        self.dirty_sectors += (w.now.dirty & !was).count_ones() as u64;
        if let Some(v) = w.victim {
            self.evicted(home, &v);
            accepted = accepted.max(self.write_back(home, v, done, mem));
        }
        accepted = accepted.max(self.limit_dirty(home, line, w.before, w.now, done, mem));
        if far {
            accepted + self.far_half_ps
        } else {
            accepted
        }
    }

    /// Adds `bytes` of `sectors` to `line` in its home slice, where a
    /// store the SM's L1 merged into one sent before carries them (see
    /// [`crate::spec::StoreMerge`]): no write sector of its own, and no
    /// time on the write path. Returns when the slice has taken them
    /// (`t`, or later where the line's sectors becoming whole, or not,
    /// moves the slice's dirty-line limits), or `None` where the slice no
    /// longer holds the line.
    pub fn merge(
        &mut self,
        line: u64,
        sectors: u8,
        bytes: [u32; 4],
        t: u64,
        mem: &mut Dram,
    ) -> Option<u64> {
        let home = self.slice_of(line);
        self.slices[home].dirty_state(line)?;
        let w = self.slices[home].write_tracked(line, sectors, bytes, t);
        let was = w.before.map_or(0, |b| b.dirty);
        self.dirty_sectors += (w.now.dirty & !was).count_ones() as u64;
        Some(self.limit_dirty(home, line, w.before, w.now, t, mem))
    }

    /// The calendar that writes into slice `k`'s data array.
    fn write_port(&mut self, k: usize) -> &mut Calendar {
        match &mut self.write_ports {
            Some(w) => &mut w[k],
            None => &mut self.ports[k],
        }
    }

    /// Dirty sectors the slices hold now.
    pub fn dirty_sectors(&self) -> u64 {
        self.dirty_sectors
    }

    /// Forgets port intervals before `t`.
    pub fn advance(&mut self, t: u64) {
        for p in self
            .ports
            .iter_mut()
            .chain(self.write_ports.iter_mut().flatten())
        {
            p.advance(t);
        }
        for m in &mut self.mshrs {
            m.advance(t);
        }
    }

    /// Counts so far.
    pub fn stats(&self) -> L2Stats {
        self.stats
    }

    /// Valid lines replaced in any slice so far.
    pub fn evictions(&self) -> u64 {
        self.slices.iter().map(Cache::evictions).sum()
    }

    /// Bytes through all slice read ports so far, and through the write
    /// paths (0 where writes take the read ports).
    pub fn port_bytes(&self) -> (u64, u64) {
        let sum = |v: &[Calendar]| v.iter().map(|p| p.busy()).sum();
        (sum(&self.ports), self.write_ports.as_deref().map_or(0, sum))
    }

    /// The latest time a slice port or write path is busy.
    pub fn last_done(&self) -> u64 {
        self.ports
            .iter()
            .chain(self.write_ports.iter().flatten())
            .map(|p| p.last_done())
            .max()
            .unwrap_or(0)
    }

    /// Total time misses waited for an MSHR, ps, and the number of slices.
    pub fn mshr_wait(&self) -> (u64, usize) {
        (
            self.mshrs.iter().map(|m| m.wait_ps()).sum(),
            self.mshrs.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cache::FULL_SECTOR;

    fn dev(name: &str) -> DeviceSpec {
        crate::load_device(&std::path::PathBuf::from(format!(
            "{}/../../configs/{name}.ron",
            env!("CARGO_MANIFEST_DIR")
        )))
        .unwrap()
    }

    #[test]
    fn a_second_read_hits_and_a_store_is_accepted_at_the_slice() {
        let d = dev("h200");
        let mut mem = Dram::new(d.dram.clone());
        let mut l2 = L2::new(&d, 1000).unwrap();
        let part = 0;
        let home = l2.slice_of(0);
        let line = (0..1u64 << 20)
            .map(|i| i * 128)
            .find(|&l| {
                l2.slice_of(l) == home && l2.near_slice(part, l2.slice_of(l)) == l2.slice_of(l)
            })
            .unwrap();
        let miss = l2.read(part, line, 0b0001, 0, &mut mem);
        let hit = l2.read(part, line, 0b0001, miss, &mut mem);
        assert!(hit - miss < miss, "a hit is faster than a miss");
        assert_eq!(l2.stats().read_hits, 1);
        let acc = l2.write(part, line, 0b0010, [u32::MAX; 4], hit, &mut mem);
        assert!(acc >= hit);
        assert_eq!(
            mem.stats().bytes_written,
            0,
            "write-back: nothing reaches DRAM yet"
        );
    }

    /// Lines of slice `home`, in address order.
    fn lines_of(l2: &L2, home: usize, n: usize) -> Vec<u64> {
        (0..1u64 << 24)
            .map(|i| i * 128)
            .filter(|&l| l2.slice_of(l) == home)
            .take(n)
            .collect()
    }

    #[test]
    fn a_slice_writes_back_its_earliest_dirty_lines_past_its_limit_and_keeps_them() {
        let mut d = dev("h200");
        let l = d.l2.as_mut().unwrap();
        l.dirty_lines = Some(10);
        l.partial_lines = None;
        let mut mem = Dram::new(d.dram.clone());
        let mut l2 = L2::new(&d, 0).unwrap();
        let lines = lines_of(&l2, 0, 25);
        for &x in &lines {
            l2.write(0, x, 0b1111, [FULL_SECTOR; 4], 0, &mut mem);
        }
        mem.drain(0);
        // 25 lines dirtied, 10 kept dirty: the first 15 written back whole,
        // far fewer than the slice holds (nothing was evicted).
        assert_eq!(l2.evictions(), 0);
        assert_eq!(mem.stats().bytes_written, 15 * 128);
        assert_eq!(mem.stats().bytes_read, 0);
        assert_eq!(l2.dirty[0].count, 10);
        for (i, &x) in lines.iter().enumerate() {
            let st = l2.slices[0].dirty_state(x).expect("still present");
            assert_eq!(st.dirty != 0, i >= 15, "line {i}");
        }
    }

    /// An H200 L2 that keeps at most 4 partly written lines a slice (and
    /// no limit on dirty ones), after 8 bytes of sectors 0 and 2 of ten
    /// lines of slice 0 were written: the L2, its DRAM and the lines.
    fn ten_partly_written_lines() -> (L2, Dram, Vec<u64>) {
        let mut d = dev("h200");
        let l = d.l2.as_mut().unwrap();
        l.dirty_lines = None;
        l.partial_lines = Some(4);
        let mut mem = Dram::new(d.dram.clone());
        let mut l2 = L2::new(&d, 0).unwrap();
        let lines = lines_of(&l2, 0, 10);
        for &x in &lines {
            l2.write(0, x, 0b0101, [0xff, 0, 0xff, 0], 0, &mut mem);
        }
        (l2, mem, lines)
    }

    #[test]
    fn a_slice_completes_its_earliest_partly_written_lines_past_its_limit() {
        let (l2, mut mem, lines) = ten_partly_written_lines();
        mem.drain(0);
        // Six lines over the limit: their two sectors fetched, 32 B each;
        // nothing written back yet.
        assert_eq!(mem.stats().bytes_read, 6 * 2 * 32);
        assert_eq!(mem.stats().bytes_written, 0);
        assert_eq!(l2.dirty[0].partial, 4);
        assert_eq!(l2.dirty[0].count, 10);
        for (i, &x) in lines.iter().enumerate() {
            let st = l2.slices[0].dirty_state(x).unwrap();
            assert_eq!((st.dirty, st.partial != 0), (0b0101, i >= 6), "line {i}");
        }
    }

    #[test]
    fn a_completions_fetched_bytes_take_the_slices_write_path() {
        let (l2, _, _) = ten_partly_written_lines();
        // 10 lines x 2 sectors stored, each with its command and byte
        // mask, and 6 lines x 2 sectors fetched into the data array (a
        // fill has no command): each byte through the write path once.
        let (_, write) = l2.port_bytes();
        let c = l2.store_cost;
        let store = (2.0 * c.sector + c.request + c.mask).round() as u64;
        assert!(
            store > 2 * 32,
            "the H200's store requests pay for their command and mask"
        );
        assert_eq!(write, 10 * store + 6 * 2 * 32);
    }

    #[test]
    fn a_store_takes_its_command_and_byte_mask_through_the_write_path() {
        let d = dev("h200");
        let l = d.l2.as_ref().unwrap();
        let w = l.slice_write_bytes_per_cycle.unwrap();
        let mut mem = Dram::new(d.dram.clone());
        let mut l2 = L2::new(&d, 0).unwrap();
        let lines = lines_of(&l2, 0, 3);
        // A whole line, two whole sectors, a sector of which 4 bytes are
        // written: the slice cycles tools/measure/mlp measured for them
        // with every SM storing (5.24, 3.02, 2.55), to 2%.
        let cases: [(u8, [u32; 4], f64); 3] = [
            (0b1111, [FULL_SECTOR; 4], 5.24),
            (0b0011, [FULL_SECTOR; 4], 3.02),
            (0b0001, [0xf, 0, 0, 0], 2.55),
        ];
        let mut before = 0;
        for (&x, (sectors, bytes, cycles)) in lines.iter().zip(cases) {
            l2.write(0, x, sectors, bytes, 0, &mut mem);
            let (_, write) = l2.port_bytes();
            let took = (write - before) as f64 / w;
            assert!(
                (took / cycles - 1.0).abs() < 0.02,
                "{sectors:#b}: {took} cycles"
            );
            before = write;
        }
    }

    #[test]
    fn evicting_partial_sectors_reads_them_first_where_the_memory_merges() {
        let mut d = dev("c2050");
        d.dram.partial_write = dram::PartialWrite::ReadModifyWrite;
        let mut mem = Dram::new(d.dram.clone());
        let mut l2 = L2::new(&d, 0).unwrap();
        // Fill one slice's set with partly written lines until one leaves.
        let home = l2.slice_of(0);
        let lines: Vec<u64> = (0..1u64 << 24)
            .map(|i| i * 128)
            .filter(|&l| l2.slice_of(l) == home)
            .take(5000)
            .collect();
        for &l in &lines {
            l2.write(0, l, 0b0001, [0xf, 0, 0, 0], 0, &mut mem);
        }
        mem.drain(0);
        let s = mem.stats();
        assert!(s.read_modify_writes > 0);
        assert_eq!(
            s.bytes_read,
            s.read_modify_writes * d.dram.access_bytes as u64
        );
    }
    /// The lines of `n` MiB from `base`, dealt to 132 SMs by number (as
    /// the campaigns of tools/measure/l2repl and victim deal them), each
    /// read (`write` None) or written (the bytes `write` of each sector)
    /// from its SM's partition, one a nanosecond: far below every unit's
    /// rate.
    fn walk(l2: &mut L2, mem: &mut Dram, t: &mut u64, base: u64, n: u64, write: Option<u32>) {
        let touch = match write {
            Some(bytes) => Touch::Write(0b1111, bytes),
            None => Touch::Read(0b1111),
        };
        walk_as(l2, mem, t, base, n, touch);
    }

    /// How [`walk_as`] touches each line: the sectors of the mask read,
    /// written (the bytes given of each), or read and then written.
    #[derive(Clone, Copy)]
    enum Touch {
        Read(u8),
        Write(u8, u32),
        ReadWrite(u8, u32),
    }

    /// [`walk`], each line touched as `touch` says.
    fn walk_as(l2: &mut L2, mem: &mut Dram, t: &mut u64, base: u64, n: u64, touch: Touch) {
        for i in 0..n * (1 << 20) / 128 {
            let p = l2.partition_of((i % 132) as usize, 132);
            let line = base + i * 128;
            *t += 1000;
            match touch {
                Touch::Read(s) => {
                    l2.read(p, line, s, *t, mem);
                }
                Touch::Write(s, bytes) => {
                    l2.write(p, line, s, [bytes; 4], *t, mem);
                }
                Touch::ReadWrite(s, bytes) => {
                    l2.read(p, line, s, *t, mem);
                    l2.write(p, line, s, [bytes; 4], *t + 500, mem);
                }
            }
        }
    }

    /// Written whole, for [`walk`].
    fn whole(write: bool) -> Option<u32> {
        write.then_some(FULL_SECTOR)
    }

    /// Per cent of the lines of `n` MiB at `base` that a load no longer
    /// finds in its SM's partition (the probe of both campaigns).
    fn probe(l2: &mut L2, mem: &mut Dram, t: &mut u64, base: u64, n: u64) -> f64 {
        let h0 = l2.stats().read_hits;
        walk(l2, mem, t, base, n, None);
        let sectors = 4 * n * (1 << 20) / 128;
        100.0 - 100.0 * (l2.stats().read_hits - h0) as f64 / sectors as f64
    }

    /// tools/measure/l2repl in the model: per cent of a resident set of
    /// `r` MiB, read `touches` times, lost after `s` MiB of other lines
    /// read or written whole.
    fn lost_after(d: &DeviceSpec, r: u64, touches: u32, write: bool, s: u64) -> f64 {
        let (mut mem, mut l2, mut t) = (Dram::new(d.dram.clone()), L2::new(d, 1000).unwrap(), 0);
        let (a, b) = (0u64, 1u64 << 32);
        for _ in 0..touches {
            walk(&mut l2, &mut mem, &mut t, a, r, None);
        }
        walk(&mut l2, &mut mem, &mut t, b, s, whole(write));
        probe(&mut l2, &mut mem, &mut t, a, r)
    }

    /// tools/measure/victim calls 1 and 3 in the model: two sets of 8
    /// MiB, W and A, touched in the order `seq` says (A first where `seq`
    /// begins with "A"; W written whole in "WA" and "AW", read in "RA",
    /// read then written 8 bytes a sector in "PA" and "AP"; A read), `s`
    /// MiB of other lines read, then per cent of W (`probe_w`) or A lost.
    fn victim_lost(d: &DeviceSpec, seq: &str, probe_w: bool, s: u64) -> f64 {
        let (mut mem, mut l2, mut t) = (Dram::new(d.dram.clone()), L2::new(d, 1000).unwrap(), 0);
        let (w, a, b) = (0u64, 1u64 << 32, 2u64 << 32);
        let touch_w = match seq {
            "WA" | "AW" => Touch::Write(0b1111, FULL_SECTOR),
            "RA" => Touch::Read(0b1111),
            "PA" | "AP" => Touch::ReadWrite(0b1111, 0xff),
            _ => panic!("no such sequence: {seq}"),
        };
        let sets = [(w, touch_w), (a, Touch::Read(0b1111))];
        let order = if seq.starts_with('A') {
            [sets[1], sets[0]]
        } else {
            sets
        };
        for (base, touch) in order {
            walk_as(&mut l2, &mut mem, &mut t, base, 8, touch);
        }
        walk(&mut l2, &mut mem, &mut t, b, s, None);
        probe(&mut l2, &mut mem, &mut t, if probe_w { w } else { a }, 8)
    }

    /// tools/measure/victim calls 2 to 5 in the model: 8 MiB read, then
    /// `s` MiB of other lines touched as `pollute` names (the campaigns'
    /// names: whole lines, one sector each or 8 bytes of a line a lane;
    /// read, written whole or 8 bytes a sector, or read and then written),
    /// then per cent of the 8 MiB lost.
    fn touched_lost(d: &DeviceSpec, pollute: &str, s: u64) -> f64 {
        let (mut mem, mut l2, mut t) = (Dram::new(d.dram.clone()), L2::new(d, 1000).unwrap(), 0);
        walk(&mut l2, &mut mem, &mut t, 0, 8, None);
        let touch = match pollute {
            "read" => Touch::Read(0b1111),
            "whole" => Touch::Write(0b1111, FULL_SECTOR),
            "partial" => Touch::Write(0b1111, 0xff),
            "read_partial" => Touch::ReadWrite(0b1111, 0xff),
            "read_whole" => Touch::ReadWrite(0b1111, FULL_SECTOR),
            "sector_read" => Touch::Read(0b0001),
            // Loads of any kind (L2-only, volatile, plain): the same to the
            // L2; and 8 bytes of a line a lane, the stride kernel's way.
            "lane_read" => Touch::Read(0b0001),
            "sector_read_partial" | "sector_plain_read_partial" | "lane_read_write" => {
                Touch::ReadWrite(0b0001, 0xff)
            }
            _ => panic!("no such way to touch a line: {pollute}"),
        };
        walk_as(&mut l2, &mut mem, &mut t, 1 << 32, s, touch);
        probe(&mut l2, &mut mem, &mut t, 0, 8)
    }

    /// A case of a probe campaign: its key, and (s MiB, per cent lost).
    type Probed = (Vec<String>, Vec<(u64, f64)>);

    /// A campaign's probe histograms (tools/measure/l2repl/results/repl.csv,
    /// tools/measure/victim/results/victim.csv), `rep` 0: per case (the
    /// values of the columns `keys`), the per cent of the probed lines that
    /// took 500 cycles or more (not in the SM's partition) at each `s_mib`.
    fn probed(file: &str, keys: &[&str]) -> Vec<Probed> {
        let csv = std::fs::read_to_string(format!(
            "{}/../../tools/measure/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut rows = csv.lines();
        let head: Vec<&str> = rows.next().unwrap().split(',').collect();
        let col = |n: &str| head.iter().position(|&h| h == n).unwrap();
        let slow = col("b500");
        let mut cases: Vec<Probed> = Vec::new();
        for row in rows {
            let f: Vec<&str> = row.split(',').collect();
            if f[col("rep")] != "0" {
                continue;
            }
            let key: Vec<String> = keys.iter().map(|k| f[col(k)].to_string()).collect();
            let lines: f64 = f[col("lines")].parse().unwrap();
            let lost: f64 = f[slow..].iter().map(|x| x.parse::<f64>().unwrap()).sum();
            let point = (f[col("s_mib")].parse().unwrap(), 100.0 * lost / lines);
            match cases.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(point),
                None => cases.push((key, vec![point])),
            }
        }
        cases
    }

    /// The MiB of other lines `s` at which half the resident set is lost,
    /// interpolated between the first point past half and the one before.
    fn half_lost(points: &[(u64, f64)]) -> Option<f64> {
        let k = points.iter().position(|&(_, l)| l >= 50.0)?;
        if k == 0 {
            return Some(points[0].0 as f64);
        }
        let ((s0, l0), (s1, l1)) = (points[k - 1], points[k]);
        Some(s0 as f64 + (50.0 - l0) / (l1 - l0) * (s1 - s0) as f64)
    }

    /// The model's points at the campaign's values of `s`, from the first
    /// until one has half the set lost (`lost(s)`: per cent lost), and the
    /// `s` at which half is lost, interpolated as [`half_lost`] does.
    fn model_half(
        measured: &[(u64, f64)],
        mut lost: impl FnMut(u64) -> f64,
    ) -> (Vec<(u64, f64)>, f64) {
        let mut sim = Vec::new();
        for &(s, _) in measured {
            sim.push((s, lost(s)));
            if sim.last().unwrap().1 >= 50.0 {
                break;
            }
        }
        let half = half_lost(&sim).unwrap();
        (sim, half)
    }

    /// tools/measure/l2repl: the H200 loses half of a resident set of r MiB
    /// once r + s (the MiB of other lines touched since) reaches 38-41 MiB,
    /// whether those lines were read or written whole, as a cliff (LRU in
    /// sets that a contiguous range fills evenly; a line homed in the far
    /// partition kept twice). Target: the same footprint within 10%, the
    /// step of the measurement's finest s (8 MiB) being about 20% of it.
    #[test]
    fn h200_l2_keeps_what_the_h200_keeps() {
        let d = dev("h200");
        let cases = probed("l2repl/results/repl.csv", &["r_mib", "touches", "pollute"]);
        assert_eq!(
            cases.len(),
            8,
            "r 8 and 24 MiB, touched once and twice, read and written"
        );
        for (key, measured) in cases {
            let (r, touches, write) = (
                key[0].parse::<u64>().unwrap(),
                key[1].parse::<u32>().unwrap(),
                key[2] == "write",
            );
            let h200 = half_lost(&measured).unwrap() + r as f64;
            let (sim, s_half) = model_half(&measured, |s| lost_after(&d, r, touches, write, s));
            let model = s_half + r as f64;
            // DEVIATIONS.md 28: a set of 8 MiB read twice outlives the
            // H200's by 11%.
            let bound = if (r, touches) == (8, 2) { 0.15 } else { 0.10 };
            let err = model / h200 - 1.0;
            assert!(
                err.abs() <= bound && (bound == 0.10 || err.abs() > 0.10),
                "r {r} MiB, touched {touches}x, other lines {}: half lost at {model:.1} MiB, \
                 the H200 at {h200:.1}, {:+.1}% (model {sim:?})",
                if write { "written" } else { "read" },
                100.0 * err
            );
        }
    }

    /// tools/measure/victim: the H200 gives up the older of two sets of 8
    /// MiB first whether that set is dirty (written whole) or clean, as
    /// least recently used replacement does; it does not spare dirty lines.
    /// Target: for each set, the footprint (16 MiB + s) at which half of it
    /// is lost within 10% of the H200's, and the older set lost first.
    #[test]
    fn h200_l2_gives_up_the_older_set_first_dirty_or_clean() {
        let d = dev("h200");
        let half = replayed(
            "victim/results/victim.csv",
            &["seq", "probe"],
            16.0,
            |k, s| victim_lost(&d, &k[0], k[1] == "W", s),
        );
        assert_eq!(half.len(), 6, "WA, AW, RA, each set probed");
        // The set touched first: W, but A in "AW".
        older_set_first(&half, |seq| if seq == "AW" { "A" } else { "W" });
    }

    /// The set a sequence `key[0]` touched first (`first(seq)`, "W" or
    /// "A") is lost at a smaller footprint than the other, in the H200 and
    /// in gpusim (`half`, as [`replayed`] gives it).
    fn older_set_first(half: &[(Vec<String>, f64, f64)], first: impl Fn(&str) -> &'static str) {
        for (key, h200, model) in half {
            let older = key[1] == first(&key[0]);
            let (_, h_other, m_other) = half
                .iter()
                .find(|(k, _, _)| k[0] == key[0] && k[1] != key[1])
                .unwrap();
            assert_eq!(
                h200 < h_other,
                older,
                "{key:?}: the H200 loses the older set first"
            );
            assert_eq!(
                model < m_other,
                older,
                "{key:?}: gpusim loses the older set first"
            );
        }
    }

    /// tools/measure/victim call 2: lines written 8 bytes a sector take
    /// less of the H200's L2 than lines read or written whole (a set of 8
    /// MiB read first is half lost after 47 MiB of them, after 32 of the
    /// others): the near partition keeps no copy of the sectors a store
    /// writes in part, only of those it writes whole (`Cache::keep_copy`,
    /// DEVIATIONS.md 28). Target: the footprint (8 MiB + s) at which half
    /// the set is lost within 10% of the H200's for each kind, and lost
    /// later behind partly written lines, in both.
    #[test]
    fn h200_l2_keeps_no_near_copy_of_partly_written_sectors() {
        let d = dev("h200");
        let half = replayed(
            "victim/results/call2/pollute.csv",
            &["pollute"],
            8.0,
            |k, s| touched_lost(&d, &k[0], s),
        );
        assert_eq!(half.len(), 3, "read, whole, partial");
        let at = |k: &str| half.iter().find(|(p, _, _)| p[0] == k).unwrap();
        let (read, partial) = (at("read"), at("partial"));
        assert!(
            partial.1 > read.1 + 8.0,
            "the H200 keeps the set longer behind partial writes"
        );
        assert!(
            partial.2 > read.2 + 8.0,
            "gpusim keeps the set longer behind partial writes"
        );
    }

    /// The half-lost footprints of a probe campaign's cases (`keys` name
    /// a case, `base` MiB are touched besides the s MiB), the H200's and
    /// the model's (`lost(key, s)`), each model one within 10% of the
    /// H200's: (key, H200 MiB, model MiB).
    fn replayed(
        file: &str,
        keys: &[&str],
        base: f64,
        mut lost: impl FnMut(&[String], u64) -> f64,
    ) -> Vec<(Vec<String>, f64, f64)> {
        let mut half = Vec::new();
        for (key, measured) in probed(file, keys) {
            let h200 = half_lost(&measured).unwrap() + base;
            let (sim, s_half) = model_half(&measured, |s| lost(&key, s));
            let model = s_half + base;
            let err = model / h200 - 1.0;
            assert!(
                err.abs() <= 0.10,
                "{key:?}: half lost at {model:.1} MiB, the H200 at {h200:.1}, {:+.1}% (model {sim:?})",
                100.0 * err
            );
            eprintln!(
                "{file} {key:?}: half lost at {model:.1} MiB, the H200 at {h200:.1} ({:+.1}%)",
                100.0 * err
            );
            half.push((key, h200, model));
        }
        half
    }

    /// tools/measure/victim calls 3 to 5: lines read and then written in
    /// part, as seed 002's stride kernel leaves them, take the room of
    /// lines read, whether the walk touches whole lines, one sector of
    /// each, or 8 bytes of a line a lane with plain loads as the kernel
    /// does (a set of 8 MiB read first is half lost at 39.4-39.6 MiB in
    /// all nine ways that read, against 54.9 behind lines written in part
    /// without a read): no more slots, and no fewer than a line read
    /// (DEVIATIONS.md 38). Target: each footprint within 10% of the H200's, and the
    /// set lost at the same footprint (within 2%, the measurement's
    /// spread between its two repetitions being 0.1 MiB) behind lines read
    /// then written as behind lines read, in the H200 and in gpusim.
    #[test]
    fn h200_l2_gives_lines_read_then_written_in_part_the_room_of_lines_read() {
        let d = dev("h200");
        let mut half = replayed(
            "victim/results/call3/rw_pollute.csv",
            &["pollute"],
            8.0,
            |k, s| touched_lost(&d, &k[0], s),
        );
        for call in ["call4/sector_pollute.csv", "call5/stream_pollute.csv"] {
            half.extend(replayed(
                &format!("victim/results/{call}"),
                &["pollute"],
                8.0,
                |k, s| touched_lost(&d, &k[0], s),
            ));
        }
        assert_eq!(
            half.len(),
            11,
            "four ways in calls 3 and 4, three in call 5"
        );
        let read: Vec<_> = half.iter().filter(|(k, _, _)| k[0] == "read").collect();
        assert_eq!(read.len(), 3);
        for (key, h200, model) in &half {
            if key[0] == "partial" {
                continue;
            }
            assert!(
                (h200 / read[0].1 - 1.0).abs() < 0.02,
                "{key:?}: the H200 loses the set behind these lines at {h200:.1} MiB, behind lines read at {:.1}",
                read[0].1
            );
            assert!(
                (model / read[0].2 - 1.0).abs() < 0.02,
                "{key:?}: gpusim loses the set behind these lines at {model:.1} MiB, behind lines read at {:.1}",
                read[0].2
            );
        }
    }

    /// tools/measure/victim call 3: of a set read then written 8 bytes a
    /// sector (W) and a set read (A), the H200 gives up the older first, as
    /// with W written whole (call 1): lines left dirty in part are not kept
    /// before clean ones. Target: each footprint (16 MiB + s) within 10%
    /// of the H200's, and the older set lost first in both.
    #[test]
    fn h200_l2_gives_up_the_older_set_first_when_it_was_read_then_written_in_part() {
        let d = dev("h200");
        let half = replayed(
            "victim/results/call3/rw_order.csv",
            &["seq", "probe"],
            16.0,
            |k, s| victim_lost(&d, &k[0], k[1] == "W", s),
        );
        assert_eq!(half.len(), 4, "PA, AP, each set probed");
        older_set_first(&half, |seq| if seq == "PA" { "W" } else { "A" });
    }
}
