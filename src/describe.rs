//! `gpusim describe`: the machine a device file (and its overrides) makes,
//! in derived quantities, each with its formula and the fields it comes
//! from.

use engine::DeviceSpec;
use std::fmt::Write as _;

pub const HELP: &str = "\
Every figure is computed from the device file's fields, as the model uses them; the formula
after each names the fields (and their values). With --config-set the figures follow the
changed fields, so `describe` is a quick check of a what-if before simulating it:

    gpusim describe configs/h100.ron --config-set l2.slice.size_bytes=1310720
    gpusim describe configs/c2050.ron --regs 32

Bandwidths are in GB/s = 1e9 B/s; a cycle is an SM cycle. The occupancy table applies the
per-SM limits the simulator launches blocks under (blocks, warps, threads, registers).";

/// One derived line: label, value, formula.
struct Out(String);

impl Out {
    fn row(&mut self, label: &str, value: String, formula: String) {
        let _ = writeln!(self.0, "  {label:<34} {value:>20}   = {formula}");
    }
    fn head(&mut self, h: &str) {
        let _ = writeln!(self.0, "\n{h}");
    }
}

fn gbps(x: f64) -> String {
    format!("{x:.1} GB/s")
}

fn bytes(b: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    if b >= MIB {
        format!("{:.2} MiB", b as f64 / MIB as f64)
    } else if b >= KIB {
        format!("{:.1} KiB", b as f64 / KIB as f64)
    } else {
        format!("{b} B")
    }
}

/// The text of `gpusim describe`.
pub fn describe(d: &DeviceSpec, regs_per_thread: u32) -> String {
    let mut o = Out(String::new());
    let sm = &d.sm;
    let mhz = sm.clock_mhz;
    let ns = |cycles: f64| cycles * 1e3 / mhz;
    let per_cycle_gbps = |b: f64| b * mhz / 1e3;
    let _ = writeln!(
        o.0,
        "{} ({}), compute capability {}.{}",
        d.name, d.full_name, d.compute_capability.0, d.compute_capability.1
    );

    o.head("SMs");
    o.row(
        "SMs x clock",
        format!("{} x {mhz} MHz", sm.count),
        "sm.count x sm.clock_mhz".into(),
    );
    o.row(
        "warp instructions issued",
        format!(
            "{:.1} G/s",
            sm.count as f64 * sm.issue_per_cycle * mhz / 1e3
        ),
        format!(
            "sm.count ({}) x sm.issue_per_cycle ({}) x sm.clock_mhz",
            sm.count, sm.issue_per_cycle
        ),
    );
    o.row(
        "load rule / store rule",
        String::new(),
        format!("{:?} / {:?}", d.load_rule, d.store_rule),
    );

    o.head("DRAM");
    let dr = &d.dram;
    let peak = d.peak_gbps();
    o.row(
        "peak bandwidth (pins)",
        gbps(peak),
        format!(
            "dram.channels ({}) x dram.channel_bits ({}) / 8 x dram.data_rate_gbps ({})",
            dr.channels, dr.channel_bits, dr.data_rate_gbps
        ),
    );
    if dr.ecc_overhead > 0.0 {
        o.row(
            "peak bandwidth after ECC",
            gbps(peak / (1.0 + dr.ecc_overhead)),
            format!("peak / (1 + dram.ecc_overhead ({}))", dr.ecc_overhead),
        );
    }
    let burst_ns = dr.access_bytes as f64 / (dr.channel_bits as f64 / 8.0 * dr.data_rate_gbps)
        * (1.0 + dr.ecc_overhead);
    o.row(
        "bus time of one access",
        format!("{burst_ns:.2} ns"),
        format!(
            "dram.access_bytes ({}) / (dram.channel_bits / 8 x dram.data_rate_gbps) x (1 + dram.ecc_overhead)",
            dr.access_bytes
        ),
    );
    o.row(
        "row hit : row miss (read, to data)",
        format!(
            "{:.1} : {:.1} ns",
            dr.t_cl_ns,
            dr.t_rp_ns + dr.t_rcd_ns + dr.t_cl_ns
        ),
        "dram.t_cl_ns : dram.t_rp_ns + dram.t_rcd_ns + dram.t_cl_ns".into(),
    );
    o.row(
        "banks in all",
        format!("{}", dr.channels as u64 * dr.banks as u64),
        format!("dram.channels x dram.banks ({})", dr.banks),
    );
    if dr.t_faw_ns > 0.0 {
        let rows = dr.channels as f64 * 4.0 / dr.t_faw_ns;
        o.row(
            "rows opened at most (tFAW)",
            format!("{rows:.1} G/s"),
            format!(
                "dram.channels x 4 / dram.t_faw_ns ({}): four activations per window per channel",
                dr.t_faw_ns
            ),
        );
        o.row(
            "one access per row opened",
            gbps(rows * dr.access_bytes as f64),
            "rows opened x dram.access_bytes: random accesses that find no row open".into(),
        );
    }
    if dr.close_after_write {
        o.row(
            "after a write request",
            "row closed".into(),
            "dram.close_after_write: the next access to the bank activates again".into(),
        );
    }
    if dr.t_refi_ns > 0.0 {
        o.row(
            "bank time lost to refresh",
            format!("{:.1}%", 100.0 * dr.t_rfc_ns / dr.t_refi_ns),
            format!(
                "dram.t_rfc_ns ({}) / dram.t_refi_ns ({}), each bank on its own",
                dr.t_rfc_ns, dr.t_refi_ns
            ),
        );
    }

    o.head("L2");
    match &d.l2 {
        None => {
            let _ = writeln!(
                o.0,
                "  none (l2 is None): global memory goes straight to DRAM"
            );
        }
        Some(l2) => {
            let cap = l2.slices as u64 * l2.slice.size_bytes;
            o.row(
                "capacity",
                bytes(cap),
                format!(
                    "l2.slices ({}) x l2.slice.size_bytes ({})",
                    l2.slices, l2.slice.size_bytes
                ),
            );
            o.row(
                "sets per slice",
                format!("{}", l2.slice.sets()),
                format!(
                    "l2.slice.size_bytes / (l2.slice.line_bytes ({}) x l2.slice.ways ({}))",
                    l2.slice.line_bytes, l2.slice.ways
                ),
            );
            if l2.partitions > 1 {
                o.row(
                    "capacity per partition",
                    bytes(cap / l2.partitions as u64),
                    format!(
                        "capacity / l2.partitions ({}); lines used by both are held in both",
                        l2.partitions
                    ),
                );
            }
            o.row(
                "read bandwidth",
                gbps(per_cycle_gbps(l2.slices as f64 * l2.slice_bytes_per_cycle)),
                format!(
                    "l2.slices x l2.slice_bytes_per_cycle ({}) x sm.clock_mhz",
                    l2.slice_bytes_per_cycle
                ),
            );
            if let Some(w) = l2.slice_write_bytes_per_cycle {
                o.row(
                    "write bandwidth",
                    gbps(per_cycle_gbps(l2.slices as f64 * w)),
                    format!("l2.slices x l2.slice_write_bytes_per_cycle ({w}) x sm.clock_mhz"),
                );
            }
            o.row(
                "hit latency",
                format!(
                    "{} cyc, {:.0} ns",
                    l2.hit_latency_cycles,
                    ns(l2.hit_latency_cycles as f64)
                ),
                "l2.hit_latency_cycles / sm.clock_mhz".into(),
            );
            if l2.partitions > 1 {
                let far = l2.hit_latency_cycles + l2.far_latency_cycles;
                o.row(
                    "hit latency, far partition",
                    format!("{far} cyc, {:.0} ns", ns(far as f64)),
                    format!(
                        "l2.hit_latency_cycles + l2.far_latency_cycles ({})",
                        l2.far_latency_cycles
                    ),
                );
            }
            o.row(
                "misses in flight",
                format!("{}", l2.slices as u64 * l2.mshrs as u64),
                format!("l2.slices x l2.mshrs ({})", l2.mshrs),
            );
        }
    }

    o.head("L1 and the load/store unit");
    let line = d.l1.as_ref().map_or(32, |l1| l1.cache.line_bytes);
    match &d.l1 {
        None => {
            let _ = writeln!(o.0, "  no L1 for global data (l1 is None)");
        }
        Some(l1) => {
            o.row(
                "capacity per SM / in all",
                format!(
                    "{} / {}",
                    bytes(l1.cache.size_bytes),
                    bytes(l1.cache.size_bytes * sm.count as u64)
                ),
                if l1.carveouts.is_empty() {
                    "l1.cache.size_bytes, x sm.count".into()
                } else {
                    "l1.cache.size_bytes, x sm.count: the array shared with shared memory, all of it L1".into()
                },
            );
            if !l1.carveouts.is_empty() {
                // The L1 a kernel gets: the array less the smallest split
                // that holds its blocks' shared memory (each block's
                // reserved bytes even where it declares none).
                let blocks = occupancy_limits(d, regs_per_thread, 256)
                    .iter()
                    .map(|l| l.1)
                    .min()
                    .unwrap_or(0);
                let none = l1.for_kernel(&d.shared, blocks, 0).size_bytes;
                let most = l1
                    .for_kernel(&d.shared, 1, d.shared.max_bytes_per_block as u64)
                    .size_bytes;
                o.row(
                    "L1 of a kernel",
                    format!("{} to {}", bytes(most), bytes(none)),
                    format!(
                        "l1.carveouts: the array less the smallest shared-memory split that holds the \
                         blocks' shared memory ({} for {blocks} blocks of 256 threads without shared \
                         memory, {} for one block of shared.max_bytes_per_block)",
                        bytes(none),
                        bytes(most)
                    ),
                );
            }
            o.row(
                "hit latency",
                format!(
                    "{} cyc, {:.0} ns",
                    l1.hit_latency_cycles,
                    ns(l1.hit_latency_cycles as f64)
                ),
                "l1.hit_latency_cycles / sm.clock_mhz".into(),
            );
        }
    }
    o.row(
        "LSU bandwidth (whole lines)",
        gbps(per_cycle_gbps(sm.count as f64 * sm.lsu_lines_per_cycle * line as f64)),
        format!(
            "sm.count x sm.lsu_lines_per_cycle ({}) x line bytes ({line}: l1.cache.line_bytes, or 32 without L1) x sm.clock_mhz",
            sm.lsu_lines_per_cycle
        ),
    );
    o.row(
        "SM port bandwidth, each direction",
        gbps(per_cycle_gbps(
            sm.count as f64 * d.interconnect.sm_port_bytes_per_cycle,
        )),
        format!(
            "sm.count x interconnect.sm_port_bytes_per_cycle ({}) x sm.clock_mhz",
            d.interconnect.sm_port_bytes_per_cycle
        ),
    );

    o.head("Shared memory");
    let sh = &d.shared;
    o.row(
        "capacity per SM / per block",
        format!(
            "{} / {}",
            bytes(sh.bytes_per_sm as u64),
            bytes(sh.max_bytes_per_block as u64)
        ),
        "shared.bytes_per_sm, shared.max_bytes_per_block".into(),
    );
    o.row(
        "a block's allocation",
        format!(
            "+{} B, in {} B units",
            sh.reserved_bytes_per_block, sh.alloc_unit_bytes
        ),
        "its buffers + shared.reserved_bytes_per_block, rounded up to shared.alloc_unit_bytes"
            .into(),
    );
    let wavefront = sh.banks as f64 * sh.bank_bytes as f64;
    o.row(
        "bandwidth (no conflicts)",
        gbps(per_cycle_gbps(
            sm.count as f64 * sm.lsu_lines_per_cycle * wavefront,
        )),
        format!(
            "sm.count x sm.lsu_lines_per_cycle (one wavefront per LSU slot) x shared.banks ({}) x shared.bank_bytes ({}) x sm.clock_mhz",
            sh.banks, sh.bank_bytes
        ),
    );
    o.row(
        "load latency",
        format!(
            "{} cyc, {:.0} ns",
            sh.latency_cycles,
            ns(sh.latency_cycles as f64)
        ),
        "shared.latency_cycles / sm.clock_mhz".into(),
    );

    o.head("Latency and parallelism");
    let lat_ns = ns(d.dram_latency_cycles as f64);
    o.row(
        "DRAM load latency (unloaded)",
        format!("{} cyc, {lat_ns:.0} ns", d.dram_latency_cycles),
        "dram_latency_cycles / sm.clock_mhz".into(),
    );
    o.row(
        "bytes in flight to reach peak",
        bytes(((peak * lat_ns) as u64).max(1)),
        "DRAM peak x DRAM load latency (Little's law)".into(),
    );
    let inflight = sm.count as f64 * sm.max_pending_lines as f64 * line as f64;
    o.row(
        "bytes the SMs can have in flight",
        bytes(inflight as u64),
        format!(
            "sm.count x sm.max_pending_lines ({}) x line bytes ({line})",
            sm.max_pending_lines
        ),
    );
    o.row(
        "latency-bound DRAM bandwidth",
        gbps(inflight / lat_ns),
        "bytes the SMs can have in flight / DRAM load latency".into(),
    );
    o.row(
        "kernel overhead, block launch",
        format!(
            "{:.0} ns, {:.0} cyc",
            d.launch.kernel_overhead_ns, d.launch.block_launch_cycles
        ),
        "launch.kernel_overhead_ns, launch.block_launch_cycles per block per SM".into(),
    );
    o.row(
        "block slot refill",
        format!(
            "{:.0} cyc",
            d.launch
                .slot_refill_cycles
                .unwrap_or(d.launch.block_launch_cycles)
        ),
        "launch.slot_refill_cycles: a slot stands empty between a block's exit and the next block's start"
            .into(),
    );
    o.row(
        "thread and block index reads",
        format!("{:.0} cyc", d.sm.special_register_cycles.unwrap_or(0.0)),
        "sm.special_register_cycles: from a warp's start until threadIdx and blockIdx can be read"
            .into(),
    );

    o.head(&format!(
        "Occupancy ({regs_per_thread} registers per thread; limits: sm.max_blocks {}, sm.max_warps {}, sm.max_threads {}, sm.registers {})",
        sm.max_blocks, sm.max_warps, sm.max_threads, sm.registers
    ));
    let max_regs = d.register_allocation().max_per_thread;
    if regs_per_thread > max_regs {
        let _ = writeln!(
            o.0,
            "  {regs_per_thread} registers per thread: more than the {max_regs} a thread may use \
             (sm.register_allocation.max_per_thread, or the compute capability's): no block launches"
        );
    }
    let _ = writeln!(
        o.0,
        "  {:>6} {:>10} {:>10} {:>10}   limited by",
        "block", "blocks/SM", "warps/SM", "occupancy"
    );
    let mut bs = 32;
    while bs <= sm.max_threads_per_block {
        let warps = bs.div_ceil(32);
        let limits = occupancy_limits(d, regs_per_thread, bs);
        let n = limits.iter().map(|l| l.1).min().unwrap_or(0);
        let by: Vec<&str> = limits.iter().filter(|l| l.1 == n).map(|l| l.0).collect();
        let _ = writeln!(
            o.0,
            "  {bs:>6} {n:>10} {:>10} {:>9.0}%   {}",
            n * warps,
            100.0 * (n * warps) as f64 / sm.max_warps as f64,
            by.join(", ")
        );
        bs *= 2;
    }
    o.0
}

/// The blocks of `threads` threads at `regs` registers a thread that each
/// of an SM's limits allows, with the field that sets it.
fn occupancy_limits(d: &DeviceSpec, regs: u32, threads: u32) -> [(&'static str, u32); 4] {
    let sm = &d.sm;
    let warps = threads.div_ceil(32);
    [
        ("sm.max_blocks", sm.max_blocks),
        ("sm.max_warps", sm.max_warps / warps),
        ("sm.max_threads", sm.max_threads / (warps * 32)),
        ("sm.registers", d.blocks_by_registers(regs, warps)),
    ]
}
