//! `gpusim explain`: one warp's memory instructions, address by address.

use engine::{DeviceSpec, Diag, LoadedWorkload};
use lsu::{LineRequest, Rule};
use simt_core::{MemKind, MemSpace, Program, Scratch, Step, Warp, WarpAccess};
use std::fmt::Write as _;

pub const HELP: &str = "\
EXAMPLES:
  Why is a misaligned float access slow on a CC 1.0 card?
      gpusim explain configs/c870.ron workloads/offset.ron --set offset=1 --set elem=4
  The same warp on Hopper, as 32-byte sectors:
      gpusim explain configs/h200.ron workloads/offset.ron --set offset=1 --set elem=4
  Bank conflicts of a shared tile read by columns (each shared access shows the bank
  of every lane and the bank that needs the most passes), and the padded fix:
      gpusim explain configs/h200.ron workloads/transpose_tiled.ron --set n=1024
      gpusim explain configs/h200.ron workloads/transpose_tiled_padded.ron --set n=1024

Swept parameters take their first value unless pinned with --set.";

fn rule_text(r: Rule) -> &'static str {
    match r {
        Rule::HalfWarpStrict => {
            "CC 1.0/1.1: per half-warp, thread k must access word k of a segment aligned to 16 words; \
             then one 64-byte (4-byte words) or 128-byte transaction, else one 32-byte transaction per thread"
        }
        Rule::HalfWarpSegments => {
            "CC 1.2/1.3: per half-warp, take the segment (128 B for 4-byte words) of the lowest \
             active thread, serve all threads in it, halve 128 -> 64 -> 32 B while only one half is used, repeat"
        }
        Rule::Lines { bytes: 128 } => {
            "CC 2.x, cached in L1: one 128-byte line transaction per distinct line of each request \
             (8-byte words: a request per half-warp; 16-byte: per quarter-warp)"
        }
        Rule::Lines { .. } => {
            "CC 2.x, L2 only: one 32-byte segment transaction per distinct segment of each request"
        }
        Rule::Sectors => {
            "CC >= 5: one request per warp; one 32-byte sector per distinct sector touched, \
             grouped by 128-byte line"
        }
    }
}

/// Memory instructions explained at most: more is not read.
const MAX_SHOWN: usize = 1000;

/// Explains warp `warp` of the first point of the sweep.
pub fn explain(
    dev: &DeviceSpec,
    wl: &LoadedWorkload,
    sets: &[(String, Vec<i64>)],
    warp: u64,
) -> Result<String, Diag> {
    let points = wl.points(sets)?;
    let point = &points[0];
    let inst = wl.workload.instantiate(point).map_err(|d| wl.locate(d))?;
    let prog = &inst.program;
    let wpb = prog.warps_per_block() as u64;
    let total = prog.blocks().saturating_mul(wpb);
    if warp >= total {
        return Err(Diag::msg(format!(
            "--warp {warp}: the launch has {total} warps (0..{})",
            total - 1
        )));
    }
    let b = warp / wpb;
    let [gx, gy, _] = prog.grid_dim;
    let (gx, gy) = (gx as u64, gy as u64);
    let block = [
        (b % gx) as u32,
        ((b / gx) % gy) as u32,
        (b / (gx * gy)) as u32,
    ];
    let mut w = Warp::default();
    w.reset(prog, block, (warp % wpb) as u32);
    let mut s = String::new();
    let pt: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let _ = writeln!(
        s,
        "{} on {} ({}, CC {}.{}), {}",
        wl.workload.name,
        dev.name,
        dev.full_name,
        dev.compute_capability.0,
        dev.compute_capability.1,
        pt.join(" ")
    );
    let _ = writeln!(
        s,
        "warp {warp} = block {} warp {} (threads {}..{})\n",
        b,
        warp % wpb,
        (warp % wpb) * 32,
        (warp % wpb) * 32 + 31
    );
    let mut scratch = Scratch::default();
    let mut acc = WarpAccess::default();
    let mut lines: Vec<LineRequest> = Vec::new();
    let mut n = 0;
    loop {
        if n == MAX_SHOWN {
            let _ = writeln!(
                s,
                "... the first {MAX_SHOWN} memory instructions shown; the warp goes on"
            );
            break;
        }
        let step = w.step(prog, &mut scratch, &mut acc).map_err(|e| {
            wl.locate(Diag::field(
                prog.sources[e.pc as usize].path.clone(),
                format!("{} (lane {})", e.fault, e.lane),
            ))
        })?;
        match step {
            Step::Done => break,
            Step::Alu | Step::Jump => continue,
            Step::Sync => {
                let pc = w.next_pc().unwrap_or(0).saturating_sub(1);
                let _ = writeln!(
                    s,
                    "[barrier] {}   ({}): the block's warps wait for each other\n",
                    prog.sources[pc as usize].text, prog.sources[pc as usize].path
                );
                continue;
            }
            Step::Mem => {}
        }
        n += 1;
        let src = &prog.sources[acc.pc as usize];
        if acc.space == MemSpace::Shared {
            shared_text(&mut s, n, dev, prog, &acc);
            continue;
        }
        let rule = if acc.kind == MemKind::Load {
            dev.load_rule
        } else {
            dev.store_rule
        };
        let buf = prog
            .buffers
            .iter()
            .find(|bf| {
                let l = acc.mask.trailing_zeros() as usize;
                acc.addrs[l] >= bf.base && acc.addrs[l] < bf.base + bf.bytes
            })
            .map(|bf| (bf.name.clone(), bf.base))
            .unwrap_or_default();
        let _ = writeln!(s, "[{n}] {}   ({})", src.text, src.path);
        let _ = writeln!(
            s,
            "    {} of {} bytes, {} active lanes; byte offsets from `{}` (base {:#x}, 256-B aligned):",
            if acc.kind == MemKind::Load { "load" } else { "store" },
            acc.width,
            acc.mask.count_ones(),
            buf.0,
            buf.1
        );
        for row in 0..4 {
            let cells: Vec<String> = (row * 8..row * 8 + 8)
                .map(|l| {
                    if acc.mask >> l & 1 == 1 {
                        format!("{:>7}", acc.addrs[l] - buf.1)
                    } else {
                        format!("{:>7}", "-")
                    }
                })
                .collect();
            let _ = writeln!(
                s,
                "    lanes {:>2}-{:<2} {}",
                row * 8,
                row * 8 + 7,
                cells.join("")
            );
        }
        let requests = rule.coalesce(
            &lsu::Access {
                width: acc.width,
                mask: acc.mask,
                addrs: &acc.addrs,
            },
            &mut lines,
        );
        let _ = writeln!(s, "    rule: {}", rule_text(rule));
        let sum = lsu::summarize(&lines);
        if rule == Rule::HalfWarpStrict {
            strict_verdicts(&mut s, &acc, buf.1, &lines);
        } else {
            for r in &lines {
                let _ = writeln!(s, "{}", line_text(r, rule, buf.1));
            }
        }
        let useful = acc.mask.count_ones() as u64 * acc.width as u64;
        let moved = sum.transactions[0] as u64 * 32
            + sum.transactions[1] as u64 * 64
            + sum.transactions[2] as u64 * 128;
        let _ = writeln!(
            s,
            "    total: {} request(s), {} x 32 B + {} x 64 B + {} x 128 B = {} bytes moved for {} \
             useful ({:.2}x)\n",
            requests,
            sum.transactions[0],
            sum.transactions[1],
            sum.transactions[2],
            moved,
            useful,
            moved as f64 / useful.max(1) as f64
        );
    }
    if n == 0 {
        let _ = writeln!(s, "this warp executes no memory instruction");
    }
    Ok(s)
}

/// One shared-memory instruction, lane by lane: offsets, banks, and the
/// bank that needs the most passes in each group of lanes served together.
fn shared_text(s: &mut String, n: usize, dev: &DeviceSpec, prog: &Program, acc: &WarpAccess) {
    let src = &prog.sources[acc.pc as usize];
    let banks = dev.shared.banks();
    let l0 = acc.mask.trailing_zeros() as usize;
    let (name, base) = prog
        .buffers
        .iter()
        .find(|b| {
            b.space == MemSpace::Shared
                && l0 < 32
                && acc.addrs[l0] >= b.base
                && acc.addrs[l0] < b.base + b.bytes
        })
        .map(|b| (b.name.clone(), b.base))
        .unwrap_or_default();
    let _ = writeln!(s, "[{n}] {}   ({})", src.text, src.path);
    if acc.mask == 0 {
        // A predicated instruction whose predicate holds on no lane.
        let _ = writeln!(
            s,
            "    shared {} of {} bytes, no lane active (predicated off): it issues and counts as an \
             instruction, and accesses nothing: 0 wavefronts",
            if acc.kind == MemKind::Load { "load" } else { "store" },
            acc.width,
        );
        return;
    }
    let _ = writeln!(
        s,
        "    shared {} of {} bytes, {} active lanes; byte offsets in `{name}` (at byte {base} of the \
         block's shared memory), then the bank of each (bank = byte / {} mod {}):",
        if acc.kind == MemKind::Load { "load" } else { "store" },
        acc.width,
        acc.mask.count_ones(),
        banks.bank_bytes,
        banks.banks
    );
    let bank = |a: u64| (a / banks.bank_bytes as u64) % banks.banks as u64;
    for row in 0..4 {
        let cell = |l: usize, f: &dyn Fn(u64) -> String| {
            if acc.mask >> l & 1 == 1 {
                format!("{:>6}", f(acc.addrs[l]))
            } else {
                format!("{:>6}", "-")
            }
        };
        let offs: Vec<String> = (row * 8..row * 8 + 8)
            .map(|l| cell(l, &|a| (a - base).to_string()))
            .collect();
        let bks: Vec<String> = (row * 8..row * 8 + 8)
            .map(|l| cell(l, &|a| format!("b{}", bank(a))))
            .collect();
        let _ = writeln!(
            s,
            "    lanes {:>2}-{:<2} {}\n               {}",
            row * 8,
            row * 8 + 7,
            offs.join(""),
            bks.join("")
        );
    }
    let is_load = acc.kind == MemKind::Load;
    let lanes = lsu::Access {
        width: acc.width,
        mask: acc.mask,
        addrs: &acc.addrs,
    };
    for g in banks.groups(&lanes, is_load) {
        let (most, ideal, distinct) = (g.wavefronts, g.ideal, g.distinct);
        let words: Vec<String> = g
            .worst_words
            .iter()
            .take(8)
            .map(|w| (w - base).to_string())
            .collect();
        let _ = writeln!(
            s,
            "    lanes {}-{}: {}",
            g.lanes.0,
            g.lanes.1,
            if most == ideal {
                format!(
                    "{distinct} distinct word(s), at most {most} in any bank (lanes on one word \
                     share it): {most} wavefront(s), no conflict"
                )
            } else {
                format!(
                    "bank {} serves {most} distinct words (at offsets {}{}): {most} \
                     wavefronts where {ideal} would carry the group's {distinct} words, {} \
                     conflict(s)",
                    g.worst_bank,
                    words.join(" "),
                    if most > 8 { " ..." } else { "" },
                    most - ideal
                )
            }
        );
    }
    let w = banks.wavefronts(&lanes, is_load);
    let _ = writeln!(
        s,
        "    total: {} wavefront(s), {} bank conflict(s) (l1tex__data_pipe_lsu_wavefronts_mem_shared \
         and l1tex__data_bank_conflicts_pipe_lsu_mem_shared)\n",
        w.wavefronts, w.conflicts
    );
}

fn line_text(r: &LineRequest, rule: Rule, base: u64) -> String {
    let first = r.line + 32 * r.sectors.trailing_zeros() as u64;
    let secs: Vec<String> = (0..4)
        .filter(|k| r.sectors >> k & 1 == 1)
        .map(|k| k.to_string())
        .collect();
    let what = if r.size == 32 {
        format!("{} x 32-B transaction(s)", r.sector_count())
    } else {
        format!("1 x {}-B transaction at offset {}", r.size, first - base)
    };
    let unit = if rule.half_warp() {
        "half-warp"
    } else {
        "request"
    };
    format!(
        "    {unit} {}: line at offset {:>8} sectors [{}] -> {what}",
        r.request,
        r.line - base,
        secs.join(",")
    )
}

/// CC 1.0/1.1: says for each half-warp whether and why it coalesced.
fn strict_verdicts(s: &mut String, acc: &WarpAccess, base: u64, lines: &[LineRequest]) {
    let w = acc.width as u64;
    for h in 0..2u8 {
        let m = (acc.mask >> (16 * h)) & 0xFFFF;
        if m == 0 {
            continue;
        }
        let lane0 = 16 * h as usize;
        let k0 = m.trailing_zeros() as usize;
        let seg = 16 * w;
        let start = acc.addrs[lane0 + k0].wrapping_sub(k0 as u64 * w);
        let why = if !matches!(w, 4 | 8 | 16) {
            format!("{w}-byte words never coalesce on CC 1.0/1.1")
        } else if start % seg != 0 {
            format!(
                "its word 0 is at offset {}, not on a {seg}-byte boundary",
                start.wrapping_sub(base) as i64
            )
        } else if let Some(k) =
            (0..16).find(|&k| m >> k & 1 == 1 && acc.addrs[lane0 + k] != start + k as u64 * w)
        {
            format!("thread {k} does not access word {k} of the segment")
        } else {
            String::new()
        };
        let mine: Vec<&LineRequest> = lines.iter().filter(|r| r.request == h).collect();
        if why.is_empty() {
            let _ = writeln!(
                s,
                "    half-warp {h}: thread k accesses word k of the {seg}-byte segment at offset {}: coalesced",
                start - base
            );
            for r in mine {
                let _ = writeln!(s, "{}", line_text(r, Rule::HalfWarpStrict, base));
            }
        } else {
            let offs: Vec<String> = mine
                .iter()
                .map(|r| (r.line + 32 * r.sectors.trailing_zeros() as u64 - base).to_string())
                .collect();
            let _ = writeln!(
                s,
                "    half-warp {h}: not coalesced ({why}):\n      {} x 32-B transactions, one per thread, at offsets {}",
                mine.len(),
                offs.join(" ")
            );
        }
    }
}
