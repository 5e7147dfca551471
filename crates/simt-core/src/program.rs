//! Compilation of the structured IR into a flat program with explicit
//! branch and reconvergence targets (immediate post-dominators, which in
//! structured code are simply the end of each `If` and `For`).

use crate::data::BufferData;
use crate::expr::{self, Ast, Expr, ResolveError, Sym};
use crate::ir::{Access, Stmt};

/// Register slots of the built-in per-lane values.
pub const SLOT_TID: u16 = 0;
/// `blockIdx.{x,y,z}` live in slots 3..6.
pub const SLOT_BID: u16 = 3;
const FIRST_VAR: u16 = 6;
/// At most this many named loaded values per kernel.
pub const MAX_DATA_REGS: usize = 32;

/// Which memory an access goes to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemSpace {
    /// Device memory, through the L1 and L2.
    #[default]
    Global,
    /// The block's shared memory (on-chip, banked).
    Shared,
}

/// Load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemKind {
    /// Global load.
    Load,
    /// Global store.
    Store,
}

/// A buffer the kernel may access, already placed in its address space.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferDecl {
    /// Name used by `Load`/`Store`.
    pub name: String,
    /// Device address of byte 0 (for shared buffers: the offset in the
    /// block's shared memory).
    pub base: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// Global or per-block shared.
    pub space: MemSpace,
    /// Declared contents (global buffers only); loads of its elements give
    /// values that expressions can use.
    pub data: Option<BufferData>,
}

/// Launch geometry and constants known at compile time.
pub struct CompileEnv<'a> {
    /// `blockDim` (x, y, z).
    pub block_dim: [u32; 3],
    /// `gridDim` (x, y, z).
    pub grid_dim: [u32; 3],
    /// Workload parameters and derived constants.
    pub consts: &'a dyn Fn(&str) -> Option<i64>,
    /// Buffers in the address space.
    pub buffers: &'a [BufferDecl],
}

/// One flat instruction.
#[derive(Debug, Clone)]
pub(crate) enum OpKind {
    Set {
        slot: u16,
        expr: Expr,
        guard: Option<Guard>,
    },
    Branch {
        cond: Expr,
        else_pc: u32,
        reconv_pc: u32,
    },
    Jump {
        pc: u32,
    },
    Mem(MemOp),
    Sync,
}

/// The predicate of an instruction of a predicated `If`'s body: the lanes
/// whose register `slot` is non-zero (zero, where `negate`: the `else`
/// body) run it; the others keep their state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guard {
    pub(crate) slot: u16,
    pub(crate) negate: bool,
}

impl Guard {
    /// The lanes of `mask` that run the instruction, given the predicate
    /// register's values.
    #[inline]
    pub(crate) fn lanes(self, pred: &[i64; crate::WARP_SIZE], mask: u32) -> u32 {
        let mut on = 0u32;
        for (l, &v) in pred.iter().enumerate() {
            on |= ((v != 0) as u32) << l;
        }
        mask & if self.negate { !on } else { on }
    }
}

/// A memory instruction after compilation.
#[derive(Debug, Clone)]
pub struct MemOp {
    /// Load or store.
    pub kind: MemKind,
    /// Global or shared.
    pub space: MemSpace,
    /// Index into [`Program::buffers`].
    pub buf: u16,
    /// Word size in bytes.
    pub width: u8,
    pub(crate) scale: i64,
    pub(crate) addr: Expr,
    /// Data register written (loads).
    pub dst: Option<u8>,
    /// Data registers the instruction waits for, as a bit mask: a store's
    /// sources, and the loads its address depends on.
    pub srcs: u32,
    /// Register slot that receives the loaded values (loads of a buffer
    /// with declared contents whose `dst` an expression uses).
    pub(crate) value_slot: Option<u16>,
    /// A load that bypasses the L1 (`CacheOp::L2`).
    pub l2_only: bool,
    /// The predicate, in a predicated `If`'s body.
    pub(crate) guard: Option<Guard>,
}

impl MemOp {
    /// Fills in `acc` what the instruction at op `pc`, run by lanes `mask`,
    /// says besides its addresses.
    pub(crate) fn describe(&self, pc: u32, mask: u32, acc: &mut crate::WarpAccess) {
        acc.kind = self.kind;
        acc.space = self.space;
        acc.width = self.width;
        acc.mask = mask;
        acc.pc = pc;
        acc.dst = self.dst;
        acc.srcs = self.srcs;
        acc.l2_only = self.l2_only;
    }
}

/// Where an instruction came from, for diagnostics and `explain`.
#[derive(Debug, Clone)]
pub struct OpSource {
    /// Field path in the workload file, e.g. `kernel[1].then[0]`.
    pub path: String,
    /// The statement, printed.
    pub text: String,
}

/// A compiled kernel for one set of parameter values.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) ops: Vec<OpKind>,
    /// Source of each op.
    pub sources: Vec<OpSource>,
    /// Buffers, indexed by `MemOp::buf`.
    pub buffers: Vec<BufferDecl>,
    /// Number of per-lane registers.
    pub n_regs: usize,
    /// Stack depth needed by the deepest expression.
    pub stack_depth: usize,
    /// Names of the data registers.
    pub data_regs: Vec<String>,
    /// Per op: the data registers (loads in flight) it must wait for.
    pub(crate) waits: Vec<u32>,
    /// Whether any non-memory op waits for a load.
    pub has_alu_waits: bool,
    /// Bytes of shared memory a block uses.
    pub shared_bytes: u64,
    /// Launch geometry.
    pub block_dim: [u32; 3],
    /// Launch geometry.
    pub grid_dim: [u32; 3],
    /// The built-in slots (threadIdx, blockIdx) some expression reads,
    /// one bit per slot: a warp sets only these.
    pub(crate) builtins_read: u32,
    /// Per op: whether it reads threadIdx or blockIdx.
    reads_builtins: Vec<bool>,
    /// Whether some variable may be read before the warp writes it (the
    /// kernel branches): a warp then starts with every variable zero.
    pub(crate) zero_vars: bool,
}

/// Why a kernel does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CompileError {
    /// Field path, e.g. `kernel[0].Let.1` or `kernel[2].Load.width`.
    pub path: String,
    /// The offending text, when there is one.
    pub text: Option<String>,
    /// Column inside `text`.
    pub col: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Program {
    /// Compiles `body` for the given environment.
    pub fn compile(body: &[Stmt], env: &CompileEnv<'_>) -> Result<Program, CompileError> {
        let mut c = Compiler {
            env,
            vars: Vec::new(),
            deps: Vec::new(),
            data: Vec::new(),
            ops: Vec::new(),
            waits: Vec::new(),
            sources: Vec::new(),
            depth: 1,
            guard: None,
            bound: Vec::new(),
        };
        c.block(body, "kernel")?;
        let has_alu_waits = c
            .ops
            .iter()
            .zip(&c.waits)
            .any(|(o, &w)| w != 0 && !matches!(o, OpKind::Mem(_)));
        let shared_bytes = env
            .buffers
            .iter()
            .filter(|b| b.space == MemSpace::Shared)
            .map(|b| b.base + b.bytes)
            .max()
            .unwrap_or(0);
        let mut builtins_read = 0u32;
        let mut branches = false;
        let mut reads_builtins = Vec::with_capacity(c.ops.len());
        for op in &c.ops {
            let mut reads = false;
            let mut note = |e: &Expr| {
                for slot in e.lanes().filter(|&s| s < FIRST_VAR) {
                    builtins_read |= 1 << slot;
                    reads = true;
                }
            };
            match op {
                OpKind::Set { expr, guard, .. } => {
                    // A predicated assignment leaves the other lanes' value
                    // as it was, as a branch does.
                    branches |= guard.is_some();
                    note(expr)
                }
                OpKind::Branch { cond, .. } => {
                    branches = true;
                    note(cond);
                }
                OpKind::Mem(m) => {
                    branches |= m.guard.is_some();
                    note(&m.addr)
                }
                OpKind::Jump { .. } | OpKind::Sync => {}
            }
            reads_builtins.push(reads);
        }
        Ok(Program {
            builtins_read,
            reads_builtins,
            zero_vars: branches,
            ops: c.ops,
            sources: c.sources,
            buffers: env.buffers.to_vec(),
            n_regs: FIRST_VAR as usize + c.vars.len(),
            stack_depth: c.depth,
            data_regs: c.data.into_iter().map(|d| d.name).collect(),
            waits: c.waits,
            has_alu_waits,
            shared_bytes,
            block_dim: env.block_dim,
            grid_dim: env.grid_dim,
        })
    }

    /// Number of flat instructions.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when the kernel has no instructions.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The memory instruction at `pc`, if it is one.
    pub fn mem_op(&self, pc: usize) -> Option<&MemOp> {
        match self.ops.get(pc) {
            Some(OpKind::Mem(m)) => Some(m),
            _ => None,
        }
    }

    /// Whether op `pc` reads threadIdx or blockIdx (special registers a
    /// warp reads at its start, and waits for).
    pub fn reads_builtins(&self, pc: u32) -> bool {
        self.reads_builtins
            .get(pc as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The data registers (loads in flight) op `pc` waits for, as a mask.
    pub fn waits(&self, pc: u32) -> u32 {
        self.waits.get(pc as usize).copied().unwrap_or(0)
    }

    /// Warp `w` of a block: its first thread, its number of threads and
    /// their mask (0 for a warp past the block's threads).
    pub(crate) fn warp_lanes(&self, w: u32) -> (u32, usize, u32) {
        let first = w.saturating_mul(32);
        let lanes = self.threads_per_block().saturating_sub(first).min(32) as usize;
        let mask = if lanes == 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        };
        (first, lanes, mask)
    }

    /// threadIdx.x, .y, .z of thread `t` of a block.
    pub fn thread_index(&self, t: u32) -> [u32; 3] {
        let [bx, by, _] = self.block_dim;
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u32 {
        self.block_dim.iter().product()
    }

    /// Warps per block (warp size 32).
    pub fn warps_per_block(&self) -> u32 {
        self.threads_per_block().div_ceil(32)
    }

    /// Blocks in the grid (saturating: three dimensions of 2^32 - 1
    /// overflow 64 bits).
    pub fn blocks(&self) -> u64 {
        self.grid_dim
            .iter()
            .fold(1u64, |n, &d| n.saturating_mul(d as u64))
    }
}

/// A named loaded value.
struct DataReg {
    name: String,
    /// The buffer it was first loaded from.
    buf: String,
    /// Whether its values are known (a buffer with declared contents,
    /// loaded by whole elements), so expressions may use it.
    valued: bool,
    /// Why not, for the error when an expression uses it.
    why_not: String,
}

/// Whether `body` assigns `var` (a `Let` of it, a loop over it, or a
/// load into it), at any depth.
fn assigns(body: &[Stmt], var: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Let(n, _) => n == var,
        Stmt::If {
            then, otherwise, ..
        } => assigns(then, var) || assigns(otherwise, var),
        Stmt::For { var: v, body, .. } => v == var || assigns(body, var),
        Stmt::Load(a) => a.dst.as_deref() == Some(var),
        Stmt::Store(_) | Stmt::Sync => false,
    })
}

struct Compiler<'a, 'e> {
    env: &'a CompileEnv<'e>,
    vars: Vec<String>,
    /// Per variable: the data registers its value depends on.
    deps: Vec<u32>,
    data: Vec<DataReg>,
    ops: Vec<OpKind>,
    waits: Vec<u32>,
    sources: Vec<OpSource>,
    depth: usize,
    /// The predicate of the statements being compiled (inside a
    /// predicated `If`).
    guard: Option<Guard>,
    /// The variables of the unrolled loops being compiled, each the
    /// constant of its copy.
    bound: Vec<(String, i64)>,
}

impl Compiler<'_, '_> {
    fn err(path: &str, text: Option<&str>, col: Option<usize>, message: String) -> CompileError {
        CompileError {
            path: path.to_string(),
            text: text.map(str::to_string),
            col,
            message,
        }
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        let dims = |base: &str, v: [u32; 3]| -> Option<i64> {
            let rest = name.strip_prefix(base)?;
            match rest {
                ".x" => Some(v[0] as i64),
                ".y" => Some(v[1] as i64),
                ".z" => Some(v[2] as i64),
                _ => None,
            }
        };
        let lane = |base: &str, slot: u16| -> Option<Sym> {
            let rest = name.strip_prefix(base)?;
            match rest {
                ".x" => Some(Sym::Lane(slot)),
                ".y" => Some(Sym::Lane(slot + 1)),
                ".z" => Some(Sym::Lane(slot + 2)),
                _ => None,
            }
        };
        if let Some(&(_, v)) = self.bound.iter().rev().find(|b| b.0 == name) {
            return Some(Sym::Const(v));
        }
        if let Some(i) = self.vars.iter().position(|v| v == name) {
            return Some(Sym::Lane(FIRST_VAR + i as u16));
        }
        if let Some(v) = dims("blockDim", self.env.block_dim) {
            return Some(Sym::Const(v));
        }
        if let Some(v) = dims("gridDim", self.env.grid_dim) {
            return Some(Sym::Const(v));
        }
        if name == "warpSize" {
            return Some(Sym::Const(32));
        }
        lane("threadIdx", SLOT_TID)
            .or_else(|| lane("blockIdx", SLOT_BID))
            .or_else(|| (self.env.consts)(name).map(Sym::Const))
    }

    fn expr(&mut self, text: &str, path: &str) -> Result<Expr, CompileError> {
        let ast: Ast =
            expr::parse(text).map_err(|e| Self::err(path, Some(text), Some(e.col), e.message))?;
        let r = Expr::resolve(&ast, &mut |n| self.lookup(n));
        match r {
            Ok(e) => {
                self.depth = self.depth.max(e.depth());
                Ok(e)
            }
            Err(ResolveError::Unknown(u)) => {
                let hint = if let Some(d) = self.data.iter().find(|d| d.name == u.name) {
                    format!(" (it names a value loaded from `{}`, {})", d.buf, d.why_not)
                } else {
                    format!(
                        " (known: threadIdx.x/y/z, blockIdx.x/y/z, blockDim.x/y/z, \
                         gridDim.x/y/z, warpSize, the workload's parameters and derived values{}{})",
                        if self.vars.is_empty() { "" } else { ", and variables " },
                        self.vars.join(", ")
                    )
                };
                Err(Self::err(
                    path,
                    Some(text),
                    Some(u.col),
                    format!("unknown name `{}`{hint}", u.name),
                ))
            }
            Err(ResolveError::Fault(f)) => Err(Self::err(path, Some(text), None, f.to_string())),
        }
    }

    fn const_expr(&mut self, text: &str, path: &str) -> Result<i64, CompileError> {
        let e = self.expr(text, path)?;
        e.konst.ok_or_else(|| {
            Self::err(
                path,
                Some(text),
                None,
                "must be a constant (it may use parameters and blockDim/gridDim, not per-lane values)"
                    .into(),
            )
        })
    }

    fn var_slot(&mut self, name: &str, path: &str) -> Result<u16, CompileError> {
        let builtin = ["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"];
        if builtin
            .iter()
            .any(|b| name == *b || name.starts_with(&format!("{b}.")))
            || (self.env.consts)(name).is_some()
        {
            return Err(Self::err(
                path,
                Some(name),
                None,
                format!("`{name}` is a built-in or a parameter and cannot be assigned"),
            ));
        }
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(Self::err(
                path,
                Some(name),
                None,
                format!("`{name}` is not a valid variable name"),
            ));
        }
        if let Some(i) = self.vars.iter().position(|v| v == name) {
            return Ok(FIRST_VAR + i as u16);
        }
        self.vars.push(name.to_string());
        Ok(FIRST_VAR + (self.vars.len() - 1) as u16)
    }

    /// The data registers (loads) the value of `e` depends on.
    fn deps_of(&self, e: &Expr) -> u32 {
        e.lanes()
            .filter(|&s| s >= FIRST_VAR)
            .fold(0, |m, s| m | self.deps[(s - FIRST_VAR) as usize])
    }

    /// Records that variable `slot` now also depends on `deps`.
    fn depend(&mut self, slot: u16, deps: u32) {
        let i = (slot - FIRST_VAR) as usize;
        if self.deps.len() <= i {
            self.deps.resize(i + 1, 0);
        }
        self.deps[i] |= deps;
    }

    fn push(&mut self, op: OpKind, path: &str, text: String) -> u32 {
        self.push_waiting(op, 0, path, text)
    }

    /// Pushes an op that waits for the loads in `waits`.
    fn push_waiting(&mut self, op: OpKind, waits: u32, path: &str, text: String) -> u32 {
        self.ops.push(op);
        self.waits.push(waits);
        self.sources.push(OpSource {
            path: path.to_string(),
            text,
        });
        (self.ops.len() - 1) as u32
    }

    fn block(&mut self, body: &[Stmt], path: &str) -> Result<(), CompileError> {
        for (i, s) in body.iter().enumerate() {
            self.stmt(s, &format!("{path}[{i}]"))?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, path: &str) -> Result<(), CompileError> {
        // A branching `If` on a constant (parameters, an unrolled loop's
        // variable) is decided here: only the arm it takes is compiled,
        // with no branch, as nvcc compiles a test of a template parameter
        // or of a constant. (A predicated one is kept: its instructions
        // issue, predicated off or not.)
        if let Stmt::If {
            cond,
            then,
            otherwise,
            predicated: false,
        } = s
        {
            if let Some(v) = self.expr(cond, &format!("{path}.cond"))?.konst {
                return if v != 0 {
                    self.block(then, &format!("{path}.then"))
                } else {
                    self.block(otherwise, &format!("{path}.else"))
                };
            }
        }
        match s {
            Stmt::Let(name, text) => {
                let e = self.expr(text, &format!("{path}.Let.1"))?;
                let slot = self.var_slot(name, &format!("{path}.Let.0"))?;
                let w = self.deps_of(&e);
                self.depend(slot, w);
                let guard = self.guard;
                self.push_waiting(
                    OpKind::Set {
                        slot,
                        expr: e,
                        guard,
                    },
                    w,
                    path,
                    s.to_string(),
                );
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                predicated: true,
            } => self.predicated_if(cond, then, otherwise, path, s)?,
            Stmt::If {
                cond,
                then,
                otherwise,
                predicated: false,
            } => {
                self.unpredicated(path, "an `If` that branches")?;
                let c = self.expr(cond, &format!("{path}.cond"))?;
                let w = self.deps_of(&c);
                let br = self.push_waiting(
                    OpKind::Branch {
                        cond: c,
                        else_pc: 0,
                        reconv_pc: 0,
                    },
                    w,
                    path,
                    s.to_string(),
                );
                self.block(then, &format!("{path}.then"))?;
                let jump = if otherwise.is_empty() {
                    None
                } else {
                    Some(self.push(OpKind::Jump { pc: 0 }, path, "else".into()))
                };
                let else_pc = self.ops.len() as u32;
                self.block(otherwise, &format!("{path}.else"))?;
                let reconv = self.ops.len() as u32;
                if let OpKind::Branch {
                    else_pc: e,
                    reconv_pc: r,
                    ..
                } = &mut self.ops[br as usize]
                {
                    *e = else_pc;
                    *r = reconv;
                }
                if let Some(j) = jump {
                    self.ops[j as usize] = OpKind::Jump { pc: reconv };
                }
            }
            Stmt::For {
                var,
                from,
                to,
                step,
                body,
                unroll: true,
            } => self.unrolled(var, from, to, step.as_deref(), body, path)?,
            Stmt::For {
                var, from, step, ..
            } => {
                self.unpredicated(path, "a loop")?;
                let step_text = step.clone().unwrap_or_else(|| "1".into());
                let step_v = self.const_expr(&step_text, &format!("{path}.step"))?;
                if step_v == 0 {
                    return Err(Self::err(
                        &format!("{path}.step"),
                        Some(&step_text),
                        None,
                        "loop step must not be zero".into(),
                    ));
                }
                let init = self.expr(from, &format!("{path}.from"))?;
                let slot = self.var_slot(var, &format!("{path}.var"))?;
                let w = self.deps_of(&init);
                self.depend(slot, w);
                self.push_waiting(
                    OpKind::Set {
                        slot,
                        expr: init,
                        guard: None,
                    },
                    w,
                    path,
                    format!("{var} = {from}"),
                );
                // A value loaded in one trip and used in the next (a pointer
                // chase: `j = idx[j]`) makes the next trip wait for it: the
                // body is compiled again from the loop head with what each
                // variable depends on at the end of a trip added to what it
                // depends on at its start, until nothing more is added (at
                // most once per data register).
                let mark = (
                    self.vars.len(),
                    self.data.len(),
                    self.ops.len(),
                    self.waits.len(),
                    self.sources.len(),
                );
                for pass in 0.. {
                    if pass == 4 {
                        // A long chain of variables (or loops nested deep,
                        // each with its own) would take a pass per link:
                        // after four, every variable may depend on every
                        // loaded value seen so far, which no trip can add to.
                        let all = self.deps.iter().fold(0, |m, d| m | d);
                        self.deps.iter_mut().for_each(|d| *d = all);
                    }
                    let entry = self.deps.clone();
                    self.loop_trip(s, slot, step_v, path)?;
                    let mut merged = self.deps.clone();
                    for (m, e) in merged.iter_mut().zip(&entry) {
                        *m |= e;
                    }
                    let grew = merged
                        .iter()
                        .enumerate()
                        .any(|(i, &m)| m != entry.get(i).copied().unwrap_or(0));
                    if !grew || pass >= 4 {
                        self.deps = merged;
                        break;
                    }
                    self.vars.truncate(mark.0);
                    self.data.truncate(mark.1);
                    self.ops.truncate(mark.2);
                    self.waits.truncate(mark.3);
                    self.sources.truncate(mark.4);
                    self.deps = merged;
                }
            }
            Stmt::Load(a) => self.mem(a, crate::MemKind::Load, path, s)?,
            Stmt::Store(a) => self.mem(a, crate::MemKind::Store, path, s)?,
            Stmt::Sync => {
                self.unpredicated(path, "a `Sync`")?;
                self.push(OpKind::Sync, path, s.to_string());
            }
        }
        Ok(())
    }

    /// A `For` with `unroll`: its body compiled once per trip, the loop's
    /// variable the trip's constant in each copy (nvcc folds it into the
    /// copies' immediates), with no instruction of the loop's own.
    fn unrolled(
        &mut self,
        var: &str,
        from: &str,
        to: &str,
        step: Option<&str>,
        body: &[Stmt],
        path: &str,
    ) -> Result<(), CompileError> {
        let constant = |c: &mut Self, text: &str, field: &str| {
            c.const_expr(text, &format!("{path}.{field}"))
                .map_err(|mut e| {
                    e.message = format!("an unrolled loop's `{field}` {}", e.message);
                    e
                })
        };
        let a = constant(self, from, "from")?;
        let b = constant(self, to, "to")?;
        let st = constant(self, step.unwrap_or("1"), "step")?;
        if st == 0 {
            return Err(Self::err(
                &format!("{path}.step"),
                step,
                None,
                "loop step must not be zero".into(),
            ));
        }
        let trips = crate::ir::trips(a, b, st);
        if trips > crate::ir::MAX_UNROLL as u128 {
            return Err(Self::err(
                &format!("{path}.to"),
                Some(to),
                None,
                format!(
                    "an unrolled loop has at most {} trips (this one {trips}); leave out `unroll`",
                    crate::ir::MAX_UNROLL
                ),
            ));
        }
        if assigns(body, var) {
            return Err(Self::err(
                &format!("{path}.var"),
                Some(var),
                None,
                format!("the variable `{var}` of an unrolled loop cannot be assigned in its body"),
            ));
        }
        for k in 0..trips as i64 {
            self.bound.push((var.to_string(), a + k * st));
            let r = self.block(body, &format!("{path}.body"));
            self.bound.pop();
            r?;
        }
        Ok(())
    }

    /// Refuses `what` inside a predicated `If`'s body, which nvcc compiles
    /// to predicated instructions only where it holds straight-line code.
    fn unpredicated(&self, path: &str, what: &str) -> Result<(), CompileError> {
        if self.guard.is_some() {
            return Err(Self::err(
                path,
                None,
                None,
                format!(
                    "{what} cannot be in a predicated `If` (its bodies hold `Let`s and shared-memory \
                     `Load`s and `Store`s, which issue with a predicate; write the `If` without \
                     `predicated` to branch)"
                ),
            ));
        }
        Ok(())
    }

    /// A predicated `If`: its condition set once into a register of its
    /// own (one instruction), then both bodies' statements guarded by it.
    fn predicated_if(
        &mut self,
        cond: &str,
        then: &[Stmt],
        otherwise: &[Stmt],
        path: &str,
        s: &Stmt,
    ) -> Result<(), CompileError> {
        self.unpredicated(path, "a predicated `If`")?;
        let c = self.expr(cond, &format!("{path}.cond"))?;
        let w = self.deps_of(&c);
        // A register no statement can name (`#` is not a name's character).
        self.vars.push(format!("#if{}", self.ops.len()));
        let slot = FIRST_VAR + (self.vars.len() - 1) as u16;
        self.depend(slot, w);
        let text = format!("predicate of {s}");
        self.push_waiting(
            OpKind::Set {
                slot,
                expr: c,
                guard: None,
            },
            w,
            path,
            text,
        );
        self.guard = Some(Guard {
            slot,
            negate: false,
        });
        let r = self.block(then, &format!("{path}.then"));
        self.guard = Some(Guard { slot, negate: true });
        let r = r.and_then(|_| self.block(otherwise, &format!("{path}.else")));
        self.guard = None;
        r
    }

    /// One compilation of the counted loop `s` from its head: the test,
    /// the body, the increment of its variable (`slot`) and the jump back.
    fn loop_trip(
        &mut self,
        s: &Stmt,
        slot: u16,
        step_v: i64,
        path: &str,
    ) -> Result<(), CompileError> {
        let Stmt::For { var, to, body, .. } = s else {
            unreachable!("loop_trip compiles a For");
        };
        let cmp = if step_v > 0 { "<" } else { ">" };
        let cond_text = format!("{var} {cmp} ({to})");
        let cond = self.expr(&cond_text, &format!("{path}.to"))?;
        let w = self.deps_of(&cond);
        let head = self.push_waiting(
            OpKind::Branch {
                cond,
                else_pc: 0,
                reconv_pc: 0,
            },
            w,
            path,
            s.to_string(),
        );
        self.block(body, &format!("{path}.body"))?;
        let inc = self.expr(&format!("{var} + ({step_v})"), path)?;
        self.push(
            OpKind::Set {
                slot,
                expr: inc,
                guard: None,
            },
            path,
            format!("{var} += {step_v}"),
        );
        self.push(OpKind::Jump { pc: head }, path, "loop".into());
        let exit = self.ops.len() as u32;
        if let OpKind::Branch {
            else_pc, reconv_pc, ..
        } = &mut self.ops[head as usize]
        {
            *else_pc = exit;
            *reconv_pc = exit;
        }
        Ok(())
    }

    fn mem(&mut self, a: &Access, kind: MemKind, path: &str, s: &Stmt) -> Result<(), CompileError> {
        let verb = if kind == MemKind::Load {
            "Load"
        } else {
            "Store"
        };
        let p = format!("{path}.{verb}");
        let buf = self
            .env
            .buffers
            .iter()
            .position(|b| b.name == a.buf)
            .ok_or_else(|| {
                let names: Vec<&str> = self.env.buffers.iter().map(|b| b.name.as_str()).collect();
                Self::err(
                    &format!("{p}.buf"),
                    Some(&a.buf),
                    None,
                    format!(
                        "unknown buffer `{}` (declared: {})",
                        a.buf,
                        names.join(", ")
                    ),
                )
            })?;
        let width = self.const_expr(&a.width, &format!("{p}.width"))?;
        if ![1, 2, 4, 8, 16].contains(&width) {
            return Err(Self::err(
                &format!("{p}.width"),
                Some(&a.width),
                None,
                format!(
                    "word size is {width} bytes; global memory instructions access 1, 2, 4, 8 or \
                     16 bytes (CUDA C++ Programming Guide, \"Size and Alignment Requirement\")"
                ),
            ));
        }
        let (text, scale, field) = match (&a.index, &a.byte) {
            (Some(i), None) => (i, width, "index"),
            (None, Some(b)) => (b, 1, "byte"),
            _ => {
                return Err(Self::err(
                    &p,
                    None,
                    None,
                    "give exactly one of `index` (in words) or `byte` (byte offset)".into(),
                ))
            }
        };
        let addr = self.expr(text, &format!("{p}.{field}"))?;
        let b = &self.env.buffers[buf];
        let mut srcs = self.deps_of(&addr);
        let mut dst = None;
        let mut value_slot = None;
        match kind {
            MemKind::Load => {
                if !a.src.is_empty() {
                    return Err(Self::err(
                        &format!("{p}.src"),
                        None,
                        None,
                        "`src` belongs to stores; a load names its result with `dst`".into(),
                    ));
                }
                if let Some(d) = &a.dst {
                    let (valued, why_not) = match (&b.space, &b.data) {
                        (MemSpace::Shared, _) => (
                            false,
                            "shared memory, whose contents are not modelled".to_string(),
                        ),
                        (_, None) => (
                            false,
                            format!(
                                "which declares no contents: give buffer `{}` an `init` so that \
                                 its values are known",
                                b.name
                            ),
                        ),
                        (_, Some(data)) if data.elem_bytes as i64 != width => (
                            false,
                            format!(
                                "with {width}-byte loads, but its elements are {} bytes",
                                data.elem_bytes
                            ),
                        ),
                        _ => (true, String::new()),
                    };
                    let i = match self.data.iter().position(|x| &x.name == d) {
                        Some(i) => {
                            if self.data[i].valued != valued {
                                let (with, without) = if valued {
                                    (&b.name, &self.data[i].buf)
                                } else {
                                    (&self.data[i].buf, &b.name)
                                };
                                return Err(Self::err(
                                    &format!("{p}.dst"),
                                    Some(d),
                                    None,
                                    format!(
                                        "`{d}` is loaded from `{with}`, whose values are known, and \
                                         from `{without}`, whose values are not: give the two \
                                         loads different names"
                                    ),
                                ));
                            }
                            i
                        }
                        None => {
                            if self.data.len() == MAX_DATA_REGS {
                                return Err(Self::err(
                                    &format!("{p}.dst"),
                                    Some(d),
                                    None,
                                    format!("more than {MAX_DATA_REGS} loaded values"),
                                ));
                            }
                            self.data.push(DataReg {
                                name: d.clone(),
                                buf: b.name.clone(),
                                valued,
                                why_not,
                            });
                            self.data.len() - 1
                        }
                    };
                    dst = Some(i as u8);
                    if valued {
                        let slot = self.var_slot(d, &format!("{p}.dst"))?;
                        // The variable's value is the load's, whatever it was.
                        let k = (slot - FIRST_VAR) as usize;
                        if self.deps.len() <= k {
                            self.deps.resize(k + 1, 0);
                        }
                        self.deps[k] = 1 << i;
                        value_slot = Some(slot);
                    }
                }
            }
            MemKind::Store => {
                if a.dst.is_some() {
                    return Err(Self::err(
                        &format!("{p}.dst"),
                        None,
                        None,
                        "`dst` belongs to loads; a store lists the values it depends on in `src`"
                            .into(),
                    ));
                }
                if b.data.is_some() {
                    return Err(Self::err(
                        &format!("{p}.buf"),
                        Some(&a.buf),
                        None,
                        format!(
                            "buffer `{}` declares its contents (`init`), so the model keeps it \
                             read-only: a store would change values that loads read",
                            a.buf
                        ),
                    ));
                }
                for (k, sname) in a.src.iter().enumerate() {
                    let i = self
                        .data
                        .iter()
                        .position(|x| &x.name == sname)
                        .ok_or_else(|| {
                            Self::err(
                                &format!("{p}.src[{k}]"),
                                Some(sname),
                                None,
                                format!(
                                    "`{sname}` is not the `dst` of an earlier load (loaded values: {})",
                                    if self.data.is_empty() {
                                        "none".to_string()
                                    } else {
                                        self.data
                                            .iter()
                                            .map(|d| d.name.as_str())
                                            .collect::<Vec<_>>()
                                            .join(", ")
                                    }
                                ),
                            )
                        })?;
                    srcs |= 1 << i;
                }
            }
        }
        let space = self.env.buffers[buf].space;
        if self.guard.is_some() && space != MemSpace::Shared {
            return Err(Self::err(
                &format!("{p}.buf"),
                Some(&a.buf),
                None,
                format!(
                    "a predicated `If` may access shared memory only: what the L1 counts for a \
                     global access with no thread active is not measured (`{}` is global; write \
                     the `If` without `predicated`)",
                    a.buf
                ),
            ));
        }
        let guard = self.guard;
        self.push(
            OpKind::Mem(MemOp {
                kind,
                space,
                buf: buf as u16,
                width: width as u8,
                scale,
                addr,
                dst,
                srcs,
                value_slot,
                l2_only: a.cache == crate::ir::CacheOp::L2,
                guard,
            }),
            path,
            s.to_string(),
        );
        Ok(())
    }
}
