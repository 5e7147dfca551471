//! Block-affine tracing: one run of a warp that stands for the same warp
//! of every block of the grid.
//!
//! In most kernels (every stream, stride, offset and transpose of the
//! seeds and the corpus) a warp's control flow does not depend on its
//! block, and each address is the same function of the thread index plus
//! a fixed number of bytes per unit of `blockIdx.x`, `.y` and `.z`. Then
//! the warp `w` of block `b` executes the instructions of warp `w` of
//! block 0, each memory instruction at the addresses of block 0 shifted
//! by `step . b` bytes. [`trace`] runs a warp with every value kept as
//! `c[lane] + k . blockIdx` and returns that description, or `None` as
//! soon as anything depends on the block in another way (a branch on it,
//! a product of two such values, a loaded value), or some block of the
//! grid would fault (overflow, an access out of bounds or misaligned):
//! the caller then runs every warp as before, which reports the fault.
//!
//! Whether an access coalesces depends on its addresses only modulo the
//! largest segment, line or bank cycle, so the counts of all blocks follow
//! from block 0's addresses shifted by each residue of `step . b` (the
//! engine's functional pass does that).

use crate::expr::Affine;
use crate::program::{Guard, OpKind, Program, SLOT_BID, SLOT_TID};
use crate::warp::{branch, Entry, WarpAccess, MAX_WARP_INSTRUCTIONS, WARP_SIZE};

/// One memory instruction of a traced warp.
#[derive(Debug, Clone)]
pub struct AffineAccess {
    /// The access as block (0, 0, 0) makes it.
    pub access: WarpAccess,
    /// Bytes the addresses move per unit of blockIdx.x, .y and .z.
    pub step: [i64; 3],
}

impl AffineAccess {
    /// The access as block `b` makes it.
    pub fn at(&self, b: [u32; 3], out: &mut WarpAccess) {
        out.clone_from(&self.access);
        let shift = (0..3).fold(0i64, |s, d| {
            s.wrapping_add(self.step[d].wrapping_mul(b[d] as i64))
        });
        for l in 0..WARP_SIZE {
            if out.mask >> l & 1 == 1 {
                out.addrs[l] = out.addrs[l].wrapping_add(shift as u64);
            }
        }
    }
}

/// One instruction of a traced warp, as [`crate::Warp::step`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TracedStep {
    /// Arithmetic or a branch not taken, at op `pc`.
    Alu {
        /// Op index.
        pc: u32,
    },
    /// A jump or a taken branch at op `pc` (see [`crate::Step::Jump`]).
    Jump {
        /// Op index.
        pc: u32,
    },
    /// A barrier at op `pc`.
    Sync {
        /// Op index.
        pc: u32,
    },
    /// Memory instruction number `access` of [`AffineTrace::accesses`], at op `pc`.
    Mem {
        /// Op index.
        pc: u32,
        /// Index into the accesses.
        access: u32,
    },
}

impl TracedStep {
    /// The op the step runs.
    pub fn pc(&self) -> u32 {
        match *self {
            TracedStep::Alu { pc }
            | TracedStep::Jump { pc }
            | TracedStep::Sync { pc }
            | TracedStep::Mem { pc, .. } => pc,
        }
    }
}

/// A warp's execution in every block of the grid.
#[derive(Debug, Clone, Default)]
pub struct AffineTrace {
    /// Warp instructions executed (in each block).
    pub instructions: u64,
    /// Every instruction, in order.
    pub steps: Vec<TracedStep>,
    /// The op index of each barrier reached, in order.
    pub barriers: Vec<u32>,
    /// The memory instructions, in order.
    pub accesses: Vec<AffineAccess>,
}

/// Steps one trace may hold at most (a warp that loops longer is run, not
/// traced: its trace would cost more memory than running it).
pub const MAX_STEPS: usize = 1 << 16;

/// The lanes of `mask` that run an instruction with predicate `guard`;
/// `None` where the predicate depends on the block (it would differ from
/// block to block).
fn guarded(regs: &[Affine], guard: Option<Guard>, mask: u32) -> Option<u32> {
    let Some(g) = guard else {
        return Some(mask);
    };
    let p = &regs[g.slot as usize];
    if p.k != [0; 3] {
        return None;
    }
    Some(g.lanes(&p.c, mask))
}

/// Traces warp `warp_in_block` of `prog` for every block of its grid (see
/// the module doc); `None` where that is not possible.
pub fn trace(prog: &Program, warp_in_block: u32) -> Option<AffineTrace> {
    let grid = prog.grid_dim;
    let (first, lanes, all) = prog.warp_lanes(warp_in_block);
    if all == 0 {
        return None;
    }
    let mut regs = vec![Affine::ZERO; prog.n_regs];
    for lane in 0..lanes {
        let idx = prog.thread_index(first + lane as u32);
        for d in 0..3 {
            regs[SLOT_TID as usize + d].c[lane] = idx[d] as i64;
        }
    }
    for d in 0..3 {
        regs[SLOT_BID as usize + d].k[d] = 1;
    }
    let mut out = AffineTrace::default();
    let mut stack = vec![Entry {
        pc: 0,
        rpc: u32::MAX,
        mask: all,
    }];
    while let Some(top) = stack.last().copied() {
        if top.pc == top.rpc || top.mask == 0 {
            stack.pop();
            continue;
        }
        let pc = top.pc;
        let Some(op) = prog.ops.get(pc as usize) else {
            stack.pop();
            continue;
        };
        out.instructions += 1;
        if out.instructions > MAX_WARP_INSTRUCTIONS || out.steps.len() >= MAX_STEPS {
            return None;
        }
        let mask = top.mask;
        let last = stack.len() - 1;
        match op {
            OpKind::Set { slot, expr, guard } => {
                let mask = guarded(&regs, *guard, mask)?;
                let v = expr.eval_affine(&regs, mask, grid)?;
                let r = &mut regs[*slot as usize];
                if r.k != v.k && mask != all {
                    // Lanes keeping their old value would need another k.
                    return None;
                }
                r.k = v.k;
                for l in 0..32 {
                    if mask >> l & 1 == 1 {
                        r.c[l] = v.c[l];
                    }
                }
                out.steps.push(TracedStep::Alu { pc });
                stack[last].pc += 1;
            }
            OpKind::Sync => {
                if mask != all {
                    return None;
                }
                out.barriers.push(pc);
                out.steps.push(TracedStep::Sync { pc });
                stack[last].pc += 1;
            }
            OpKind::Jump { pc: target } => {
                out.steps.push(TracedStep::Jump { pc });
                stack[last].pc = *target;
            }
            OpKind::Branch {
                cond,
                else_pc,
                reconv_pc,
            } => {
                let v = cond.eval_affine(&regs, mask, grid)?;
                if v.k != [0; 3] {
                    return None;
                }
                let mut taken = 0u32;
                for l in 0..WARP_SIZE {
                    taken |= ((v.c[l] != 0) as u32) << l;
                }
                let jumped = branch(&mut stack, pc, taken & mask, *else_pc, *reconv_pc);
                out.steps.push(if jumped {
                    TracedStep::Jump { pc }
                } else {
                    TracedStep::Alu { pc }
                });
            }
            OpKind::Mem(m) => {
                if m.value_slot.is_some() {
                    return None;
                }
                let mask = guarded(&regs, m.guard, mask)?;
                let v = m.addr.eval_affine(&regs, mask, grid)?;
                let b = &prog.buffers[m.buf as usize];
                let w = m.width as i64;
                let mut step = [0i64; 3];
                for d in 0..3 {
                    step[d] = v.k[d].checked_mul(m.scale)?;
                    if grid[d] > 1 && step[d] % w != 0 {
                        return None;
                    }
                }
                let off = Affine { c: v.c, k: step };
                let (lo, hi) = off.range(grid);
                let mut acc = WarpAccess::default();
                for l in 0..WARP_SIZE {
                    if mask >> l & 1 == 0 {
                        continue;
                    }
                    let o = v.c[l].checked_mul(m.scale)? as i128;
                    if o + lo < 0
                        || o + hi > i64::MAX as i128
                        || o + hi + w as i128 > b.bytes as i128
                    {
                        return None;
                    }
                    let addr = b.base + o as u64;
                    if !addr.is_multiple_of(w as u64) {
                        return None;
                    }
                    acc.addrs[l] = addr;
                }
                m.describe(pc, mask, &mut acc);
                out.steps.push(TracedStep::Mem {
                    pc,
                    access: out.accesses.len() as u32,
                });
                out.accesses.push(AffineAccess { access: acc, step });
                stack[last].pc += 1;
            }
        }
    }
    Some(out)
}
