//! Workloads: a kernel, its parameters (some swept), buffers and launch
//! geometry, as written in `workloads/*.ron`.

use crate::diag::Diag;
use serde::Deserialize;
use simt_core::expr::{eval_const, ConstEvalError};
use simt_core::ir::Stmt;
use simt_core::{BufferData, BufferDecl, CompileEnv, Contents, MemSpace, Program};

/// A workload file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Short name, used in reports.
    pub name: String,
    /// What the kernel is and where it comes from.
    #[serde(default)]
    pub description: String,
    /// Parameters, in the order of the CSV columns.
    pub params: Vec<Param>,
    /// Named constants computed from the parameters, in order.
    #[serde(default)]
    pub derived: Vec<(String, String)>,
    /// What every point must meet: a condition over the parameters and
    /// derived values (nonzero when met) and what it asks, in words. A
    /// point that fails one is refused before anything runs, naming the
    /// condition and the point (a mode number past the kernel's last, a
    /// size the kernel does not divide).
    #[serde(default)]
    pub requires: Vec<(String, String)>,
    /// Global buffers.
    pub buffers: Vec<Buffer>,
    /// Shared-memory buffers: each block has its own copy of each
    /// (`__shared__` arrays).
    #[serde(default)]
    pub shared: Vec<SharedBuffer>,
    /// Grid dimensions (1 to 3 expressions).
    pub grid: Vec<String>,
    /// Block dimensions (1 to 3 expressions).
    pub block: Vec<String>,
    /// Registers per thread (as `nvcc -Xptxas -v` reports); limits
    /// occupancy. A number, or an expression of the parameters and derived
    /// values (a kernel compiled per parameter value, each with its own
    /// count).
    #[serde(default = "default_regs")]
    pub regs_per_thread: Regs,
    /// The useful bytes moved, for the bandwidth column.
    pub useful_bytes: String,
    /// The kernel.
    pub kernel: Vec<Stmt>,
    /// Folder of the workload file, for `init: File(...)` paths (set when
    /// the file is loaded).
    #[serde(skip)]
    pub dir: Option<std::path::PathBuf>,
}

fn default_regs() -> Regs {
    Regs::Count(16)
}

/// Registers per thread: a number or an expression.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Regs {
    /// A fixed count.
    Count(u32),
    /// An expression of the parameters and derived values.
    Expr(String),
}

/// A parameter.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// Name, usable in every expression.
    pub name: String,
    /// Value when not swept.
    pub default: i64,
    /// Values to sweep over, by default.
    #[serde(default)]
    pub sweep: Option<Sweep>,
    /// What it means.
    #[serde(default)]
    pub doc: String,
}

/// Values of a swept parameter.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub enum Sweep {
    /// `from..=to` in steps of `step` (default 1).
    Range {
        /// First value.
        from: i64,
        /// Last value (inclusive).
        to: i64,
        /// Increment.
        #[serde(default)]
        step: Option<i64>,
    },
    /// An explicit list.
    Values(Vec<i64>),
}

impl Sweep {
    fn values(&self) -> Result<Vec<i64>, String> {
        match self {
            Sweep::Values(v) if v.is_empty() => Err("the list of values is empty".into()),
            Sweep::Values(v) => Ok(v.clone()),
            Sweep::Range { from, to, step } => {
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(format!("step must be positive, not {step}"));
                }
                if to < from {
                    return Err(format!("empty range {from}..={to}"));
                }
                // (In 128 bits: the span of two extreme values overflows 64.)
                let n = (*to as i128 - *from as i128) / step as i128;
                if n > 1_000_000 {
                    return Err("more than a million values".into());
                }
                Ok((0..=n as i64).map(|k| from + k * step).collect())
            }
        }
    }
}

/// A buffer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    /// Name used by loads and stores.
    pub name: String,
    /// Size in bytes (expression).
    pub bytes: String,
    /// Bytes added to the 256-byte aligned base (default 0), to study
    /// misaligned data.
    #[serde(default)]
    pub base_offset: Option<String>,
    /// Declared contents, so that loaded values can feed addresses; a
    /// buffer without them can be loaded and stored, but its values cannot
    /// be used.
    #[serde(default)]
    pub init: Option<Init>,
}

/// Contents of a global buffer: signed little-endian integers of `elem`
/// bytes (4 or 8). Expressions (sizes, bounds) may use parameters.
/// The pseudo-random kinds are defined in `simt_core::data`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Init {
    /// Every element `value`.
    Const {
        /// Element size in bytes.
        elem: u8,
        /// The value.
        value: String,
    },
    /// Element i holds i.
    Iota {
        /// Element size in bytes.
        elem: u8,
    },
    /// A random permutation of the element indices 0..n.
    Permutation {
        /// Element size in bytes.
        elem: u8,
        /// Seed.
        seed: u64,
    },
    /// A random permutation of the indices within each window of `window`
    /// elements: element i holds a value of its own window, and each window
    /// holds each of its indices once.
    WindowPermutation {
        /// Element size in bytes.
        elem: u8,
        /// Window, in elements: from 1 (the identity) to the whole buffer.
        window: String,
        /// Seed.
        seed: u64,
    },
    /// Uniform pseudo-random values in `lo..=hi`.
    Uniform {
        /// Element size in bytes.
        elem: u8,
        /// Smallest value.
        lo: String,
        /// Largest value.
        hi: String,
        /// Seed.
        seed: u64,
    },
    /// Raw little-endian words from a file (relative to the workload file),
    /// exactly as many bytes as the buffer.
    File {
        /// Element size in bytes.
        elem: u8,
        /// The file.
        path: String,
    },
}

impl Init {
    fn elem(&self) -> u8 {
        match self {
            Init::Const { elem, .. }
            | Init::Iota { elem }
            | Init::Permutation { elem, .. }
            | Init::WindowPermutation { elem, .. }
            | Init::Uniform { elem, .. }
            | Init::File { elem, .. } => *elem,
        }
    }
}

/// A per-block shared-memory buffer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedBuffer {
    /// Name used by loads and stores.
    pub name: String,
    /// Size in bytes (expression).
    pub bytes: String,
}

/// Shared buffers are placed one after another at multiples of this
/// (the natural alignment of the widest word, 16 bytes).
pub const SHARED_ALIGN: u64 = 16;

/// One point of a sweep: the value of every parameter, in order.
pub type Point = Vec<(String, i64)>;

/// Where buffers start: allocations are placed on 2 MiB boundaries (large
/// `cudaMalloc` allocations are; 256-byte alignment is guaranteed by the CUDA
/// C++ Programming Guide), so that buffers never share a DRAM page or line.
pub const ALLOC_ALIGN: u64 = 2 << 20;
const HEAP_BASE: u64 = 1 << 32;

/// Threads a block may have, on any device a config can describe (the
/// device's own limit, `sm.max_threads_per_block`, is checked at launch).
pub const MAX_BLOCK_THREADS: u64 = 1 << 20;

/// Everything needed to simulate one point.
pub struct Instance {
    /// The compiled kernel.
    pub program: Program,
    /// Useful bytes.
    pub useful_bytes: u64,
    /// Registers per thread at this point.
    pub regs_per_thread: u32,
    /// Warp instructions the grid executes at least: blocks x warps per
    /// block x the fewest a warp can run (loops with constant bounds
    /// counted whole, branches by their shorter side; at least one, the
    /// exit), saturating.
    pub min_warp_instructions: u64,
}

/// Every variable `body` assigns (`Let`s and loop variables).
fn kernel_vars(body: &[Stmt], out: &mut Vec<String>) {
    for s in body {
        match s {
            Stmt::Let(n, _) => out.push(n.clone()),
            Stmt::If {
                then, otherwise, ..
            } => {
                kernel_vars(then, out);
                kernel_vars(otherwise, out);
            }
            Stmt::For { var, body, .. } => {
                out.push(var.clone());
                kernel_vars(body, out);
            }
            Stmt::Load(a) => out.extend(a.dst.clone()),
            Stmt::Store(_) | Stmt::Sync => {}
        }
    }
}

/// The fewest warp instructions `body` can execute, with `lookup` for the
/// constants (loops whose bounds depend on a lane count as not entered).
fn min_instructions(body: &[Stmt], lookup: &dyn Fn(&str) -> Option<i64>) -> u64 {
    let konst = |t: &str| eval_const(t, &mut |n| lookup(n)).ok();
    body.iter()
        .map(|s| match s {
            Stmt::Let(..) | Stmt::Load(_) | Stmt::Store(_) | Stmt::Sync => 1,
            // A predicated `If` issues both bodies; one that branches may
            // run either alone.
            Stmt::If {
                then,
                otherwise,
                predicated: true,
                ..
            } => 1 + min_instructions(then, lookup) + min_instructions(otherwise, lookup),
            Stmt::If {
                then, otherwise, ..
            } => 1 + min_instructions(then, lookup).min(min_instructions(otherwise, lookup)),
            Stmt::For {
                from,
                to,
                step,
                body,
                unroll,
                ..
            } => {
                let step = step.as_deref().map_or(Some(1), konst);
                let trips = match (konst(from), konst(to), step) {
                    (Some(a), Some(b), Some(st)) => {
                        simt_core::ir::trips(a, b, st).min(u64::MAX as u128) as u64
                    }
                    _ => 0,
                };
                // An unrolled loop has no test of its own.
                u64::from(!*unroll)
                    .saturating_add(trips.saturating_mul(min_instructions(body, lookup)))
            }
        })
        .fold(0u64, u64::saturating_add)
}

/// Names the expressions give a meaning of their own, whatever a workload
/// declares: a parameter so named would be one value on the host (grid,
/// buffers) and another in the kernel.
const BUILTINS: [&str; 5] = ["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"];

/// Checks that `name` (a parameter's or a derived value's, at `field`)
/// can be written in an expression and means the same everywhere.
fn check_name(name: &str, field: &str, what: &str) -> Result<(), Diag> {
    let b = name.as_bytes();
    let ident = b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if !ident {
        return Err(Diag::field(
            field,
            format!(
                "{what} name `{name}` is not a name expressions can use: letters, digits and \
                 `_`, not starting with a digit"
            ),
        ));
    }
    if let Some(b) = BUILTINS.iter().find(|b| name == **b) {
        return Err(Diag::field(
            field,
            format!(
                "{what} name `{name}` is a built-in (`{b}`), which kernels read as CUDA defines \
                 it: choose another name"
            ),
        ));
    }
    Ok(())
}

impl Workload {
    /// The sweep points, with `overrides` (name, values) replacing defaults
    /// and sweeps. The first swept parameter varies slowest.
    pub fn points(&self, overrides: &[(String, Vec<i64>)]) -> Result<Vec<Point>, Diag> {
        for (name, _) in overrides {
            if !self.params.iter().any(|p| &p.name == name) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                return Err(Diag::msg(format!(
                    "--set {name}: workload `{}` has no parameter `{name}` (its parameters: {})",
                    self.name,
                    known.join(", ")
                )));
            }
        }
        let mut axes: Vec<(String, Vec<i64>)> = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            let vals = match overrides.iter().rev().find(|(n, _)| n == &p.name) {
                Some((_, v)) => v.clone(),
                None => match &p.sweep {
                    Some(s) => s
                        .values()
                        .map_err(|m| Diag::field(format!("params[{i}].sweep"), m))?,
                    None => vec![p.default],
                },
            };
            axes.push((p.name.clone(), vals));
        }
        let mut pts: Vec<Point> = vec![Vec::new()];
        for (name, vals) in &axes {
            let mut next = Vec::with_capacity(pts.len() * vals.len());
            for p in &pts {
                for v in vals {
                    let mut q = p.clone();
                    q.push((name.clone(), *v));
                    next.push(q);
                }
            }
            pts = next;
        }
        Ok(pts)
    }

    /// Checks names once, independent of parameter values.
    pub fn validate(&self) -> Result<(), Diag> {
        let mut seen: Vec<&str> = Vec::new();
        for (i, p) in self.params.iter().enumerate() {
            check_name(&p.name, &format!("params[{i}].name"), "parameter")?;
            if seen.contains(&p.name.as_str()) {
                return Err(Diag::field(
                    format!("params[{i}].name"),
                    format!("parameter `{}` is declared twice", p.name),
                ));
            }
            seen.push(&p.name);
        }
        for (i, (name, _)) in self.derived.iter().enumerate() {
            check_name(name, &format!("derived[{i}].0"), "derived value")?;
        }
        if self.grid.is_empty() || self.grid.len() > 3 {
            return Err(Diag::field("grid", "give 1 to 3 dimensions".into()));
        }
        if self.block.is_empty() || self.block.len() > 3 {
            return Err(Diag::field("block", "give 1 to 3 dimensions".into()));
        }
        if self.buffers.is_empty() {
            return Err(Diag::field("buffers", "declare at least one buffer".into()));
        }
        Ok(())
    }

    /// The contents `init` declares for buffer `i` of `bytes` bytes;
    /// `eval(text, field)` evaluates an expression of field `field`.
    fn buffer_data(
        &self,
        i: usize,
        init: &Init,
        bytes: u64,
        eval: &dyn Fn(&str, &str) -> Result<i64, Diag>,
    ) -> Result<BufferData, Diag> {
        let name = &self.buffers[i].name;
        let at = |f: &str| format!("buffers[{i}].init.{f}");
        let elem = init.elem();
        if elem != 4 && elem != 8 {
            return Err(Diag::field(
                at("elem"),
                format!("elements are 4 or 8 bytes (signed little-endian integers), not {elem}"),
            ));
        }
        if !bytes.is_multiple_of(elem as u64) {
            return Err(Diag::field(
                format!("buffers[{i}].bytes"),
                format!(
                    "buffer `{name}` has {bytes} bytes, not a whole number of {elem}-byte \
                     elements, so its `init` cannot fill it"
                ),
            )
            .with_text(&self.buffers[i].bytes, None));
        }
        let elems = bytes / elem as u64;
        let (min, max) = BufferData::range(elem);
        let in_range = |v: i64, f: &str| -> Result<i64, Diag> {
            if v < min || v > max {
                Err(Diag::field(
                    at(f),
                    format!("{v} does not fit in a {elem}-byte element ({min}..={max})"),
                ))
            } else {
                Ok(v)
            }
        };
        let contents = match init {
            Init::Const { value, .. } => Contents::Const(in_range(eval(value, "value")?, "value")?),
            Init::Iota { .. } => {
                in_range((elems - 1).min(i64::MAX as u64) as i64, "elem")?;
                Contents::Iota
            }
            Init::Permutation { seed, .. } => {
                in_range((elems - 1).min(i64::MAX as u64) as i64, "elem")?;
                Contents::Permutation {
                    window: elems,
                    seed: *seed,
                }
            }
            Init::WindowPermutation { window, seed, .. } => {
                in_range((elems - 1).min(i64::MAX as u64) as i64, "elem")?;
                let w = eval(window, "window")?;
                if w < 1 || w as u64 > elems {
                    return Err(Diag::field(
                        at("window"),
                        format!(
                            "the window must be between 1 and the buffer's {elems} elements, is {w}"
                        ),
                    )
                    .with_text(window, None));
                }
                Contents::Permutation {
                    window: w as u64,
                    seed: *seed,
                }
            }
            Init::Uniform { lo, hi, seed, .. } => {
                let (l, h) = (
                    in_range(eval(lo, "lo")?, "lo")?,
                    in_range(eval(hi, "hi")?, "hi")?,
                );
                if l > h {
                    return Err(Diag::field(at("hi"), format!("hi ({h}) is below lo ({l})")));
                }
                Contents::Uniform {
                    lo: l,
                    hi: h,
                    seed: *seed,
                }
            }
            Init::File { path, .. } => {
                let full = match &self.dir {
                    Some(d) => d.join(path),
                    None => std::path::PathBuf::from(path),
                };
                let meta = std::fs::metadata(&full).map_err(|e| {
                    Diag::field(at("path"), format!("cannot read {}: {e}", full.display()))
                })?;
                if !meta.is_file() {
                    return Err(Diag::field(
                        at("path"),
                        format!(
                            "{} is not a regular file (a directory or a device): give a file \
                             of the buffer's bytes",
                            full.display()
                        ),
                    ));
                }
                if meta.len() != bytes {
                    return Err(Diag::field(
                        at("path"),
                        format!(
                            "{} has {} bytes; buffer `{name}` has {bytes}",
                            full.display(),
                            meta.len()
                        ),
                    ));
                }
                if bytes > 1 << 30 {
                    return Err(Diag::field(
                        at("path"),
                        format!(
                            "{} is larger than 1 GiB, the most a file may give",
                            full.display()
                        ),
                    ));
                }
                let raw = std::fs::read(&full).map_err(|e| {
                    Diag::field(at("path"), format!("cannot read {}: {e}", full.display()))
                })?;
                let words: Vec<i64> = raw
                    .chunks_exact(elem as usize)
                    .map(|c| {
                        if elem == 4 {
                            i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64
                        } else {
                            i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        }
                    })
                    .collect();
                Contents::Words(words.into())
            }
        };
        Ok(BufferData {
            elem_bytes: elem,
            elems,
            contents,
        })
    }

    /// Evaluates constants and compiles the kernel for one point.
    pub fn instantiate(&self, point: &Point) -> Result<Instance, Diag> {
        let mut consts: Vec<(String, i64)> = point.clone();
        let cerr = |path: String, text: &str, e: ConstEvalError| -> Diag {
            let col = match &e {
                ConstEvalError::Parse(p) => Some(p.col),
                ConstEvalError::Unknown(u) => Some(u.col),
                ConstEvalError::Fault(_) => None,
            };
            let msg = match e {
                ConstEvalError::Unknown(u) => format!(
                    "unknown name `{}` (known here: parameters and earlier derived values)",
                    u.name
                ),
                other => other.to_string(),
            };
            Diag::field(path, msg).with_text(text, col)
        };
        for (i, (name, text)) in self.derived.iter().enumerate() {
            let v = eval_const(text, &mut |n| {
                consts.iter().find(|(k, _)| k == n).map(|(_, v)| *v)
            })
            .map_err(|e| cerr(format!("derived[{i}].1"), text, e))?;
            consts.push((name.clone(), v));
        }
        let lookup = |n: &str| consts.iter().rev().find(|(k, _)| k == n).map(|(_, v)| *v);
        for (i, (cond, what)) in self.requires.iter().enumerate() {
            let ok = eval_const(cond, &mut |n| lookup(n))
                .map_err(|e| cerr(format!("requires[{i}].0"), cond, e))?;
            if ok == 0 {
                let at: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
                return Err(Diag::field(
                    format!("requires[{i}]"),
                    format!("`{cond}` does not hold at {}: {what}", at.join(" ")),
                )
                .with_text(cond, None));
            }
        }
        let dims = |field: &str, v: &[String]| -> Result<[u32; 3], Diag> {
            let mut d = [1u32; 3];
            for (i, t) in v.iter().enumerate() {
                let x = eval_const(t, &mut |n| lookup(n))
                    .map_err(|e| cerr(format!("{field}[{i}]"), t, e))?;
                if x <= 0 || x > u32::MAX as i64 {
                    return Err(Diag::field(
                        format!("{field}[{i}]"),
                        format!("dimension must be between 1 and 2^32-1, but `{t}` is {x}"),
                    )
                    .with_text(t, None));
                }
                d[i] = x as u32;
            }
            Ok(d)
        };
        let grid = dims("grid", &self.grid)?;
        let block = dims("block", &self.block)?;
        let threads: u64 = block.iter().map(|&d| d as u64).product();
        if threads > MAX_BLOCK_THREADS {
            return Err(Diag::field(
                "block",
                format!(
                    "a block of {} x {} x {} = {threads} threads; at most {MAX_BLOCK_THREADS}",
                    block[0], block[1], block[2]
                ),
            ));
        }
        let mut bufs = Vec::new();
        let mut cursor = HEAP_BASE;
        for (i, b) in self.buffers.iter().enumerate() {
            let bytes = eval_const(&b.bytes, &mut |n| lookup(n))
                .map_err(|e| cerr(format!("buffers[{i}].bytes"), &b.bytes, e))?;
            if bytes <= 0 {
                return Err(Diag::field(
                    format!("buffers[{i}].bytes"),
                    format!(
                        "buffer `{}` must have a positive size, but `{}` is {bytes}",
                        b.name, b.bytes
                    ),
                )
                .with_text(&b.bytes, None));
            }
            let off = match &b.base_offset {
                None => 0,
                Some(t) => {
                    let v = eval_const(t, &mut |n| lookup(n))
                        .map_err(|e| cerr(format!("buffers[{i}].base_offset"), t, e))?;
                    if !(0..ALLOC_ALIGN as i64).contains(&v) {
                        return Err(Diag::field(
                            format!("buffers[{i}].base_offset"),
                            format!("must be between 0 and {ALLOC_ALIGN}, is {v}"),
                        ));
                    }
                    v as u64
                }
            };
            if bufs.iter().any(|d: &BufferDecl| d.name == b.name) {
                return Err(Diag::field(
                    format!("buffers[{i}].name"),
                    format!("buffer `{}` is declared twice", b.name),
                ));
            }
            let end = (cursor + off)
                .checked_add(bytes as u64)
                .and_then(|e| e.checked_next_multiple_of(ALLOC_ALIGN))
                .ok_or_else(|| {
                    Diag::field(
                        format!("buffers[{i}].bytes"),
                        format!(
                            "buffer `{}` ({bytes} bytes) does not fit in the 64-bit address space \
                             after the buffers before it",
                            b.name
                        ),
                    )
                    .with_text(&b.bytes, None)
                })?;
            let data = match &b.init {
                None => None,
                Some(init) => {
                    Some(
                        self.buffer_data(i, init, bytes as u64, &|t: &str, f: &str| {
                            eval_const(t, &mut |n| lookup(n))
                                .map_err(|e| cerr(format!("buffers[{i}].init.{f}"), t, e))
                        })?,
                    )
                }
            };
            bufs.push(BufferDecl {
                name: b.name.clone(),
                base: cursor + off,
                bytes: bytes as u64,
                data,
                ..Default::default()
            });
            cursor = end;
        }
        let mut shared_cursor = 0u64;
        for (i, b) in self.shared.iter().enumerate() {
            let bytes = eval_const(&b.bytes, &mut |n| lookup(n))
                .map_err(|e| cerr(format!("shared[{i}].bytes"), &b.bytes, e))?;
            if bytes <= 0 || bytes > 1 << 30 {
                return Err(Diag::field(
                    format!("shared[{i}].bytes"),
                    format!(
                        "shared buffer `{}` must have between 1 byte and 1 GiB, but `{}` is {bytes}",
                        b.name, b.bytes
                    ),
                )
                .with_text(&b.bytes, None));
            }
            if bufs.iter().any(|d: &BufferDecl| d.name == b.name) {
                return Err(Diag::field(
                    format!("shared[{i}].name"),
                    format!("buffer `{}` is declared twice", b.name),
                ));
            }
            bufs.push(BufferDecl {
                name: b.name.clone(),
                base: shared_cursor,
                bytes: bytes as u64,
                space: MemSpace::Shared,
                data: None,
            });
            shared_cursor = (shared_cursor + bytes as u64).next_multiple_of(SHARED_ALIGN);
        }
        let useful = eval_const(&self.useful_bytes, &mut |n| lookup(n))
            .map_err(|e| cerr("useful_bytes".into(), &self.useful_bytes, e))?;
        if useful < 0 {
            return Err(Diag::field(
                "useful_bytes",
                format!("is negative ({useful})"),
            ));
        }
        let regs_per_thread = match &self.regs_per_thread {
            Regs::Count(n) => *n,
            Regs::Expr(t) => {
                let v = eval_const(t, &mut |n| lookup(n))
                    .map_err(|e| cerr("regs_per_thread".into(), t, e))?;
                if !(1..=65536).contains(&v) {
                    return Err(Diag::field(
                        "regs_per_thread",
                        format!("must be between 1 and 65536, but `{t}` is {v}"),
                    )
                    .with_text(t, None));
                }
                v as u32
            }
        };
        let consts_fn = |n: &str| lookup(n);
        let program = Program::compile(
            &self.kernel,
            &CompileEnv {
                block_dim: block,
                grid_dim: grid,
                consts: &consts_fn,
                buffers: &bufs,
            },
        )
        .map_err(|e| Diag::field(e.path.clone(), e.message.clone()).with_text_opt(e.text, e.col))?;
        // Names the kernel assigns are not constants, whatever the
        // parameters call them.
        let mut vars = Vec::new();
        kernel_vars(&self.kernel, &mut vars);
        let fixed = |n: &str| {
            if vars.iter().any(|v| v == n) {
                None
            } else {
                lookup(n)
            }
        };
        // Every warp costs the model work, even one that runs no
        // instruction but its exit, which counts here as one: a grid of
        // billions of empty warps is refused like a long kernel.
        let per_warp = min_instructions(&self.kernel, &fixed).max(1);
        let min_warp_instructions = program
            .blocks()
            .saturating_mul(program.warps_per_block() as u64)
            .saturating_mul(per_warp);
        Ok(Instance {
            program,
            useful_bytes: useful as u64,
            regs_per_thread,
            min_warp_instructions,
        })
    }
}
