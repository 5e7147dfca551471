//! Lockstep execution of one warp under an active mask, with a
//! reconvergence stack for divergent branches and loops.

use crate::expr::Fault;
use crate::program::{MemKind, MemSpace, OpKind, Program, SLOT_BID, SLOT_TID};

/// Warp size of every NVIDIA GPU so far.
pub const WARP_SIZE: usize = 32;

/// At most this many instructions per warp; a kernel that runs longer is
/// treated as a runaway loop.
pub const MAX_WARP_INSTRUCTIONS: u64 = 1 << 26;

/// An entry of the SIMT stack: lanes `mask` run from `pc` until they
/// reach `rpc`, their reconvergence point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub pc: u32,
    pub rpc: u32,
    pub mask: u32,
}

/// The branch at op `pc` of the top entry of `stack`: lanes `taken` (of
/// the entry's) go to `pc + 1`, the others to `else_pc`, and all meet at
/// `reconv_pc`.
///
/// Returns whether the warp jumped: every active lane left for `else_pc`
/// (a taken branch, in the hardware's terms).
pub(crate) fn branch(
    stack: &mut Vec<Entry>,
    pc: u32,
    taken: u32,
    else_pc: u32,
    reconv_pc: u32,
) -> bool {
    let Some(e) = stack.last_mut() else {
        return false;
    };
    let not_taken = e.mask & !taken;
    if taken == 0 {
        e.pc = else_pc;
        return true;
    } else if not_taken == 0 {
        e.pc += 1;
    } else if e.rpc == reconv_pc && else_pc == reconv_pc {
        // Another trip of a loop whose exit is already on the stack: the
        // leaving lanes wait there.
        e.pc += 1;
        e.mask = taken;
    } else {
        e.pc = reconv_pc;
        if else_pc != reconv_pc {
            stack.push(Entry {
                pc: else_pc,
                rpc: reconv_pc,
                mask: not_taken,
            });
        }
        stack.push(Entry {
            pc: pc + 1,
            rpc: reconv_pc,
            mask: taken,
        });
    }
    false
}

/// The addresses of one warp-wide memory instruction.
#[derive(Debug, Clone)]
pub struct WarpAccess {
    /// Load or store.
    pub kind: MemKind,
    /// Global or shared memory.
    pub space: MemSpace,
    /// Word size in bytes.
    pub width: u8,
    /// Active lanes.
    pub mask: u32,
    /// Byte address per lane (meaningful for active lanes).
    pub addrs: [u64; WARP_SIZE],
    /// Index of the instruction in the program.
    pub pc: u32,
    /// Data register written.
    pub dst: Option<u8>,
    /// Data registers read, as a mask.
    pub srcs: u32,
    /// A load that bypasses the L1.
    pub l2_only: bool,
}

impl Default for WarpAccess {
    fn default() -> Self {
        WarpAccess {
            kind: MemKind::Load,
            space: MemSpace::Global,
            width: 4,
            mask: 0,
            addrs: [0; WARP_SIZE],
            pc: 0,
            dst: None,
            srcs: 0,
            l2_only: false,
        }
    }
}

/// What one step of a warp did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A non-memory instruction (arithmetic, or a branch that leaves the
    /// warp's next instruction the following one).
    Alu,
    /// A jump, or a branch that every active lane took away: the warp's
    /// next instruction is not the following one (a taken branch).
    Jump,
    /// A memory instruction; its addresses are in the `WarpAccess` passed in.
    Mem,
    /// A barrier (`__syncthreads()`) reached by the whole warp.
    Sync,
    /// The warp has finished.
    Done,
}

/// A fault raised by an instruction in one lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecFault {
    /// Arithmetic fault in an expression.
    Arith(Fault),
    /// Access outside the buffer.
    OutOfBounds {
        /// Buffer name.
        buf: String,
        /// Byte offset from the buffer's start.
        offset: i64,
        /// Word size.
        width: u8,
        /// Buffer size.
        bytes: u64,
    },
    /// Address not a multiple of the word size.
    Misaligned {
        /// Buffer name.
        buf: String,
        /// Byte offset from the buffer's start.
        offset: i64,
        /// Device address.
        addr: u64,
        /// Word size.
        width: u8,
    },
    /// The warp ran more than [`MAX_WARP_INSTRUCTIONS`].
    Runaway,
    /// A barrier reached by only some of the warp's threads.
    DivergentBarrier {
        /// Threads of the warp at the barrier (bit per lane).
        active: u32,
        /// The warp's threads.
        all: u32,
    },
    /// The warps of a block do not reach the same barriers.
    BarrierMismatch {
        /// What differs.
        detail: String,
    },
}

impl std::fmt::Display for ExecFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecFault::Arith(a) => write!(f, "{a}"),
            ExecFault::OutOfBounds {
                buf,
                offset,
                width,
                bytes,
            } => write!(
                f,
                "out-of-bounds access: bytes {offset}..{} of buffer `{buf}`, which has {bytes} bytes",
                *offset as i128 + *width as i128
            ),
            ExecFault::Misaligned {
                buf,
                offset,
                addr,
                width,
            } => write!(
                f,
                "misaligned {width}-byte access at byte {offset} of buffer `{buf}` (address {addr:#x} \
                 is not a multiple of {width}); real hardware requires natural alignment and gives \
                 wrong results or faults otherwise (CUDA C++ Programming Guide, \"Size and \
                 Alignment Requirement\")"
            ),
            ExecFault::DivergentBarrier { active, all } => write!(
                f,
                "barrier under divergence: {} of the warp's {} threads reach it (lanes {active:#010x}); \
                 every thread of the block must reach the same __syncthreads() (CUDA C++ \
                 Programming Guide, \"Synchronization Functions\")",
                active.count_ones(),
                all.count_ones()
            ),
            ExecFault::BarrierMismatch { detail } => write!(
                f,
                "the warps of a block do not reach the same barriers: {detail}; every thread of \
                 the block must reach the same __syncthreads() (CUDA C++ Programming Guide, \
                 \"Synchronization Functions\")"
            ),
            ExecFault::Runaway => write!(
                f,
                "the warp ran more than {MAX_WARP_INSTRUCTIONS} instructions (a loop that does not end?)"
            ),
        }
    }
}

/// A fault with the instruction and lane that raised it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecError {
    /// What went wrong.
    pub fault: ExecFault,
    /// Instruction index (see [`Program::sources`]).
    pub pc: u32,
    /// Lane in the warp.
    pub lane: u8,
}

/// One warp's architectural state.
#[derive(Debug, Clone, Default)]
pub struct Warp {
    /// Per-lane registers: built-ins first, then the kernel's variables.
    /// Only the built-ins the kernel reads are set; a variable is zero
    /// until written where the kernel branches, else it is always written
    /// before it is read.
    pub regs: Vec<[i64; WARP_SIZE]>,
    stack: Vec<Entry>,
    executed: u64,
    all: u32,
    block: [u32; 3],
    warp_in_block: u32,
}

/// Per-thread scratch space reused across warps, so that stepping allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    stack: Vec<[i64; WARP_SIZE]>,
    tmp: [i64; WARP_SIZE],
}

impl Warp {
    /// Prepares the warp `warp_in_block` of block `block` for `prog`.
    /// Returns false when the warp has no threads (cannot happen for valid geometry).
    pub fn reset(&mut self, prog: &Program, block: [u32; 3], warp_in_block: u32) -> bool {
        if self.regs.len() != prog.n_regs || prog.zero_vars {
            self.regs.clear();
            self.regs.resize(prog.n_regs, [0; WARP_SIZE]);
        }
        self.stack.clear();
        self.executed = 0;
        self.block = block;
        self.warp_in_block = warp_in_block;
        let [_, by, bz] = prog.block_dim;
        let (first, lanes, mask) = prog.warp_lanes(warp_in_block);
        let read = |slot: u16| prog.builtins_read >> slot & 1 == 1;
        for d in 0..3u16 {
            if read(SLOT_TID + d) {
                let r = &mut self.regs[(SLOT_TID + d) as usize];
                for (lane, v) in r.iter_mut().enumerate() {
                    // Lanes past the block's threads are never active.
                    let t = first + lane as u32;
                    *v = if lane >= lanes {
                        0
                    } else if d == 0 && by == 1 && bz == 1 {
                        // One-dimensional blocks (the common case): no divisions.
                        t
                    } else {
                        prog.thread_index(t)[d as usize]
                    } as i64;
                }
            }
            if read(SLOT_BID + d) {
                self.regs[(SLOT_BID + d) as usize] = [block[d as usize] as i64; WARP_SIZE];
            }
        }
        self.stack.push(Entry {
            pc: 0,
            rpc: u32::MAX,
            mask,
        });
        self.all = mask;
        mask != 0
    }

    /// The op the warp runs next (`None` when it is done), leaving the
    /// stack entries that have finished.
    pub fn next_op(&mut self, prog: &Program) -> Option<u32> {
        while let Some(top) = self.stack.last() {
            if top.pc == top.rpc || top.mask == 0 || top.pc as usize >= prog.ops.len() {
                self.stack.pop();
                continue;
            }
            return Some(top.pc);
        }
        None
    }

    /// The instruction the warp runs next, if any.
    pub fn next_pc(&self) -> Option<u32> {
        self.stack.last().map(|e| e.pc)
    }

    /// blockIdx of the warp's block.
    pub fn block(&self) -> [u32; 3] {
        self.block
    }

    /// Index of the warp in its block.
    pub fn warp_in_block(&self) -> u32 {
        self.warp_in_block
    }

    /// Warp instructions executed so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Runs one instruction. On `Step::Mem`, `acc` holds the access.
    pub fn step(
        &mut self,
        prog: &Program,
        scratch: &mut Scratch,
        acc: &mut WarpAccess,
    ) -> Result<Step, ExecError> {
        if scratch.stack.len() < prog.stack_depth {
            scratch.stack.resize(prog.stack_depth, [0; WARP_SIZE]);
        }
        loop {
            let Some(top) = self.stack.last().copied() else {
                return Ok(Step::Done);
            };
            if top.pc == top.rpc || top.mask == 0 {
                self.stack.pop();
                continue;
            }
            let pc = top.pc;
            let Some(op) = prog.ops.get(pc as usize) else {
                self.stack.pop();
                continue;
            };
            self.executed += 1;
            if self.executed > MAX_WARP_INSTRUCTIONS {
                return Err(ExecError {
                    fault: ExecFault::Runaway,
                    pc,
                    lane: 0,
                });
            }
            let mask = top.mask;
            let fault = |(f, lane): (Fault, usize)| ExecError {
                fault: ExecFault::Arith(f),
                pc,
                lane: lane as u8,
            };
            let last = self.stack.len() - 1;
            match op {
                OpKind::Set { slot, expr, guard } => {
                    let mask = guard.map_or(mask, |g| g.lanes(&self.regs[g.slot as usize], mask));
                    expr.eval(&self.regs, mask, &mut scratch.stack, &mut scratch.tmp)
                        .map_err(fault)?;
                    let r = &mut self.regs[*slot as usize];
                    for (l, v) in r.iter_mut().enumerate() {
                        if mask >> l & 1 == 1 {
                            *v = scratch.tmp[l];
                        }
                    }
                    self.stack[last].pc += 1;
                    return Ok(Step::Alu);
                }
                OpKind::Sync => {
                    if mask != self.all {
                        return Err(ExecError {
                            fault: ExecFault::DivergentBarrier {
                                active: mask,
                                all: self.all,
                            },
                            pc,
                            lane: (self.all & !mask).trailing_zeros() as u8,
                        });
                    }
                    self.stack[last].pc += 1;
                    return Ok(Step::Sync);
                }
                OpKind::Jump { pc: target } => {
                    self.stack[last].pc = *target;
                    return Ok(Step::Jump);
                }
                OpKind::Branch {
                    cond,
                    else_pc,
                    reconv_pc,
                } => {
                    cond.eval(&self.regs, mask, &mut scratch.stack, &mut scratch.tmp)
                        .map_err(fault)?;
                    let mut taken = 0u32;
                    for l in 0..WARP_SIZE {
                        taken |= ((scratch.tmp[l] != 0) as u32) << l;
                    }
                    let jumped = branch(&mut self.stack, pc, taken & mask, *else_pc, *reconv_pc);
                    return Ok(if jumped { Step::Jump } else { Step::Alu });
                }
                OpKind::Mem(m) => {
                    let mask = m
                        .guard
                        .map_or(mask, |g| g.lanes(&self.regs[g.slot as usize], mask));
                    m.addr
                        .eval(&self.regs, mask, &mut scratch.stack, &mut scratch.tmp)
                        .map_err(fault)?;
                    let b = &prog.buffers[m.buf as usize];
                    let w = m.width as i64;
                    for l in 0..WARP_SIZE {
                        if mask >> l & 1 == 0 {
                            continue;
                        }
                        let off = scratch.tmp[l].checked_mul(m.scale).ok_or(ExecError {
                            fault: ExecFault::Arith(Fault::Overflow),
                            pc,
                            lane: l as u8,
                        })?;
                        if off < 0 || off as u64 + w as u64 > b.bytes {
                            return Err(ExecError {
                                fault: ExecFault::OutOfBounds {
                                    buf: b.name.clone(),
                                    offset: off,
                                    width: m.width,
                                    bytes: b.bytes,
                                },
                                pc,
                                lane: l as u8,
                            });
                        }
                        let addr = b.base + off as u64;
                        if !addr.is_multiple_of(w as u64) {
                            return Err(ExecError {
                                fault: ExecFault::Misaligned {
                                    buf: b.name.clone(),
                                    offset: off,
                                    addr,
                                    width: m.width,
                                },
                                pc,
                                lane: l as u8,
                            });
                        }
                        acc.addrs[l] = addr;
                    }
                    if let Some(slot) = m.value_slot {
                        // Values of a buffer with declared contents.
                        let data = b.data.as_ref().expect("valued loads have data");
                        let r = &mut self.regs[slot as usize];
                        for (l, v) in r.iter_mut().enumerate() {
                            if mask >> l & 1 == 1 {
                                *v = data.value((acc.addrs[l] - b.base) / w as u64);
                            }
                        }
                    }
                    m.describe(pc, mask, acc);
                    self.stack[last].pc += 1;
                    return Ok(Step::Mem);
                }
            }
        }
    }

    /// Runs the warp to completion, calling `on_mem` for every memory access.
    pub fn run_to_end(
        &mut self,
        prog: &Program,
        scratch: &mut Scratch,
        acc: &mut WarpAccess,
        mut on_mem: impl FnMut(&WarpAccess),
    ) -> Result<(), ExecError> {
        loop {
            match self.step(prog, scratch, acc)? {
                Step::Done => return Ok(()),
                Step::Mem => on_mem(acc),
                Step::Alu | Step::Jump | Step::Sync => {}
            }
        }
    }
}
