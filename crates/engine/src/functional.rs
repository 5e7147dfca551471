//! The counts of every block from one traced block, where the kernel is
//! block-affine ([`simt_core::affine`]).
//!
//! Warp `w` of every block makes the same memory instructions as warp `w`
//! of block 0, shifted by `step . blockIdx` bytes. The coalescing rules
//! (half-warp segments, 32-, 64- and 128-byte segments and lines, 32-byte
//! sectors) and the shared-memory banks depend on an address only modulo
//! their largest span, which divides [`PERIOD`]: so a block's counts are
//! block 0's with its addresses moved by `(step . b) mod PERIOD`, and the
//! grid's are the sum over those residues, each weighted by the number of
//! blocks that have it. Equal, count for count, to running every warp
//! (`tests/all/functional.rs` checks it on every shipped workload).

use crate::sim::{coalesce, count_instruction, count_shared, shared_wavefronts, SimError};
use crate::{Counters, DeviceSpec};
use simt_core::affine::{trace, AffineTrace};
use simt_core::{MemSpace, Program, WarpAccess};
use std::collections::BTreeMap;

/// A multiple of every span that coalescing or a bank cycle depends on
/// (at most 256 bytes: a CC 1.x half-warp of 16-byte words; 128-byte
/// lines; 32 banks of 8 bytes).
pub const PERIOD: u64 = 4096;

/// Memory instructions a block's traces may hold at most.
const MAX_BLOCK_ACCESSES: usize = 1 << 16;

/// Residues at most (per access): beyond this the grid is counted warp by
/// warp.
const MAX_RESIDUES: usize = 1 << 12;

/// How many blocks of the grid `grid` have each residue of `step . b`
/// modulo [`PERIOD`]; `None` when there would be too many.
fn residues(step: [i64; 3], grid: [u32; 3]) -> Option<Vec<(u64, u64)>> {
    let mut acc: BTreeMap<u64, u64> = BTreeMap::from([(0, 1)]);
    for d in 0..3 {
        let g = grid[d] as u64;
        let s = step[d].rem_euclid(PERIOD as i64) as u64;
        // Residues of s . b for b < g: they repeat with period p.
        let p = if s == 0 { 1 } else { PERIOD / gcd(s, PERIOD) };
        let mut dim: Vec<(u64, u64)> = Vec::new();
        for b in 0..p.min(g) {
            let n = g / p + u64::from(b < g % p);
            dim.push((s * b % PERIOD, n));
        }
        if acc.len() * dim.len() > MAX_RESIDUES * 4 {
            return None;
        }
        let mut next = BTreeMap::new();
        for (&r, &n) in &acc {
            for &(q, m) in &dim {
                *next.entry((r + q) % PERIOD).or_insert(0) += n * m;
            }
        }
        acc = next;
        if acc.len() > MAX_RESIDUES {
            return None;
        }
    }
    Some(acc.into_iter().collect())
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `c += n x d` for the counts the functional pass makes.
fn add_times(c: &mut Counters, d: &Counters, n: u64) {
    c.requests_ld += n * d.requests_ld;
    c.requests_st += n * d.requests_st;
    c.sectors_ld += n * d.sectors_ld;
    c.sectors_st += n * d.sectors_st;
    for k in 0..3 {
        c.transactions[k] += n * d.transactions[k];
    }
    c.shared_requests_ld += n * d.shared_requests_ld;
    c.shared_requests_st += n * d.shared_requests_st;
    c.shared_wavefronts_ld += n * d.shared_wavefronts_ld;
    c.shared_wavefronts_st += n * d.shared_wavefronts_st;
    c.shared_conflicts_ld += n * d.shared_conflicts_ld;
    c.shared_conflicts_st += n * d.shared_conflicts_st;
}

/// Every warp of a block traced ([`simt_core::affine::trace`]), or `None`
/// where one is not block-affine or the warps of a block reach different
/// barriers.
pub fn block_traces(prog: &Program) -> Option<Vec<AffineTrace>> {
    let mut traces: Vec<AffineTrace> = Vec::with_capacity(prog.warps_per_block() as usize);
    let mut accesses = 0usize;
    for w in 0..prog.warps_per_block() {
        let t = trace(prog, w)?;
        // A block's traces hold at most this many accesses (about 20 MB).
        accesses += t.accesses.len();
        if accesses > MAX_BLOCK_ACCESSES {
            return None;
        }
        if traces.first().is_some_and(|f| f.barriers != t.barriers) {
            return None;
        }
        traces.push(t);
    }
    Some(traces)
}

/// The functional pass's counts for the whole grid from one traced block,
/// or `Ok(None)` where the kernel is not block-affine (or a block would
/// fault, or the warps of a block reach different barriers): then every
/// warp must be run. `Err` only for the budget, as the full pass would.
pub fn count_affine(
    dev: &DeviceSpec,
    prog: &Program,
    budget: u64,
) -> Result<Option<Counters>, SimError> {
    match block_traces(prog) {
        Some(traces) => count_traced(dev, prog, &traces, budget),
        None => Ok(None),
    }
}

/// [`count_affine`] from the block's traces ([`block_traces`]).
pub fn count_traced(
    dev: &DeviceSpec,
    prog: &Program,
    traces: &[AffineTrace],
    budget: u64,
) -> Result<Option<Counters>, SimError> {
    let blocks = prog.blocks();
    let per_block: u64 = traces.iter().map(|t| t.instructions).sum();
    let total = per_block.checked_mul(blocks);
    if total.is_none_or(|n| n > budget) {
        return Err(SimError::Budget(budget));
    }
    let mut c = Counters {
        warp_instructions: total.unwrap_or(u64::MAX),
        ..Counters::default()
    };
    let mut lines = Vec::with_capacity(64);
    let mut moved = WarpAccess::default();
    for t in traces {
        for a in &t.accesses {
            let Some(rs) = residues(a.step, prog.grid_dim) else {
                return Ok(None);
            };
            for (r, n) in rs {
                moved.clone_from(&a.access);
                for l in 0..32 {
                    moved.addrs[l] = moved.addrs[l].wrapping_add(r);
                }
                let mut d = Counters::default();
                if moved.space == MemSpace::Shared {
                    count_shared(
                        &mut d,
                        moved.kind == simt_core::MemKind::Load,
                        shared_wavefronts(dev, &moved),
                    );
                } else {
                    let (is_load, _) = coalesce(dev, &moved, &mut lines);
                    count_instruction(&mut d, is_load, &lines);
                }
                add_times(&mut c, &d, n);
            }
        }
    }
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residues_count_every_block_once() {
        // 1024 bytes per block in x over 10 blocks: residues 0, 1024, 2048, 3072.
        let r = residues([1024, 0, 0], [10, 1, 1]).unwrap();
        assert_eq!(r, vec![(0, 3), (1024, 3), (2048, 2), (3072, 2)]);
        // Two dimensions: every block once.
        let r = residues([4096 * 3, 512, 0], [5, 7, 1]).unwrap();
        assert_eq!(r.iter().map(|x| x.1).sum::<u64>(), 35);
        assert_eq!(r.len(), 7);
        // Negative steps wrap.
        let r = residues([-256, 0, 0], [2, 1, 1]).unwrap();
        assert_eq!(r, vec![(0, 1), (3840, 1)]);
    }
}
