#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use serde::Deserialize;

/// How addresses spread over channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum ChannelHash {
    /// `(addr / interleave_bytes) % channels`.
    Linear,
    /// Upper address bits XOR-folded into the channel index, as GPUs do to
    /// keep power-of-two strides from landing on one channel.
    #[default]
    XorFold,
}

/// One device's DRAM system.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    /// Memory technology, for reports (e.g. "GDDR5").
    pub kind: String,
    /// Independent channels.
    pub channels: u32,
    /// Data bus width of one channel in bits.
    pub channel_bits: u32,
    /// Data rate per pin in Gb/s.
    pub data_rate_gbps: f64,
    /// Bytes moved by one access (bus width x burst length): the DRAM atom.
    pub access_bytes: u32,
    /// Consecutive bytes mapped to one channel before the next.
    pub interleave_bytes: u32,
    /// Channel hash.
    #[serde(default)]
    pub channel_hash: ChannelHash,
    /// Banks per channel (all bank groups together).
    pub banks: u32,
    /// Bank groups per channel (1 where the device has none); consecutive
    /// atoms go to consecutive groups.
    #[serde(default = "one")]
    pub bank_groups: u32,
    /// Row (page) size per bank in bytes.
    pub row_bytes: u32,
    /// ACTIVATE to READ/WRITE delay, ns.
    pub t_rcd_ns: f64,
    /// PRECHARGE period, ns.
    pub t_rp_ns: f64,
    /// CAS (read) latency, ns.
    pub t_cl_ns: f64,
    /// ACTIVATE to PRECHARGE minimum, ns.
    pub t_ras_ns: f64,
    /// Write-to-read turnaround on the bus, ns.
    pub t_wtr_ns: f64,
    /// Read-to-write turnaround on the bus, ns.
    pub t_rtw_ns: f64,
    /// Four-activate window, ns: at most four row activations per channel
    /// in any such window (with tRRD, what bounds scattered accesses).
    pub t_faw_ns: f64,
    /// Minimum time between column commands to the same bank (group), ns
    /// (tCCD_L); shorter bursts than this cannot stream from one bank.
    pub t_ccd_l_ns: f64,
    /// Writes queued per channel before the controller drains them.
    pub write_drain: u32,
    /// Extra bus time per access for in-band ECC, as a fraction (0 = none).
    #[serde(default)]
    pub ecc_overhead: f64,
}

fn one() -> u32 {
    1
}

/// Checks that every value is finite and greater than zero (`strict`) or at
/// least zero; returns the first offending field with the reason. Shared by
/// every config checker.
pub fn check_values<'a>(fields: &[(&'a str, f64)], strict: bool) -> Result<(), (&'a str, String)> {
    for &(f, v) in fields {
        let ok = v.is_finite() && if strict { v > 0.0 } else { v >= 0.0 };
        if !ok {
            let want = if strict {
                "greater than zero"
            } else {
                "zero or more"
            };
            return Err((f, format!("must be {want} (is {v})")));
        }
    }
    Ok(())
}

impl DramSpec {
    /// Theoretical peak bandwidth in GB/s (1e9 bytes per second).
    pub fn peak_gbps(&self) -> f64 {
        self.channels as f64 * self.channel_bits as f64 / 8.0 * self.data_rate_gbps
    }

    /// Bus time of one access in ps, ECC included.
    pub fn burst_ps(&self) -> u64 {
        let bytes_per_ns = self.channel_bits as f64 / 8.0 * self.data_rate_gbps;
        (self.access_bytes as f64 / bytes_per_ns * 1000.0 * (1.0 + self.ecc_overhead)).round()
            as u64
    }

    /// Checks the values.
    pub fn validate(&self) -> Result<(), String> {
        let field = |(f, m): (&str, String)| format!("`{f}` {m}");
        check_values(
            &[
                ("channels", self.channels as f64),
                ("channel_bits", self.channel_bits as f64),
                ("data_rate_gbps", self.data_rate_gbps),
                ("access_bytes", self.access_bytes as f64),
                ("interleave_bytes", self.interleave_bytes as f64),
                ("banks", self.banks as f64),
                ("row_bytes", self.row_bytes as f64),
                ("write_drain", self.write_drain as f64),
            ],
            true,
        )
        .map_err(field)?;
        check_values(
            &[
                ("t_rcd_ns", self.t_rcd_ns),
                ("t_rp_ns", self.t_rp_ns),
                ("t_cl_ns", self.t_cl_ns),
                ("t_ras_ns", self.t_ras_ns),
                ("t_wtr_ns", self.t_wtr_ns),
                ("t_rtw_ns", self.t_rtw_ns),
                ("t_ccd_l_ns", self.t_ccd_l_ns),
                ("t_faw_ns", self.t_faw_ns),
                ("ecc_overhead", self.ecc_overhead),
            ],
            false,
        )
        .map_err(field)?;
        for (f, v) in [
            ("access_bytes", self.access_bytes),
            ("interleave_bytes", self.interleave_bytes),
            ("row_bytes", self.row_bytes),
            ("banks", self.banks),
            ("bank_groups", self.bank_groups),
        ] {
            if !v.is_power_of_two() {
                return Err(format!("`{f}` must be a power of two, not {v}"));
            }
        }
        if self.bank_groups > self.banks {
            return Err("`bank_groups` cannot exceed `banks`".into());
        }
        if self.interleave_bytes < self.access_bytes || self.row_bytes < self.access_bytes {
            return Err(
                "`interleave_bytes` and `row_bytes` must be at least `access_bytes`".into(),
            );
        }
        Ok(())
    }
}

/// Capacity calendar: a shared resource that can be busy for `cap` units in
/// each interval of `bucket_ps`. A reservation takes the first interval at or
/// after its time that has room, so requests that arrive out of time order
/// (one reserved far ahead, then one that is ready sooner) do not queue
/// behind each other: the earlier one fills the gap, as a reordering
/// scheduler would let it.
#[derive(Debug, Clone)]
pub struct Calendar {
    bucket_ps: u64,
    cap: u64,
    start: u64,
    /// Every interval before this one is full.
    first_open: u64,
    used: std::collections::VecDeque<u64>,
    busy: u64,
}

impl Calendar {
    /// A free resource of `cap` units per `bucket_ps` picoseconds.
    pub fn new(bucket_ps: u64, cap: u64) -> Calendar {
        Calendar {
            bucket_ps: bucket_ps.max(1),
            cap: cap.max(1),
            start: 0,
            first_open: 0,
            used: std::collections::VecDeque::new(),
            busy: 0,
        }
    }

    /// Reserves `amount` units at or after `t`; returns when they are done.
    pub fn reserve(&mut self, t: u64, amount: u64) -> u64 {
        self.busy += amount;
        let mut i = (t / self.bucket_ps).max(self.start).max(self.first_open);
        loop {
            let k = (i - self.start) as usize;
            while self.used.len() <= k {
                self.used.push_back(0);
            }
            let u = self.used[k];
            if u < self.cap {
                self.used[k] = u + amount;
                if i == self.first_open {
                    // Skip past intervals this one fills.
                    let mut f = k;
                    while f < self.used.len() && self.used[f] >= self.cap {
                        f += 1;
                    }
                    self.first_open = self.start + f as u64;
                }
                let begin = (i * self.bucket_ps).max(t);
                let frac = (u + amount).min(self.cap) * self.bucket_ps / self.cap;
                let dur = amount * self.bucket_ps / self.cap;
                return (begin + dur).max(i * self.bucket_ps + frac);
            }
            i += 1;
        }
    }

    /// Forgets intervals that end before `t` (reservations earlier than
    /// that are then placed at the oldest interval kept).
    pub fn advance(&mut self, t: u64) {
        let b = t / self.bucket_ps;
        while self.start + 1 < b && !self.used.is_empty() {
            self.used.pop_front();
            self.start += 1;
        }
        if self.used.is_empty() && self.start < b {
            self.start = b.saturating_sub(1);
        }
        self.first_open = self.first_open.max(self.start);
    }

    /// Units reserved so far.
    pub fn busy(&self) -> u64 {
        self.busy
    }
}

#[derive(Debug, Clone, Copy)]
struct Bank {
    open_row: u64,
    ready: u64,
    act: u64,
}

#[derive(Debug, Clone)]
struct Channel {
    bus: Calendar,
    acts: Calendar,
    last_write: bool,
    banks: Vec<Bank>,
    writes: Vec<(usize, usize, u64)>,
    busy_ps: u64,
}

/// Counters of the DRAM system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DramStats {
    /// Bytes read at the pins.
    pub bytes_read: u64,
    /// Bytes written at the pins (including writes still queued).
    pub bytes_written: u64,
    /// Accesses that found their row open.
    pub row_hits: u64,
    /// Accesses that had to activate a row.
    pub row_misses: u64,
    /// Sum over channels of the time the data bus was busy, ps.
    pub busy_ps: u64,
}

/// The DRAM system's state.
#[derive(Debug, Clone)]
pub struct Dram {
    spec: DramSpec,
    ch: Vec<Channel>,
    burst: u64,
    t_rcd: u64,
    t_rp: u64,
    t_cl: u64,
    t_ras: u64,
    t_wtr: u64,
    t_rtw: u64,
    t_ccd_l: u64,
    t_faw: u64,
    il_shift: u32,
    il_mask: u64,
    row_shift: u32,
    bank_shift: u32,
    bank_mask: u64,
    atom_shift: u32,
    atom_mask: u64,
    group_shift: u32,
    group_mask: u64,
    stats: DramStats,
}

const NO_ROW: u64 = u64::MAX;

fn ps(ns: f64) -> u64 {
    (ns * 1000.0).round() as u64
}

impl Dram {
    /// Idle DRAM with all rows closed. `spec` must be valid.
    pub fn new(spec: DramSpec) -> Dram {
        let burst = spec.burst_ps();
        let ch = Channel {
            // Eight bursts per interval: fine enough for latency, coarse
            // enough that a stream fills whole intervals.
            bus: Calendar::new(8 * burst, 8 * burst),
            // Four activations per tFAW.
            acts: Calendar::new(ps(spec.t_faw_ns).max(1), 4),
            last_write: false,
            banks: vec![
                Bank {
                    open_row: NO_ROW,
                    ready: 0,
                    act: 0,
                };
                spec.banks as usize
            ],
            writes: Vec::with_capacity(spec.write_drain as usize),
            busy_ps: 0,
        };
        Dram {
            ch: vec![ch; spec.channels as usize],
            burst: spec.burst_ps(),
            t_rcd: ps(spec.t_rcd_ns),
            t_rp: ps(spec.t_rp_ns),
            t_cl: ps(spec.t_cl_ns),
            t_ras: ps(spec.t_ras_ns),
            t_wtr: ps(spec.t_wtr_ns),
            t_rtw: ps(spec.t_rtw_ns),
            t_ccd_l: ps(spec.t_ccd_l_ns),
            t_faw: ps(spec.t_faw_ns).max(1) / 4 * 4,
            il_shift: spec.interleave_bytes.trailing_zeros(),
            il_mask: spec.interleave_bytes as u64 - 1,
            row_shift: spec.row_bytes.trailing_zeros(),
            bank_shift: (spec.banks / spec.bank_groups).trailing_zeros(),
            bank_mask: (spec.banks / spec.bank_groups) as u64 - 1,
            atom_shift: spec.access_bytes.trailing_zeros(),
            atom_mask: spec.access_bytes as u64 - 1,
            group_shift: spec.bank_groups.trailing_zeros(),
            group_mask: spec.bank_groups as u64 - 1,
            spec,
            stats: DramStats::default(),
        }
    }

    /// The spec.
    pub fn spec(&self) -> &DramSpec {
        &self.spec
    }

    /// Counters so far.
    pub fn stats(&self) -> DramStats {
        let mut s = self.stats;
        s.busy_ps = self.ch.iter().map(|c| c.busy_ps).sum();
        s
    }

    /// Channel, bank and row of an address.
    #[inline]
    pub fn map(&self, addr: u64) -> (usize, usize, u64) {
        let chunk = addr >> self.il_shift;
        let n = self.ch.len() as u64;
        let channel = match self.spec.channel_hash {
            ChannelHash::Linear => chunk % n,
            ChannelHash::XorFold => {
                // Fold the chunk number in 7-bit pieces: every address bit
                // above the interleave affects the channel.
                let mut x = chunk;
                let mut h = 0u64;
                while x != 0 {
                    h = h.wrapping_mul(31).wrapping_add(x & 0x7f);
                    x >>= 7;
                }
                (h ^ chunk) % n
            }
        };
        let local = ((chunk / n) << self.il_shift) | (addr & self.il_mask);
        // Consecutive atoms go to consecutive bank groups (so that a stream
        // is not held to one column command per tCCD_L); within a group,
        // a row holds row_bytes of consecutive group addresses, and the bank
        // bits are XOR-ed with the row bits.
        let atom = local >> self.atom_shift;
        let group = atom & self.group_mask;
        let in_group = ((atom >> self.group_shift) << self.atom_shift) | (local & self.atom_mask);
        let page = in_group >> self.row_shift;
        let row = page >> self.bank_shift;
        let bank = (((page ^ row) & self.bank_mask) << self.group_shift) | group;
        (channel as usize, bank as usize, row)
    }

    fn access(&mut self, addr: u64, now: u64, write: bool) -> u64 {
        let m = self.map(addr);
        self.access_at(m, now, write)
    }

    fn access_at(&mut self, (c, b, row): (usize, usize, u64), now: u64, write: bool) -> u64 {
        let ch = &mut self.ch[c];
        let bank = &mut ch.banks[b];
        let cas = if bank.open_row == row {
            self.stats.row_hits += 1;
            now.max(bank.ready)
        } else {
            self.stats.row_misses += 1;
            let earliest = if bank.open_row == NO_ROW {
                now.max(bank.ready)
            } else {
                now.max(bank.ready).max(bank.act + self.t_ras) + self.t_rp
            };
            let act = ch.acts.reserve(earliest, 1) - self.t_faw / 4;
            bank.act = act;
            bank.open_row = row;
            act + self.t_rcd
        };
        let turnaround = match (ch.last_write, write) {
            (true, false) => self.t_wtr,
            (false, true) => self.t_rtw,
            _ => 0,
        };
        // The data bus: a turnaround costs bus time; the burst takes the
        // first free slot after the data is ready.
        let done = ch.bus.reserve(cas + self.t_cl, self.burst + turnaround);
        let data = done - self.burst;
        ch.busy_ps += self.burst;
        ch.last_write = write;
        bank.ready = (data - self.t_cl + self.burst).max(data - self.t_cl + self.t_ccd_l);
        done
    }

    /// Reads `bytes` (rounded up to whole accesses) at `addr` starting at
    /// `now`; returns when the last byte has crossed the pins.
    pub fn read(&mut self, addr: u64, bytes: u32, now: u64) -> u64 {
        let a = self.spec.access_bytes as u64;
        let first = addr / a * a;
        let n = (addr + bytes.max(1) as u64).div_ceil(a) - addr / a;
        let mut done = now;
        for i in 0..n {
            done = done.max(self.access(first + i * a, now, false));
        }
        self.stats.bytes_read += n * a;
        done
    }

    /// Queues a write of `bytes` (whole accesses) at `addr`; writes are
    /// issued in bursts of `write_drain` per channel. Nothing waits for them.
    pub fn write(&mut self, addr: u64, bytes: u32, now: u64) {
        let a = self.spec.access_bytes as u64;
        let first = addr / a * a;
        let n = (addr + bytes.max(1) as u64).div_ceil(a) - addr / a;
        for i in 0..n {
            let m = self.map(first + i * a);
            let c = m.0;
            self.ch[c].writes.push(m);
            self.stats.bytes_written += a;
            if self.ch[c].writes.len() >= self.spec.write_drain as usize {
                let q = std::mem::take(&mut self.ch[c].writes);
                for w in &q {
                    self.access_at(*w, now, true);
                }
                self.ch[c].writes = q;
                self.ch[c].writes.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> DramSpec {
        DramSpec {
            kind: "test".into(),
            channels: 2,
            channel_bits: 64,
            data_rate_gbps: 2.0,
            access_bytes: 32,
            interleave_bytes: 256,
            channel_hash: ChannelHash::Linear,
            banks: 4,
            bank_groups: 1,
            row_bytes: 2048,
            t_rcd_ns: 10.0,
            t_rp_ns: 10.0,
            t_cl_ns: 10.0,
            t_ras_ns: 30.0,
            t_wtr_ns: 5.0,
            t_rtw_ns: 2.0,
            t_ccd_l_ns: 2.0,
            t_faw_ns: 0.0,
            write_drain: 4,
            ecc_overhead: 0.0,
        }
    }

    #[test]
    fn peak_is_channels_times_width_times_rate() {
        assert_eq!(spec().peak_gbps(), 32.0);
        // 32 bytes at 16 bytes/ns
        assert_eq!(spec().burst_ps(), 2000);
    }

    #[test]
    fn row_hits_stream_at_bus_rate() {
        let mut d = Dram::new(spec());
        let first = d.read(0, 32, 0);
        assert_eq!(
            first,
            10_000 + 10_000 + 2_000,
            "closed row: tRCD + tCL + burst"
        );
        let second = d.read(32, 32, 0);
        assert_eq!(second, first + 2_000, "open row: back to back on the bus");
        assert_eq!(d.stats().row_hits, 1);
    }

    #[test]
    fn row_conflict_pays_precharge_and_activate() {
        let mut d = Dram::new(spec());
        let (c0, b0, r0) = d.map(0);
        // Find another address on the same channel and bank, other row.
        let other = (1..1u64 << 20)
            .map(|k| k * 256)
            .find(|&a| {
                let (c, b, r) = d.map(a);
                c == c0 && b == b0 && r != r0
            })
            .unwrap();
        let t1 = d.read(0, 32, 0);
        let t2 = d.read(other, 32, t1);
        // PRE waits for tRAS after the first ACT (at 0): 30 ns, then tRP + tRCD + tCL + burst.
        assert_eq!(t2, 30_000 + 10_000 + 10_000 + 10_000 + 2_000);
    }

    #[test]
    fn bytes_count_whole_accesses() {
        let mut d = Dram::new(spec());
        d.read(16, 64, 0); // bytes 16..80 touch three 32-byte atoms
        assert_eq!(d.stats().bytes_read, 96);
        d.write(0, 32, 0);
        assert_eq!(d.stats().bytes_written, 32);
    }
}
