#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

use serde::Deserialize;

pub mod banks;
mod memo;
pub use banks::{Banks, Wavefronts};
pub use memo::Memo;

/// Bytes in a cache line, the unit of tag lookup on every cached architecture.
pub const LINE_BYTES: u64 = 128;
/// Bytes in a sector, the smallest transaction.
pub const SECTOR_BYTES: u64 = 32;

/// A coalescing rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Rule {
    /// CC 1.0 and 1.1.
    HalfWarpStrict,
    /// CC 1.2 and 1.3.
    HalfWarpSegments,
    /// CC 2.x: transactions of `bytes` (128 through L1, 32 when L2-only).
    Lines {
        /// Transaction size in bytes: 128 or 32.
        bytes: u16,
    },
    /// CC 5.0 and newer: 32-byte sectors of 128-byte lines.
    Sectors,
}

/// A warp-wide memory instruction as the coalescer sees it.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// Word size in bytes: 1, 2, 4, 8 or 16; addresses are multiples of it.
    pub width: u8,
    /// Active lanes.
    pub mask: u32,
    /// Per-lane byte addresses.
    pub addrs: &'a [u64; 32],
}

/// The transactions of one request that fall in one 128-byte line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRequest {
    /// Address of the 128-byte line.
    pub line: u64,
    /// Sectors (bit i = bytes 32i..32i+32 of the line) the transactions carry.
    pub sectors: u8,
    /// Transaction size in bytes: 32, 64 or 128. A 32-byte line request is
    /// one transaction per sector; a 64 or 128-byte one is a single transaction.
    pub size: u8,
    /// Index of the request (sub-warp split) this belongs to.
    pub request: u8,
}

impl LineRequest {
    /// Number of memory transactions this line request stands for.
    pub fn transactions(&self) -> u32 {
        if self.size == 32 {
            self.sectors.count_ones()
        } else {
            1
        }
    }
    /// Number of 32-byte sectors carried.
    pub fn sector_count(&self) -> u32 {
        self.sectors.count_ones()
    }
}

/// Counts of one coalesced instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Transactions of 32, 64 and 128 bytes.
    pub transactions: [u32; 3],
    /// 32-byte sectors.
    pub sectors: u32,
}

/// Summarises the line requests of one instruction.
pub fn summarize(reqs: &[LineRequest]) -> Summary {
    let mut s = Summary::default();
    for r in reqs {
        let i = match r.size {
            32 => 0,
            64 => 1,
            _ => 2,
        };
        s.transactions[i] += r.transactions();
        s.sectors += r.sector_count();
    }
    s
}

fn push(out: &mut Vec<LineRequest>, addr: u64, size: u64, request: u8) {
    // A transaction of `size` bytes at `addr` (aligned to its size). 32-byte
    // transactions of one request and line merge into one line request.
    let line = addr & !(LINE_BYTES - 1);
    let first = ((addr - line) / SECTOR_BYTES) as u32;
    let n = size.div_ceil(SECTOR_BYTES) as u32;
    let sectors = (((1u32 << n) - 1) << first) as u8;
    if size == SECTOR_BYTES {
        if let Some(r) = out
            .iter_mut()
            .rev()
            .find(|r| r.line == line && r.request == request && r.size == 32)
        {
            r.sectors |= sectors;
            return;
        }
    }
    out.push(LineRequest {
        line,
        sectors,
        size: size as u8,
        request,
    });
}

impl Rule {
    /// Most transactions one warp instruction can need under this rule
    /// (for naturally aligned words).
    pub fn max_transactions(&self) -> u32 {
        32
    }

    /// Whether the rule works on half-warps.
    pub fn half_warp(&self) -> bool {
        matches!(self, Rule::HalfWarpStrict | Rule::HalfWarpSegments)
    }

    /// Coalesces `acc` into `out` (cleared first). Returns the number of
    /// requests the hardware splits the instruction into.
    pub fn coalesce(&self, acc: &Access<'_>, out: &mut Vec<LineRequest>) -> u32 {
        out.clear();
        if acc.mask == 0 {
            return 0;
        }
        match *self {
            Rule::HalfWarpStrict => {
                for h in 0..2u8 {
                    let m = (acc.mask >> (16 * h)) & 0xFFFF;
                    if m != 0 {
                        strict_half(acc, h, m, out);
                    }
                }
                2
            }
            Rule::HalfWarpSegments => {
                for h in 0..2u8 {
                    let m = (acc.mask >> (16 * h)) & 0xFFFF;
                    if m != 0 {
                        segments_half(acc, h, m, out);
                    }
                }
                2
            }
            Rule::Lines { bytes } => {
                let parts: u32 = match acc.width {
                    16 => 4,
                    8 => 2,
                    _ => 1,
                };
                let lanes = 32 / parts;
                for p in 0..parts {
                    let m = if parts == 1 {
                        acc.mask
                    } else {
                        (acc.mask >> (p * lanes)) & ((1 << lanes) - 1)
                    } as u64;
                    let mut mm = m;
                    while mm != 0 {
                        let l = mm.trailing_zeros() + p * lanes;
                        mm &= mm - 1;
                        let a = acc.addrs[l as usize] & !(bytes as u64 - 1);
                        // 32-byte transactions merge by sector inside push;
                        // 128-byte ones are one per distinct line.
                        let seen =
                            bytes == 128 && out.iter().any(|r| r.request == p as u8 && r.line == a);
                        if !seen {
                            push(out, a, bytes as u64, p as u8);
                        }
                    }
                }
                parts
            }
            Rule::Sectors => {
                let mut m = acc.mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = acc.addrs[l];
                    let w = acc.width as u64;
                    // A naturally aligned word never crosses a sector.
                    let sector = a & !(SECTOR_BYTES - 1);
                    let line = a & !(LINE_BYTES - 1);
                    let bit = 1u8 << ((sector - line) / SECTOR_BYTES);
                    debug_assert!(a + w <= sector + SECTOR_BYTES);
                    match out.iter_mut().rev().find(|r| r.line == line) {
                        Some(r) => r.sectors |= bit,
                        None => out.push(LineRequest {
                            line,
                            sectors: bit,
                            size: 32,
                            request: 0,
                        }),
                    }
                }
                1
            }
        }
    }
}

fn strict_half(acc: &Access<'_>, h: u8, m: u32, out: &mut Vec<LineRequest>) {
    let w = acc.width as u64;
    let lane0 = 16 * h as usize;
    let first = m.trailing_zeros() as usize;
    let base = acc.addrs[lane0 + first].wrapping_sub(first as u64 * w);
    let seg = 16 * w;
    let coalesced = matches!(w, 4 | 8 | 16)
        && base.is_multiple_of(seg)
        && (0..16).all(|k| m >> k & 1 == 0 || acc.addrs[lane0 + k] == base + k as u64 * w);
    if coalesced {
        match w {
            4 => push(out, base, 64, h),
            8 => push(out, base, 128, h),
            _ => {
                // Two 128-byte transactions; one is skipped when no active
                // thread falls in it.
                if m & 0x00FF != 0 {
                    push(out, base, 128, h);
                }
                if m & 0xFF00 != 0 {
                    push(out, base + 128, 128, h);
                }
            }
        }
    } else {
        // One 32-byte transaction per active thread, each counted separately.
        let mut mm = m;
        while mm != 0 {
            let k = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            out.push(LineRequest {
                line: acc.addrs[lane0 + k] & !(LINE_BYTES - 1),
                sectors: 1 << ((acc.addrs[lane0 + k] % LINE_BYTES) / SECTOR_BYTES),
                size: 32,
                request: h,
            });
        }
    }
}

fn segments_half(acc: &Access<'_>, h: u8, m: u32, out: &mut Vec<LineRequest>) {
    let w = acc.width as u64;
    let lane0 = 16 * h as usize;
    let seg_size: u64 = match w {
        1 => 32,
        2 => 64,
        _ => 128,
    };
    let mut rest = m;
    while rest != 0 {
        let k = rest.trailing_zeros() as usize;
        let seg = acc.addrs[lane0 + k] & !(seg_size - 1);
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        let mut mm = rest;
        while mm != 0 {
            let j = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let a = acc.addrs[lane0 + j];
            if a >= seg && a < seg + seg_size {
                rest &= !(1 << j);
                lo = lo.min(a);
                hi = hi.max(a + w);
            }
        }
        let (mut start, mut size) = (seg, seg_size);
        while size > 32 {
            let half = size / 2;
            if hi <= start + half {
                size = half;
            } else if lo >= start + half {
                start += half;
                size = half;
            } else {
                break;
            }
        }
        push(out, start, size, h);
    }
}

#[cfg(test)]
mod tests;
