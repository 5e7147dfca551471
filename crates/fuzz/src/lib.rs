//! A mutation fuzzer for everything gpusim reads.
//!
//! It needs no nightly toolchain and no instrumentation: inputs are the
//! shipped device files, workload files, `--set` values and the
//! expressions of the workloads, changed by mutations that know their
//! shape (a number replaced by an extreme one, a token deleted, copied or
//! swapped with one of another file, bytes flipped, brackets nested). Each
//! input goes through the same functions the command line calls; the
//! targets are:
//!
//! ```text
//!  device    device_from_str ──ok──▶ a small kernel through the timed model
//!  workload  workload_from_str ─▶ points ─▶ instantiate ──small──▶ functional pass
//!                                                       └────────▶ timed model (c2050)
//!  set       parse_set
//!  expr      expr::parse ─▶ eval_const (names bound to extreme values)
//!  config-set parse_config_set ─▶ apply_overrides to the H200's file
//! ```
//!
//! Any panic (with overflow checks on, as the campaign builds it, an
//! arithmetic overflow is one), or an input that runs longer than the
//! watchdog allows, is a finding: the driver writes the input to its
//! findings folder. An error returned as a diagnostic is the right answer
//! to bad input and counts as such.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Device files, then a small kernel on the device.
    Device,
    /// Workload files, their points, the functional pass and the timed model.
    Workload,
    /// `--set` values.
    Set,
    /// Expressions.
    Expr,
    /// `--config-set` values applied to a shipped device.
    ConfigSet,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 5] = [
        Target::Device,
        Target::Workload,
        Target::Set,
        Target::Expr,
        Target::ConfigSet,
    ];

    /// The target's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Device => "device",
            Target::Workload => "workload",
            Target::Set => "set",
            Target::Expr => "expr",
            Target::ConfigSet => "config-set",
        }
    }

    /// The target of a name.
    pub fn from_name(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// xorshift64*: a small deterministic generator, so that a campaign is
/// reproducible from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Numbers that break arithmetic: zeros, signs, powers of two and their
/// neighbours, the integer limits, huge and tiny floats, NaN, infinities.
const EXTREMES: [&str; 30] = [
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "31",
    "32",
    "33",
    "255",
    "4096",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "1e-308",
    "-1e308",
    "0.5",
    "NaN",
    "inf",
    "-inf",
    "0.0",
];

/// Tokens that expressions and RON use, to insert.
const TOKENS: [&str; 28] = [
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "?",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&&",
    "||",
    "==",
    "!",
    "~",
    "min(",
    "max(",
    "div_up(",
    "threadIdx.x",
    "blockIdx.x",
    "n",
    "Some(",
    "None",
];

/// Where the number literals of `s` are (byte ranges).
fn numbers(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if starts {
            let j = (i..b.len())
                .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'.' || b[j] == b'_'))
                .unwrap_or(b.len());
            out.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// A char boundary of `s` at or before `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One to four mutations of `s`; `other` is another input to splice from.
pub fn mutate(rng: &mut Rng, s: &str, other: &str) -> String {
    let mut s = s.to_string();
    for _ in 0..1 + rng.below(4) {
        let len = s.len();
        let at = floor_boundary(&s, rng.below(len + 1));
        match rng.below(9) {
            // A number becomes an extreme one (the most telling mutation).
            0..=2 => {
                let nums = numbers(&s);
                if !nums.is_empty() {
                    let (a, b) = *rng.pick(&nums);
                    let x: &&str = rng.pick(&EXTREMES);
                    s.replace_range(a..b, x);
                }
            }
            // Delete a short range.
            3 => {
                let end = floor_boundary(&s, at + 1 + rng.below(16));
                s.replace_range(at..end, "");
            }
            // Insert a token.
            4 => {
                let x: &&str = rng.pick(&TOKENS);
                s.insert_str(at, x)
            }
            // Duplicate a range (repeated fields, long expressions).
            5 => {
                let end = floor_boundary(&s, at + 1 + rng.below(64));
                let piece = s[at..end].to_string();
                for _ in 0..1 + rng.below(4) {
                    s.insert_str(at, &piece);
                }
            }
            // Splice a range of the other input.
            6 => {
                let o = floor_boundary(other, rng.below(other.len() + 1));
                let e = floor_boundary(other, o + rng.below(128));
                let end = floor_boundary(&s, at + rng.below(128));
                s.replace_range(at..end, &other[o..e]);
            }
            // Nest brackets deep.
            7 => {
                let n = 1 + rng.below(200);
                s.insert_str(at, &"(".repeat(n));
            }
            // Flip a byte to another printable one.
            _ => {
                if len > 0 {
                    let c = (b' ' + rng.below(95) as u8) as char;
                    let end = floor_boundary(&s, at + 1);
                    if end > at {
                        s.replace_range(at..end, &c.to_string());
                    }
                }
            }
        }
    }
    s
}

/// The inputs a campaign starts from, read from the repository.
#[derive(Debug, Clone)]
pub struct Seeds {
    /// Device files.
    pub devices: Vec<String>,
    /// Workload files.
    pub workloads: Vec<String>,
    /// `--set` values.
    pub sets: Vec<String>,
    /// Expressions (those of the workloads).
    pub exprs: Vec<String>,
    /// `--config-set` values: every field of a device with a value of
    /// another device's same field.
    pub config_sets: Vec<String>,
}

fn read_dir(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

impl Seeds {
    /// The shipped `configs/` and `workloads/` of the repository at `root`.
    pub fn from_repo(root: &Path) -> Seeds {
        let devices = read_dir(&root.join("configs"));
        let mut workloads = read_dir(&root.join("workloads"));
        // Small kernels that reach the timed model with every IR feature.
        workloads.extend(read_dir(&root.join("crates/fuzz/seeds")));
        // Every quoted string of the workloads that parses as an expression.
        let mut exprs: Vec<String> = Vec::new();
        for w in &workloads {
            for (i, part) in w.split('"').enumerate() {
                if i % 2 == 1
                    && simt_core::expr::parse(part).is_ok()
                    && !exprs.iter().any(|e| e == part)
                {
                    exprs.push(part.to_string());
                }
            }
        }
        let sets = [
            "offset=1",
            "stride=1,2,4,8",
            "offset=0..=32",
            "nMB=256",
            "elem=8",
            "k=-3..=3",
        ]
        .map(String::from)
        .to_vec();
        let mut config_sets = vec![
            "load_rule=Lines(bytes: 32)".to_string(),
            "l1=None".to_string(),
            "sm.count=66,132".to_string(),
            "l2.slice.size_bytes=327680..=655360".to_string(),
        ];
        if let Some(h) = devices.iter().find(|d| d.contains("\"h200\"")) {
            for p in engine::config_set::field_paths(h) {
                config_sets.push(format!("{p}=1"));
            }
        }
        Seeds {
            devices,
            workloads,
            sets,
            exprs,
            config_sets,
        }
    }

    fn of(&self, t: Target) -> &[String] {
        match t {
            Target::Device => &self.devices,
            Target::Workload => &self.workloads,
            Target::Set => &self.sets,
            Target::Expr => &self.exprs,
            Target::ConfigSet => &self.config_sets,
        }
    }
}

/// A small kernel that every device can run, for the device target.
const PROBE: &str = r#"Workload(
    name: "probe",
    description: "two blocks of a load and a dependent store",
    params: [(name: "n", default: 256, doc: "elements")],
    buffers: [(name: "a", bytes: "n * 8")],
    grid: ["2"],
    block: ["n / 2"],
    regs_per_thread: 8,
    useful_bytes: "n * 8",
    kernel: [
        Let("i", "blockIdx.x * blockDim.x + threadIdx.x"),
        Load(buf: "a", index: "i * 2", width: "4", dst: "v"),
        Store(buf: "a", index: "i * 2 + 1", width: "4", src: ["v"]),
    ],
)"#;

/// Work a workload input may cost before it is only parsed, not run.
const RUN_LIMIT: u64 = 20_000;

/// Runs one input through `target`. Returns whether the input was
/// accepted (an error is the right answer to most inputs).
pub fn exec(target: Target, input: &str, probe_dev: &engine::DeviceSpec, base_src: &str) -> bool {
    let path = Path::new("fuzz.ron");
    match target {
        Target::Device => {
            let Ok(dev) = engine::device_from_str(path, input) else {
                return false;
            };
            let wl = engine::workload_from_str(Path::new("probe.ron"), PROBE.to_string())
                .expect("the probe workload is valid");
            let pts = wl.points(&[]).expect("probe points");
            let opts = engine::RunOptions {
                sampling: engine::Sampling::Off,
                max_warp_instructions: RUN_LIMIT,
            };
            let _ = engine::run_point_with(&dev, &wl, &pts[0], &opts);
            true
        }
        Target::Workload => {
            let Ok(wl) = engine::workload_from_str(path, input.to_string()) else {
                return false;
            };
            let Ok(points) = wl.points(&[]) else {
                return false;
            };
            let opts = engine::RunOptions {
                sampling: engine::Sampling::On,
                max_warp_instructions: RUN_LIMIT,
            };
            for p in points.iter().take(2) {
                let Ok(inst) = wl.workload.instantiate(p) else {
                    continue;
                };
                if inst.min_warp_instructions <= RUN_LIMIT && inst.program.blocks() <= 64 {
                    let _ = engine::run_point_with(probe_dev, &wl, p, &opts);
                }
            }
            true
        }
        Target::Set => engine::parse_set(input).is_ok(),
        Target::ConfigSet => {
            let Ok(set) = engine::config_set::parse_config_set(input) else {
                return false;
            };
            let mut any = false;
            for combo in engine::config_set::combinations(&[set]).iter().take(3) {
                any |= engine::config_set::apply_overrides("h200.ron", base_src, combo).is_ok();
            }
            any
        }
        Target::Expr => {
            let values = [0, 1, -1, 7, i64::MAX, i64::MIN, 1 << 32];
            let mut k = 0;
            simt_core::expr::eval_const(input, &mut |_| {
                k += 1;
                Some(values[k % values.len()])
            })
            .is_ok()
        }
    }
}

/// What a campaign did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Inputs run.
    pub execs: u64,
    /// Inputs accepted (parsed and, where small enough, run).
    pub accepted: u64,
    /// Inputs that panicked, with the panic message.
    pub panics: Vec<(String, String)>,
}

/// Runs `iters` mutated inputs through `target` from `seeds`, with
/// generator seed `seed`; calls `each` before every input (the driver's
/// watchdog) and stops at the first `max_panics` panics.
pub fn campaign(
    target: Target,
    seeds: &Seeds,
    iters: u64,
    seed: u64,
    max_panics: usize,
    each: &mut dyn FnMut(&str),
) -> Stats {
    let probe_dev = engine::device_from_str(
        Path::new("c2050.ron"),
        &seeds.devices[seeds
            .devices
            .iter()
            .position(|d| d.contains("\"c2050\""))
            .unwrap_or(0)],
    )
    .expect("a shipped device loads");
    let base_src = seeds
        .devices
        .iter()
        .find(|d| d.contains("\"h200\""))
        .unwrap_or(&seeds.devices[0])
        .clone();
    let pool = seeds.of(target);
    let mut rng = Rng::new(seed ^ target as u64);
    let mut st = Stats::default();
    for _ in 0..iters {
        let a = rng.pick(pool);
        let b = rng.pick(pool);
        let input = if rng.below(10) == 0 {
            a.clone()
        } else {
            mutate(&mut rng, a, b)
        };
        each(&input);
        st.execs += 1;
        match panic::catch_unwind(AssertUnwindSafe(|| {
            exec(target, &input, &probe_dev, &base_src)
        })) {
            Ok(true) => st.accepted += 1,
            Ok(false) => {}
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                st.panics.push((input, msg));
                if st.panics.len() >= max_panics {
                    break;
                }
            }
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds() -> Seeds {
        Seeds::from_repo(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
    }

    #[test]
    fn seeds_cover_every_target() {
        let s = seeds();
        for t in Target::ALL {
            assert!(!s.of(t).is_empty(), "{}", t.name());
        }
        assert!(s.exprs.len() > 20);
    }

    #[test]
    fn mutation_is_deterministic_and_keeps_utf8() {
        let s = seeds();
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..200 {
            let x = mutate(&mut a, &s.workloads[0], &s.devices[0]);
            assert_eq!(x, mutate(&mut b, &s.workloads[0], &s.devices[0]));
        }
    }

    /// A short campaign per target: no input panics. (The long campaigns
    /// run with `gpusim-fuzz`; see the crate's README.)
    #[test]
    fn short_campaigns_find_no_panic() {
        let s = seeds();
        let prev = panic::take_hook();
        panic::set_hook(Box::new(|_| {}));
        let mut found = Vec::new();
        for (t, n) in [
            (Target::Device, 300),
            (Target::Workload, 300),
            (Target::Set, 3000),
            (Target::Expr, 3000),
            (Target::ConfigSet, 300),
        ] {
            let st = campaign(t, &s, n, 1, 1, &mut |_| {});
            assert_eq!(st.execs, n);
            found.extend(st.panics.into_iter().map(|p| (t.name(), p)));
        }
        panic::set_hook(prev);
        assert!(found.is_empty(), "{found:#?}");
    }
}
