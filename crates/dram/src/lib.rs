#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use serde::Deserialize;
use timing::{prefetch_range, Divisor, Window, HOST_CACHE_BYTES};
pub use timing::{Calendar, Pool};

/// How addresses spread over channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum ChannelHash {
    /// `(addr / interleave_bytes) % channels`.
    Linear,
    /// Upper address bits XOR-folded into the channel index, as GPUs do to
    /// keep power-of-two strides from landing on one channel. Not a
    /// permutation of each run of `channels` consecutive interleave units,
    /// whose place within the channel is the run's number: two units of a
    /// run may share a channel and that place, and so a row
    /// (DEVIATIONS.md 26).
    #[default]
    XorFold,
    /// Each run of `channels` consecutive interleave units rotated over the
    /// channels by a hash of the run's number: power-of-two strides spread
    /// as with `XorFold`, and every unit of a run has a channel of its own,
    /// so no two addresses share a DRAM location.
    Rotate,
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
    /// units of `group_bytes` go to consecutive groups.
    #[serde(default = "one")]
    pub bank_groups: u32,
    /// Consecutive bytes kept in one bank (and row) before the next bank
    /// group (default: `access_bytes`, so consecutive atoms alternate
    /// groups); a power of two, at least `access_bytes`.
    #[serde(default)]
    pub group_bytes: Option<u32>,
    /// Bank-group bits XOR-ed with every address bit above them (in pieces
    /// of the group bits' width), so that accesses a power-of-two number of
    /// interleave units apart spread over the groups instead of falling in
    /// one (permutation-based interleaving, as controllers do).
    #[serde(default)]
    pub group_hash: bool,
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
    /// Write recovery, ns: from a write's column command to the earliest
    /// precharge of its bank (write latency, burst and tWR together); a
    /// read's own (tRTP) is within its column slot. 0 where not known.
    #[serde(default)]
    pub t_wr_ns: f64,
    /// Four-activate window, ns: at most four row activations per channel
    /// in any such window (with tRRD, what bounds scattered accesses).
    pub t_faw_ns: f64,
    /// Minimum time between column commands to the same bank (group), ns
    /// (tCCD_L); shorter bursts than this cannot stream from one bank.
    pub t_ccd_l_ns: f64,
    /// Writes queued per channel before the controller drains them; the
    /// write queue holds this many entries, and a write that finds it full
    /// waits until the oldest drained write has left.
    pub write_drain: u32,
    /// Entries of the read scheduler's queue per channel: a read request
    /// (its accesses in that channel together) waits for a free entry and
    /// holds it until its data has crossed the pins.
    pub read_queue: u32,
    /// First-ready scheduling of reads (FR-FCFS): a read of a row that is
    /// open, or that a queued request opens, is served with that row's
    /// hits ahead of a queued row miss that has not begun. Off (the
    /// default): each read takes the first place its bank's bookings
    /// leave it, as it arrives.
    #[serde(default)]
    pub first_ready: bool,
    /// Refresh interval of one bank, ns: each bank is refreshed on its
    /// own (single-bank refresh), once per interval, the banks of all
    /// channels in turn at evenly spread times. 0 (the default): no refresh.
    #[serde(default)]
    pub t_refi_ns: f64,
    /// Refresh cycle time, ns: how long a bank being refreshed takes no
    /// access. Its open row is closed first (a precharge) and it starts
    /// with none open.
    #[serde(default)]
    pub t_rfc_ns: f64,
    /// Refresh intervals a bank's refresh may be put off while requests
    /// wait for that bank; it is made when the bank falls idle, the ones
    /// put off back to back, or at the latest when this many intervals
    /// have passed. 0 (the default): at its time.
    #[serde(default)]
    pub refresh_postpone: u32,
    /// The controller closes a row once a write request's last access to
    /// it is done (a write with auto-precharge): the next access to the
    /// bank activates a row again, even the same one. A request is what
    /// the L2 writes back of one line (or, without an L2, one store
    /// transaction). Off (the default): rows stay open until another row
    /// of the bank is wanted.
    #[serde(default)]
    pub close_after_write: bool,
    /// How an atom whose bytes are not all written reaches the DRAM.
    pub partial_write: PartialWrite,
    /// Bytes the controller writes as one unit (a power of two from
    /// `access_bytes` to `group_bytes` and at most 128, one L2 line): a
    /// write-back that has only some atoms of a unit to write still takes
    /// the slot on the bus and in the bank of every atom of it the cache
    /// holds, the clean ones masked (and not counted as written); an atom
    /// the cache does not hold takes none. Default: `access_bytes` (each
    /// atom on its own).
    #[serde(default)]
    pub write_unit_bytes: Option<u32>,
    /// Extra bus time per access for in-band ECC, as a fraction (0 = none).
    #[serde(default)]
    pub ecc_overhead: f64,
}

/// How the memory writes an atom of which only some bytes are valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum PartialWrite {
    /// Byte-masked write (data-mask pins): costs what a full write does.
    Masked,
    /// The controller reads the atom, merges, and writes it back (as ECC
    /// over the whole atom requires): a read and a write.
    ReadModifyWrite,
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

    /// Bytes the controller writes as one unit (`write_unit_bytes`, by
    /// default one atom).
    pub fn write_unit(&self) -> u32 {
        self.write_unit_bytes.unwrap_or(self.access_bytes)
    }

    /// Bus time of one access in ps, ECC included.
    pub fn burst_ps(&self) -> u64 {
        let bytes_per_ns = self.channel_bits as f64 / 8.0 * self.data_rate_gbps;
        // Rounded up, so that the modelled bus is never faster than its peak.
        (self.access_bytes as f64 / bytes_per_ns * 1000.0 * (1.0 + self.ecc_overhead)).ceil() as u64
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
                ("read_queue", self.read_queue as f64),
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
                ("t_wr_ns", self.t_wr_ns),
                ("t_ccd_l_ns", self.t_ccd_l_ns),
                ("t_faw_ns", self.t_faw_ns),
                ("t_refi_ns", self.t_refi_ns),
                ("t_rfc_ns", self.t_rfc_ns),
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
            ("group_bytes", self.group_bytes.unwrap_or(self.access_bytes)),
            ("write_unit_bytes", self.write_unit()),
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
        let (refi, rfc) = (self.t_refi_ns, self.t_rfc_ns);
        if (refi > 0.0) != (rfc > 0.0) || rfc >= refi && rfc > 0.0 {
            return Err(format!(
                "`t_rfc_ns` ({rfc}) must be less than `t_refi_ns` ({refi}), or both zero (no refresh)"
            ));
        }
        // A bank must have room for one access between two refreshes, or
        // each access would put off its booking past one more refresh,
        // without end.
        let col = (self.burst_ps() as f64 / 1000.0).max(self.t_ccd_l_ns);
        let access = 2.0 * self.t_rp_ns + self.t_rcd_ns + self.t_ras_ns + col + self.t_wr_ns;
        if refi > 0.0 && rfc + access >= refi {
            return Err(format!(
                "`t_refi_ns` ({refi}) leaves a bank no room for one access between refreshes: it \
                 must exceed t_rfc_ns + 2 t_rp_ns + t_rcd_ns + t_ras_ns + max(burst, t_ccd_l_ns) + \
                 t_wr_ns = {:.1} ns",
                rfc + access
            ));
        }
        let g = self.group_bytes.unwrap_or(self.access_bytes);
        if g < self.access_bytes || g > self.row_bytes {
            return Err(
                "`group_bytes` must be at least `access_bytes` and at most `row_bytes`".into(),
            );
        }
        let u = self.write_unit();
        if self.write_unit_bytes.is_some()
            && (u < self.access_bytes || u > g.min(128) || u / self.access_bytes > 8)
        {
            return Err(format!(
                "`write_unit_bytes` ({u}) must be at least `access_bytes` ({}), at most \
                 `group_bytes` ({g}) (a unit lies in one bank's row), at most 128 (a unit \
                 lies in one L2 line) and at most 8 atoms",
                self.access_bytes
            ));
        }
        Ok(())
    }
}

/// One booked use of a bank: from its first command (PRECHARGE or
/// ACTIVATE for a row miss, the column command for a hit) to when the bank
/// may take its next column command. A bank keeps it packed, as an [`Op`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Booking {
    begin: u64,
    end: u64,
    row: u64,
    /// When `row` was activated (for tRAS).
    act: u64,
    hit: bool,
    write: bool,
    /// A refresh: the bank takes no access from `begin` to `end` and is
    /// left with no row open.
    refresh: bool,
    /// The gap between the end of the booking before this one and this
    /// one's `begin` holds a column slot (kept as bookings are placed, for
    /// [`Bank::book`]'s skip over the gaps too short; not kept for the
    /// first booking, whose booking before may have been dropped).
    room: bool,
    /// That gap holds an activation's tRCD and a column slot: the least
    /// that an access which opens its row there takes.
    room_to_open: bool,
    /// When the request reached the controller (a refresh: its `begin`).
    /// Only the bookings of requests that arrived by a request's time are
    /// ahead of it in the controller's queue.
    arrived: u64,
}

/// The row an access with auto-precharge leaves: none (no access finds it
/// open).
const CLOSED: u64 = u64::MAX - 1;

impl Booking {
    /// `room` and `room_to_open` of a booking beginning at `begin` after
    /// one that ends at `prev_end`.
    fn rooms(prev_end: u64, begin: u64, k: &BankTiming) -> (bool, bool) {
        (
            prev_end + k.col <= begin,
            prev_end + k.t_rcd + k.col <= begin,
        )
    }

    /// Earliest precharge after this access: its end for a read, write
    /// recovery after its column command for a write.
    fn recover(&self, k: &BankTiming) -> u64 {
        self.end + k.recovery(self.write)
    }
}

/// A [`Booking`] as its bank keeps it, in 24 bytes instead of 48: a bank
/// keeps up to [`KEEP`] of them and the host walks them on every request,
/// so their size is what the host's caches miss. `end` in full; `begin`,
/// `arrived` and `act` as how long before `end` they are, in 32 bits
/// (4.29 ms), which a booking's own span and its request's wait in the
/// bank's queue stay far below; the row and the flags in one word. A
/// booking that does not fit (times further apart, a row too large) is
/// kept whole in its bank's [`Bank::wide`] table, found by its `end` (the
/// bookings of a bank end in order, each after the one before: see
/// [`Bank::pack`]), and marked [`Op::WIDE`]; its packed fields other than
/// `end` and the flags are then unused.
#[derive(Debug, Clone, Copy)]
struct Op {
    end: u64,
    /// `end - begin`.
    begin: u32,
    /// `end - arrived`.
    arrived: u32,
    /// `end - act`, at most `u32::MAX`: an activation further back than
    /// that is kept as if it were `u32::MAX` ps before `end` (see
    /// [`Bank::pack`]: no decision changes).
    act: u32,
    /// The flags in the low [`Op::ROW_SHIFT`] bits, the row's code above
    /// ([`Op::row_code`]).
    bits: u32,
}

/// A booking that does not fit an [`Op`], as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wide {
    end: u64,
    begin: u64,
    arrived: u64,
    act: u64,
    row: u64,
}

impl Op {
    const HIT: u32 = 1;
    const WRITE: u32 = 2;
    const REFRESH: u32 = 4;
    const ROOM: u32 = 8;
    const ROOM_TO_OPEN: u32 = 16;
    /// Kept whole in the bank's `wide` table.
    const WIDE: u32 = 32;
    const ROW_SHIFT: u32 = 6;
    /// Rows below this are their own code; the two codes above it are
    /// [`CLOSED`] and `u64::MAX` (a refresh's row); any other row makes
    /// its booking wide.
    const ROW_LIMIT: u32 = (u32::MAX >> Op::ROW_SHIFT) - 1;

    /// `row`'s code, where it has one.
    #[inline]
    fn row_code(row: u64) -> Option<u32> {
        if row < Op::ROW_LIMIT as u64 {
            Some(row as u32)
        } else if row >= CLOSED {
            Some(Op::ROW_LIMIT + (row - CLOSED) as u32)
        } else {
            None
        }
    }

    #[inline]
    fn flag(&self, f: u32) -> bool {
        self.bits & f != 0
    }

    #[inline]
    fn hit(&self) -> bool {
        self.flag(Op::HIT)
    }

    #[inline]
    fn write(&self) -> bool {
        self.flag(Op::WRITE)
    }

    #[inline]
    fn refresh(&self) -> bool {
        self.flag(Op::REFRESH)
    }

    #[inline]
    fn room(&self) -> bool {
        self.flag(Op::ROOM)
    }

    #[inline]
    fn room_to_open(&self) -> bool {
        self.flag(Op::ROOM_TO_OPEN)
    }

    /// Sets `room` and `room_to_open`.
    #[inline]
    fn set_rooms(&mut self, (room, room_to_open): (bool, bool)) {
        self.bits &= !(Op::ROOM | Op::ROOM_TO_OPEN);
        self.bits |=
            if room { Op::ROOM } else { 0 } | if room_to_open { Op::ROOM_TO_OPEN } else { 0 };
    }

    /// This booking's entry in its bank's `wide` table.
    #[cold]
    #[inline(never)]
    fn wide<'a>(&self, wide: &'a [Wide]) -> &'a Wide {
        wide.iter()
            .rev()
            .find(|w| w.end == self.end)
            .expect("a wide booking is in its bank's table")
    }

    /// A time kept as a span `back` before the end, or, for a wide
    /// booking, the field `whole` of its table entry.
    #[inline]
    fn before_end(&self, wide: &[Wide], back: u32, whole: impl Fn(&Wide) -> u64) -> u64 {
        if self.flag(Op::WIDE) {
            whole(self.wide(wide))
        } else {
            self.end - back as u64
        }
    }

    #[inline]
    fn begin(&self, wide: &[Wide]) -> u64 {
        self.before_end(wide, self.begin, |w| w.begin)
    }

    #[inline]
    fn arrived(&self, wide: &[Wide]) -> u64 {
        self.before_end(wide, self.arrived, |w| w.arrived)
    }

    #[inline]
    fn act(&self, wide: &[Wide]) -> u64 {
        self.before_end(wide, self.act, |w| w.act)
    }

    #[inline]
    fn row(&self, wide: &[Wide]) -> u64 {
        if self.flag(Op::WIDE) {
            return self.wide(wide).row;
        }
        let c = self.bits >> Op::ROW_SHIFT;
        if c < Op::ROW_LIMIT {
            c as u64
        } else {
            CLOSED + (c - Op::ROW_LIMIT) as u64
        }
    }

    /// The booking, `wide` being its bank's table.
    #[inline]
    fn unpack(&self, wide: &[Wide]) -> Booking {
        Booking {
            begin: self.begin(wide),
            end: self.end,
            row: self.row(wide),
            act: self.act(wide),
            hit: self.hit(),
            write: self.write(),
            refresh: self.refresh(),
            room: self.room(),
            room_to_open: self.room_to_open(),
            arrived: self.arrived(wide),
        }
    }
}

/// A bank's bookings in time order. Requests reach the controller out of
/// time order (each is booked when the simulation issues it); like the
/// data bus, a bank lets a request ready earlier use the idle time before
/// one booked later, so long as the later one's row is not disturbed.
/// Refreshes are bookings too, placed as the bookings reach their time.
#[derive(Debug, Clone, Default)]
struct Bank {
    /// Oldest first, in one run of memory: the bookings a request looks
    /// at are a slice (the queue is read far more often than it changes).
    ops: Window<Op>,
    /// The time up to which bookings have been dropped.
    advanced: u64,
    /// Start of the bank's next refresh not yet booked; every booking ends
    /// before it.
    next_refresh: u64,
    /// What the queue looked like to the last request, where its booking
    /// went last: the next request arriving at the same time (the next
    /// access of a request, the next write of a batch) finds the same
    /// queue with that booking added, without looking again.
    last: Option<Queue>,
    /// The bookings that do not fit an [`Op`] (marked [`Op::WIDE`]), as
    /// they are; those of the bookings dropped are dropped with them.
    /// Empty in practice.
    wide: Vec<Wide>,
    /// Keeps every booking in `wide` (for the tests).
    #[cfg(test)]
    force_wide: bool,
}

/// The bookings ahead of a request arriving at `t`, as [`queue_start`]
/// finds them, in a bank of `len` bookings (the request's own the last).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Queue {
    t: u64,
    len: usize,
    /// Bookings busy at `t` whose requests arrived by then (the
    /// request's own included), up to `WINDOW + 1`.
    ahead: usize,
    /// The first booking busy at `t` (where `ahead` is at most `WINDOW`).
    first_busy: usize,
}

/// Requests ahead of a request in a bank's queue (arrived by its time and
/// not yet served) among which it may be placed (a controller's
/// reordering reaches as far as its queue; beyond that it serves in
/// order). Bookings of requests that arrive after it are not ahead of it:
/// it takes the idle time between them where it fits.
const WINDOW: usize = 16;

/// Bookings a bank holds before it drops those that ended before the
/// time given to [`Dram::advance`] (see [`Bank::advance`]). Dropping
/// reads the oldest bookings, far from the latest ones that a request
/// looks at, from memory the host has to fetch: on an H200 a bank keeps
/// some 160 bookings busy, so with 128 it dropped at almost every
/// request (9% of the host's time at 64 MiB); with 256, 10-15% faster on
/// the H200 and no slower on the Tesla cards, the same bookings.
const KEEP: usize = 256;

/// Bank timings in ps.
#[derive(Debug, Clone, Copy)]
struct BankTiming {
    t_rcd: u64,
    t_rp: u64,
    t_ras: u64,
    /// Column command to the next one in this bank: max(burst, tCCD_L).
    col: u64,
    /// A write's column command to the bank's next precharge.
    t_wr: u64,
    /// A quarter of tFAW: how far before its slot on the activation
    /// calendar an activation goes (four per tFAW).
    faw4: u64,
    /// Reads join their row's queued batch ([`DramSpec::first_ready`]).
    first_ready: bool,
    /// A bank's refresh interval and refresh time (0: no refresh).
    refi: u64,
    rfc: u64,
    /// Refresh intervals a bank's refresh may be put off while requests
    /// wait for the bank.
    postpone: u64,
}

impl BankTiming {
    /// What an access keeps its bank from precharging beyond its column
    /// slot: write recovery for a write, nothing for a read.
    fn recovery(&self, write: bool) -> u64 {
        if write {
            self.t_wr.saturating_sub(self.col)
        } else {
            0
        }
    }
}

/// Where [`Bank::book`] starts to look for room for a request arriving
/// at `t` among `ops` (which end in order): after the last booking whose
/// request arrived by `t`, where more than [`WINDOW`] bookings busy at
/// `t` arrived by then; else at the first booking busy at `t`. Also
/// returns how many busy bookings arrived by `t` (counted up to
/// `WINDOW + 1`).
#[inline]
fn queue_start(ops: &[Op], wide: &[Wide], t: u64) -> (usize, usize) {
    let (mut i, mut ahead, mut after) = (ops.len(), 0, 0);
    while i > 0 {
        let o = &ops[i - 1];
        if o.end <= t {
            break;
        }
        if o.arrived(wide) <= t {
            if ahead == 0 {
                after = i;
            }
            ahead += 1;
            if ahead > WINDOW {
                return (after, ahead);
            }
        }
        i -= 1;
    }
    (i, ahead)
}

/// Whether a bank's next refresh, not yet booked, goes before a request
/// arriving at `t`: what decides it, found once for the bank as it stands
/// (it changes only when a refresh is booked). Only a request booked
/// last can meet the refresh; it goes first if the bank was idle with the
/// refresh due before the request came, or if serving the request first
/// would put the refresh off past the `postpone` intervals it may wait
/// for the bank to fall idle.
#[derive(Debug, Clone, Copy)]
struct RefreshDue {
    /// The bank refreshes.
    on: bool,
    /// The bank was idle with the refresh due by `t`.
    idle_due: bool,
    /// The latest a booking may keep the bank's row open to (its
    /// precharge done) without putting the refresh off too long.
    deadline: u64,
}

impl RefreshDue {
    /// No refresh.
    const NONE: RefreshDue = RefreshDue {
        on: false,
        idle_due: false,
        deadline: 0,
    };

    /// For `bank` as it stands, a request arriving at `t`.
    #[inline]
    fn of(bank: &Bank, t: u64, k: &BankTiming) -> RefreshDue {
        RefreshDue::at(bank, bank.refresh_start(k), t, k)
    }

    /// [`RefreshDue::of`], the refresh able to begin at `start`.
    #[inline]
    fn at(bank: &Bank, start: u64, t: u64, k: &BankTiming) -> RefreshDue {
        RefreshDue {
            on: true,
            idle_due: t >= start,
            deadline: bank.next_refresh + k.postpone * k.refi,
        }
    }

    /// Whether the refresh goes before the request placed at `i` in
    /// `bank` (unchanged since `self` was found for it), ending at `end`
    /// with its row activated at `act`.
    #[inline]
    fn first(
        &self,
        bank: &Bank,
        i: usize,
        end: u64,
        act: u64,
        write: bool,
        k: &BankTiming,
    ) -> bool {
        self.on
            && i == bank.ops.len()
            && (self.idle_due
                || (end + k.recovery(write)).max(act + k.t_ras) + k.t_rp > self.deadline)
    }
}

impl Bank {
    /// `b` as the bank keeps it, for placing among its bookings; where it
    /// does not fit an [`Op`], it goes into `wide` too.
    ///
    /// `wide` is searched by `end`, which no two of the bank's wide
    /// bookings share: each booking begins no sooner than the one before
    /// it ends, and ends after it begins (an access by its column slot,
    /// at least 1 ps; a refresh by tRFC, which fits an `Op` when it is 0),
    /// and `wide` holds none of the bookings dropped (see
    /// [`Bank::drop_wide`]).
    ///
    /// An activation more than `u32::MAX` ps before `end` is kept as if it
    /// were that far before, where tRAS is at most `u32::MAX` ps (else the
    /// booking is wide): an activation only ever counts through
    /// `act + t_ras`, taken as the larger with a time no sooner than the
    /// end of the booking that holds it (its recovery, the end of a later
    /// booking), and both the activation and the time kept for it lie that
    /// far below: the larger is the same. A row hit takes the activation
    /// of the booking before, which ends sooner than it: kept from the
    /// hit's `end`, what was kept for that booking and what the activation
    /// was are kept alike.
    fn pack(&mut self, b: &Booking, k: &BankTiming) -> Op {
        let before = |x: u64| b.end.checked_sub(x).and_then(|d| u32::try_from(d).ok());
        let act = match b.end.checked_sub(b.act) {
            Some(d) if d <= u32::MAX as u64 => Some(d as u32),
            Some(_) if k.t_ras <= u32::MAX as u64 => Some(u32::MAX),
            _ => None,
        };
        let flags = [
            (b.hit, Op::HIT),
            (b.write, Op::WRITE),
            (b.refresh, Op::REFRESH),
            (b.room, Op::ROOM),
            (b.room_to_open, Op::ROOM_TO_OPEN),
        ]
        .iter()
        .fold(0, |f, &(on, bit)| if on { f | bit } else { f });
        #[cfg(test)]
        let fits = !self.force_wide;
        #[cfg(not(test))]
        let fits = true;
        match (before(b.begin), before(b.arrived), act, Op::row_code(b.row)) {
            (Some(begin), Some(arrived), Some(act), Some(row)) if fits => Op {
                end: b.end,
                begin,
                arrived,
                act,
                bits: flags | row << Op::ROW_SHIFT,
            },
            _ => {
                self.wide.push(Wide {
                    end: b.end,
                    begin: b.begin,
                    arrived: b.arrived,
                    act: b.act,
                    row: b.row,
                });
                Op {
                    end: b.end,
                    begin: 0,
                    arrived: 0,
                    act: 0,
                    bits: flags | Op::WIDE,
                }
            }
        }
    }

    /// Forgets the entries of `wide` whose bookings have been dropped
    /// (those that end before the first booking kept).
    #[inline]
    fn drop_wide(&mut self) {
        if !self.wide.is_empty() {
            let first = self.ops.first().map_or(u64::MAX, |o| o.end);
            self.wide.retain(|w| w.end >= first);
        }
    }

    /// The bookings, oldest first.
    #[cfg(test)]
    fn bookings(&self) -> Vec<Booking> {
        self.ops.iter().map(|o| o.unpack(&self.wide)).collect()
    }

    /// Books a column access (a write if `write`, one that closes its row
    /// after it if `close`) to `row` ready at `t`; the
    /// activation, if any, is placed on `acts` (four per tFAW).
    /// `bus_cas(c)` is when the data bus lets a column command wanted at
    /// `c` go (its burst waits for room): the booking spans the bank until
    /// then, so that no later booking of the bank overlaps it. Returns the
    /// time the column command is wanted (what the bus is then booked
    /// with) and whether the row was open.
    #[allow(clippy::too_many_arguments)]
    fn book(
        &mut self,
        row: u64,
        write: bool,
        close: bool,
        t: u64,
        k: &BankTiming,
        acts: &mut Calendar,
        bus_cas: impl Fn(u64) -> u64,
    ) -> (u64, bool) {
        // What decides whether the next refresh goes first: the same
        // until a refresh is booked.
        let mut due = if k.refi > 0 {
            let start = self.skip_refreshes(t, k);
            RefreshDue::at(self, start, t, k)
        } else {
            RefreshDue::NONE
        };
        // Bookings end in order. Of those still busy at `t`, the ones
        // whose request arrived by `t` are ahead of this one in the queue:
        // with more than `WINDOW` of them, it is served after the last of
        // them (first come, first served), else the scheduler looks for
        // idle time from the first busy booking. Bookings of requests that
        // arrive after `t` (booked earlier, as a request that waited
        // upstream is) are not ahead of it: it goes into the idle time
        // between them where it fits, and behind them only where it does
        // not. Found from the last booking back: the first busy one, or
        // the last ahead once more than `WINDOW` are.
        // The request before, arriving at the same time, was booked last:
        // its booking is busy at `t` and arrived by then, the last one,
        // and the queue is otherwise as it found it.
        let n = self.ops.len();
        let (start, ahead) = match self.last {
            Some(q) if q.t == t && q.len == n => {
                if q.ahead > WINDOW {
                    (n, q.ahead)
                } else {
                    (q.first_busy, q.ahead)
                }
            }
            _ => queue_start(&self.ops, &self.wide, t),
        };
        self.last = None;
        let mut i = start;
        let joins = k.first_ready && !write && self.joins_batch(row, t);
        loop {
            // Between two bookings, a request needs the gap after the first
            // (from `t` on) to hold at least its column slot: where it does
            // not, the placement below would not fit either (every way it
            // can start is at or after that gap's start), so skip ahead.
            // From the place after the first looked at, the booking before
            // each is in the window, and its gap holds the slot where it has
            // `room` and begins no sooner than a slot after `t`. Where the
            // request would open its row there (a row miss, or after a
            // refresh), the gap must hold its tRCD too (`room_to_open`).
            let (ops, wide) = (&self.ops[..], &self.wide[..]);
            if let Some(o) = ops.get(i) {
                let g0 = match i.checked_sub(1) {
                    Some(j) => t.max(ops[j].end),
                    None => t,
                };
                if g0 + k.col > o.begin(wide) {
                    i += 1;
                    while let Some(o) = ops.get(i) {
                        if o.room() {
                            let p = &ops[i - 1];
                            if p.refresh() || p.row(wide) != row {
                                if o.room_to_open() && t + k.t_rcd + k.col <= o.begin(wide) {
                                    break;
                                }
                            } else if t + k.col <= o.begin(wide) {
                                break;
                            }
                        }
                        i += 1;
                    }
                }
            }
            let prev = i.checked_sub(1).map(|j| self.ops[j].unpack(&self.wide));
            // Served in its row's batch: the bank's work grows by one
            // column access, and the row left open last is unchanged.
            let row = match (joins && i == self.ops.len(), prev) {
                (true, Some(p)) => p.row,
                _ => row,
            };
            let g0 = prev.map_or(t, |p| t.max(p.end));
            // `act_at`: the earliest activation, for a row miss.
            let (cas, hit, pre, act_at) = match prev {
                Some(p) if p.refresh => (g0 + k.t_rcd, false, g0, g0),
                Some(p) if p.row == row => (g0, true, g0, 0),
                // Closed by the access before (auto-precharge): its
                // precharge went as early as it could.
                Some(p) if p.row == CLOSED => {
                    let act_at = g0.max(p.recover(k).max(p.act + k.t_ras) + k.t_rp);
                    (act_at + k.t_rcd, false, act_at, act_at)
                }
                Some(p) => {
                    let pre = g0.max(p.act + k.t_ras).max(p.recover(k));
                    (pre + k.t_rp + k.t_rcd, false, pre, pre + k.t_rp)
                }
                None => (g0 + k.t_rcd, false, g0, g0),
            };
            // The row this booking leaves open was activated at `act`
            // (for tRAS before a refresh's precharge).
            let act = if hit {
                prev.map_or(0, |p| p.act)
            } else {
                act_at
            };
            // `act`: when this booking's row is activated (tRAS runs from it).
            let wide = &self.wide[..];
            let fits = |end: u64, act: u64| match self.ops.get(i) {
                None => true,
                // A refresh: the bank's row is closed before it begins.
                Some(n) if n.refresh() => {
                    (end + k.recovery(write)).max(act + k.t_ras) + k.t_rp <= n.begin(wide)
                }
                // The next booking keeps its row (it finds this one's
                // open, or precharges after this one's recovery), and
                // starts after this one ends.
                Some(n) if n.hit() => end <= n.begin(wide) && n.row(wide) == row && !close,
                Some(n) => end + k.recovery(write) <= n.begin(wide),
            };
            // Last in line and reaching past the next refresh not yet
            // booked: book that refresh, and look again.
            if due.first(self, i, cas + k.col, act, write, k) {
                self.book_refresh(k);
                due = RefreshDue::of(self, t, k);
                continue;
            }
            // The bank's own timing first; the activation window and the
            // bus only move the column command later.
            if !fits(cas + k.col, act) {
                i += 1;
                continue;
            }
            // Where the column command can go: after the activation that
            // four-per-tFAW allows, and when the data bus has room for its
            // burst. The booking must fit with that time, or the bank would
            // hold two accesses at once.
            let want = if hit {
                cas
            } else {
                acts.peek(act_at, 1) - k.faw4 + k.t_rcd
            };
            let cas = bus_cas(want);
            // A miss's activation is where the window lets it go, which may
            // be later than the earliest one checked above: tRAS before a
            // refresh runs from that one.
            let act = if hit { act } else { want - k.t_rcd };
            if due.first(self, i, cas + k.col, act, write, k) {
                self.book_refresh(k);
                due = RefreshDue::of(self, t, k);
                continue;
            }
            if !fits(cas + k.col, act) {
                i += 1;
                continue;
            }
            let act = if hit {
                prev.map_or(0, |p| p.act)
            } else {
                acts.reserve(act_at, 1) - k.faw4
            };
            let (room, room_to_open) = prev.map_or((true, true), |p| Booking::rooms(p.end, pre, k));
            let op = self.pack(
                &Booking {
                    begin: pre,
                    end: cas + k.col,
                    row: if close { CLOSED } else { row },
                    act,
                    hit,
                    write,
                    refresh: false,
                    room,
                    room_to_open,
                    arrived: t,
                },
                k,
            );
            if i == self.ops.len() {
                self.ops.push(op);
                // Queued behind every busy booking that had arrived, or
                // from the first busy one on: the next request at `t` finds
                // this one ahead of it too.
                if self.ops.len() == n + 1 {
                    self.last = Some(Queue {
                        t,
                        len: n + 1,
                        ahead: (ahead + 1).min(WINDOW + 1),
                        first_busy: start,
                    });
                }
            } else {
                self.ops.insert(i, op);
                let next = &mut self.ops.slice_mut()[i + 1];
                next.set_rooms(Booking::rooms(op.end, next.begin(&self.wide), k));
            }
            return (want, hit);
        }
    }

    /// When the bank's next refresh can begin: when it is due, and the
    /// bank idle (its last booking over, its row closed).
    fn refresh_start(&self, k: &BankTiming) -> u64 {
        let idle = self.ops.last().map_or(0, |l| {
            if l.refresh() {
                l.end
            } else {
                (l.end + k.recovery(l.write())).max(l.act(&self.wide) + k.t_ras) + k.t_rp
            }
        });
        self.next_refresh.max(idle)
    }

    /// Books the next refresh, after every booking.
    fn book_refresh(&mut self, k: &BankTiming) {
        self.last = None;
        let begin = self.refresh_start(k);
        let (room, room_to_open) = self
            .ops
            .last()
            .map_or((true, true), |l| Booking::rooms(l.end, begin, k));
        let op = self.pack(
            &Booking {
                begin,
                end: begin + k.rfc,
                row: u64::MAX,
                act: begin,
                hit: false,
                write: false,
                refresh: true,
                room,
                room_to_open,
                arrived: begin,
            },
            k,
        );
        self.ops.push(op);
        self.next_refresh += k.refi;
    }

    /// Books the refreshes that a bank idle before `t` has made by then,
    /// those put off first, back to back: of the ones made while it stood
    /// idle with none owed, only the last is booked, as all the bank keeps
    /// of them is that no row is open. Returns when the next refresh can
    /// begin ([`Bank::refresh_start`]) after those.
    fn skip_refreshes(&mut self, t: u64, k: &BankTiming) -> u64 {
        loop {
            let s = self.refresh_start(k);
            if s + k.rfc > t {
                return s;
            }
            if s == self.next_refresh {
                self.next_refresh += (t - s - k.rfc) / k.refi * k.refi;
            }
            self.book_refresh(k);
        }
    }

    /// Hints the host CPU to bring the bookings a request looks at (the
    /// last `WINDOW + 1`) into its caches.
    fn prefetch(&self) {
        let n = self.ops.len();
        prefetch_range(&self.ops[n.saturating_sub(WINDOW + 1)..]);
    }

    /// Whether a read of `row` arriving at `t` joins a batch of that row
    /// already queued (first-ready scheduling): a read booking of `row`
    /// that is busy or open at `t` (from the booking current at `t` on)
    /// and whose row is still to be closed by a later booking not yet
    /// begun at `t`. An FR-FCFS controller serves such a read with
    /// the row's other hits, before the queued row miss that follows them;
    /// here its column access goes last (the replies already handed out
    /// keep their times) and costs what a hit costs.
    fn joins_batch(&self, row: u64, t: u64) -> bool {
        let (n, w) = (self.ops.len(), &self.wide[..]);
        match self.ops.last() {
            Some(l) if l.row(w) != row && l.end > t && !l.refresh() => {}
            _ => return false,
        }
        // From the last booking back to the one current at `t` (the one
        // before the first still busy then; bookings end in order).
        (0..n - 1)
            .rev()
            .take_while(|&k| self.ops[k + 1].end > t)
            .find(|&k| self.ops[k].row(w) == row)
            .is_some_and(|k| !self.ops[k].write() && self.ops[k + 1].begin(w) > t)
    }

    /// Forgets bookings that ended before `t`, keeping the latest of them
    /// (its row is the one open at `t`), before booking a request that
    /// arrives at `now`. While `now` is not before `t`, the request cannot
    /// see them: [`Bank::book`] looks at the bookings from the last one
    /// back to the last that ended by `now`, and
    /// [`Bank::joins_batch`] stops at a booking that ended by `now`. While
    /// more than `WINDOW + 1` bookings end after `t` they are then left in
    /// place (up to `KEEP` bookings in all), and dropped later up to a
    /// later time, which drops the same ones: the front of a long queue is
    /// not visited on every request.
    fn advance(&mut self, t: u64, now: u64) {
        if t <= self.advanced {
            return;
        }
        let n = self.ops.len();
        if now >= t && n > WINDOW + 1 && n < KEEP && self.ops[n - 1 - WINDOW].end > t {
            return;
        }
        self.advanced = t;
        // Those before the last booking that ended by `t` (few: the
        // bookings are dropped as their time passes).
        let ops = self.ops.slice();
        let ended = ops.iter().skip(1).take_while(|o| o.end <= t).count();
        if ended > 0 {
            self.ops.drop_front(ended);
            self.last = None;
            self.drop_wide();
        }
    }
}

#[derive(Debug, Clone)]
struct Channel {
    bus: Calendar,
    acts: Calendar,
    last_write: bool,
    banks: Vec<Bank>,
    /// Writes accepted and not yet issued: (channel, bank, row), and
    /// whether the write closes its row.
    writes: Vec<((usize, usize, u64), bool)>,
    /// Read scheduler queue entries.
    reads_q: Pool,
    /// Latest acceptance time of the writes queued now.
    batch_at: u64,
    /// Time writes waited for room in the write queue, ps.
    write_wait_ps: u64,
    busy_ps: u64,
    /// The time up to which the channel's bookings have been forgotten.
    advanced: u64,
}

impl Channel {
    /// The channel, having forgotten its bookings (not its banks') before `t`.
    #[inline]
    fn catch_up(&mut self, t: u64) -> &mut Channel {
        if self.advanced < t {
            self.advanced = t;
            self.bus.advance(t);
            self.acts.advance(t);
            self.reads_q.advance(t);
        }
        self
    }
}

/// Counters of the DRAM system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DramStats {
    /// Bytes read at the pins.
    pub bytes_read: u64,
    /// Bytes written at the pins.
    pub bytes_written: u64,
    /// Accesses that found their row open.
    pub row_hits: u64,
    /// Accesses that had to activate a row.
    pub row_misses: u64,
    /// Sum over channels of the time the data bus was busy, ps.
    pub busy_ps: u64,
    /// Sum over requests of the time they waited for a queue entry, ps.
    pub queue_wait_ps: u64,
    /// Partial atoms written by read-modify-write.
    pub read_modify_writes: u64,
}

/// The memory controllers and their DRAM: per channel a read queue, a
/// write queue drained in batches, banks with row buffers and one data bus.
#[derive(Debug, Clone)]
pub struct Dram {
    spec: DramSpec,
    ch: Vec<Channel>,
    burst: u64,
    bank: BankTiming,
    t_cl: u64,
    t_wtr: u64,
    t_rtw: u64,
    il_shift: u32,
    il_mask: u64,
    row_shift: u32,
    bank_shift: u32,
    bank_mask: u64,
    atom_shift: u32,
    atom_mask: u64,
    group_shift: u32,
    group_mask: u64,
    /// Division by the number of channels.
    by_channels: Divisor,
    stats: DramStats,
    /// The latest time given to [`Dram::advance`]: each channel and bank
    /// forgets its bookings before it when it is next used (the same
    /// bookings as forgetting them at once, without visiting every bank).
    advanced: u64,
    /// The banks' bookings outgrow the host's caches (a bank keeps up to a
    /// few KiB): bring a bank's into them before booking it.
    prefetch: bool,
    /// The interleave unit mapped last, its channel and its number within
    /// the channel.
    last_chunk: std::cell::Cell<Option<(u64, u64, u64)>>,
}

/// The number folded in 7-bit pieces (each piece times 31 per step up):
/// every bit of it moves the result.
#[inline]
fn fold7(mut x: u64) -> u64 {
    let mut h = 0u64;
    while x != 0 {
        h = h.wrapping_mul(31).wrapping_add(x & 0x7f);
        x >>= 7;
    }
    h
}

/// The XOR of the `bits`-bit pieces of `x` (`0 < bits < 64`).
#[inline]
fn xor_pieces(mut x: u64, bits: u32) -> u64 {
    let mask = (1u64 << bits) - 1;
    if bits.is_power_of_two() {
        // The pieces tile the 64 bits: folding the halves onto each other
        // down to one piece XORs them all.
        let mut w = 64;
        while w > bits {
            w /= 2;
            x ^= x >> w;
        }
        x & mask
    } else {
        let mut h = 0;
        while x != 0 {
            h ^= x & mask;
            x >>= bits;
        }
        h
    }
}

fn ps(ns: f64) -> u64 {
    (ns * 1000.0).round() as u64
}

impl Dram {
    /// Idle DRAM with all rows closed and empty queues. `spec` must be valid.
    pub fn new(spec: DramSpec) -> Dram {
        let burst = spec.burst_ps();
        let ch = Channel {
            // Eight bursts per interval: fine enough for latency, coarse
            // enough that a stream fills whole intervals.
            bus: Calendar::new(8 * burst, 8 * burst),
            // Four activations per tFAW.
            acts: Calendar::new(ps(spec.t_faw_ns).max(1), 4),
            last_write: false,
            banks: vec![Bank::default(); spec.banks as usize],
            writes: Vec::with_capacity(spec.write_drain as usize),
            // Entries counted in intervals of two bursts.
            reads_q: Pool::new(spec.read_queue, 2 * burst),
            batch_at: 0,
            write_wait_ps: 0,
            busy_ps: 0,
            advanced: 0,
        };
        let mut ch = vec![ch; spec.channels as usize];
        // Refreshes spread evenly over the interval: bank b of channel c
        // first at (b * channels + c) / (banks * channels) of it.
        let refi = ps(spec.t_refi_ns);
        let n = spec.banks as u64 * spec.channels as u64;
        for (c, chan) in ch.iter_mut().enumerate() {
            for (b, bank) in chan.banks.iter_mut().enumerate() {
                bank.next_refresh = (b as u64 * spec.channels as u64 + c as u64) * refi / n;
            }
        }
        Dram {
            ch,
            burst: spec.burst_ps(),
            bank: BankTiming {
                t_rcd: ps(spec.t_rcd_ns),
                t_rp: ps(spec.t_rp_ns),
                t_ras: ps(spec.t_ras_ns),
                col: burst.max(ps(spec.t_ccd_l_ns)),
                t_wr: ps(spec.t_wr_ns),
                faw4: ps(spec.t_faw_ns).max(1) / 4,
                first_ready: spec.first_ready,
                refi: ps(spec.t_refi_ns),
                rfc: ps(spec.t_rfc_ns),
                postpone: spec.refresh_postpone as u64,
            },
            t_cl: ps(spec.t_cl_ns),
            t_wtr: ps(spec.t_wtr_ns),
            t_rtw: ps(spec.t_rtw_ns),
            il_shift: spec.interleave_bytes.trailing_zeros(),
            il_mask: spec.interleave_bytes as u64 - 1,
            row_shift: spec.row_bytes.trailing_zeros(),
            bank_shift: (spec.banks / spec.bank_groups).trailing_zeros(),
            bank_mask: (spec.banks / spec.bank_groups) as u64 - 1,
            atom_shift: spec
                .group_bytes
                .unwrap_or(spec.access_bytes)
                .trailing_zeros(),
            atom_mask: spec.group_bytes.unwrap_or(spec.access_bytes) as u64 - 1,
            group_shift: spec.bank_groups.trailing_zeros(),
            group_mask: spec.bank_groups as u64 - 1,
            by_channels: Divisor::new(spec.channels as u64),
            prefetch: spec.channels as u64 * spec.banks as u64 * (KEEP * size_of::<Op>()) as u64
                / 2
                > HOST_CACHE_BYTES,
            spec,
            stats: DramStats::default(),
            advanced: 0,
            last_chunk: std::cell::Cell::new(None),
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
        s.queue_wait_ps = self
            .ch
            .iter()
            .map(|c| c.reads_q.wait_ps() + c.write_wait_ps)
            .sum();
        s
    }

    /// When the last burst booked so far leaves the pins.
    pub fn last_done(&self) -> u64 {
        self.ch.iter().map(|c| c.bus.last_done()).max().unwrap_or(0)
    }

    /// The channel of interleave unit `chunk`, the `run`-th run of
    /// `channels` units.
    #[inline]
    fn channel_of(&self, chunk: u64, run: u64) -> u64 {
        match self.spec.channel_hash {
            ChannelHash::Linear => self.by_channels.rem(chunk),
            ChannelHash::XorFold => {
                // Fold the chunk number in 7-bit pieces: every address bit
                // above the interleave affects the channel.
                self.by_channels.rem(fold7(chunk) ^ chunk)
            }
            ChannelHash::Rotate => self.by_channels.rem(chunk.wrapping_add(fold7(run))),
        }
    }

    /// Channel, bank and row of an address.
    #[inline]
    pub fn map(&self, addr: u64) -> (usize, usize, u64) {
        let chunk = addr >> self.il_shift;
        // The accesses of a request mostly share their interleave unit.
        let (channel, run) = match self.last_chunk.get() {
            Some((last, channel, run)) if last == chunk => (channel, run),
            _ => {
                let run = self.by_channels.div(chunk);
                let c = self.channel_of(chunk, run);
                self.last_chunk.set(Some((chunk, c, run)));
                (c, run)
            }
        };
        let local = (run << self.il_shift) | (addr & self.il_mask);
        // Consecutive units of `group_bytes` go to consecutive bank groups
        // (so that a stream is not held to one column command per tCCD_L);
        // within a group,
        // a row holds row_bytes of consecutive group addresses, and the bank
        // bits are XOR-ed with the row bits.
        let atom = local >> self.atom_shift;
        let mut group = atom & self.group_mask;
        if self.spec.group_hash && self.group_shift > 0 {
            group ^= xor_pieces(atom >> self.group_shift, self.group_shift);
        }
        let in_group = ((atom >> self.group_shift) << self.atom_shift) | (local & self.atom_mask);
        let page = in_group >> self.row_shift;
        let row = page >> self.bank_shift;
        let bank = (((page ^ row) & self.bank_mask) << self.group_shift) | group;
        (channel as usize, bank as usize, row)
    }

    /// Hints the host CPU to bring the state a read of `addr` will use
    /// (its channel and the bank's latest bookings) into its caches.
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        if !self.prefetch {
            return;
        }
        let (c, b, _) = self.map(addr);
        let ch = &self.ch[c];
        prefetch_range(std::slice::from_ref(ch));
        ch.banks[b].prefetch();
    }

    /// Channel `c`, having forgotten its bookings before [`Dram::advance`]'s time.
    #[inline]
    fn channel(&mut self, c: usize) -> &mut Channel {
        self.ch[c].catch_up(self.advanced)
    }

    /// Books one access to `(channel, bank, row)` at `now`; `close`: a
    /// write that leaves its row closed.
    fn access_at(
        &mut self,
        (c, b, row): (usize, usize, u64),
        now: u64,
        write: bool,
        close: bool,
    ) -> u64 {
        let t = self.advanced;
        let ch = self.ch[c].catch_up(t);
        ch.banks[b].advance(t, now);
        let turnaround = match (ch.last_write, write) {
            (true, false) => self.t_wtr,
            (false, true) => self.t_rtw,
            _ => 0,
        };
        let (t_cl, burst) = (self.t_cl, self.burst);
        let bus = &ch.bus;
        let (cas, hit) =
            ch.banks[b].book(row, write, close, now, &self.bank, &mut ch.acts, |cas| {
                bus.peek(cas + t_cl, burst + turnaround) - burst - t_cl
            });
        if hit {
            self.stats.row_hits += 1;
        } else {
            self.stats.row_misses += 1;
        }
        // The data bus: a turnaround costs bus time; the burst takes the
        // first free slot after the data is ready (the one the booking was
        // placed by, so the bank's booking already ends with its burst).
        let done = ch.bus.reserve(cas + self.t_cl, self.burst + turnaround);
        ch.busy_ps += self.burst;
        ch.last_write = write;
        done
    }

    /// First atom address and number of atoms covering `bytes` at `addr`.
    fn atoms(&self, addr: u64, bytes: u32) -> (u64, u64) {
        let a = self.spec.access_bytes as u64;
        let first = addr / a * a;
        (first, (addr + bytes.max(1) as u64).div_ceil(a) - addr / a)
    }

    /// Reads `bytes` (rounded up to whole accesses) at `addr`, arriving at
    /// the controller at `now`; each access waits for a read-queue entry of
    /// its channel. Returns when the last byte has crossed the pins.
    pub fn read(&mut self, addr: u64, bytes: u32, now: u64) -> u64 {
        let (first, n) = self.atoms(addr, bytes);
        let a = self.spec.access_bytes as u64;
        let mut done = now;
        // One queue entry per request and channel: the accesses of a request
        // that stay in one channel wait in it together.
        let mut held: Option<(usize, u64)> = None;
        let mut end = now;
        for i in 0..n {
            let m = self.map(first + i * a);
            let at = match held {
                Some((c, at)) if c == m.0 => at,
                _ => {
                    if let Some((c, at)) = held {
                        self.ch[c].reads_q.release(at, end);
                    }
                    let at = self.channel(m.0).reads_q.acquire(now);
                    held = Some((m.0, at));
                    end = at;
                    at
                }
            };
            let d = self.access_at(m, at, false, false);
            end = end.max(d);
            done = done.max(d);
        }
        if let Some((c, at)) = held {
            self.ch[c].reads_q.release(at, end);
        }
        self.stats.bytes_read += n * a;
        done
    }

    /// Hands a write of `bytes` (whole accesses) at `addr` to the
    /// controller at `now`; returns when the controller has accepted it.
    /// The write queue holds `write_drain` writes per channel: a write is
    /// accepted once the work on its channel's bus ahead of it (booked, or
    /// queued) has fallen below that many bursts. `partial`: the bytes do not cover
    /// whole atoms, which a [`PartialWrite::ReadModifyWrite`] memory first
    /// reads. `last`: the request's last access (with
    /// [`DramSpec::close_after_write`], it closes its row). Writes are
    /// issued in batches of `write_drain` per channel; [`Dram::drain`]
    /// issues what is left.
    pub fn write(&mut self, addr: u64, bytes: u32, partial: bool, last: bool, now: u64) -> u64 {
        let (first, n) = self.atoms(addr, bytes);
        let a = self.spec.access_bytes as u64;
        let rmw = partial && self.spec.partial_write == PartialWrite::ReadModifyWrite;
        let mut accepted = now;
        for i in 0..n {
            let close = last && i + 1 == n && self.spec.close_after_write;
            accepted = accepted.max(self.write_atom(first + i * a, true, rmw, close, now));
        }
        accepted
    }

    /// Writes back the atoms `dirty` (bit `i`: the `i`-th atom from `addr`)
    /// of the write unit at `addr` (`DramSpec::write_unit_bytes`, aligned),
    /// arriving at `now`. `partial`: the atoms the cache does not hold
    /// whole (a dirty one only partly written, a clean one absent).
    ///
    /// The clean atoms the cache holds take their slots too, masked: a
    /// unit held whole costs the bus and the bank the same whether one
    /// atom of it is dirty or all are (`tools/measure/wshape`). A clean
    /// atom the cache does not hold takes no slot: a dirty atom alone in
    /// the cache goes as one atom (`tools/measure/l2src`, where a masked
    /// slot beside every lone sector would need more than the pins'
    /// peak). Only the dirty atoms count as written. `last`: this unit
    /// ends the request (see [`Dram::write`]). Returns when the controller
    /// has accepted it.
    pub fn write_unit(&mut self, addr: u64, dirty: u8, partial: u8, last: bool, now: u64) -> u64 {
        let a = self.spec.access_bytes as u64;
        let n = (self.spec.write_unit() as u64 / a).clamp(1, 8);
        let rmw_mode = self.spec.partial_write == PartialWrite::ReadModifyWrite;
        // The atoms that go: the dirty ones and the clean ones held.
        let sent = (dirty | !partial) as u32 & ((1u32 << n) - 1);
        if sent == 0 {
            return now;
        }
        let final_atom = 31 - sent.leading_zeros() as u64;
        let mut accepted = now;
        for i in 0..n {
            if sent >> i & 1 == 0 {
                continue;
            }
            let d = dirty >> i & 1 == 1;
            let rmw = d && rmw_mode && partial >> i & 1 == 1;
            let close = last && i == final_atom && self.spec.close_after_write;
            accepted = accepted.max(self.write_atom(addr + i * a, d, rmw, close, now));
        }
        accepted
    }

    /// Queues the write of the atom at `addr`, counted as written where
    /// `count`, read first where `rmw`; `close`: its row closes after it.
    /// Returns when the controller has accepted it.
    fn write_atom(&mut self, addr: u64, count: bool, rmw: bool, close: bool, now: u64) -> u64 {
        let a = self.spec.access_bytes as u64;
        let window = self.spec.write_drain as u64 * self.burst;
        let m = self.map(addr);
        let c = m.0;
        // Work ahead of this write: what the bus has booked, and the
        // writes queued but not yet issued.
        let ahead = self.channel(c).bus.booked_within(now, 4 * window)
            + self.ch[c].writes.len() as u64 * self.burst;
        let mut at = now + ahead.saturating_sub(window);
        self.ch[c].write_wait_ps += at - now;

        if rmw {
            // The merge needs the old atom first.
            at = self.access_at(m, at, false, false);
            self.stats.bytes_read += a;
            self.stats.read_modify_writes += 1;
        }
        self.ch[c].writes.push((m, close));
        self.ch[c].batch_at = self.ch[c].batch_at.max(at);
        if count {
            self.stats.bytes_written += a;
        }
        if self.ch[c].writes.len() >= self.spec.write_drain as usize {
            let t = self.ch[c].batch_at;
            self.drain_channel(c, t);
        }
        at
    }

    fn drain_channel(&mut self, c: usize, now: u64) {
        let mut q = std::mem::take(&mut self.ch[c].writes);
        // The controller issues the batch row by row (first-ready: writes
        // to an open row go together), so a batch pays one activation per
        // distinct bank and row, not one per change of row in arrival order.
        q.sort_by_key(|&((_, b, row), _)| (b, row));
        // Bring the bookings of every bank the batch goes to into the
        // host's caches first, so that fetching them overlaps.
        if self.prefetch {
            for (w, _) in &q {
                self.ch[c].banks[w.1].prefetch();
            }
        }
        for &(w, close) in &q {
            self.access_at(w, now, true, close);
        }
        self.ch[c].writes = q;
        self.ch[c].writes.clear();
        self.ch[c].batch_at = 0;
    }

    /// Forgets bookings before `t`: no request from now on arrives
    /// earlier.
    pub fn advance(&mut self, t: u64) {
        self.advanced = self.advanced.max(t);
    }

    /// Issues every queued write at `now` (the end of a kernel); returns
    /// when the last burst of any kind has left the pins.
    pub fn drain(&mut self, now: u64) -> u64 {
        for c in 0..self.ch.len() {
            if !self.ch[c].writes.is_empty() {
                self.drain_channel(c, now);
            }
        }
        self.last_done()
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
            group_bytes: None,
            group_hash: false,
            row_bytes: 2048,
            t_rcd_ns: 10.0,
            t_rp_ns: 10.0,
            t_cl_ns: 10.0,
            t_ras_ns: 30.0,
            t_wtr_ns: 5.0,
            t_rtw_ns: 2.0,
            t_wr_ns: 0.0,
            t_ccd_l_ns: 2.0,
            t_faw_ns: 4.0,
            write_drain: 4,
            read_queue: 8,
            first_ready: false,
            t_refi_ns: 0.0,
            t_rfc_ns: 0.0,
            refresh_postpone: 0,
            close_after_write: false,
            partial_write: PartialWrite::Masked,
            write_unit_bytes: None,
            ecc_overhead: 0.0,
        }
    }

    /// Per run of `channels` consecutive interleave units (a unit's place
    /// within its channel is its run's number), how many channels the
    /// run's units go to, under `hash`.
    fn channels_per_run(hash: ChannelHash, channels: u32, runs: u64) -> Vec<usize> {
        let d = Dram::new(DramSpec {
            channels,
            channel_hash: hash,
            interleave_bytes: 256,
            ..spec()
        });
        (0..runs)
            .map(|r| {
                let mut ch: Vec<usize> = (0..channels as u64)
                    .map(|i| d.map((r * channels as u64 + i) * 256).0)
                    .collect();
                ch.sort_unstable();
                ch.dedup();
                ch.len()
            })
            .collect()
    }

    #[test]
    fn a_rotated_channel_map_gives_every_unit_of_a_run_its_own_channel() {
        for channels in [6, 8, 12, 94] {
            let n = channels_per_run(ChannelHash::Rotate, channels, 64);
            assert!(
                n.iter().all(|&k| k == channels as usize),
                "{channels}: {n:?}"
            );
            // Power-of-two strides still spread: every 8th unit of 64 runs.
            let d = Dram::new(DramSpec {
                channels,
                channel_hash: ChannelHash::Rotate,
                interleave_bytes: 256,
                ..spec()
            });
            let mut strided: Vec<usize> = (0..64 * channels as u64)
                .step_by(8)
                .map(|u| d.map(u * 256).0)
                .collect();
            strided.sort_unstable();
            strided.dedup();
            assert!(
                strided.len() * 2 >= channels as usize,
                "{channels}: {}",
                strided.len()
            );
        }
    }

    /// DEVIATIONS.md 26: the folded map lets two units of one run share a
    /// channel and their place in it (one bank row for both).
    #[test]
    fn the_folded_channel_map_lets_two_units_of_a_run_share_a_row() {
        let n = channels_per_run(ChannelHash::XorFold, 94, 64);
        assert!(
            n.iter().any(|&k| k < 94),
            "the gap of DEVIATIONS.md 26 is closed: update it"
        );
    }

    /// A controller that writes 64-byte units: a unit with one dirty
    /// atom takes the bus as long as one with both (the other masked), and
    /// counts only the dirty bytes (tools/measure/wshape).
    #[test]
    fn a_lone_dirty_atom_of_a_write_unit_takes_the_whole_unit() {
        let unit = DramSpec {
            write_unit_bytes: Some(64),
            group_bytes: Some(256),
            ..spec()
        };
        let bus_after = |dirty: u8, partial: u8| {
            let mut d = Dram::new(unit.clone());
            for u in 0..64u64 {
                d.write_unit(u * 64 * 2 * 4, dirty, partial, true, 0);
            }
            let end = d.drain(0);
            (d.stats().busy_ps, d.stats().bytes_written, end)
        };
        let (lone, lone_bytes, lone_end) = bus_after(0b01, 0);
        let (pair, pair_bytes, pair_end) = bus_after(0b11, 0);
        assert_eq!(lone, pair, "the same bus time");
        assert_eq!(lone_end, pair_end);
        assert_eq!((lone_bytes, pair_bytes), (64 * 32, 64 * 64));
        // One atom a unit where the unit is the atom: half the bus time.
        let mut d = Dram::new(spec());
        for u in 0..64u64 {
            d.write(u * 64 * 2 * 4, 32, false, true, 0);
        }
        d.drain(0);
        let one = d.stats().busy_ps;
        assert_eq!(2 * one, pair);
        // A lone dirty atom whose neighbour the cache does not hold goes
        // alone: the bus time of one atom, whichever of the two it is.
        for (dirty, absent) in [(0b01, 0b10), (0b10, 0b01)] {
            let (alone, alone_bytes, _) = bus_after(dirty, absent);
            assert_eq!((alone, alone_bytes), (one, 64 * 32));
        }
        for refused in [512, 256] {
            // Past the row, or past one L2 line (whose write-back sends
            // the units): refused, not written across the next line.
            assert!(DramSpec {
                write_unit_bytes: Some(refused),
                group_bytes: Some(256),
                ..spec()
            }
            .validate()
            .is_err());
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
        let other = other_row(&d, 0);
        let t1 = d.read(0, 32, 0);
        let t2 = d.read(other, 32, t1);
        // PRE waits for tRAS after the first ACT (at 0): 30 ns, then tRP + tRCD + tCL + burst.
        assert_eq!(t2, 30_000 + 10_000 + 10_000 + 10_000 + 2_000);
    }

    /// An address on the channel and bank of `addr`, in another row.
    fn other_row(d: &Dram, addr: u64) -> u64 {
        let (c0, b0, r0) = d.map(addr);
        (1..1u64 << 20)
            .map(|k| k * 256)
            .find(|&a| {
                let (c, b, r) = d.map(a);
                c == c0 && b == b0 && r != r0
            })
            .unwrap()
    }

    /// `spec()` with each bank refreshed for 100 ns once per 1000 ns; bank
    /// 0 of channel 0 (address 0) is refreshed first, from 0 on.
    fn refreshed() -> Dram {
        let d = Dram::new(DramSpec {
            t_refi_ns: 1000.0,
            t_rfc_ns: 100.0,
            ..spec()
        });
        assert_eq!(d.map(0), (0, 0, 0));
        assert_eq!(d.map(32), (0, 0, 0));
        d
    }

    #[test]
    fn a_bank_takes_no_access_while_refreshed() {
        let mut d = refreshed();
        // Arriving at 50 ns, in the refresh: ACT at its end, 100 ns.
        assert_eq!(d.read(0, 32, 50_000), 100_000 + 10_000 + 10_000 + 2_000);
        // Another bank is not refreshed then.
        let other = (1..1u64 << 16)
            .map(|k| k * 256)
            .find(|&a| d.map(a).0 == 0 && d.map(a).1 != 0)
            .unwrap();
        let (_, b, _) = d.map(other);
        // Bank b of channel 0 is first refreshed at b * 2 / 8 of the interval.
        let start = b as u64 * 2 * 1_000_000 / 8;
        let at = start + 100_000 + 1_000;
        assert_eq!(d.read(other, 32, at), at + 10_000 + 10_000 + 2_000);
    }

    #[test]
    fn a_refresh_closes_the_row() {
        let mut d = refreshed();
        let first = d.read(0, 32, 200_000);
        assert_eq!(first, 200_000 + 22_000, "the refresh at 0 left no row open");
        // The same row at 1050 ns: in the refresh from 1000 ns, and a miss after it.
        assert_eq!(d.read(32, 32, 1_050_000), 1_100_000 + 22_000);
        assert_eq!(d.stats().row_hits, 0);
        // Without refresh the second read would hit the open row.
        let mut plain = Dram::new(spec());
        plain.read(0, 32, 200_000);
        assert_eq!(plain.read(32, 32, 1_050_000), 1_050_000 + 12_000);
    }

    #[test]
    fn a_booking_ends_with_its_precharge_before_the_next_refresh() {
        let mut d = refreshed();
        let other = (1..1u64 << 20)
            .map(|k| k * 256)
            .find(|&a| {
                let (c, b, r) = d.map(a);
                c == 0 && b == 0 && r != 0
            })
            .unwrap();
        d.read(0, 32, 200_000);
        // A row conflict at 970 ns would precharge, activate (at 980 ns)
        // and have to stay open for tRAS, into the refresh at 1000 ns: it
        // goes after the refresh, which has closed the row.
        assert_eq!(d.read(other, 32, 970_000), 1_100_000 + 22_000);
        // One at 900 ns fits before it (its row closed by 980 + 10 ns).
        let mut d = refreshed();
        d.read(0, 32, 200_000);
        assert_eq!(d.read(other, 32, 900_000), 900_000 + 32_000);
    }

    #[test]
    fn a_refresh_waits_for_the_requests_queued_for_its_bank() {
        let post = |postpone: u32| {
            let mut d = Dram::new(DramSpec {
                t_refi_ns: 1000.0,
                t_rfc_ns: 100.0,
                refresh_postpone: postpone,
                ..spec()
            });
            d.read(0, 32, 200_000);
            // Two reads of the open row arrive before the refresh at 1000 ns
            // is due, the second one ready only at 999 ns and its column
            // slot running past 1000 ns.
            d.read(32, 32, 990_000);
            d.read(64, 32, 999_000)
        };
        // At its time: neither can close the row by 1000 ns (tRP 10 ns
        // after its column slot), so both wait for the refresh; the first
        // reopens the row.
        assert_eq!(post(0), 1_100_000 + 22_000 + 2_000);
        // Put off: served from the open row; the refresh follows.
        assert_eq!(post(8), 999_000 + 12_000);
        let mut d = Dram::new(DramSpec {
            t_refi_ns: 1000.0,
            t_rfc_ns: 100.0,
            refresh_postpone: 8,
            ..spec()
        });
        d.read(0, 32, 200_000);
        d.read(32, 32, 999_000);
        // The bank is idle from 1001 ns (tRP after its last access, 1011
        // ns): a read at 1050 ns finds the refresh made then.
        assert_eq!(d.read(64, 32, 1_050_000), 1_011_000 + 100_000 + 22_000);
    }

    #[test]
    fn refresh_values_are_checked() {
        let bad = |refi: f64, rfc: f64| {
            DramSpec {
                t_refi_ns: refi,
                t_rfc_ns: rfc,
                ..spec()
            }
            .validate()
        };
        assert!(bad(0.0, 0.0).is_ok());
        assert!(bad(1000.0, 100.0).is_ok());
        for (refi, rfc) in [(1000.0, 0.0), (0.0, 100.0), (100.0, 100.0), (100.0, 200.0)] {
            let e = bad(refi, rfc).unwrap_err();
            assert!(e.contains("t_rfc_ns"), "{e}");
        }
    }

    #[test]
    fn hashed_bank_groups_spread_accesses_one_interleave_apart() {
        // Accesses 512 B apart stay in channel 0 (two channels, 256-byte
        // interleave, linear) at the same offset in their 256-byte unit: by
        // the address bits alone they are all in one bank group.
        let groups = |group_hash: bool| {
            let d = Dram::new(DramSpec {
                bank_groups: 4,
                banks: 16,
                group_hash,
                ..spec()
            });
            let mut seen = [0u32; 4];
            for k in 0..64u64 {
                let (c, b, _) = d.map(k * 512);
                assert_eq!(c, 0);
                seen[b & 3] += 1;
            }
            seen
        };
        assert_eq!(groups(false), [64, 0, 0, 0]);
        assert_eq!(groups(true), [16, 16, 16, 16]);
    }

    #[test]
    fn a_written_row_closes_only_after_write_recovery() {
        // A write to row r0 at t = 0: ACT at 0, its burst on the bus from
        // tRCD + tCL = 20 ns after a 2 ns read-to-write turnaround, so its
        // column command is at 12 ns. A read of another row of the same
        // bank then waits for the precharge: at tRAS (30 ns) without write
        // recovery, at 12 + 50 ns with tWR = 50 ns; the rest is the same.
        let read_after_write = |t_wr_ns: f64| {
            let mut d = Dram::new(DramSpec { t_wr_ns, ..spec() });
            let other = other_row(&d, 0);
            d.write(0, 32, false, true, 0);
            assert_eq!(d.drain(0), 24_000);
            d.read(other, 32, 24_000)
        };
        let without = read_after_write(0.0);
        assert_eq!(without, 30_000 + 10_000 + 10_000 + 10_000 + 5_000 + 2_000);
        assert_eq!(read_after_write(50.0) - without, 62_000 - 30_000);
    }

    #[test]
    fn a_request_booked_late_but_ready_early_uses_the_idle_bank() {
        let mut d = Dram::new(spec());
        // A read booked first but arriving at 1 us...
        let late = d.read(0, 32, 1_000_000);
        assert_eq!(late, 1_000_000 + 22_000);
        // ...does not hold back a read ready at 0: it is served in the idle
        // time before (the later one keeps its own activation).
        let early = d.read(32, 32, 0);
        assert_eq!(early, 22_000);
        // Another row of the same bank, ready at 0.5 us: the later read
        // opens its own row (it was booked as a miss), so this one goes
        // first: precharge after tRAS, activate, CAS, burst.
        let other = other_row(&d, 0);
        let conflict = d.read(other, 32, 500_000);
        assert_eq!(conflict, 500_000 + 10_000 + 10_000 + 10_000 + 2_000);
        assert_eq!(d.stats().row_misses, 3);
    }

    #[test]
    fn a_request_is_not_queued_behind_requests_that_arrive_after_it() {
        let mut d = Dram::new(spec());
        // More than `WINDOW` reads of one row of a bank, booked first but
        // arriving from 1 us on (they waited upstream)...
        for i in 0..2 * WINDOW as u64 {
            d.read(0, 32, 1_000_000 + i * 1_000);
        }
        // ...are not ahead of a read of another row of the bank arriving
        // at 0, which uses the idle bank before them: ACT, CAS, burst.
        let other = other_row(&d, 0);
        assert_eq!(d.read(other, 32, 0), 10_000 + 10_000 + 2_000);
        // A read arriving among them, at 1.02 us, has more than `WINDOW`
        // of them ahead: it is served after the last of those that arrived
        // by its time.
        let late = d.read(other, 32, 1_020_000);
        assert!(late > 1_020_000 + 10_000, "{late}");
    }

    #[test]
    fn bytes_count_whole_accesses() {
        let mut d = Dram::new(spec());
        d.read(16, 64, 0); // bytes 16..80 touch three 32-byte atoms
        assert_eq!(d.stats().bytes_read, 96);
        d.write(0, 32, false, true, 0);
        assert_eq!(d.stats().bytes_written, 32);
    }

    #[test]
    fn a_full_read_queue_makes_the_next_read_wait() {
        let mut d = Dram::new(DramSpec {
            read_queue: 1,
            ..spec()
        });
        let first = d.read(0, 32, 0);
        assert_eq!(first, 22_000);
        // Same channel (within the 256-byte interleave): waits for the
        // entry, which frees at the end of the queue's interval of 2 bursts
        // (4 ns) that holds the first read's last byte.
        let second = d.read(32, 32, 0);
        assert_eq!(second, 24_000 + 10_000 + 2_000, "waits, then CAS + burst");
        assert_eq!(d.stats().queue_wait_ps, 24_000);
    }

    #[test]
    fn writes_wait_while_the_queue_is_full_and_drain_at_the_end() {
        let mut d = Dram::new(spec());
        // 100 writes to channel 0 (inside its 256-byte interleave) at t = 0:
        // the queue (4 writes) fills, so later ones wait for the bus.
        let mut last = 0;
        for i in 0..100u64 {
            last = d.write((i % 8) * 32, 32, false, true, 0);
        }
        let end = d.drain(last);
        assert!(last > 0, "the queue pushed back");
        assert_eq!(d.stats().bytes_written, 100 * 32);
        let busy = d.stats().busy_ps;
        assert_eq!(busy, 100 * 2_000);
        assert!(
            busy <= end,
            "one channel's bus cannot be busy longer than the run"
        );
    }

    #[test]
    fn a_write_request_that_closes_its_row_makes_the_next_one_activate_again() {
        // Two requests of two atoms each, all four in one row of one bank
        // (the 256-byte interleave, 2 KiB rows): with the row left open the
        // first atom activates and the other three find it open; closed
        // after each request, the second request activates again.
        for (close, misses) in [(false, 1), (true, 2)] {
            let mut d = Dram::new(DramSpec {
                close_after_write: close,
                ..spec()
            });
            for (addr, last) in [(0, false), (32, true), (64, false), (96, true)] {
                d.write(addr, 32, false, last, 0);
            }
            d.drain(0);
            let s = d.stats();
            assert_eq!(
                (s.row_misses, s.row_hits),
                (misses, 4 - misses),
                "close {close}"
            );
        }
    }

    #[test]
    fn read_modify_write_reads_the_atom_first() {
        let mut d = Dram::new(DramSpec {
            partial_write: PartialWrite::ReadModifyWrite,
            write_unit_bytes: None,
            ..spec()
        });
        d.write(0, 8, true, true, 0);
        d.write(32, 32, false, true, 0);
        d.drain(0);
        let s = d.stats();
        assert_eq!(
            (s.bytes_read, s.bytes_written, s.read_modify_writes),
            (32, 64, 1)
        );
    }

    #[test]
    fn a_read_joins_its_open_rows_batch_until_the_next_row_miss_begins() {
        // tRCD = tRP = 10 ns, tRAS 30 ns, one column slot 2 ns.
        let k = BankTiming {
            t_rcd: 10_000,
            t_rp: 10_000,
            t_ras: 30_000,
            col: 2_000,
            t_wr: 0,
            faw4: 1_000,
            first_ready: true,
            refi: 0,
            rfc: 0,
            postpone: 0,
        };
        let mut acts = Calendar::new(4_000, 4);
        let mut bank = Bank::default();
        let now = |c| c;
        let (a, b) = (1, 2);
        // Row a opens (column at 10 ns); the miss to row b is queued and
        // begins its precharge at 30 ns (tRAS after a's activation).
        assert_eq!(
            bank.book(a, false, false, 0, &k, &mut acts, now),
            (10_000, false)
        );
        assert_eq!(
            bank.book(b, false, false, 0, &k, &mut acts, now),
            (50_000, false)
        );
        // A read of row a arriving at 29 ns finds a still open and b's
        // precharge not begun: first-ready serves it as a hit, one column
        // slot more of the bank's work (after b's, at 52 ns), where a
        // first-come controller would reopen a after b (at 90 ns).
        assert_eq!(
            bank.book(a, false, false, 29_000, &k, &mut acts, now),
            (52_000, true)
        );
        // Once b's precharge has begun, a is closed: a row miss.
        let (_, hit) = bank.book(a, false, false, 31_000, &k, &mut acts, now);
        assert!(!hit);
        // A write does not join a read batch, and without first-ready
        // scheduling neither does a read.
        for (write, first_ready) in [(true, true), (false, false)] {
            let k = BankTiming { first_ready, ..k };
            let mut acts = Calendar::new(4_000, 4);
            let mut bank = Bank::default();
            bank.book(a, false, false, 0, &k, &mut acts, now);
            bank.book(b, false, false, 0, &k, &mut acts, now);
            let (_, hit) = bank.book(a, write, false, 29_000, &k, &mut acts, now);
            assert!(!hit);
        }
    }

    /// Bank timings for the tests that book random requests: tRCD = tRP =
    /// 10 ns, tRAS 30 ns, a column slot 2 ns; `refresh`: every 50 ns, for
    /// 8 ns, put off up to `postpone` intervals.
    fn random_requests_timing(first_ready: bool, refresh: bool, postpone: u64) -> BankTiming {
        BankTiming {
            t_rcd: 10_000,
            t_rp: 10_000,
            t_ras: 30_000,
            col: 2_000,
            t_wr: 5_000,
            faw4: 1_000,
            first_ready,
            refi: if refresh { 50_000 } else { 0 },
            rfc: 8_000,
            postpone,
        }
    }

    /// A booking takes 24 bytes in its bank.
    #[test]
    fn a_booking_is_packed_in_24_bytes() {
        assert_eq!(size_of::<Op>(), 24);
    }

    /// A booking comes back from its packed form as it went in, whatever
    /// its times and row (those that do not fit kept whole), but for an
    /// activation more than `u32::MAX` ps before its end, which comes back
    /// as that far before.
    #[test]
    fn a_packed_booking_unpacks_as_it_was() {
        use proptest::prelude::*;
        // Spans near the limits of what an `Op` holds, and any.
        let span = prop_oneof![
            0u64..100_000,
            (u32::MAX as u64 - 2)..(u32::MAX as u64 + 2),
            any::<u64>(),
        ];
        let row = prop_oneof![
            0u64..1000,
            (Op::ROW_LIMIT as u64 - 2)..(Op::ROW_LIMIT as u64 + 2),
            (u64::MAX - 3)..=u64::MAX,
            any::<u64>(),
        ];
        let flags = prop::collection::vec(any::<bool>(), 5);
        proptest!(|(end in any::<u64>(), spans in prop::collection::vec(span, 3), row in row,
                    f in flags, t_ras in prop_oneof![Just(30_000u64), any::<u64>()])| {
            let b = Booking {
                begin: end.wrapping_sub(spans[0]),
                end,
                row,
                act: end.wrapping_sub(spans[1]),
                hit: f[0],
                write: f[1],
                refresh: f[2],
                room: f[3],
                room_to_open: f[4],
                arrived: end.wrapping_sub(spans[2]),
            };
            let k = BankTiming { t_ras, ..random_requests_timing(false, false, 0) };
            let mut bank = Bank::default();
            let op = bank.pack(&b, &k);
            bank.ops.push(op);
            let back = bank.bookings()[0];
            // Kept whole only where it does not fit.
            let fits = |x: u64| end.checked_sub(x).is_some_and(|d| d <= u32::MAX as u64);
            let far = b.act <= end && !fits(b.act) && t_ras <= u32::MAX as u64;
            let wide = !fits(b.begin)
                || !fits(b.arrived)
                || !(fits(b.act) || far)
                || (Op::ROW_LIMIT as u64..CLOSED).contains(&row);
            prop_assert_eq!(op.flag(Op::WIDE), wide);
            let act = if far && !wide { end - u32::MAX as u64 } else { b.act };
            prop_assert_eq!(back, Booking { act, ..b });
            prop_assert!(!far || act + t_ras <= end);
        });
    }

    /// A bank that keeps its bookings packed books every request as one
    /// that keeps them all whole, through times and rows beyond what an
    /// `Op` holds (long idle times, far activations, a data bus that makes
    /// a column command wait long, large rows).
    #[test]
    fn packed_bookings_book_as_whole_ones() {
        use proptest::prelude::*;
        let step = prop_oneof![9 => 0u64..3_000, 1 => 0u64..1 << 34];
        let row = prop_oneof![
            0u64..3,
            (Op::ROW_LIMIT as u64 - 1)..(Op::ROW_LIMIT as u64 + 2),
            (u64::MAX - 3)..u64::MAX - 1,
        ];
        // A wait beyond the next refresh would put the booking off past
        // every refresh, without end: long waits only without refresh.
        let wait = prop_oneof![Just(0u64), 0u64..5_000, Just(1u64 << 33)];
        let reqs = prop::collection::vec(
            (row, step, 0u64..120_000, wait, any::<bool>(), any::<bool>()),
            1..300,
        );
        proptest!(|(reqs in reqs, first_ready in any::<bool>(), refresh in 0u64..3)| {
            let k = random_requests_timing(first_ready, refresh > 0, if refresh == 2 { 8 } else { 0 });
            let (mut packed, mut whole) = (Bank::default(), Bank { force_wide: true, ..Bank::default() });
            // Coarse activation windows (of the same rate), which long
            // idle times keep small.
            let (mut acts_p, mut acts_w) = (Calendar::new(1 << 16, 64), Calendar::new(1 << 16, 64));
            let mut t = 0;
            for (row, step, ahead, wait, write, close) in reqs {
                let wait = if refresh > 0 { wait % 5_000 } else { wait };
                t += step;
                let now = (t + ahead).saturating_sub(10_000);
                packed.advance(t, now);
                whole.advance(t, now);
                // The activation windows forget what is long past.
                acts_p.advance(t.saturating_sub(1 << 20));
                acts_w.advance(t.saturating_sub(1 << 20));
                let a = packed.book(row, write, close, now, &k, &mut acts_p, |c| c + wait);
                let b = whole.book(row, write, close, now, &k, &mut acts_w, |c| c + wait);
                prop_assert_eq!(a, b);
                // The activations as the packed bank keeps them.
                let kept = |b: Booking| Booking {
                    act: b.act.max(b.end.saturating_sub(u32::MAX as u64)),
                    ..b
                };
                let p: Vec<Booking> = packed.bookings().into_iter().map(kept).collect();
                let w: Vec<Booking> = whole.bookings().into_iter().map(kept).collect();
                prop_assert_eq!(p, w);
                prop_assert!(whole.wide.len() == whole.ops.len());
            }
        });
    }

    /// A bank that leaves the bookings ended before the advanced time in
    /// place while its requests cannot see them books every request as
    /// one that drops them at once, and ends up holding the same bookings
    /// after those.
    #[test]
    fn bookings_dropped_late_book_the_same() {
        use proptest::prelude::*;
        let reqs =
            prop::collection::vec((0u64..4, 0u64..3_000, 0u64..120_000, any::<bool>()), 1..400);
        proptest!(|(reqs in reqs, first_ready in any::<bool>(), refresh in 0u64..3)| {
            // No refresh, refreshes at their time, or put off.
            let k = random_requests_timing(first_ready, refresh > 0, if refresh == 2 { 8 } else { 0 });
            let (mut late, mut early) = (Bank::default(), Bank::default());
            let (mut acts_l, mut acts_e) = (Calendar::new(4_000, 4), Calendar::new(4_000, 4));
            let mut t = 0;
            let mut dropped = 0;
            for (row, step, ahead, write) in reqs {
                t += step;
                // Mostly after `t`, some before.
                let now = (t + ahead).saturating_sub(10_000);
                late.advance(t, now);
                if t > dropped {
                    dropped = t;
                    while early.ops.len() > 1 && early.ops[1].end <= t {
                        early.ops.pop_front();
                    }
                    early.drop_wide();
                }
                let a = late.book(row, write, false, now, &k, &mut acts_l, |c| c);
                let b = early.book(row, write, false, now, &k, &mut acts_e, |c| c);
                prop_assert_eq!(a, b);
                let n = early.ops.len();
                prop_assert!(late.ops.len() >= n);
                prop_assert_eq!(&late.bookings()[late.ops.len() - n..], &early.bookings()[..]);
            }
        });
    }

    /// Every booking but the first knows whether the gap after the one
    /// before it holds a column slot, as bookings are pushed, inserted
    /// before others (requests ready before ones booked earlier) and
    /// dropped: what the skip over short gaps in [`Bank::book`] reads.
    #[test]
    fn a_booking_knows_the_room_before_it() {
        use proptest::prelude::*;
        let reqs =
            prop::collection::vec((0u64..4, 0u64..3_000, 0u64..120_000, any::<bool>()), 1..400);
        proptest!(|(reqs in reqs, first_ready in any::<bool>(), refresh in 0u64..3)| {
            let k = random_requests_timing(first_ready, refresh > 0, if refresh == 2 { 8 } else { 0 });
            let mut bank = Bank::default();
            let mut acts = Calendar::new(4_000, 4);
            let mut t = 0;
            for (row, step, ahead, write) in reqs {
                t += step;
                let now = (t + ahead).saturating_sub(10_000);
                bank.advance(t, now);
                bank.book(row, write, false, now, &k, &mut acts, |c| c);
                for w in bank.bookings().windows(2) {
                    prop_assert_eq!(w[1].room, w[0].end + k.col <= w[1].begin);
                    prop_assert_eq!(w[1].room_to_open, w[0].end + k.t_rcd + k.col <= w[1].begin);
                }
            }
        });
    }

    /// A request arriving at the time of the request booked last on its
    /// bank (the next access of one request, the next write of a batch)
    /// is booked from what the bank saw then: exactly as a bank that
    /// looks at its queue again.
    #[test]
    fn a_request_at_the_last_ones_time_books_as_one_that_looks_again() {
        use proptest::prelude::*;
        let reqs = prop::collection::vec(
            (0u64..3, 0u64..2_000, 1usize..5, 0u64..60_000, any::<bool>()),
            1..300,
        );
        proptest!(|(reqs in reqs, first_ready in any::<bool>(), refresh in any::<bool>())| {
            let k = random_requests_timing(first_ready, refresh, 0);
            let (mut kept, mut fresh) = (Bank::default(), Bank::default());
            let (mut acts_k, mut acts_f) = (Calendar::new(4_000, 4), Calendar::new(4_000, 4));
            let mut t = 0;
            for (row, step, accesses, ahead, write) in reqs {
                t += step;
                // Some arrive before the latest arrival so far.
                let now = (t + ahead).saturating_sub(20_000);
                kept.advance(t, now);
                fresh.advance(t, now);
                for _ in 0..accesses {
                    fresh.last = None;
                    let a = kept.book(row, write, false, now, &k, &mut acts_k, |c| c);
                    let b = fresh.book(row, write, false, now, &k, &mut acts_f, |c| c);
                    prop_assert_eq!(a, b);
                }
                prop_assert_eq!(kept.bookings(), fresh.bookings());
            }
        });
    }

    #[test]
    fn xor_pieces_folds_every_piece() {
        use proptest::prelude::*;
        proptest!(|(x in any::<u64>(), bits in 1u32..64)| {
            let mut h = 0;
            let mut y = x;
            while y != 0 {
                h ^= y & ((1u64 << bits) - 1);
                y >>= bits;
            }
            prop_assert_eq!(xor_pieces(x, bits), h);
        });
    }

    /// No bank does two things at once: whatever the order and times of
    /// the requests, each booking of a bank ends (write recovery
    /// included, where the next one closes the row) before the next
    /// begins, with the data bus and the activation window deciding when
    /// the column commands go.
    #[test]
    fn a_bank_holds_one_access_at_a_time() {
        use proptest::prelude::*;
        let reqs = prop::collection::vec((0u64..1 << 16, 0u64..200_000, any::<bool>()), 1..300);
        proptest!(|(reqs in reqs, wr in 0.0f64..30.0, refresh in 0u32..3, close in any::<bool>())| {
            // No refresh, refreshes at their time, or put off.
            let (t_refi_ns, t_rfc_ns) = if refresh > 0 { (2000.0, 150.0) } else { (0.0, 0.0) };
            let mut d = Dram::new(DramSpec {
                t_wr_ns: wr,
                t_refi_ns,
                t_rfc_ns,
                refresh_postpone: if refresh == 2 { 8 } else { 0 },
                close_after_write: close,
                ..spec()
            });
            for (addr, now, write) in reqs {
                if write {
                    d.write(addr / 32 * 32, 32, false, true, now);
                } else {
                    d.read(addr, 32, now);
                }
            }
            d.drain(0);
            for ch in &d.ch {
                for bank in &ch.banks {
                    let ops = bank.bookings();
                    for (a, b) in ops.iter().zip(ops.iter().skip(1)) {
                        // No access finds a row open that a write closed.
                        prop_assert!(!(b.hit && a.row == CLOSED), "{b:?} hits after {a:?}");
                        // A refresh begins with the bank's row closed.
                        let free = if b.hit {
                            a.end
                        } else if b.refresh && !a.refresh {
                            a.recover(&d.bank).max(a.act + d.bank.t_ras) + d.bank.t_rp
                        } else {
                            a.recover(&d.bank)
                        };
                        prop_assert!(free <= b.begin, "{a:?} overlaps {b:?}");
                    }
                }
            }
        });
    }
}
