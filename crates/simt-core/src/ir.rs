//! The kernel IR as written in workload RON files.
//!
//! ```ron
//! kernel: [
//!     Let("i", "blockDim.x * blockIdx.x + threadIdx.x + offset"),
//!     If(cond: "i < n", then: [
//!         Load(buf: "a", index: "i", width: "elem", dst: "v"),
//!         Store(buf: "a", index: "i", width: "elem", src: ["v"]),
//!     ]),
//! ]
//! ```

use serde::Deserialize;
use std::fmt;

/// The most trips a `For` with `unroll` may have: its body is compiled
/// once per trip.
pub const MAX_UNROLL: i64 = 1024;

/// The trips of a counted loop from `from` to `to` (exclusive) by `step`
/// (0 where the step is 0 or the range empty).
pub fn trips(from: i64, to: i64, step: i64) -> u128 {
    let span = (to as i128 - from as i128) * step.signum() as i128;
    if step == 0 || span <= 0 {
        return 0;
    }
    let st = step.unsigned_abs() as i128;
    ((span + st - 1) / st) as u128
}

/// The RON dialect of gpusim's files: `Load(buf: ...)` without double
/// parentheses, and optional fields written without `Some(...)`.
pub fn ron_options() -> ron::Options {
    use ron::extensions::Extensions;
    ron::Options::default()
        .with_default_extension(Extensions::UNWRAP_VARIANT_NEWTYPES | Extensions::IMPLICIT_SOME)
}

/// One statement. Statements run in lockstep for the active lanes of a warp.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Stmt {
    /// `Let("name", "expr")`: assigns a per-lane integer variable (declares it
    /// on first use; later `Let`s of the same name update it).
    Let(String, String),
    /// Per-lane predicate. Lanes where `cond` is non-zero run `then`, the
    /// others run `else`; the warp runs both paths one after the other with
    /// the matching active masks and reconverges after the `If`.
    If {
        /// Condition expression.
        cond: String,
        /// Statements for lanes where `cond != 0`.
        then: Vec<Stmt>,
        /// Statements for the other lanes.
        #[serde(default, rename = "else")]
        otherwise: Vec<Stmt>,
        /// Compiled as nvcc compiles a short conditional body: the
        /// condition is set once (one instruction, as `ISETP`) and every
        /// statement of `then` and `else` issues on every warp that reaches
        /// the `If`, its lanes those whose predicate holds, none perhaps
        /// (`@P0 LDS`): the instructions count and take issue slots even
        /// where no thread runs them, and access nothing there. The bodies
        /// may hold `Let`s and `Load`s and `Store`s of shared memory only.
        #[serde(default)]
        predicated: bool,
    },
    /// Counted loop: `var = from; while var < to (var > to if step < 0) { body; var += step }`.
    /// `from` and `to` may differ per lane (the loop then diverges); `step`
    /// must be a non-zero constant.
    For {
        /// Loop variable (per lane).
        var: String,
        /// Initial value.
        from: String,
        /// Exclusive bound.
        to: String,
        /// Increment, a non-zero constant (default 1).
        #[serde(default)]
        step: Option<String>,
        /// Loop body.
        body: Vec<Stmt>,
        /// Unrolled, as nvcc compiles a loop of a small count known at
        /// compile time (by default, or under `#pragma unroll`): the body
        /// once per trip with the variable a constant in each copy, and no
        /// test, increment or jump of the loop's own. `from`, `to` and
        /// `step` must then be constants (at most [`MAX_UNROLL`] trips).
        #[serde(default)]
        unroll: bool,
    },
    /// A load of `width` bytes by every active lane (from global memory,
    /// or from shared memory when `buf` names a shared buffer).
    Load(Access),
    /// A store of `width` bytes by every active lane (to global memory,
    /// or to shared memory when `buf` names a shared buffer).
    Store(Access),
    /// `__syncthreads()`: the block's warps wait until all have reached
    /// it. Every thread of the block must reach the same `Sync` (the CUDA
    /// C++ Programming Guide allows it in conditional code only "if the
    /// conditional evaluates identically across the entire thread block");
    /// a `Sync` under divergence is refused when it runs.
    Sync,
}

/// The operands of a `Load` or `Store`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// Name of the buffer.
    pub buf: String,
    /// Word size in bytes: 1, 2, 4, 8 or 16 (a constant expression, e.g. `"elem"`).
    pub width: String,
    /// Element index: the byte address is `base + index * width`.
    #[serde(default)]
    pub index: Option<String>,
    /// Byte offset from the buffer base (instead of `index`), for fields of
    /// structs: `"i * 12 + 4"`.
    #[serde(default)]
    pub byte: Option<String>,
    /// Loads: names the loaded value, so that a later store can depend on
    /// it; an address, a condition or a `Let` computed from it waits for it
    /// too, also in a later trip of a loop (a pointer chase `j = idx[j]`
    /// runs one load at a time).
    #[serde(default)]
    pub dst: Option<String>,
    /// Stores: the loaded values the stored data is computed from; the store
    /// waits until they have arrived.
    #[serde(default)]
    pub src: Vec<String>,
    /// Loads: where the line is cached (`All`, the default; `L2`: not in
    /// the L1, as `ld.global.cg` / `__ldcg` loads).
    #[serde(default)]
    pub cache: CacheOp,
}

/// Where a load's line is cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum CacheOp {
    /// In the L1 and the L2 (`ld.global.ca`, the default of global loads
    /// where the device caches them in the L1).
    #[default]
    All,
    /// In the L2 only (`ld.global.cg`, `__ldcg`): the L1 looks the line up
    /// (the request and its sectors count there) but neither hits nor keeps it.
    L2,
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stmt::Let(n, e) => write!(f, "{n} = {e}"),
            Stmt::If { cond, .. } => write!(f, "if ({cond})"),
            Stmt::For {
                var,
                from,
                to,
                step,
                ..
            } => write!(
                f,
                "for ({var} = {from}; {var} < {to}; {var} += {})",
                step.as_deref().unwrap_or("1")
            ),
            Stmt::Load(a) => {
                if let Some(d) = &a.dst {
                    write!(f, "{d} = ")?;
                }
                write!(f, "load{} {}", a.width_suffix(), a.place())?;
                if a.cache == CacheOp::L2 {
                    write!(f, " (L2 only)")?;
                }
                Ok(())
            }
            Stmt::Sync => write!(f, "__syncthreads()"),
            Stmt::Store(a) => {
                write!(f, "store{} {}", a.width_suffix(), a.place())?;
                if !a.src.is_empty() {
                    write!(f, " <- {}", a.src.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

impl Access {
    fn width_suffix(&self) -> String {
        format!(".{}", self.width)
    }
    fn place(&self) -> String {
        match (&self.index, &self.byte) {
            (Some(i), _) => format!("{}[{}]", self.buf, i),
            (None, Some(b)) => format!("{} + ({}) bytes", self.buf, b),
            (None, None) => self.buf.clone(),
        }
    }
}
