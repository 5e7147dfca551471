#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use serde::Deserialize;
pub use timing::{prefetch_range, HOST_CACHE_BYTES};

/// How a line address maps to a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum SetIndex {
    /// `line_number % sets`.
    #[default]
    Linear,
    /// `(line_number ^ line_number / sets ^ ...) % sets`: the upper address
    /// bits are folded in, which spreads power-of-two strides over the sets
    /// (GPGPU-Sim's hashed set-index functions do the same).
    XorFold,
}

/// Geometry of one cache (or one L2 slice).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Line size in bytes (128 on every NVIDIA GPU since Fermi).
    pub line_bytes: u32,
    /// Sector size in bytes (32).
    pub sector_bytes: u32,
    /// Associativity.
    pub ways: u32,
    /// Set-index function.
    #[serde(default)]
    pub set_index: SetIndex,
}

/// Invalid cache geometry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// A field that must be a non-zero power of two is not.
    #[error("`{field}` must be a power of two greater than zero, not {value}")]
    NotPowerOfTwo {
        /// Field name.
        field: &'static str,
        /// Value given.
        value: u64,
    },
    /// Sizes that do not fit together.
    #[error("{0}")]
    Geometry(String),
}

impl CacheSpec {
    /// Checks the geometry.
    pub fn validate(&self) -> Result<(), SpecError> {
        for (field, value) in [
            ("line_bytes", self.line_bytes as u64),
            ("sector_bytes", self.sector_bytes as u64),
        ] {
            if value == 0 || !value.is_power_of_two() {
                return Err(SpecError::NotPowerOfTwo { field, value });
            }
        }
        // (A line's per-sector state is kept for four sectors.)
        if self.sector_bytes > self.line_bytes || self.line_bytes / self.sector_bytes > 4 {
            return Err(SpecError::Geometry(format!(
                "a line of {} bytes must hold 1 to 4 sectors of {} bytes",
                self.line_bytes, self.sector_bytes
            )));
        }
        if self.ways == 0 {
            return Err(SpecError::Geometry("`ways` must be at least 1".into()));
        }
        let per_set = self.line_bytes as u64 * self.ways as u64;
        if self.size_bytes == 0 || !self.size_bytes.is_multiple_of(per_set) {
            return Err(SpecError::Geometry(format!(
                "size_bytes ({}) must be a non-zero multiple of line_bytes x ways ({per_set})",
                self.size_bytes
            )));
        }
        Ok(())
    }

    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.size_bytes / (self.line_bytes as u64 * self.ways as u64)
    }
}

/// Result of a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lookup {
    /// Asked-for sectors present (arrived or in flight).
    pub hit: u8,
    /// Asked-for sectors absent; they are now allocated and must be filled
    /// with [`Cache::fill`].
    pub miss: u8,
    /// Latest arrival time among the hit sectors (0 if all arrived long ago).
    pub ready: u64,
    /// A line evicted to make room, if it had dirty sectors.
    pub victim: Option<Victim>,
    /// Way that now holds the line (for [`Cache::fill`]).
    pub slot: u32,
}

/// A dirty line leaving the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    /// Line address.
    pub line: u64,
    /// Sectors written since the line was allocated.
    pub dirty: u8,
    /// Sectors not entirely present: never filled, or only partly written
    /// (the rest was never fetched). A memory atom with such a sector
    /// cannot be written whole from the cache's data.
    pub partial: u8,
}

/// What a write did ([`Cache::write_tracked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// A dirty line evicted to make room.
    pub victim: Option<Victim>,
    /// The line's dirty state before the write (`None`: it was absent).
    pub before: Option<Victim>,
    /// Its dirty state after.
    pub now: Victim,
}

/// Byte mask of a sector whose 32 bytes are all present.
pub const FULL_SECTOR: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Way {
    /// Sectors holding some data (arrived, in flight, or partly written).
    valid: u8,
    /// Sectors whose every byte is present (or in flight).
    full: u8,
    dirty: u8,
    /// Arrival time per sector, in units of [`READY_UNIT_PS`], rounded up.
    ready: [u32; 4],
}

/// Hashes a way's index (a multiplicative hash: the indices are dense).
#[derive(Default)]
struct SlotHasher(u64);

impl std::hash::Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The bytes written of the sectors that are valid but not full, by way:
/// few ways hold such sectors at a time (an L2 slice completes them past
/// a few hundred lines), so they are kept apart from the ways, which a
/// lookup brings into the host's caches a whole set at a time. An entry
/// is meaningful only for the sectors that are valid and not full; others
/// may hold what an earlier line left.
type PartlyWritten =
    std::collections::HashMap<u32, [u32; 4], std::hash::BuildHasherDefault<SlotHasher>>;

/// Resolution of the stored arrival times: 1.024 ns (times up to 4.4 s).
pub const READY_UNIT_PS: u64 = 1024;
const PENDING: u32 = u32::MAX;

fn to_units(ps: u64) -> u32 {
    ps.div_ceil(READY_UNIT_PS).min(PENDING as u64 - 1) as u32
}

fn to_ps(units: u32) -> u64 {
    if units == PENDING {
        u64::MAX
    } else {
        units as u64 * READY_UNIT_PS
    }
}

/// One cache's state. Tags live in their own array (line number + 1, 0 for
/// an empty way) so that a lookup scans one short contiguous run of memory.
#[derive(Debug, Clone)]
pub struct Cache {
    spec: CacheSpec,
    sets: u64,
    set_bits: u32,
    set_mask: Option<u64>,
    line_shift: u32,
    /// Caches interleaved with others by line (L2 slices): the number of
    /// them, whose quotient indexes the sets (1 for a cache on its own).
    interleave: timing::Divisor,
    tags: Vec<u64>,
    lru: Vec<u32>,
    ways: Vec<Way>,
    partly: PartlyWritten,
    clock: u32,
    sectors_per_line: u32,
    evictions: u64,
}

impl Cache {
    /// An empty (cold) cache. `spec` must be valid.
    pub fn new(spec: CacheSpec) -> Cache {
        let sets = spec.sets();
        let n = (sets * spec.ways as u64) as usize;
        Cache {
            sets,
            set_bits: 64 - sets.leading_zeros(),
            set_mask: sets.is_power_of_two().then(|| sets - 1),
            line_shift: spec.line_bytes.trailing_zeros(),
            interleave: timing::Divisor::new(1),
            tags: vec![0; n],
            lru: vec![0; n],
            ways: vec![Way::default(); n],
            partly: PartlyWritten::default(),
            clock: 0,
            sectors_per_line: spec.line_bytes / spec.sector_bytes,
            evictions: 0,
            spec,
        }
    }

    /// An empty cache that is one of `n` interleaved by line (an L2
    /// slice): the lines it receives are about every `n`-th, so its sets
    /// are indexed by the line number divided by `n`, the bits above those
    /// that chose the cache, and a contiguous range of lines fills its sets
    /// evenly. (Indexed by the line number itself, a slice's lines share
    /// the residues that chose it and crowd some sets.)
    pub fn interleaved(spec: CacheSpec, n: u64) -> Cache {
        Cache {
            interleave: timing::Divisor::new(n),
            ..Cache::new(spec)
        }
    }

    /// The geometry.
    pub fn spec(&self) -> &CacheSpec {
        &self.spec
    }

    /// Valid lines replaced so far (clean or dirty): zero until the cache,
    /// or one of its sets, is full.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    #[inline]
    fn set_of(&self, line_no: u64) -> u64 {
        let line_no = self.interleave.div(line_no);
        let x = match self.spec.set_index {
            SetIndex::Linear => line_no,
            SetIndex::XorFold => {
                let b = self.set_bits.max(1);
                line_no ^ (line_no >> b) ^ (line_no >> (2 * b)) ^ (line_no >> (3 * b))
            }
        };
        match self.set_mask {
            Some(m) => x & m,
            None => x % self.sets,
        }
    }

    #[inline]
    fn find(&mut self, line: u64) -> (usize, Option<usize>) {
        let line_no = line >> self.line_shift;
        let ways = self.spec.ways as usize;
        let base = self.set_of(line_no) as usize * ways;
        let key = line_no + 1;
        let hit = self.tags[base..base + ways].iter().position(|&t| t == key);
        (base, hit.map(|i| base + i))
    }

    fn touch(&mut self, i: usize) {
        self.clock = self.clock.wrapping_add(1);
        self.lru[i] = self.clock;
    }

    /// The way to replace in the set at `base` for a line allocated at
    /// `now`: an empty one, else the least recently used of those whose
    /// data has all arrived by `now`. A line whose fill (or store) is still
    /// on its way holds its slot until the data lands, as its miss holds
    /// it in the MSHR that will write it there; only where every way of
    /// the set waits so does the least recently used one go regardless.
    fn victim(&self, base: usize, now: u64) -> usize {
        let ways = self.spec.ways as usize;
        if let Some(i) = self.tags[base..base + ways].iter().position(|&t| t == 0) {
            return base + i;
        }
        // Landed before waiting, then least recently used (ages, relative
        // to the clock so as to be wrapping-safe, are distinct in a full
        // set): the greatest key (landed << 32 | age), the last of equals.
        let clock = self.clock;
        let now = to_units(now);
        let mut best = base;
        let mut best_key = 0u64;
        for (i, (w, &l)) in self.ways[base..base + ways]
            .iter()
            .zip(&self.lru[base..base + ways])
            .enumerate()
        {
            // The latest arrival of a valid sector (a pending one is the
            // greatest of all), 0 where none is valid.
            let last = (0..4)
                .map(|s| if w.valid >> s & 1 == 1 { w.ready[s] } else { 0 })
                .max()
                .unwrap_or(0);
            let key = ((last <= now) as u64) << 32 | clock.wrapping_sub(l) as u64;
            if key >= best_key {
                best_key = key;
                best = base + i;
            }
        }
        best
    }

    fn replace(&mut self, base: usize, line: u64, now: u64) -> (usize, Option<Victim>) {
        let v = self.victim(base, now);
        let old = self.ways[v];
        let old_tag = self.tags[v];
        self.evictions += (old_tag != 0) as u64;
        let evicted = (old_tag != 0 && old.dirty != 0).then(|| Victim {
            line: (old_tag - 1) << self.line_shift,
            dirty: old.dirty,
            partial: !old.full & ((1u16 << self.sectors_per_line.min(8)) - 1) as u8,
        });
        self.tags[v] = (line >> self.line_shift) + 1;
        if old.valid & !old.full != 0 {
            self.partly.remove(&(v as u32));
        }
        self.ways[v] = Way::default();
        (v, evicted)
    }

    /// Hints the host CPU to bring the set that `line` maps to into its
    /// caches, so that the lookup that follows does not wait for memory.
    /// Changes no state.
    #[inline]
    pub fn prefetch(&self, line: u64) {
        let line_no = line >> self.line_shift;
        let ways = self.spec.ways as usize;
        let base = self.set_of(line_no) as usize * ways;
        prefetch_range(&self.tags[base..base + ways]);
        prefetch_range(&self.lru[base..base + ways]);
        prefetch_range(&self.ways[base..base + ways]);
    }

    /// The way holding `line`, allocating one (and naming a dirty victim) if
    /// it is absent; marks it most recently used.
    fn allocate(&mut self, line: u64, now: u64) -> (usize, Option<Victim>) {
        let (base, hit) = self.find(line);
        let (i, victim) = match hit {
            Some(i) => (i, None),
            None => self.replace(base, line, now),
        };
        self.touch(i);
        (i, victim)
    }

    /// Looks up `sectors` (bit mask) of the line at `line` for a read at
    /// time `now`, allocating the line and the missing sectors. A sector
    /// that was only partly written misses: its other bytes must be fetched.
    pub fn read(&mut self, line: u64, sectors: u8, now: u64) -> Lookup {
        let (i, victim) = self.allocate(line, now);
        let w = &mut self.ways[i];
        let hit = w.full & sectors;
        let miss = sectors & !w.full;
        let mut ready = 0;
        for s in 0..self.sectors_per_line.min(4) {
            let r = to_ps(w.ready[s as usize]);
            if hit >> s & 1 == 1 && r > now {
                ready = ready.max(r);
            }
        }
        w.valid |= miss;
        w.full |= miss;
        for s in 0..4 {
            if miss >> s & 1 == 1 {
                w.ready[s] = PENDING;
            }
        }
        Lookup {
            hit,
            miss,
            ready,
            victim,
            slot: i as u32,
        }
    }

    /// Sets the arrival time of sectors allocated by a missed lookup.
    pub fn fill(&mut self, slot: u32, sectors: u8, ready: u64) {
        let w = &mut self.ways[slot as usize];
        for s in 0..4 {
            if sectors >> s & 1 == 1 {
                w.ready[s] = to_units(ready);
            }
        }
    }

    /// Keeps a clean copy of what a store writes to `line` on its way
    /// through this cache to the line's home elsewhere (the near L2
    /// partition's slice for a line homed in the far one), at `ready`: of
    /// the sectors in `written`, those in `whole` (written whole) become
    /// present; the others, written in part, stay present where this cache
    /// holds them whole (the bytes written are merged into them), and are
    /// dropped where it holds them in part, as the rest of their bytes
    /// here may be old. The line is allocated (and made most recently
    /// used) only when `whole` is not empty. Returns a dirty victim.
    ///
    /// (The H200 keeps the copy: a set of lines read and then written 8
    /// bytes a sector is read again from the near partition in full,
    /// tools/measure/victim call 3.)
    pub fn keep_copy(&mut self, line: u64, written: u8, whole: u8, ready: u64) -> Option<Victim> {
        let (slot, victim) = if whole != 0 {
            let (i, victim) = self.allocate(line, ready);
            (Some(i), victim)
        } else {
            (self.way_of(line), None)
        };
        if let Some(i) = slot {
            let w = &mut self.ways[i];
            w.valid |= whole;
            w.full |= whole;
            for s in 0..4 {
                if whole >> s & 1 == 1 {
                    w.ready[s] = to_units(ready);
                }
            }
            let drop = written & !whole & !w.full & !w.dirty;
            w.valid &= !drop;
            w.full &= !drop;
        }
        victim
    }

    /// Writes the bytes `bytes[s]` of each sector `s` in `sectors` of
    /// `line` at time `ready` (write-back, allocate at sector granularity
    /// without fetching; [`FULL_SECTOR`] for a whole sector). A sector
    /// becomes full when all its bytes have been written. Returns a dirty
    /// victim.
    pub fn write(&mut self, line: u64, sectors: u8, bytes: [u32; 4], ready: u64) -> Option<Victim> {
        self.write_tracked(line, sectors, bytes, ready).victim
    }

    /// [`Cache::write`], also giving the line's dirty state before and
    /// after (as [`Cache::dirty_state`] would, in one lookup).
    #[allow(clippy::needless_range_loop)]
    pub fn write_tracked(
        &mut self,
        line: u64,
        sectors: u8,
        bytes: [u32; 4],
        ready: u64,
    ) -> Written {
        let (base, hit) = self.find(line);
        let before = hit.map(|i| self.state_of(i, line));
        let (i, victim) = match hit {
            Some(i) => (i, None),
            None => self.replace(base, line, ready),
        };
        self.touch(i);
        let w = &mut self.ways[i];
        for s in 0..4 {
            if sectors >> s & 1 == 1 {
                if w.full >> s & 1 == 0 {
                    let b = if bytes[s] == FULL_SECTOR {
                        FULL_SECTOR
                    } else {
                        let e = self.partly.entry(i as u32).or_default();
                        e[s] = if w.valid >> s & 1 == 1 { e[s] } else { 0 } | bytes[s];
                        e[s]
                    };
                    if b == FULL_SECTOR {
                        w.full |= 1 << s;
                    }
                }
                let r = to_units(ready);
                w.ready[s] = if w.valid >> s & 1 == 1 && w.ready[s] != PENDING {
                    w.ready[s].max(r)
                } else if w.valid >> s & 1 == 1 {
                    PENDING
                } else {
                    r
                };
            }
        }
        w.valid |= sectors;
        w.dirty |= sectors;
        Written {
            victim,
            before,
            now: self.state_of(i, line),
        }
    }

    /// The dirty state of `line`, held in way `i`.
    fn state_of(&self, i: usize, line: u64) -> Victim {
        let w = &self.ways[i];
        Victim {
            line: line >> self.line_shift << self.line_shift,
            dirty: w.dirty,
            partial: w.dirty & !w.full,
        }
    }

    /// The dirty state of `line` if it is present: its dirty sectors and,
    /// of those, the ones not entirely present (as [`Victim`] names them).
    /// Changes no state.
    pub fn dirty_state(&self, line: u64) -> Option<Victim> {
        Some(self.state_of(self.way_of(line)?, line))
    }

    /// The way holding `line`, if it is present (no LRU update).
    fn way_of(&self, line: u64) -> Option<usize> {
        let line_no = line >> self.line_shift;
        let ways = self.spec.ways as usize;
        let base = self.set_of(line_no) as usize * ways;
        let key = line_no + 1;
        let i = self.tags[base..base + ways]
            .iter()
            .position(|&t| t == key)?;
        Some(base + i)
    }

    /// Completes the dirty sectors of `line` that were only partly written
    /// (their other bytes fetched from memory): they become full, and stay
    /// dirty. Returns those sectors (0 if none, or if the line is absent).
    pub fn complete(&mut self, line: u64) -> u8 {
        let Some(i) = self.way_of(line) else {
            return 0;
        };
        let w = &mut self.ways[i];
        let partial = w.dirty & !w.full;
        w.full |= partial;
        partial
    }

    /// Writes `line` back without evicting it: returns its dirty sectors
    /// (as a victim would leave) and marks it clean, or `None` if it is
    /// absent or clean. Its place in the LRU order is kept.
    pub fn clean(&mut self, line: u64) -> Option<Victim> {
        let all = ((1u16 << self.sectors_per_line.min(8)) - 1) as u8;
        let line_no = line >> self.line_shift;
        let i = self.way_of(line)?;
        let w = &mut self.ways[i];
        if w.dirty == 0 {
            return None;
        }
        let v = Victim {
            line: line_no << self.line_shift,
            dirty: w.dirty,
            partial: !w.full & all,
        };
        w.dirty = 0;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn spec(size: u64, ways: u32) -> CacheSpec {
        CacheSpec {
            size_bytes: size,
            line_bytes: 128,
            sector_bytes: 32,
            ways,
            set_index: SetIndex::Linear,
        }
    }

    #[test]
    fn sectors_miss_then_hit() {
        let mut c = Cache::new(spec(4096, 4));
        let l = c.read(0x1000, 0b0011, 10);
        assert_eq!((l.hit, l.miss), (0, 0b0011));
        c.fill(l.slot, l.miss, 500);
        // In flight: a hit that completes when the fill does (MSHR merge).
        let l2 = c.read(0x1000, 0b0110, 20);
        assert_eq!((l2.hit, l2.miss, l2.ready), (0b0010, 0b0100, READY_UNIT_PS));
        // Arrived.
        assert_eq!(c.read(0x1000, 0b0001, 2000).ready, 0);
    }

    #[test]
    fn a_cleaned_line_stays_and_leaves_no_victim() {
        let mut c = Cache::new(spec(128 * 2, 2)); // one set, two ways
        assert_eq!(c.clean(0), None, "absent");
        c.write(0, 0b0011, [FULL_SECTOR, 0xff, 0, 0], 0);
        let st = c.dirty_state(0).unwrap();
        assert_eq!((st.dirty, st.partial), (0b0011, 0b0010));
        let v = c.clean(0).unwrap();
        assert_eq!((v.line, v.dirty, v.partial), (0, 0b0011, 0b1110));
        assert_eq!(c.clean(0), None, "already clean");
        assert_eq!(c.dirty_state(0).unwrap().dirty, 0);
        // Still present: the full sector hits.
        assert_eq!(c.read(0, 0b0001, 0).hit, 0b0001);
        c.read(128, 0b0001, 0);
        assert_eq!(c.read(256, 0b0001, 0).victim, None, "line 0 left clean");
    }

    #[test]
    fn a_passing_store_leaves_a_clean_copy_of_whole_sectors_and_merges_into_those_held() {
        let mut c = Cache::new(spec(128 * 2, 2)); // one set, two ways
        assert_eq!(c.keep_copy(0, 0b0011, 0, 0), None, "nothing whole");
        let l = c.read(0, 0b0001, 0);
        assert_eq!(l.miss, 0b0001, "not allocated");
        c.fill(l.slot, l.miss, 0);
        // The read above allocated line 0 with sector 0; a store writes
        // sector 1 whole and sectors 0 and 2 in part.
        c.keep_copy(0, 0b0111, 0b0010, 0);
        let l = c.read(0, 0b0111, 0);
        assert_eq!(
            (l.hit, l.miss),
            (0b0011, 0b0100),
            "sector 0, held whole, took the bytes written; sector 2 was not held"
        );
        c.fill(l.slot, l.miss, 0);
        assert_eq!(c.dirty_state(0).unwrap().dirty, 0, "a copy is clean");
        // A copy takes a way as a read does: two more lines evict line 0.
        c.keep_copy(128, 0b1111, 0b1111, 0);
        c.keep_copy(256, 0b1111, 0b1111, 0);
        assert_eq!(c.read(0, 0b0010, 0).miss, 0b0010);
    }

    #[test]
    fn interleaved_caches_fill_their_sets_from_every_nth_line() {
        // One of 4 caches that take every fourth line: indexed by the line
        // number itself, lines 0, 4, 8, 12 would all fall in set 0 of 4;
        // divided by the interleave they fill the sets in turn.
        let mut c = Cache::interleaved(spec(128 * 4, 1), 4); // 4 sets, 1 way
        for k in 0..4u64 {
            c.read(k * 4 * 128, 0b0001, 0);
        }
        for k in 0..4u64 {
            assert_eq!(c.read(k * 4 * 128, 0b0001, 0).hit, 0b0001, "line {k} kept");
        }
    }

    #[test]
    fn completing_a_partly_written_sector_makes_it_full_and_keeps_it_dirty() {
        let mut c = Cache::new(spec(4096, 4));
        c.write(0, 0b0101, [0xf, 0, FULL_SECTOR, 0], 0);
        assert_eq!(c.complete(0), 0b0001);
        assert_eq!(c.complete(0), 0, "nothing partial left");
        let st = c.dirty_state(0).unwrap();
        assert_eq!((st.dirty, st.partial), (0b0101, 0));
        assert_eq!(c.read(0, 0b0001, 0).hit, 0b0001, "now whole");
        assert_eq!(c.complete(4096), 0, "absent");
    }

    #[test]
    fn lru_evicts_oldest_and_reports_dirty() {
        let mut c = Cache::new(spec(128 * 2, 2)); // one set, two ways
        c.write(0, 0b0001, [FULL_SECTOR; 4], 0);
        let l = c.read(128, 0b0001, 0);
        c.fill(l.slot, l.miss, 0);
        c.read(0, 0b0001, 0); // 0 is now most recent
        let l = c.read(256, 0b0001, 0);
        assert_eq!(l.victim, None, "line 128 was clean");
        c.fill(l.slot, l.miss, 0);
        let l = c.read(384, 0b0001, 0);
        assert_eq!(
            l.victim,
            Some(Victim {
                line: 0,
                dirty: 0b0001,
                partial: 0b1110
            })
        );
    }

    #[test]
    fn a_line_whose_data_is_on_its_way_keeps_its_slot() {
        let mut c = Cache::new(spec(128 * 2, 2)); // one set, two ways
        let a = c.read(0, 0b0001, 0);
        c.fill(a.slot, a.miss, 1_000_000);
        let b = c.read(128, 0b0001, 10_000);
        c.fill(b.slot, b.miss, 100_000);
        // Line 0 is the least recently used, but its fill has not landed
        // at 200 ns: line 128, whose fill has, makes room.
        c.read(256, 0b0001, 200_000);
        assert_eq!(c.read(0, 0b0001, 300_000).miss, 0, "line 0 kept");
        assert_eq!(
            c.read(128, 0b0001, 300_000).miss,
            0b0001,
            "line 128 replaced"
        );
        // A store on its way holds its line as a fill does.
        let mut c = Cache::new(spec(128 * 2, 2));
        c.write(0, 0b0001, [FULL_SECTOR; 4], 5_000_000);
        let l = c.read(128, 0b0001, 10_000);
        c.fill(l.slot, l.miss, 20_000);
        let l = c.read(256, 0b0001, 100_000);
        assert_eq!(
            l.victim, None,
            "the clean line 128 went, not the dirty line 0"
        );
        // Where every way waits, the least recently used goes regardless.
        let mut c = Cache::new(spec(128 * 2, 2));
        c.read(0, 0b0001, 0);
        c.read(128, 0b0001, 0);
        c.read(256, 0b0001, 0);
        assert_eq!(c.read(128, 0b0001, 0).miss, 0, "line 128 kept");
        assert_eq!(c.read(0, 0b0001, 0).miss, 0b0001, "line 0 replaced");
    }

    #[test]
    fn partly_written_sectors_miss_on_read_and_leave_as_partial() {
        let mut c = Cache::new(spec(128 * 2, 2));
        // Two writes of 8 bytes into sector 0; 32 bytes into sector 1.
        c.write(0, 0b0011, [0xff, FULL_SECTOR, 0, 0], 0);
        c.write(0, 0b0001, [0xff00, 0, 0, 0], 0);
        assert_eq!(
            c.read(0, 0b0011, 0).hit,
            0b0010,
            "sector 0 is not all there"
        );
        // Sector 0 is now being fetched: full. A new partial write to sector 2.
        c.write(0, 0b0100, [0, 0, 0xf, 0], 0);
        c.read(128, 1, 0);
        let l = c.read(256, 1, 0);
        assert_eq!(
            l.victim,
            Some(Victim {
                line: 0,
                dirty: 0b0111,
                partial: 0b1100
            })
        );
    }

    #[test]
    fn four_quarter_writes_make_a_full_sector() {
        let mut c = Cache::new(spec(128 * 2, 2));
        for q in 0..4 {
            c.write(0, 1, [0xff << (8 * q), 0, 0, 0], 0);
        }
        assert_eq!(c.read(0, 1, 0).hit, 1);
    }

    #[test]
    fn bad_geometry_is_rejected() {
        assert!(spec(1000, 4).validate().is_err());
        assert!(CacheSpec {
            line_bytes: 96,
            ..spec(4096, 4)
        }
        .validate()
        .is_err());
        assert!(spec(4096, 0).validate().is_err());
        assert!(spec(4096, 4).validate().is_ok());
    }

    proptest! {
        /// Against a reference model (a list per set in LRU order): hits and
        /// misses agree on every access, whether every line's data is still
        /// on its way (never filled) or has landed (filled at once).
        #[test]
        fn matches_reference_lru(ops in prop::collection::vec((0u64..64, 1u8..16), 1..400),
                                 ways in 1u32..5, xor in any::<bool>(), landed in any::<bool>()) {
            let sp = CacheSpec {
                set_index: if xor { SetIndex::XorFold } else { SetIndex::Linear },
                ..spec(128 * 4 * ways as u64, ways)
            };
            let mut c = Cache::new(sp.clone());
            let mut model: Vec<Vec<(u64, u8)>> = vec![Vec::new(); 4];
            for (line_no, sectors) in ops {
                let set = c.set_of(line_no) as usize;
                let l = c.read(line_no * 128, sectors, 0);
                if landed {
                    c.fill(l.slot, l.miss, 0);
                }
                let m = &mut model[set];
                let valid = match m.iter().position(|(t, _)| *t == line_no) {
                    Some(p) => { let e = m.remove(p); e.1 }
                    None => { if m.len() == ways as usize { m.remove(0); } 0 }
                };
                prop_assert_eq!(l.hit, valid & sectors);
                prop_assert_eq!(l.miss, sectors & !valid);
                m.push((line_no, valid | sectors));
            }
        }
    }
}
