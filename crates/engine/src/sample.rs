//! Sampled timing: time the first waves of blocks until the kernel has
//! settled into a steady state, then extrapolate the rest.
//!
//! A kernel whose blocks all do the same kind of work (every streaming,
//! strided or scattered kernel of the seeds and the corpus) runs as a
//! ramp (the first waves start together, the caches and DRAM queues fill),
//! a steady state (blocks retire at a constant rate) and a tail (the last
//! blocks drain). The timed model records when each block retires, and at
//! the end of every wave (`SMs x blocks per SM` blocks) the counters that
//! depend on time. After [`WARMUP_WAVES`] waves (and, where the kernel may
//! touch more than the L2 holds, only once the L2 has replaced as many
//! lines as it holds, so that its write-backs are part of the steady
//! state; where it may store more than the L2 keeps dirty, only once the
//! L2 has begun writing back, and only over a window at whose two ends
//! the L2 holds as much dirty data, within [`TOLERANCE`] of the sectors
//! written: write-backs that come in phases, as the replacement reaches
//! lines stored together, make a window inside one phase write back more
//! or less than the stores make dirty), the waves since then form the window: a least-squares line
//! through the retirement times of each half gives its time per block,
//! and when the two halves agree within [`TOLERANCE`], in time per block
//! and in the traffic each sector issued causes (L1 hits, L2 sectors and
//! hits, DRAM bytes, within [`TOLERANCE`] and [`TRAFFIC_SLACK`]), the
//! kernel has settled. Where the traffic differs (the L2 has filled or
//! begun writing back inside the window), the waves before the second
//! half are dropped from the window: the extrapolated counters come from
//! the traffic as it is now. Dispatch then stops: the blocks already running drain as the
//! real kernel's last ones do, so the run of `S` blocks times the ramp and
//! the tail. The `N - S` blocks not timed add the window's rate:
//!
//! ```text
//!   T(N) = T(S) + (N - S) x s                         s: ps per block (fit)
//!   C(N) = C(S) + (sectors(N) - sectors(S)) x dC/dsectors   (L2, DRAM, L1 hits)
//!   error = (N - S) x (max(|s_a - s_b|, 2 se, 2 se_wave / W) + tolerance x s) + 2 sd
//! ```
//!
//! `s_a`, `s_b` are the halves' rates, `se` the fit's standard error,
//! `se_wave` the standard error of the mean time of a wave of `W` blocks
//! over the window (whole waves vary together, so the fit over blocks
//! alone understates how far the window's rate may be from the rest's:
//! with it the estimate covers the difference from the whole run on all
//! 390 seed points, against 96% without), and `sd` the spread of
//! retirement times about the line (where the sample's own end may fall).
//!
//! A kernel ends when its work has drained, not when its last block
//! retires: stores are acknowledged before the DRAM writes them. So each
//! wave also records the latest completion the units (interconnect, L2,
//! DRAM) have booked, and where that frontier moves faster per block than
//! the retirements (a DRAM falling further behind the stores), its rate is
//! `s`, its halves must agree in the same way, and its halves give the
//! error. Counters
//! are carried over on the sectors issued, which the functional pass
//! counts exactly, rather than on blocks, which retire in bursts. Counts
//! that do not depend on time (requests, sectors, transactions, warp
//! instructions) are not extrapolated: every warp of the grid is still
//! executed and coalesced, without the timed model.
//!
//! Two halves that agree mean something only where the waves vary little:
//! a window is accepted only once each half's mean time per wave is known
//! to within [`HALF_SE`] (one standard error, from the spread of its
//! waves' times), so a kernel whose waves vary by 7% times at least 13
//! waves a half. Where the halves differ by more than the spread
//! explains ([`DRIFT_SIGMAS`] standard errors beyond the tolerance), the
//! rate has moved inside the window, and its first half is dropped, as
//! for traffic. And a grid of many waves has longer halves, a 16th of
//! its waves each, up to [`MAX_HALF_WAVES`] ([`Sampler::for_grid`]): a
//! phase of a dozen waves at another pace, as even as the steady state,
//! is one that no test on a window inside it can see, only a window that
//! reaches past it.
//!
//! Seed 002's large strides at 256 MiB on the H200 (double 12 to 32,
//! float 21 to 32) had such phases in gpusim until 2026-11-27 (not on the
//! H200: `tools/measure/waves`), while warps that could go at one time
//! went in the order of their slots and the highest slots' warps waited
//! for their SM's room for waves on end: their waves 5 to about 20 ran 2-13% slower
//! than the later ones, some as a slow drift (float stride 25, 4.6% over
//! 20 waves), some as a step after three waves at the steady rate,
//! unevenly (double stride 21: a spread of 7.9% against 2.9% later) or
//! evenly (double stride 29). Two halves of four waves inside one
//! agreed within 1%, and the rest was extrapolated at its rate: stride
//! 21 came out 14.6% slower than timed whole (1,854.7 us against 1,619.0),
//! outside its error estimate (79 us); 17 of the 64 strides were more than
//! 2% off, the estimate covering 48 of the 58 sampled. The precision and
//! the restart alone took that to 12 of 64 (worst +9.2%, double stride 29:
//! an even phase), 59 of 64 covered; the longer halves of long grids to
//! the figures of `docs/speed.md`.
//!
//! A kernel whose rate keeps drifting (more than the tolerance between
//! the halves) never settles and is timed whole; `Auto` samples only grids
//! of [`AUTO_MIN_WAVES`] waves or more, where the shortest window
//! (warm-up and two halves, 12 waves) leaves at least a quarter of the
//! grid untimed. On the 390 points of seed 002's figures on the Tesla
//! cards (17 to 85 waves; 376 sampled) the sampled time is within 2% of
//! the whole run's on every point (worst 1.54%, `tools/speed/compare.py`),
//! and on the 524 cases `gpusim validate` replays within 0.9% (116
//! sampled; `tools/speed/compare_validate.py`). The window is as short as
//! that allows: with a warm-up of 3 waves and halves of 3, 4 of the 390
//! points missed 2% (worst 3.3%), and with halves of 2, 15 did. (Until
//! 2026-11-26 the warm-up was 8 waves, the halves 6 and `Auto` began at
//! 32 waves: the seed figures took 31-34 s here, against 22-27 s since.)
//! An L2 of several partitions (where a line may also be held as a copy
//! in the near partition) must replace twice the lines it has places
//! for; one of a single partition (C2050, P100, V100), as many as it has.
//! (With twice for those too, the C2050's seed points timed 65% of their
//! blocks, against 58% now, with the same 130 of 130 within 2% of their
//! whole runs, worst 1.54%.) Once on the H200 was tried:
//! it saves a third of the H200's 256 MiB and 1 GiB points' time, but the
//! write streams' waves vary more than a window of 4-wave halves averages
//! out, and they came out 2.2-3.0% slow; with half the places, the 1 GiB
//! offset point's DRAM bytes came out 1.03% off, and with no turnover at
//! all, a 256 MiB offset point's L2 and DRAM counters 7.8% off (the window
//! began before any line was evicted), though every time stayed within
//! 2%. (Comparing the halves' traffic too catches a change inside the
//! window, not one after it.) Once with halves of 6 waves instead met
//! both targets on the corpus (524 cases within 2%, 523 within 1% in
//! traffic) in 372 s against 460 s, but took the seed figures 24.7 and
//! 32.0 s against 23.2 and 22.4 s in two runs each: not kept.
//!
//! Where most of a sampled run's time goes on the H200: waiting for the
//! L2 to turn over. A 1 GiB offset point times 127 of its 993 waves, 114
//! of them before the turnover. Warming the caches functionally through
//! the turnover instead (lines allocated, dirty lines written back and
//! counted, nothing timed) was built and measured against whole runs, and
//! left out; what it showed:
//! - Warming costs about a third of timing per block (the L2's 24 MB of
//!   tags and ways miss the host's caches either way).
//! - The waves right after warming run about 6% fast until the DRAM has
//!   written back as many bytes as the L2 keeps dirty, with more of the
//!   DRAM's accesses finding their row open (94-96% against 92-94%). The
//!   likely cause: warmed stores make their lines dirty block by block,
//!   in address order, where timed ones interleave blocks. Waiting for
//!   that costs about 25 waves at 1 GiB.
//! - Warming from the first write-back skips a ramp the whole run times:
//!   a copy's write-backs grow over about 25 waves (LRU evictions of dirty
//!   lines before the dirty-line limit), and the 128 MiB copy came out
//!   2.3% slow.
//! - A wave's time varies by about 7% (standard deviation, 1 GiB offset),
//!   so a 12-wave window's mean is known to about 2%: the 256 MiB double
//!   offsets, whose waves vary alike, moved together by 1% from one
//!   window to another.
//!
//! The 1 GiB points went from 3.5 s to 3.0 s (offset) and 3.0 s to 2.5 s
//! (stride), the 256 MiB offset family from 118 s to 87 s, with 523 of
//! the 524 corpus cases within 2% of their whole runs.

/// When to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampling {
    /// Time every block.
    Off,
    /// Sample whenever the grid has waves to spare.
    On,
    /// Sample grids of at least [`AUTO_MIN_WAVES`] waves (the default).
    #[default]
    Auto,
}

impl std::str::FromStr for Sampling {
    type Err = String;
    fn from_str(s: &str) -> Result<Sampling, String> {
        match s {
            "off" => Ok(Sampling::Off),
            "on" => Ok(Sampling::On),
            "auto" => Ok(Sampling::Auto),
            _ => Err(format!("`{s}` is not one of on, off, auto")),
        }
    }
}

/// Waves skipped before any is compared: the launch ramp.
pub const WARMUP_WAVES: usize = 4;
/// Waves in each half of the window compared, at least. The window is
/// every wave since the warm-up (or the L2's turnover): the longer a
/// kernel runs before it settles, the more waves its rate is averaged
/// over, and a slow drift shows as a difference between the halves.
pub const HALF_WAVES: usize = 4;
/// Waves in each half at most that a long grid asks for: its halves are
/// a 16th of its waves each, from [`HALF_WAVES`] up to this many (see
/// [`Sampler::for_grid`]).
pub const MAX_HALF_WAVES: usize = 8;
/// How far the two halves' times per block may differ, as a fraction of
/// their mean.
pub const TOLERANCE: f64 = 0.01;
/// How far the halves' traffic per sector issued (L1 hits, L2 sectors
/// and hits, DRAM bytes in 32-byte sectors) may differ beyond
/// [`TOLERANCE`]: half a percent of a sector, so that a counter near zero
/// does not hold the window back on a few sectors' difference.
pub const TRAFFIC_SLACK: f64 = 0.005;
/// How well each half's mean time per wave must be known (one standard
/// error, from the spread of its waves' times, as a fraction of the rate)
/// before the halves' agreement counts: the 2% within which a sampled
/// time should match the whole run's. Where waves vary by 7%, as in a
/// slow phase after the launch (see the module's documentation; gpusim's
/// large strides had one while its warps of the highest slots waited for
/// room, `tools/measure/waves`), that takes halves of 13 waves, long
/// enough to reach past such a phase.
pub const HALF_SE: f64 = 0.02;
/// How many standard errors of the difference between the halves' rates
/// (from the spread of the waves' times) beyond [`TOLERANCE`] make a
/// drift rather than noise: the window then drops its first half.
pub const DRIFT_SIGMAS: f64 = 2.0;
/// `Auto` samples grids of at least this many waves; smaller ones would
/// time most of their blocks anyway (the shortest window is
/// `WARMUP_WAVES + 2 * HALF_WAVES`).
pub const AUTO_MIN_WAVES: u64 = 16;

/// Retirement times kept at most (32 MiB): a kernel that has not settled
/// by then is timed whole, without keeping more.
pub const MAX_RECORDED: usize = 1 << 22;

/// Counters snapshotted at each wave, in this order: L1 load hits, L2
/// read sectors, L2 read hits, L2 write sectors, DRAM bytes read, DRAM
/// bytes written.
pub const SNAP: usize = 6;

/// Bytes in one unit of each snapshotted counter, for comparing their
/// increments per sector: sectors count whole, DRAM bytes in 32-byte
/// sectors.
const SNAP_UNIT: [f64; SNAP] = [1.0, 1.0, 1.0, 1.0, 32.0, 32.0];

/// Where the snapshot keeps the sectors issued so far (loads and stores),
/// the basis the other counters are extrapolated on.
pub const BASIS: usize = SNAP;

/// Where the snapshot keeps the L2 write sectors.
const L2_WRITES: usize = 3;

/// Time and time-dependent counters at a wave boundary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    /// When the wave's last block retired, ps.
    pub t: u64,
    /// The latest completion any unit (interconnect, L2, DRAM) has booked
    /// by then, ps: where the work handed to the units ends, which runs
    /// ahead of the retirements when the units fall behind (stores that a
    /// full DRAM will write later).
    pub work: u64,
    /// Counters then (see [`SNAP`]), and the sectors issued ([`BASIS`]).
    pub c: [u64; SNAP + 1],
    /// Dirty sectors the L2 holds then (not extrapolated).
    pub dirty: u64,
}

/// What a sampled run extrapolates with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steady {
    /// Time per block over the window, ps.
    pub block_ps: f64,
    /// Uncertainty of `block_ps`, ps.
    pub block_err_ps: f64,
    /// How far a block's retirement strays from the steady line (twice
    /// the residuals' standard deviation), ps: the uncertainty of where
    /// the sample's own tail ends.
    pub end_err_ps: f64,
    /// Counter increments per sector issued.
    pub per_sector: [f64; SNAP],
}

/// Watches block retirements for the steady state.
#[derive(Debug, Clone)]
pub struct Sampler {
    /// Blocks per wave.
    pub wave: u64,
    /// Retirement time of every block so far, in retirement order.
    retired: Vec<u64>,
    /// One mark per completed wave (the first at the launch).
    marks: Vec<Mark>,
    /// Whether the L2 must have turned over before waves count.
    need_turnover: bool,
    /// Whether the L2 must have begun writing back before waves count.
    need_writeback: bool,
    /// Number of waves recorded when the L2 had first reached its steady
    /// state (turned over, writing back, as needed).
    turned_over_since: Option<usize>,
    /// The first wave of the window once the traffic has been seen to
    /// change: the waves before it are left out.
    restart: usize,
    /// Waves in each half of the window, at least.
    half_min: usize,
}

/// Least-squares slope of `y` against its index, its standard error and
/// the standard deviation of the residuals.
fn slope(y: &[u64]) -> (f64, f64, f64) {
    let n = y.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y0 = y[0] as f64;
    let y_mean = y.iter().map(|&v| v as f64 - y0).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (v as f64 - y0 - y_mean);
        sxx += dx * dx;
    }
    let b = sxy / sxx;
    let res: f64 = y
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let e = v as f64 - y0 - y_mean - b * (i as f64 - x_mean);
            e * e
        })
        .sum();
    let var = res / (n - 2.0).max(1.0);
    (b, (var / sxx).sqrt(), var.sqrt())
}

/// Standard deviation of the time per wave, from the times `y` at the
/// ends of consecutive waves (0 for fewer than two waves).
fn wave_sd(y: &[u64]) -> f64 {
    let d: Vec<f64> = y
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]) as f64)
        .collect();
    if d.len() < 2 {
        return 0.0;
    }
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Standard error of the mean time per wave, from the times `y` at the
/// ends of consecutive waves.
fn wave_se(y: &[u64]) -> f64 {
    let waves = y.len().saturating_sub(1).max(1) as f64;
    wave_sd(y) / waves.sqrt()
}

impl Sampler {
    /// A sampler for waves of `wave` blocks. `need_turnover`: the kernel
    /// may touch more than the L2 holds, so the steady state starts only
    /// once the L2 has replaced as many lines as it holds (its contents,
    /// and the write-backs of dirty ones, are then those of the stream).
    /// `need_writeback`: it may store more than the L2 keeps dirty, so the
    /// steady state starts only once the L2 writes back (before, its
    /// stores cost no DRAM writes).
    pub fn new(wave: u64, need_turnover: bool, need_writeback: bool) -> Sampler {
        Sampler {
            wave: wave.max(1),
            retired: Vec::new(),
            marks: vec![Mark::default()],
            need_turnover,
            need_writeback,
            turned_over_since: None,
            restart: 0,
            half_min: HALF_WAVES,
        }
    }

    /// The same sampler for a grid of `blocks` blocks: halves of a 16th of
    /// its waves each, from [`HALF_WAVES`] to [`MAX_HALF_WAVES`]. The
    /// longer the grid, the more a window's error is multiplied by the
    /// waves extrapolated, and the more waves there are to spend on it; a
    /// longer window also reaches past a slower phase of some waves after
    /// the start, which halves of four inside it cannot tell from the
    /// steady state (the module's documentation).
    pub fn for_grid(mut self, blocks: u64) -> Sampler {
        let waves = (blocks / self.wave) as usize;
        self.half_min = (waves / 16).clamp(HALF_WAVES, MAX_HALF_WAVES);
        self
    }

    /// Whether a grid of `blocks` is worth sampling in `mode`.
    pub fn wanted(mode: Sampling, blocks: u64, wave: u64) -> bool {
        let waves = blocks / wave.max(1);
        match mode {
            Sampling::Off => false,
            Sampling::On => waves > (WARMUP_WAVES + 2 * HALF_WAVES) as u64,
            Sampling::Auto => waves >= AUTO_MIN_WAVES,
        }
    }

    /// Whether the sampler has given up (it keeps at most
    /// [`MAX_RECORDED`] retirement times).
    pub fn exhausted(&self) -> bool {
        self.retired.len() >= MAX_RECORDED
    }

    /// Whether a window whose halves (`half` waves each, the second from
    /// wave `b`) run at `ra` and `rb` ps per block, `r` over both, with
    /// the times `y` at its wave ends, has settled: the halves agree
    /// within [`TOLERANCE`], and the waves vary little enough that the
    /// agreement means something (each half's mean wave time known to
    /// within [`HALF_SE`], one standard error). Where the halves differ
    /// by more than the waves' spread explains ([`DRIFT_SIGMAS`] standard
    /// errors of the difference beyond the tolerance), the rate has moved
    /// within the window, and the first half is dropped from it: the
    /// waves since are the better guide to the rest.
    fn settled(&mut self, ra: f64, rb: f64, r: f64, y: &[u64], half: usize, b: usize) -> bool {
        let per = self.wave as f64;
        let sd = wave_sd(y) / per;
        let diff = (ra - rb).abs();
        if diff > TOLERANCE * r {
            if diff > TOLERANCE * r + DRIFT_SIGMAS * sd * (2.0 / half as f64).sqrt() {
                self.restart = b;
            }
            return false;
        }
        sd / (half as f64).sqrt() <= HALF_SE * r
    }

    /// Records a block's retirement at `t`; returns true at the end of a
    /// wave, when [`Sampler::wave_done`] wants the counters.
    pub fn block_done(&mut self, t: u64) -> bool {
        self.retired.push(t);
        (self.retired.len() as u64).is_multiple_of(self.wave)
    }

    /// Records the end of a wave; returns the steady state once the two
    /// halves of the waves since the warm-up retire blocks at the same
    /// rate. `turned_over`: the L2 has replaced as many lines as it holds;
    /// `writing_back`: the DRAM has written some of the L2's dirty lines.
    pub fn wave_done(&mut self, m: Mark, turned_over: bool, writing_back: bool) -> Option<Steady> {
        self.marks.push(m);
        let n = self.marks.len() - 1; // waves recorded
        let l2_steady =
            (turned_over || !self.need_turnover) && (writing_back || !self.need_writeback);
        if l2_steady && self.turned_over_since.is_none() {
            self.turned_over_since = Some(n);
        }
        let first_ok = if self.need_turnover || self.need_writeback {
            self.turned_over_since?
        } else {
            0
        }
        .max(WARMUP_WAVES)
        .max(self.restart);
        if n < first_ok + 2 * self.half_min {
            return None;
        }
        // Checked at geometrically spaced waves once the window is long,
        // so that the fits cost a bounded multiple of the waves recorded.
        let span = n - first_ok;
        if !span.is_multiple_of((span / 16).max(1)) {
            return None;
        }
        let half = span / 2;
        let w = self.wave as usize;
        let (a, b) = (n - 2 * half, n - half);
        let (sa, _, _) = slope(&self.retired[a * w..b * w]);
        let (sb, _, _) = slope(&self.retired[b * w..n * w]);
        let (s, se, sd) = slope(&self.retired[a * w..n * w]);
        let t: Vec<u64> = self.marks[a..=n].iter().map(|m| m.t).collect();
        if s <= 0.0 || !self.settled(sa, sb, s, &t, half, b) {
            return None;
        }
        // The traffic must have settled too: each counter's increments per
        // sector issued agree between the halves. Where they do not (the
        // L2 has filled, or begun writing back, within the window), the
        // waves before the second half are left out from now on.
        let (ma, mb) = (self.marks[a], self.marks[b]);
        let per_sector = |x: &Mark, y: &Mark, k: usize| {
            (y.c[k] - x.c[k]) as f64 / (y.c[BASIS] - x.c[BASIS]).max(1) as f64 / SNAP_UNIT[k]
        };
        for k in 0..SNAP {
            let (ra, rb) = (per_sector(&ma, &mb, k), per_sector(&mb, &m, k));
            if (ra - rb).abs() > TOLERANCE * ra.max(rb) + TRAFFIC_SLACK {
                self.restart = b;
                return None;
            }
        }
        // Where the L2 writes back, its dirty data must have settled too:
        // in a steady state the slices write back as many sectors as the
        // stores make dirty, so the dirty data they hold is the same at
        // both ends of the window. Where it is not (write-backs that come
        // in phases, as an LRU sweep reaches the lines stored together),
        // the window's DRAM writes are not the rest's: it grows until it
        // spans whole phases.
        if self.need_writeback {
            let (ma, mn) = (self.marks[a], self.marks[n]);
            let held = mn.dirty.abs_diff(ma.dirty) as f64;
            let written = (mn.c[L2_WRITES] - ma.c[L2_WRITES]) as f64;
            if held > TOLERANCE * written {
                return None;
            }
        }
        // The units' work: a kernel ends when its work has drained, so where
        // the work booked per block outruns the retirements, that is the
        // rate, and it must have settled too.
        let work: Vec<u64> = self.marks[a..=n].iter().map(|m| m.work).collect();
        let per = self.wave as f64;
        let (wa, _, _) = slope(&work[..=half]);
        let (wb, _, _) = slope(&work[half..]);
        let (ws, wse, _) = slope(&work);
        let (wa, wb, ws, wse) = (wa / per, wb / per, ws / per, wse / per);
        let (rate, err, by_wave) = if ws > s {
            if !self.settled(wa, wb, ws, &work, half, b) {
                return None;
            }
            let e = (wa - wb).abs().max(2.0 * wse) + TOLERANCE * ws;
            (ws, e, wave_se(&work))
        } else {
            let e = (sa - sb).abs().max(2.0 * se) + TOLERANCE * s;
            (s, e, wave_se(&t))
        };
        // Waves vary together (a block's retirement is not independent of
        // its neighbours'), so the fit over blocks understates how far the
        // window's mean rate may be from the kernel's: the spread of the
        // whole waves' times bounds it too.
        let err = err.max(2.0 * by_wave / per + TOLERANCE * rate);
        let first = self.marks[a];
        let basis = (m.c[BASIS] - first.c[BASIS]).max(1) as f64;
        let mut per_sector = [0.0; SNAP];
        for (k, v) in per_sector.iter_mut().enumerate() {
            *v = (m.c[k] - first.c[k]) as f64 / basis;
        }
        Some(Steady {
            block_ps: rate,
            // The halves agree within the tolerance; the rest may drift as
            // far again.
            block_err_ps: err,
            end_err_ps: 2.0 * sd,
            per_sector,
        })
    }
}

impl Steady {
    /// Time, error and counters for `rest` blocks not timed, which issue
    /// `sectors` sectors: (added ps, error ps, added counters).
    pub fn extrapolate(&self, rest: u64, sectors: u64) -> (u64, u64, [u64; SNAP]) {
        let n = rest as f64;
        let mut c = [0u64; SNAP];
        for (k, v) in c.iter_mut().enumerate() {
            *v = (self.per_sector[k] * sectors as f64).round() as u64;
        }
        (
            (self.block_ps * n).round() as u64,
            (self.block_err_ps * n + self.end_err_ps).ceil() as u64,
            c,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `waves` waves of `w` blocks, block `i` retiring at `f(i)`,
    /// with the first counter growing by 3 per block; returns the steady
    /// state and the wave it was found in.
    fn feed(s: &mut Sampler, waves: u64, f: impl Fn(u64) -> u64) -> Option<(Steady, u64)> {
        for i in 0..waves * s.wave {
            let t = f(i);
            if s.block_done(t) {
                let m = Mark {
                    t,
                    work: t,
                    c: [3 * (i + 1), 0, 0, 0, 0, 0, 2 * (i + 1)],
                    dirty: 0,
                };
                if let Some(st) = s.wave_done(m, false, false) {
                    return Some((st, (i + 1) / s.wave));
                }
            }
        }
        None
    }

    #[test]
    fn settles_after_warmup_and_two_equal_halves() {
        let mut s = Sampler::new(10, false, false);
        // A slow ramp (the first 20 blocks take 1000 ps each), then 100 ps
        // per block with a jitter that averages out.
        let (st, wave) = feed(&mut s, 50, |i| {
            if i < 20 {
                1000 * (i + 1)
            } else {
                20_000 + 100 * (i - 19) + [0, 40, 10, 30][i as usize % 4]
            }
        })
        .expect("settled");
        assert_eq!(wave as usize, WARMUP_WAVES + 2 * HALF_WAVES);
        assert!((st.block_ps - 100.0).abs() < 1.0, "{st:?}");
        assert_eq!(st.per_sector[0], 1.5);
        let (dt, err, c) = st.extrapolate(100, 200);
        assert!((dt as f64 - 10_000.0).abs() < 100.0);
        // The jitter averages out; the tolerance is carried over the rest.
        assert!(err < 150 + (TOLERANCE * 10_000.0) as u64, "{err}");
        assert_eq!(c[0], 300);
    }

    #[test]
    fn work_that_outruns_the_retirements_sets_the_rate() {
        // Blocks retire every 100 ps, but each books 250 ps of DRAM work
        // (stores acknowledged before they are written): the kernel ends
        // with the work, so the rate is 250 ps per block.
        let mut s = Sampler::new(10, false, false);
        let mut found = None;
        for i in 0..60 * 10u64 {
            let t = 100 * (i + 1);
            if s.block_done(t) {
                let m = Mark {
                    t,
                    work: 250 * (i + 1),
                    c: [0, 0, 0, 0, 0, 0, i + 1],
                    dirty: 0,
                };
                if let Some(st) = s.wave_done(m, false, false) {
                    found = Some(st);
                    break;
                }
            }
        }
        let st = found.expect("settled");
        assert!((st.block_ps - 250.0).abs() < 1.0, "{st:?}");
    }

    #[test]
    fn the_spread_of_whole_waves_bounds_the_rate_error() {
        // Waves of 1000 and 1400 ps in turn: mean 1200, standard deviation
        // 231, so the mean of four is known to 115 ps.
        let se = wave_se(&[0, 1000, 2400, 3400, 4800]);
        assert!((se - 115.47).abs() < 0.01, "{se}");
        assert_eq!(wave_se(&[0, 1000]), 0.0, "one wave has no spread");
    }

    #[test]
    fn traffic_that_changes_restarts_the_window() {
        // Blocks retire every 100 ps throughout, but from block 100 on
        // (wave 10) each sector issued costs a DRAM write of 32 bytes as
        // well: the window must hold only waves after the change.
        let mut s = Sampler::new(10, false, false);
        let mut written = 0;
        let mut found = None;
        for i in 0..60 * 10u64 {
            if i >= 100 {
                written += 64;
            }
            let t = 100 * (i + 1);
            if s.block_done(t) {
                let m = Mark {
                    t,
                    work: t,
                    c: [0, 0, 0, 0, 0, written, 2 * (i + 1)],
                    dirty: 0,
                };
                if let Some(st) = s.wave_done(m, false, false) {
                    found = Some((st, (i + 1) / 10));
                    break;
                }
            }
        }
        let (st, wave) = found.expect("settled");
        assert!(wave > 10 + 2 * HALF_WAVES as u64, "settled at wave {wave}");
        assert!((st.per_sector[5] - 32.0).abs() < 1e-9, "{st:?}");
    }

    #[test]
    fn write_backs_in_phases_wait_for_the_dirty_data_to_settle() {
        // Blocks retire every 100 ps, each making 1 sector dirty; the L2
        // writes back at an even rate, but its dirty data grows for 20
        // waves (write-backs lag the stores by half) before the write-backs
        // catch up. A window inside the growth would take its DRAM writes
        // for the rest's: the sampler settles only after it.
        let mut s = Sampler::new(10, false, true);
        let (mut written, mut dirty) = (0u64, 0u64);
        let mut found = None;
        for i in 0..80 * 10u64 {
            let back = if i < 200 { i % 2 } else { 1 };
            written += 32 * back;
            dirty += 1 - back;
            let t = 100 * (i + 1);
            if s.block_done(t) {
                let m = Mark {
                    t,
                    work: t,
                    c: [0, 0, 0, i + 1, 0, written, i + 1],
                    dirty,
                };
                if let Some(st) = s.wave_done(m, false, written > 0) {
                    found = Some((st, (i + 1) / 10));
                    break;
                }
            }
        }
        let (st, wave) = found.expect("settled");
        assert!(wave > 20 + 2 * HALF_WAVES as u64, "settled at wave {wave}");
        assert!((st.per_sector[5] - 32.0).abs() < 1e-9, "{st:?}");
    }

    /// Wave `i`'s duration (ps, blocks retiring evenly within it) in a
    /// kernel that runs at 1000 ps a wave for waves 0-3, at 1300 with a
    /// spread of +-10% for waves 4-19 (a slow, uneven phase after the
    /// start), and at 1000 +-2% from wave 20 on.
    fn hump(i: u64) -> u64 {
        let jitter = [0i64, 1, -1, 0, 1, 0, -1, -1][i as usize % 8];
        match i {
            0..=3 => 1000,
            4..=19 => (1300 + 130 * jitter) as u64,
            _ => (1000 + 20 * jitter) as u64,
        }
    }

    fn feed_waves(s: &mut Sampler, waves: u64, d: impl Fn(u64) -> u64) -> Option<(Steady, u64)> {
        let w = s.wave;
        let mut t0 = 0;
        for i in 0..waves {
            let dur = d(i);
            for j in 0..w {
                let t = t0 + dur * (j + 1) / w;
                if s.block_done(t) {
                    let m = Mark {
                        t,
                        work: t,
                        c: [0, 0, 0, 0, 0, 0, (i + 1) * w],
                        dirty: 0,
                    };
                    if let Some(st) = s.wave_done(m, false, false) {
                        return Some((st, i + 1));
                    }
                }
            }
            t0 += dur;
        }
        None
    }

    #[test]
    fn a_slow_uneven_phase_is_not_taken_for_the_steady_state() {
        // Inside the slow phase two halves of four waves can agree by
        // chance; its waves vary too much for that to mean anything, and
        // once the halves differ by more than the spread explains, the
        // window starts again after it.
        let mut s = Sampler::new(10, false, false);
        let (st, wave) = feed_waves(&mut s, 100, hump).expect("settled");
        assert!(wave > 20, "settled at wave {wave}, inside the slow phase");
        assert!((st.block_ps - 100.0).abs() < 1.0, "{st:?}");
    }

    #[test]
    fn a_long_grid_reaches_past_a_smooth_slow_phase() {
        // Waves 4-15 run 10% slower but as evenly as the rest (seed 002's
        // double stride 29 at 256 MiB on the H200 has such a phase, waves
        // 5-17): halves of four inside it agree and vary little, so a
        // short grid's window takes it for the steady state; a grid of 256
        // waves has halves of 8, whose window reaches past it.
        let plateau = |i: u64| {
            let jitter = [0i64, 1, -1, 0][i as usize % 4];
            match i {
                4..=15 => (1100 + 10 * jitter) as u64,
                _ => (1000 + 10 * jitter) as u64,
            }
        };
        let mut short = Sampler::new(10, false, false);
        let (st, _) = feed_waves(&mut short, 256, plateau).expect("settled");
        assert!((st.block_ps - 110.0).abs() < 1.0, "{st:?}");
        let mut long = Sampler::new(10, false, false).for_grid(256 * 10);
        let (st, wave) = feed_waves(&mut long, 256, plateau).expect("settled");
        assert!(wave > 20, "settled at wave {wave}");
        assert!((st.block_ps - 100.0).abs() < 1.0, "{st:?}");
    }

    #[test]
    fn uneven_waves_lengthen_the_window() {
        // Waves of 900 and 1100 ps in turn (a spread of 10.3%): halves of
        // four agree exactly, but each half's mean is known only to 5%;
        // the window grows until it is known to 2%: 27 waves a half.
        let mut s = Sampler::new(10, false, false);
        let (st, wave) = feed_waves(&mut s, 400, |i| 900 + 200 * (i % 2)).expect("settled");
        assert!(
            wave as usize >= WARMUP_WAVES + 2 * 27,
            "settled at wave {wave}"
        );
        assert!((st.block_ps - 100.0).abs() < 1.0, "{st:?}");
    }

    #[test]
    fn a_drifting_rate_does_not_settle() {
        let mut s = Sampler::new(4, false, false);
        // Each block takes 1% longer than the one before.
        assert!(feed(&mut s, 40, |i| (1000.0 * 1.01f64.powi(i as i32)) as u64).is_none());
    }

    #[test]
    fn waits_for_the_l2_to_turn_over_when_the_footprint_exceeds_it() {
        let mut s = Sampler::new(1, true, false);
        let mut wave = |i: u64, turned: bool| {
            s.block_done(100 * i);
            s.wave_done(
                Mark {
                    t: 100 * i,
                    work: 100 * i,
                    c: [0; SNAP + 1],
                    dirty: 0,
                },
                turned,
                false,
            )
        };
        for i in 1..=30u64 {
            assert!(
                wave(i, false).is_none(),
                "steady, but the L2 has not turned over"
            );
        }
        // The L2 has turned over at wave 31; the window is the waves after.
        let window = 2 * HALF_WAVES as u64;
        for i in 31..31 + window {
            assert!(wave(i, true).is_none());
        }
        assert!(wave(31 + window, true).is_some());
    }

    #[test]
    fn auto_samples_only_long_grids() {
        assert!(Sampler::wanted(Sampling::Auto, AUTO_MIN_WAVES * 8, 8));
        assert!(!Sampler::wanted(Sampling::Auto, AUTO_MIN_WAVES * 8 - 1, 8));
        assert!(!Sampler::wanted(Sampling::Off, 1 << 20, 8));
        let min = (WARMUP_WAVES + 2 * HALF_WAVES) as u64;
        assert!(Sampler::wanted(Sampling::On, (min + 1) * 8, 8));
        assert!(!Sampler::wanted(Sampling::On, min * 8, 8));
    }
}
