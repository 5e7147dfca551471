//! Coalescing results kept by lane pattern.
//!
//! A rule's result depends on its lanes' addresses only through their
//! differences and their offsets within the largest span it aligns to
//! ([`Rule::span`]: a line, a CC 1.x segment, a CC 1.0 half-warp's
//! sixteen words): moving every address by a multiple of that span moves
//! every request by the same amount and changes nothing else. The warps of
//! an affine kernel repeat a handful of such patterns (every warp of a
//! strided stream has the same one, its base moved), so a warp instruction
//! whose pattern was seen before takes its requests from the table, moved
//! to its own base: a few hundred host instructions where the CC 1.3
//! segment walk over 16 segments a half-warp takes thousands. The table is
//! direct-mapped, and a pattern is found only where every active lane's
//! offset, the mask, the word size and the rule match: results are those of
//! [`Rule::coalesce`], request for request and in the same order
//! (`tests::memo_equals_the_rule`).

use crate::{Access, LineRequest, Rule};

/// Slots in the table (a power of two).
const SLOTS: usize = 64;

/// Lookups a trial of the table takes: where fewer than one in
/// [`POOR`] of them is found (a scatter, whose patterns do not repeat),
/// the next [`REST`] instructions go to the rule directly, then the table
/// is tried again. Only the host's work depends on it.
const TRIAL: u32 = 4096;
const POOR: u32 = 8;
const REST: u32 = 1 << 16;

#[derive(Debug, Clone)]
struct Entry {
    rule: Rule,
    width: u8,
    mask: u32,
    /// Each active lane's address less the base (0 for the others).
    rel: [u64; 32],
    parts: u32,
    /// The requests, their lines less the base.
    out: Vec<LineRequest>,
}

/// A coalescer that keeps the results of the lane patterns it has seen
/// ([`Memo::coalesce`] returns what [`Rule::coalesce`] does).
#[derive(Debug, Clone, Default)]
pub struct Memo {
    slots: Vec<Option<Entry>>,
    /// Instructions served from the table.
    pub(crate) hits: u64,
    /// Lookups and finds in the current trial.
    tried: u32,
    found: u32,
    /// Instructions left to send to the rule directly.
    resting: u32,
}

impl Rule {
    /// The largest span (bytes, a power of two) that this rule aligns an
    /// address to: the coalesced requests move with the lanes' addresses
    /// by any multiple of it.
    pub fn span(&self) -> u64 {
        match *self {
            // A half-warp of 16 words of up to 16 bytes, and its lines.
            Rule::HalfWarpStrict => 256,
            Rule::HalfWarpSegments | Rule::Sectors => crate::LINE_BYTES,
            Rule::Lines { bytes } => (bytes as u64).next_power_of_two().max(crate::LINE_BYTES),
        }
    }
}

impl Memo {
    /// An empty table.
    pub fn new() -> Memo {
        Memo::default()
    }

    /// Coalesces `acc` by `rule` into `out`, as [`Rule::coalesce`] does;
    /// returns what it returns.
    pub fn coalesce(&mut self, rule: Rule, acc: &Access<'_>, out: &mut Vec<LineRequest>) -> u32 {
        if acc.mask == 0 {
            return rule.coalesce(acc, out);
        }
        if self.resting > 0 {
            self.resting -= 1;
            return rule.coalesce(acc, out);
        }
        self.tried += 1;
        if self.tried == TRIAL {
            if self.found < TRIAL / POOR {
                self.resting = REST;
            }
            self.tried = 0;
            self.found = 0;
        }
        let span = rule.span();
        let base = acc.addrs[acc.mask.trailing_zeros() as usize] & !(span - 1);
        let mut rel = [0u64; 32];
        let mut h = (acc.mask as u64) ^ ((acc.width as u64) << 32) ^ span.rotate_left(40);
        for (l, r) in rel.iter_mut().enumerate() {
            if acc.mask >> l & 1 == 1 {
                *r = acc.addrs[l].wrapping_sub(base);
            }
            h = (h ^ *r).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        if self.slots.is_empty() {
            self.slots.resize(SLOTS, None);
        }
        let slot = &mut self.slots[(h >> 32) as usize & (SLOTS - 1)];
        if let Some(e) = slot {
            if e.mask == acc.mask && e.width == acc.width && e.rule == rule && e.rel == rel {
                out.clear();
                out.extend(e.out.iter().map(|r| LineRequest {
                    line: r.line.wrapping_add(base),
                    ..*r
                }));
                self.hits += 1;
                self.found += 1;
                return e.parts;
            }
        }
        let parts = rule.coalesce(acc, out);
        let e = slot.get_or_insert_with(|| Entry {
            rule,
            width: 0,
            mask: 0,
            rel: [0; 32],
            parts: 0,
            out: Vec::new(),
        });
        e.rule = rule;
        e.width = acc.width;
        e.mask = acc.mask;
        e.rel = rel;
        e.parts = parts;
        e.out.clear();
        e.out.extend(out.iter().map(|r| LineRequest {
            line: r.line.wrapping_sub(base),
            ..*r
        }));
        parts
    }
}
