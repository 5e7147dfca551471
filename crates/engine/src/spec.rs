//! Device configuration: one RON file per GPU, every field a physical
//! quantity (see `configs/*.ron` for the values and their sources).

use cache::CacheSpec;
use dram::DramSpec;
use lsu::Rule;
use serde::Deserialize;

/// A whole device.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Device")]
pub struct DeviceSpec {
    /// Short name used in reports, e.g. "c2050".
    pub name: String,
    /// Marketing name, e.g. "Tesla C2050".
    pub full_name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm: SmSpec,
    /// Coalescing rule for global loads.
    pub load_rule: Rule,
    /// Coalescing rule for global stores.
    pub store_rule: Rule,
    /// L1 data cache for global loads; absent where global memory is not cached.
    #[serde(default)]
    pub l1: Option<L1Spec>,
    /// L2 cache; absent where global memory is not cached.
    #[serde(default)]
    pub l2: Option<L2Spec>,
    /// SM-to-memory interconnect.
    pub interconnect: InterconnectSpec,
    /// Device memory.
    pub dram: DramSpec,
    /// Memory latency seen by a load that misses every cache, in SM cycles.
    pub dram_latency_cycles: u32,
    /// Kernel launch costs.
    pub launch: LaunchSpec,
    /// Per-block shared memory: capacity, banks, latency.
    pub shared: SharedSpec,
}

/// Shared memory of one SM (CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability" and "Shared Memory").
///
/// Peak per SM: one wavefront of `banks x bank_bytes` bytes per cycle,
/// through the LSU's data stage (the slot a line request takes).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedSpec {
    /// Shared memory an SM's resident blocks can use together, bytes.
    pub bytes_per_sm: u32,
    /// Shared memory one block may use, bytes.
    pub max_bytes_per_block: u32,
    /// Bytes the system reserves in every block's allocation (1 KiB since
    /// CC 8.0).
    pub reserved_bytes_per_block: u32,
    /// A block's shared memory is allocated in units of this many bytes.
    pub alloc_unit_bytes: u32,
    /// Number of banks.
    pub banks: u32,
    /// Bytes of one bank word.
    pub bank_bytes: u32,
    /// Lanes served together at most (32; 16 where half-warps are served
    /// separately, CC 1.x).
    pub pass_lanes: u32,
    /// Bytes of the lanes' words a load serves as one group (the warp is
    /// split into groups of at most this many bytes; wavefronts are counted
    /// per group).
    pub load_group_bytes: u32,
    /// The same for stores.
    pub store_group_bytes: u32,
    /// Cycles from a shared load's issue to its data, without conflicts.
    pub latency_cycles: u32,
}

impl SharedSpec {
    /// The bank geometry.
    pub fn banks(&self) -> lsu::Banks {
        lsu::Banks {
            banks: self.banks,
            bank_bytes: self.bank_bytes,
            pass_lanes: self.pass_lanes,
            load_group_bytes: self.load_group_bytes,
            store_group_bytes: self.store_group_bytes,
        }
    }

    /// Bytes an SM sets aside for a block that declares `bytes` (none for
    /// a block that declares none: what it reserves never limits the
    /// blocks an SM holds).
    pub fn block_allocation(&self, bytes: u64) -> u64 {
        if bytes == 0 {
            return 0;
        }
        self.block_reservation(bytes)
    }

    /// The shared memory a block of `bytes` takes from the array, its
    /// reserved bytes included even where it declares none (what the
    /// L1's carveout must hold).
    pub fn block_reservation(&self, bytes: u64) -> u64 {
        (bytes + self.reserved_bytes_per_block as u64)
            .next_multiple_of(self.alloc_unit_bytes.max(1) as u64)
    }
}

/// Most warp schedulers an SM may have (`sm.schedulers`).
pub const MAX_SCHEDULERS: u32 = 8;

/// One SM and how many there are.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmSpec {
    /// Number of SMs.
    pub count: u32,
    /// SM (shader) clock, MHz.
    pub clock_mhz: f64,
    /// Resident threads per SM.
    pub max_threads: u32,
    /// Resident warps per SM.
    pub max_warps: u32,
    /// Resident blocks per SM.
    pub max_blocks: u32,
    /// 32-bit registers per SM.
    pub registers: u32,
    /// Threads per block.
    pub max_threads_per_block: u32,
    /// Warp instructions issued per SM per cycle (warp schedulers x dispatch).
    pub issue_per_cycle: f64,
    /// Warp schedulers per SM (its sub-partitions): each warp belongs to
    /// one (round-robin as they start), and each scheduler issues at most
    /// `issue_per_cycle / schedulers` warp instructions a cycle, one warp
    /// at a time. Optional: without it one scheduler issues for every warp
    /// (a warp may then take every issue slot of a cycle).
    #[serde(default)]
    pub schedulers: Option<u32>,
    /// Cycles from issue of an arithmetic instruction to its result.
    pub alu_latency_cycles: u32,
    /// Cycles from a taken branch's issue (a jump, or a branch every
    /// active lane of the warp takes) until the warp issues again.
    /// Optional: without it a taken branch costs what an arithmetic
    /// instruction does.
    #[serde(default)]
    pub taken_branch_cycles: Option<u32>,
    /// SM cycles from a warp's start until its thread and block indices
    /// are in registers (the special-register reads, `S2R`/`S2UR`, the
    /// warp makes first): an instruction that reads `threadIdx` or
    /// `blockIdx` issues no earlier. Optional: without it they are there
    /// at once.
    #[serde(default)]
    pub special_register_cycles: Option<f64>,
    /// Line requests (tag lookups) the load/store unit handles per cycle.
    pub lsu_lines_per_cycle: f64,
    /// Sectors of store data the load/store unit sends toward the L2 per
    /// cycle: a store line request holds the unit for one beat per sector
    /// it writes and, where any byte of those sectors is left unwritten,
    /// one beat more for its byte mask (or for its tag lookup, if that is
    /// longer). Optional: without it a store line request takes a tag
    /// lookup's time, as a load's does.
    #[serde(default)]
    pub store_sectors_per_cycle: Option<f64>,
    /// Line requests in flight per SM beyond the L1 (MSHRs): a load miss
    /// holds an entry until its data arrives, a store until the L2 (or the
    /// memory controller) acknowledges it. The LSU stalls while all are
    /// taken.
    pub max_pending_lines: u32,
    /// Line requests the LSU's input queue holds: a warp cannot issue a
    /// memory instruction while the LSU has more than this many lines of
    /// work ahead of it.
    pub lsu_queue_lines: u32,
    /// Cycles a block's barrier takes to register one warp's arrival
    /// (arrivals are counted one after another).
    pub barrier_arrival_cycles: f64,
    /// Cycles from the last arrival's registration to the warps' release.
    pub barrier_latency_cycles: u32,
    /// How the register file is handed out to blocks. Optional: without
    /// it, the compute capability's ([`RegisterAllocation::of_compute_capability`]).
    #[serde(default)]
    pub register_allocation: Option<RegisterAllocation>,
    /// A warp's consecutive global stores to the same sectors that the L1
    /// merges before they leave the SM. Optional: without it every store
    /// line request goes to the L2.
    #[serde(default)]
    pub store_merge: Option<StoreMerge>,
}

/// Runs of one warp's stores merged in the L1 (only with 32-byte sectors
/// and an L2): a warp's store instruction joins the run its previous
/// memory instruction began where it writes only sectors of that run; its
/// line requests pass the tag stage, and their bytes join the run's lines
/// in the L2 without a write of their own. A store of at most
/// `run_sectors` sectors begins a run; any other memory instruction of the
/// warp, a barrier, or the warp's end closes it, and so does the SM when
/// it holds more than `open_sectors` sectors of runs open: the oldest runs
/// close first. With several schedulers, a store of at most
/// `run_sectors` sectors also joins, sector by sector, the stores of at
/// most `run_sectors` sectors that warps of other schedulers issued within
/// `window_cycles` SM cycles of it: the sectors they write leave with them.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreMerge {
    /// Sectors a run may write (a store writing more begins none).
    pub run_sectors: u32,
    /// Sectors of open runs an SM holds.
    pub open_sectors: u32,
    /// SM cycles apart two warps' stores may issue and still merge (0, the
    /// default: in the same cycle only).
    #[serde(default)]
    pub window_cycles: u32,
    /// A run closes once the data of its latest store has left the SM's
    /// store data path (`store_sectors_per_cycle`; a store merged into the
    /// run counts the beats its sectors would take there): a warp's store
    /// issued later begins a run of its own. Optional (false): a run stays
    /// open until another instruction of the warp closes it.
    #[serde(default)]
    pub close_when_sent: bool,
}

/// What a warp's or a block's registers are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum RegisterGranularity {
    /// Each warp gets `registers x 32` rounded up to `unit` (CC 2.0 on).
    Warp,
    /// Each block gets `registers x 32 x` its warps (rounded up to
    /// `warp_step`) rounded up to `unit` (CC 1.x).
    Block,
}

/// The register file's allocation rule, as Nsight Compute's occupancy
/// calculator gives it per compute capability (its "GPU Data": register
/// allocation unit size and granularity, warp allocation granularity).
/// A block of `w` warps at `r` registers a thread fits
///
/// ```text
///   Warp:   floor_to(registers / ceil_to(32 r, unit), warp_step) / w   blocks
///   Block:  registers / ceil_to(ceil_to(w, warp_step) x 32 r, unit)    blocks
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterAllocation {
    /// Per warp or per block.
    pub granularity: RegisterGranularity,
    /// Registers are handed out in multiples of this many.
    pub unit: u32,
    /// Warps are counted in multiples of this many: with `Warp`, the warps
    /// the register file holds are rounded down to it; with `Block`, a
    /// block's warps are rounded up to it.
    pub warp_step: u32,
    /// Registers a thread may use at most (a kernel past it cannot launch).
    pub max_per_thread: u32,
}

impl RegisterAllocation {
    /// The rule of compute capability `cc` (Nsight Compute's occupancy
    /// calculator, "GPU Data"; reproduced in T. McDonell's `cuda` package,
    /// `Foreign.CUDA.Analysis.Device`): CC 1.0-1.1 per block in units of
    /// 256, CC 1.2-1.3 of 512 (warps in pairs, 124 registers a thread at
    /// most); CC 2.x per warp in units of 64 (warps in pairs, 63 at most);
    /// CC 3.0 on per warp in units of 256 (warps in fours, in pairs on CC
    /// 5.2, 5.3 and 6.0; 63 at most on CC 3.0, 255 from CC 3.5).
    pub fn of_compute_capability(cc: (u32, u32)) -> RegisterAllocation {
        use RegisterGranularity::{Block, Warp};
        let (granularity, unit, warp_step, max_per_thread) = match cc {
            (1, 0 | 1) => (Block, 256, 2, 124),
            (1, _) => (Block, 512, 2, 124),
            (2, _) => (Warp, 64, 2, 63),
            (3, 0) => (Warp, 256, 4, 63),
            (5, 2 | 3) | (6, 0) => (Warp, 256, 2, 255),
            _ => (Warp, 256, 4, 255),
        };
        RegisterAllocation {
            granularity,
            unit,
            warp_step,
            max_per_thread,
        }
    }

    /// Blocks of `warps` warps at `regs` registers a thread that a register
    /// file of `registers` holds (`u32::MAX` for kernels that name no
    /// registers, 0 past `max_per_thread`).
    pub fn blocks(&self, registers: u32, regs: u32, warps: u32) -> u32 {
        if regs == 0 {
            return u32::MAX;
        }
        if regs > self.max_per_thread || warps == 0 {
            return 0;
        }
        let (file, unit, step) = (
            registers as u64,
            self.unit.max(1) as u64,
            self.warp_step.max(1) as u64,
        );
        let (r, w) = (regs as u64, warps as u64);
        let n = match self.granularity {
            RegisterGranularity::Warp => {
                let per_warp = (32 * r).next_multiple_of(unit);
                file / per_warp / step * step / w
            }
            RegisterGranularity::Block => {
                file / (w.next_multiple_of(step) * 32 * r).next_multiple_of(unit)
            }
        };
        n.min(u32::MAX as u64) as u32
    }
}

/// L1 data cache.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Spec {
    /// Geometry. With `carveouts`, `size_bytes` is the array the L1 shares
    /// with shared memory, all of it L1.
    pub cache: CacheSpec,
    /// Load-to-use latency of a hit, SM cycles.
    pub hit_latency_cycles: u32,
    /// The shared-memory sizes the L1's array can be split at, bytes,
    /// ascending (the carveout): a kernel gets the smallest that holds the
    /// shared memory of the blocks an SM holds at once (each block's
    /// allocation with the bytes reserved per block), and the L1 the rest
    /// of `cache.size_bytes`. Empty (the default): the L1 is
    /// `cache.size_bytes` whatever the kernel.
    #[serde(default)]
    pub carveouts: Vec<u32>,
}

impl L1Spec {
    /// The L1's geometry for a kernel whose SM holds `blocks` blocks of
    /// `shared` declared bytes of shared memory each (`shared_spec`'s
    /// allocation rule): the array less the carveout, in whole sets.
    pub fn for_kernel(&self, shared_spec: &SharedSpec, blocks: u32, shared: u64) -> CacheSpec {
        let mut c = self.cache.clone();
        if self.carveouts.is_empty() {
            return c;
        }
        let need = shared_spec.block_reservation(shared) * blocks as u64;
        let carve = self
            .carveouts
            .iter()
            .map(|&x| x as u64)
            .find(|&x| x >= need)
            .unwrap_or_else(|| *self.carveouts.last().unwrap() as u64);
        let set = c.line_bytes as u64 * c.ways as u64;
        c.size_bytes = (c.size_bytes.saturating_sub(carve) / set * set).max(set);
        c
    }
}

/// L2 cache, split into slices.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Spec {
    /// Number of slices; a line lives in the slice its address hashes to.
    pub slices: u32,
    /// Geometry of one slice.
    pub slice: CacheSpec,
    /// Load-to-use latency of an L2 hit from an SM, SM cycles.
    pub hit_latency_cycles: u32,
    /// Bytes one slice returns per SM cycle (its read port).
    pub slice_bytes_per_cycle: f64,
    /// Bytes one slice writes into its data array per SM cycle, stores and
    /// fills from DRAM together, through a write path of its own beside the
    /// read port. Absent: the slice has one port of `slice_bytes_per_cycle`
    /// that hits, fills and stores share.
    #[serde(default)]
    pub slice_write_bytes_per_cycle: Option<f64>,
    /// Slice cycles a store request's sector takes on the write path (or,
    /// without one, the port). Absent: its 32 bytes at the path's rate, as
    /// a fill's.
    #[serde(default)]
    pub store_sector_cycles: Option<f64>,
    /// Slice cycles a store request takes on the write path beyond its
    /// sectors: its command, whatever its size (fills from DRAM take their
    /// data alone). Default 0.
    #[serde(default)]
    pub store_request_cycles: f64,
    /// Slice cycles more that a store request takes where some byte of its
    /// sectors is not written: its byte mask. Default 0.
    #[serde(default)]
    pub store_mask_cycles: f64,
    /// Partitions the slices are split into (default 1). With 2, each
    /// partition caches the lines its own SMs use, keeping copies of lines
    /// homed in the other; a miss in the near partition goes to the home
    /// slice in the far one.
    #[serde(default = "one")]
    pub partitions: u32,
    /// Extra round-trip cycles to reach a slice in the far partition.
    #[serde(default)]
    pub far_latency_cycles: u32,
    /// Misses in flight per slice (L2 MSHRs): a miss holds one from its
    /// lookup until its fill; a miss that finds none free waits.
    pub mshrs: u32,
    /// Bytes a slice fetches from DRAM for a missed sector, the sectors
    /// beside it included (default: `dram.access_bytes`; a multiple of it).
    #[serde(default)]
    pub fetch_bytes: Option<u32>,
    /// Dirty lines one slice keeps (default: no limit). A store that makes
    /// one line too many dirty has the slice write back the line dirtied
    /// earliest; that line stays, clean.
    #[serde(default)]
    pub dirty_lines: Option<u32>,
    /// Dirty lines with a partly written sector one slice keeps (default:
    /// no limit); beyond it the slice completes the earliest: reads what
    /// its partly written sectors lack from DRAM and merges it (the line
    /// stays dirty, now whole).
    #[serde(default)]
    pub partial_lines: Option<u32>,
}

fn one() -> u32 {
    1
}

/// SM-to-L2 (or SM-to-memory-controller) network.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectSpec {
    /// Bytes per SM cycle through one SM's port, in each direction
    /// (requests and store data out; load data and acknowledgements in).
    pub sm_port_bytes_per_cycle: f64,
    /// Bytes of address and control in every packet (a load request, a
    /// store's header, a reply's header, an acknowledgement).
    pub header_bytes: u32,
    /// The order in which an SM takes in the data of its loads from the L2
    /// (`ReplyOrder`). Optional, default `Any`.
    #[serde(default)]
    pub reply_order: ReplyOrder,
    /// Line requests (loads and stores) that may be beyond the SMs at
    /// once, over the whole GPU: in the interconnect, the L2 slices and
    /// the memory controllers, from leaving their SM to their reply (a
    /// load's data back in it, a store's acceptance by the L2). With a
    /// bound, each SM's requests leave it in the order it sent them, and
    /// one that finds the bound reached waits in its SM with those behind
    /// it. Optional; none (the default): each request leaves when its LSU
    /// and in-flight entry let it.
    #[serde(default)]
    pub requests_beyond_sms: Option<u32>,
}

/// The order in which an SM takes in the data of its loads from the L2
/// (or the memory controllers): whether an L2 hit sent after a miss waits
/// for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum ReplyOrder {
    /// Each load's data enters the SM as soon as it arrives.
    #[default]
    Any,
    /// A load's data enters no sooner than that of the load the SM sent
    /// just before it (as that one arrives, not as it enters).
    AfterPrevious,
    /// A load's data enters no sooner than that of every load the SM sent
    /// before it.
    Strict,
}

/// Kernel launch costs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// Fixed duration of a kernel of one block that does nothing, ns.
    pub kernel_overhead_ns: f64,
    /// SM cycles an SM takes to launch one block; an SM launches its blocks
    /// one at a time.
    pub block_launch_cycles: f64,
    /// SM cycles a block slot stands empty between a block's exit and the
    /// first instruction of the block that takes the slot (the exit reported
    /// to the block scheduler, a block sent, its warps set up). Optional:
    /// without it a slot refills after `block_launch_cycles`.
    #[serde(default)]
    pub slot_refill_cycles: Option<f64>,
}

impl DeviceSpec {
    /// The register file's allocation rule: the config's, else the compute
    /// capability's.
    pub fn register_allocation(&self) -> RegisterAllocation {
        self.sm
            .register_allocation
            .unwrap_or_else(|| RegisterAllocation::of_compute_capability(self.compute_capability))
    }

    /// Blocks of `warps` warps at `regs` registers a thread that one SM's
    /// register file holds.
    pub fn blocks_by_registers(&self, regs: u32, warps: u32) -> u32 {
        self.register_allocation()
            .blocks(self.sm.registers, regs, warps)
    }

    /// Checks values that serde cannot; returns the field path and reason.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let e = |p: &str, m: String| Err((p.to_string(), m));
        let sm = &self.sm;
        let field = |(f, m): (&str, String)| (f.to_string(), m);
        dram::check_values(
            &[
                ("sm.count", sm.count as f64),
                ("sm.clock_mhz", sm.clock_mhz),
                ("sm.max_threads", sm.max_threads as f64),
                ("sm.max_warps", sm.max_warps as f64),
                ("sm.max_blocks", sm.max_blocks as f64),
                ("sm.registers", sm.registers as f64),
                ("sm.max_threads_per_block", sm.max_threads_per_block as f64),
                ("sm.issue_per_cycle", sm.issue_per_cycle),
                ("sm.lsu_lines_per_cycle", sm.lsu_lines_per_cycle),
                ("sm.max_pending_lines", sm.max_pending_lines as f64),
                ("sm.lsu_queue_lines", sm.lsu_queue_lines as f64),
                (
                    "interconnect.sm_port_bytes_per_cycle",
                    self.interconnect.sm_port_bytes_per_cycle,
                ),
                ("dram_latency_cycles", self.dram_latency_cycles as f64),
            ],
            true,
        )
        .map_err(field)?;
        dram::check_values(
            &[
                ("launch.kernel_overhead_ns", self.launch.kernel_overhead_ns),
                (
                    "launch.block_launch_cycles",
                    self.launch.block_launch_cycles,
                ),
                (
                    "launch.slot_refill_cycles",
                    self.launch.slot_refill_cycles.unwrap_or(0.0),
                ),
                (
                    "sm.special_register_cycles",
                    self.sm.special_register_cycles.unwrap_or(0.0),
                ),
            ],
            false,
        )
        .map_err(field)?;
        if let Some(r) = &self.sm.register_allocation {
            for (f, v) in [("unit", r.unit), ("warp_step", r.warp_step)] {
                if v == 0 {
                    return e(
                        &format!("sm.register_allocation.{f}"),
                        "must be at least 1".into(),
                    );
                }
            }
        }
        if let Some(l1) = &self.l1 {
            l1.cache
                .validate()
                .map_err(|x| ("l1.cache".to_string(), x.to_string()))?;
            line_geometry("l1.cache", &l1.cache)?;
            let c = &l1.carveouts;
            if c.windows(2).any(|w| w[0] >= w[1]) {
                return e("l1.carveouts", "must be ascending".into());
            }
            if let Some(&last) = c.last() {
                if last as u64 >= l1.cache.size_bytes {
                    return e(
                        "l1.carveouts",
                        format!(
                            "the largest ({last}) must leave some of l1.cache.size_bytes ({}) to the L1",
                            l1.cache.size_bytes
                        ),
                    );
                }
            }
        }
        if let Some(l2) = &self.l2 {
            l2.slice
                .validate()
                .map_err(|x| ("l2.slice".to_string(), x.to_string()))?;
            line_geometry("l2.slice", &l2.slice)?;
            if l2.slices == 0 {
                return e("l2.slices", "must be at least 1".into());
            }
            if l2.partitions == 0 || l2.slices % l2.partitions != 0 {
                return e(
                    "l2.partitions",
                    format!("must divide l2.slices ({}) and be at least 1", l2.slices),
                );
            }
            dram::check_values(
                &[
                    ("l2.slice_bytes_per_cycle", l2.slice_bytes_per_cycle),
                    (
                        "l2.slice_write_bytes_per_cycle",
                        l2.slice_write_bytes_per_cycle
                            .unwrap_or(l2.slice_bytes_per_cycle),
                    ),
                    ("l2.mshrs", l2.mshrs as f64),
                ],
                true,
            )
            .map_err(field)?;
        }
        // Each field's range first: it names the field, where the DRAM's
        // checks of how the fields fit together name the result.
        self.check_ranges()?;
        self.dram.validate().map_err(|m| ("dram".to_string(), m))?;
        // The SMs count time in intervals of their cycles and the DRAM in
        // intervals of its bursts, and a request's hold spans both: where
        // the two are a thousand times apart (no GPU is near 10 times), a
        // hold covers millions of intervals.
        let (cycle, burst) = (self.cycle_ps(), self.dram.burst_ps() as f64);
        if cycle > 1000.0 * burst || burst > 1000.0 * cycle {
            return e(
                "sm.clock_mhz",
                format!(
                    "an SM cycle of {cycle:.0} ps and a DRAM burst of {burst:.0} ps \
                     (dram.access_bytes / (dram.channel_bits / 8 x dram.data_rate_gbps)) are more \
                     than 1000 times apart: far beyond any GPU, and the model's state grows with \
                     their ratio"
                ),
            );
        }
        if let Some(f) = self.l2.as_ref().and_then(|l| l.fetch_bytes) {
            let a = self.dram.access_bytes;
            if !matches!(f, 32 | 64 | 128) || f % a != 0 {
                return e(
                    "l2.fetch_bytes",
                    format!(
                        "must be 32, 64 or 128, a multiple of dram.access_bytes ({a}); not {f}"
                    ),
                );
            }
        }
        for (f, r) in [
            ("load_rule", self.load_rule),
            ("store_rule", self.store_rule),
        ] {
            if let Rule::Lines { bytes } = r {
                if bytes != 32 && bytes != 128 {
                    return e(f, format!("Lines(bytes) must be 32 or 128, not {bytes}"));
                }
            }
        }
        Ok(())
    }

    /// Refuses values no GPU comes near (about a thousand times beyond the
    /// largest of today's devices): the timed model's state and its
    /// picosecond arithmetic are sized by them (a latency of 2^31 cycles
    /// makes every calendar span seconds; a cache of a terabyte would be
    /// allocated), so such a value is an error, not a what-if.
    fn check_ranges(&self) -> Result<(), (String, String)> {
        let (sm, d) = (&self.sm, &self.dram);
        let mut v: Vec<(&str, f64, f64, f64)> = vec![
            ("sm.count", sm.count as f64, 1.0, 65536.0),
            ("sm.clock_mhz", sm.clock_mhz, 1.0, 100_000.0),
            ("sm.max_threads", sm.max_threads as f64, 1.0, 1e6),
            ("sm.max_warps", sm.max_warps as f64, 1.0, 32768.0),
            ("sm.max_blocks", sm.max_blocks as f64, 1.0, 32768.0),
            (
                "sm.max_threads_per_block",
                sm.max_threads_per_block as f64,
                1.0,
                1e6,
            ),
            ("sm.issue_per_cycle", sm.issue_per_cycle, 1e-3, 1024.0),
            (
                "sm.schedulers",
                sm.schedulers.unwrap_or(1) as f64,
                1.0,
                MAX_SCHEDULERS as f64,
            ),
            (
                "sm.alu_latency_cycles",
                sm.alu_latency_cycles as f64,
                0.0,
                1e5,
            ),
            (
                "sm.taken_branch_cycles",
                sm.taken_branch_cycles.unwrap_or(0) as f64,
                0.0,
                1e5,
            ),
            (
                "sm.lsu_lines_per_cycle",
                sm.lsu_lines_per_cycle,
                1e-3,
                1024.0,
            ),
            (
                "sm.store_sectors_per_cycle",
                sm.store_sectors_per_cycle.unwrap_or(1.0),
                1e-3,
                1024.0,
            ),
            // Pools of entries have at most `timing::MAX_ENTRIES`.
            (
                "sm.max_pending_lines",
                sm.max_pending_lines as f64,
                1.0,
                timing::MAX_ENTRIES as f64,
            ),
            ("sm.lsu_queue_lines", sm.lsu_queue_lines as f64, 1.0, 1e6),
            (
                "sm.store_merge.run_sectors",
                sm.store_merge.map_or(1.0, |m| m.run_sectors as f64),
                1.0,
                32.0,
            ),
            (
                "sm.store_merge.open_sectors",
                sm.store_merge.map_or(1.0, |m| m.open_sectors as f64),
                1.0,
                1e6,
            ),
            (
                "sm.barrier_arrival_cycles",
                sm.barrier_arrival_cycles,
                0.0,
                1e5,
            ),
            (
                "sm.barrier_latency_cycles",
                sm.barrier_latency_cycles as f64,
                0.0,
                1e5,
            ),
            (
                "interconnect.sm_port_bytes_per_cycle",
                self.interconnect.sm_port_bytes_per_cycle,
                1e-3,
                1e6,
            ),
            (
                "interconnect.header_bytes",
                self.interconnect.header_bytes as f64,
                0.0,
                4096.0,
            ),
            // Counted by a pool, in 16 bits.
            (
                "interconnect.requests_beyond_sms",
                self.interconnect.requests_beyond_sms.unwrap_or(1) as f64,
                1.0,
                timing::MAX_ENTRIES as f64,
            ),
            (
                "dram_latency_cycles",
                self.dram_latency_cycles as f64,
                1.0,
                1e6,
            ),
            (
                "launch.kernel_overhead_ns",
                self.launch.kernel_overhead_ns,
                0.0,
                1e9,
            ),
            (
                "launch.block_launch_cycles",
                self.launch.block_launch_cycles,
                0.0,
                1e6,
            ),
            (
                "launch.slot_refill_cycles",
                self.launch.slot_refill_cycles.unwrap_or(0.0),
                0.0,
                1e6,
            ),
            (
                "sm.special_register_cycles",
                self.sm.special_register_cycles.unwrap_or(0.0),
                0.0,
                1e6,
            ),
            ("dram.channels", d.channels as f64, 1.0, 65536.0),
            ("dram.channel_bits", d.channel_bits as f64, 1.0, 65536.0),
            ("dram.data_rate_gbps", d.data_rate_gbps, 1e-3, 1e4),
            ("dram.access_bytes", d.access_bytes as f64, 1.0, 65536.0),
            ("dram.banks", d.banks as f64, 1.0, 65536.0),
            ("dram.row_bytes", d.row_bytes as f64, 1.0, 16.0 * 1048576.0),
            (
                "dram.interleave_bytes",
                d.interleave_bytes as f64,
                1.0,
                1073741824.0,
            ),
            ("dram.t_rcd_ns", d.t_rcd_ns, 0.0, 1e6),
            ("dram.t_rp_ns", d.t_rp_ns, 0.0, 1e6),
            ("dram.t_cl_ns", d.t_cl_ns, 0.0, 1e6),
            ("dram.t_ras_ns", d.t_ras_ns, 0.0, 1e6),
            ("dram.t_wtr_ns", d.t_wtr_ns, 0.0, 1e6),
            ("dram.t_rtw_ns", d.t_rtw_ns, 0.0, 1e6),
            ("dram.t_wr_ns", d.t_wr_ns, 0.0, 1e6),
            // The rates of a bank group's column commands and a channel's
            // activations bound how fast a backlog drains, and the
            // calendars hold the whole backlog: at 100 us of tFAW a 1 MiB
            // kernel on the H200 held 789 MB (at 10 us, 64 MiB: 555 MB).
            ("dram.t_faw_ns", d.t_faw_ns, 0.0, 1e4),
            ("dram.t_ccd_l_ns", d.t_ccd_l_ns, 0.0, 1e4),
            ("dram.t_refi_ns", d.t_refi_ns, 0.0, 1e9),
            ("dram.t_rfc_ns", d.t_rfc_ns, 0.0, 1e6),
            (
                "dram.refresh_postpone",
                d.refresh_postpone as f64,
                0.0,
                64.0,
            ),
            ("dram.write_drain", d.write_drain as f64, 1.0, 1e6),
            (
                "dram.read_queue",
                d.read_queue as f64,
                1.0,
                timing::MAX_ENTRIES as f64,
            ),
            ("dram.ecc_overhead", d.ecc_overhead, 0.0, 100.0),
            (
                "shared.bytes_per_sm",
                self.shared.bytes_per_sm as f64,
                1.0,
                1073741824.0,
            ),
            (
                "shared.max_bytes_per_block",
                self.shared.max_bytes_per_block as f64,
                1.0,
                1073741824.0,
            ),
            (
                "shared.reserved_bytes_per_block",
                self.shared.reserved_bytes_per_block as f64,
                0.0,
                1048576.0,
            ),
            (
                "shared.alloc_unit_bytes",
                self.shared.alloc_unit_bytes as f64,
                1.0,
                1048576.0,
            ),
            ("shared.banks", self.shared.banks as f64, 1.0, 64.0),
            (
                "shared.bank_bytes",
                self.shared.bank_bytes as f64,
                1.0,
                64.0,
            ),
            (
                "shared.pass_lanes",
                self.shared.pass_lanes as f64,
                1.0,
                32.0,
            ),
            (
                "shared.load_group_bytes",
                self.shared.load_group_bytes as f64,
                1.0,
                4096.0,
            ),
            (
                "shared.store_group_bytes",
                self.shared.store_group_bytes as f64,
                1.0,
                4096.0,
            ),
            (
                "shared.latency_cycles",
                self.shared.latency_cycles as f64,
                0.0,
                1e5,
            ),
        ];
        // Totals over all units, each with the units it is over.
        let mut totals: Vec<(&str, f64, f64, &str)> = vec![(
            // Every bank has its own bookings: at most 2^20 banks over
            // all channels (an H200 has 3008).
            "dram.banks",
            d.banks as f64 * d.channels as f64,
            1048576.0,
            "channels",
        )];
        // Caches are allocated whole: at most 4 GiB of L1 over all SMs,
        // and of L2.
        const CACHE_TOTAL: f64 = 4.0 * 1073741824.0;
        if let Some(l1) = &self.l1 {
            v.push((
                "l1.hit_latency_cycles",
                l1.hit_latency_cycles as f64,
                0.0,
                1e5,
            ));
            totals.push((
                "l1.cache.size_bytes",
                l1.cache.size_bytes as f64 * sm.count as f64,
                CACHE_TOTAL,
                "SMs or slices",
            ));
        }
        if let Some(l2) = &self.l2 {
            v.push(("l2.slices", l2.slices as f64, 1.0, 65536.0));
            v.push((
                "l2.hit_latency_cycles",
                l2.hit_latency_cycles as f64,
                0.0,
                1e5,
            ));
            v.push((
                "l2.far_latency_cycles",
                l2.far_latency_cycles as f64,
                0.0,
                1e5,
            ));
            v.push((
                "l2.slice_bytes_per_cycle",
                l2.slice_bytes_per_cycle,
                1e-3,
                1e6,
            ));
            if let Some(w) = l2.slice_write_bytes_per_cycle {
                v.push(("l2.slice_write_bytes_per_cycle", w, 1e-3, 1e6));
            }
            v.push(("l2.mshrs", l2.mshrs as f64, 1.0, timing::MAX_ENTRIES as f64));
            v.push((
                "l2.store_sector_cycles",
                l2.store_sector_cycles.unwrap_or(1.0),
                1e-3,
                1e5,
            ));
            v.push(("l2.store_request_cycles", l2.store_request_cycles, 0.0, 1e5));
            v.push(("l2.store_mask_cycles", l2.store_mask_cycles, 0.0, 1e5));
            if let Some(f) = l2.fetch_bytes {
                v.push(("l2.fetch_bytes", f as f64, 32.0, 128.0));
            }
            if let Some(d) = l2.dirty_lines {
                v.push(("l2.dirty_lines", d as f64, 1.0, 1e9));
            }
            if let Some(d) = l2.partial_lines {
                v.push(("l2.partial_lines", d as f64, 1.0, 1e9));
            }
            totals.push((
                "l2.slice.size_bytes",
                l2.slice.size_bytes as f64 * l2.slices as f64,
                CACHE_TOTAL,
                "SMs or slices",
            ));
        }
        let all = v
            .into_iter()
            .map(|(path, x, lo, hi)| (path, x, lo, hi, String::new()))
            .chain(
                totals
                    .into_iter()
                    .map(|(path, x, hi, over)| (path, x, 1.0, hi, format!(" (over all {over})"))),
            );
        for (path, x, lo, hi, what) in all {
            if !(x.is_finite() && x >= lo && x <= hi) {
                return Err((
                    path.to_string(),
                    format!(
                        "must be between {lo} and {hi}{what}, is {x}: far beyond any GPU, and the \
                         model's state grows with it"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Picoseconds per SM cycle.
    pub fn cycle_ps(&self) -> f64 {
        1e6 / self.sm.clock_mhz
    }

    /// Theoretical DRAM bandwidth, GB/s.
    pub fn peak_gbps(&self) -> f64 {
        self.dram.peak_gbps()
    }
}

/// The caches see the coalescer's line requests: 128-byte lines
/// ([`lsu::LINE_BYTES`]) of four 32-byte sectors, each request a mask of
/// those four. A cache of another geometry would be handed the same
/// masks and silently read them as its own, so it is refused.
fn line_geometry(at: &str, c: &cache::CacheSpec) -> Result<(), (String, String)> {
    for (field, value, want) in [
        ("line_bytes", c.line_bytes, lsu::LINE_BYTES as u32),
        ("sector_bytes", c.sector_bytes, 32),
    ] {
        if value != want {
            return Err((
                format!("{at}.{field}"),
                format!(
                    "must be {want}, not {value}: the caches take the coalescer's requests, \
                     128-byte lines of four 32-byte sectors, and no other geometry is modelled"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(cc: (u32, u32)) -> RegisterAllocation {
        RegisterAllocation::of_compute_capability(cc)
    }

    #[test]
    fn a_warps_registers_are_rounded_up_to_the_unit_and_the_warps_down_to_fours() {
        let r = rule((9, 0));
        // 35 registers: 1120 a warp, 1280 allocated; 51 warps, 48 counted.
        assert_eq!(r.blocks(65536, 35, 8), 6);
        assert_eq!(r.blocks(65536, 32, 8), 8);
        assert_eq!(r.blocks(65536, 255, 8), 1);
        assert_eq!(r.blocks(65536, 256, 1), 0, "past max_per_thread");
        assert_eq!(r.blocks(65536, 0, 8), u32::MAX, "no registers named");
    }

    #[test]
    fn fermi_rounds_a_warp_to_64_registers_and_counts_warps_in_pairs() {
        // 21 registers: 672 a warp, 704 allocated; 46 warps of 32768.
        assert_eq!(rule((2, 0)).blocks(32768, 21, 6), 7);
        assert_eq!(rule((2, 0)).blocks(32768, 64, 1), 0, "past 63");
    }

    #[test]
    fn the_l1_is_what_the_kernels_shared_memory_leaves_of_the_array() {
        let shared = SharedSpec {
            bytes_per_sm: 233472,
            max_bytes_per_block: 232448,
            reserved_bytes_per_block: 1024,
            alloc_unit_bytes: 128,
            banks: 32,
            bank_bytes: 4,
            pass_lanes: 32,
            load_group_bytes: 256,
            store_group_bytes: 128,
            latency_cycles: 23,
        };
        let l1 = L1Spec {
            cache: CacheSpec {
                size_bytes: 262144,
                line_bytes: 128,
                sector_bytes: 32,
                ways: 4,
                set_index: cache::SetIndex::Linear,
            },
            hit_latency_cycles: 32,
            carveouts: [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]
                .map(|k| k * 1024)
                .to_vec(),
        };
        // No shared memory: 8 blocks reserve 8 KiB, the smallest split.
        assert_eq!(l1.for_kernel(&shared, 8, 0).size_bytes, 248 * 1024);
        // 32 blocks of 1 KiB reserved: 32 KiB.
        assert_eq!(l1.for_kernel(&shared, 32, 0).size_bytes, 224 * 1024);
        // One block of 200 KiB (and its 1 KiB): 228 KiB of shared memory.
        assert_eq!(l1.for_kernel(&shared, 1, 200 * 1024).size_bytes, 28 * 1024);
        // Without carveouts the L1 stays whole.
        let fixed = L1Spec {
            carveouts: Vec::new(),
            ..l1.clone()
        };
        assert_eq!(fixed.for_kernel(&shared, 8, 0).size_bytes, 262144);
    }

    #[test]
    fn tesla_rounds_a_whole_block() {
        // CC 1.3: 5 warps count as 6, 6 x 32 x 10 = 1920 registers, 2048
        // allocated: 8 blocks of 16384 registers.
        assert_eq!(rule((1, 3)).blocks(16384, 10, 5), 8);
        // CC 1.0: units of 256: 1920 rounds to 2048 as well, 4 of 8192.
        assert_eq!(rule((1, 0)).blocks(8192, 10, 5), 4);
    }
}
