use super::*;
use proptest::prelude::*;

fn lanes(f: impl Fn(u64) -> u64) -> [u64; 32] {
    std::array::from_fn(|l| f(l as u64))
}

fn run(rule: Rule, width: u8, mask: u32, addrs: &[u64; 32]) -> (u32, Summary, Vec<LineRequest>) {
    let mut out = Vec::new();
    let req = rule.coalesce(&Access { width, mask, addrs }, &mut out);
    (req, summarize(&out), out)
}

/// Seed 002's offset kernel: warp 0 with `offset` words, 256-B aligned base.
fn offset(off: u64, w: u64) -> [u64; 32] {
    lanes(|l| 0x10_0000 + (l + off) * w)
}

fn stride(s: u64, w: u64) -> [u64; 32] {
    lanes(|l| 0x10_0000 + l * s * w)
}

#[test]
fn sectors_match_the_h200_counts() {
    // Nsight Compute on an H200: sectors per request are the distinct
    // 32-byte sectors a warp touches (reference/h200/README.md).
    let s = |a: &[u64; 32], w| run(Rule::Sectors, w, u32::MAX, a).1.sectors;
    assert_eq!(s(&offset(0, 4), 4), 4);
    assert_eq!(s(&offset(1, 4), 4), 5);
    assert_eq!(s(&offset(8, 4), 4), 4);
    assert_eq!(s(&offset(1, 8), 8), 9);
    assert_eq!(s(&offset(4, 8), 8), 8);
    assert_eq!(s(&stride(2, 4), 4), 8);
    assert_eq!(s(&stride(8, 4), 4), 32);
    assert_eq!(s(&stride(32, 4), 4), 32);
    assert_eq!(s(&stride(4, 8), 8), 32);
}

#[test]
fn all_lanes_in_one_line_is_one_transaction() {
    let a = offset(0, 4);
    let (_, s, reqs) = run(Rule::Lines { bytes: 128 }, 4, u32::MAX, &a);
    assert_eq!((s.transactions, reqs.len()), ([0, 0, 1], 1));
    let (_, s, _) = run(Rule::HalfWarpSegments, 4, u32::MAX, &a);
    assert_eq!(s.transactions, [0, 2, 0], "two half-warps, 64 B each");
}

#[test]
fn cc10_strict_rule() {
    let r = Rule::HalfWarpStrict;
    // Aligned float: one 64-byte transaction per half-warp.
    assert_eq!(run(r, 4, u32::MAX, &offset(0, 4)).1.transactions, [0, 2, 0]);
    // Offset 16 floats = 64 B: still aligned to 16 words.
    assert_eq!(
        run(r, 4, u32::MAX, &offset(16, 4)).1.transactions,
        [0, 2, 0]
    );
    // Any other offset: 16 separate 32-byte transactions per half-warp.
    assert_eq!(
        run(r, 4, u32::MAX, &offset(1, 4)).1.transactions,
        [32, 0, 0]
    );
    // Not all threads need to participate.
    assert_eq!(
        run(r, 4, 0x0000_00F0, &offset(0, 4)).1.transactions,
        [0, 1, 0]
    );
    // A permuted half-warp is not coalesced on CC 1.0.
    let mut p = offset(0, 4);
    p.swap(0, 1);
    assert_eq!(run(r, 4, u32::MAX, &p).1.transactions, [16, 1, 0]);
    // 1- and 2-byte words never coalesce on CC 1.0/1.1.
    assert_eq!(
        run(r, 2, u32::MAX, &offset(0, 2)).1.transactions,
        [32, 0, 0]
    );
    // 16-byte words: two 128-byte transactions per half-warp.
    assert_eq!(
        run(r, 16, u32::MAX, &offset(0, 16)).1.transactions,
        [0, 0, 4]
    );
}

#[test]
fn cc12_segment_protocol() {
    let r = Rule::HalfWarpSegments;
    // Offset 1: 128 B, then 64 + 32 B (seed 000's protocol).
    assert_eq!(run(r, 4, u32::MAX, &offset(1, 4)).1.transactions, [1, 1, 1]);
    // Offset 8: the "blip": 128 B, then two 32-byte transactions.
    assert_eq!(run(r, 4, u32::MAX, &offset(8, 4)).1.transactions, [2, 0, 1]);
    // Stride 2 floats: one 128-byte segment per half-warp.
    assert_eq!(run(r, 4, u32::MAX, &stride(2, 4)).1.transactions, [0, 0, 2]);
    // Stride 16 floats: every word in its own 128 B segment, both halves
    // of nothing: reduced to 32 B each.
    assert_eq!(
        run(r, 4, u32::MAX, &stride(32, 4)).1.transactions,
        [32, 0, 0]
    );
    // 1-byte words use 32-byte segments; each half-warp issues its own.
    assert_eq!(run(r, 1, u32::MAX, &offset(0, 1)).1.transactions, [2, 0, 0]);
}

#[test]
fn cc20_splits_wide_words() {
    let r = Rule::Lines { bytes: 128 };
    let (req, s, _) = run(r, 8, u32::MAX, &offset(0, 8));
    assert_eq!((req, s.transactions), (2, [0, 0, 2]));
    let (req, s, _) = run(r, 16, u32::MAX, &offset(0, 16));
    assert_eq!((req, s.transactions), (4, [0, 0, 4]));
    // Misaligned doubles: each half-warp straddles two lines.
    assert_eq!(run(r, 8, u32::MAX, &offset(1, 8)).1.transactions, [0, 0, 4]);
    // L2-only (-dlcm=cg): 32-byte segments.
    let cg = Rule::Lines { bytes: 32 };
    assert_eq!(
        run(cg, 4, u32::MAX, &offset(1, 4)).1.transactions,
        [5, 0, 0]
    );
}

fn covered(reqs: &[LineRequest], a: u64, w: u64) -> bool {
    reqs.iter().any(|r| {
        let lo = r.line + 32 * r.sectors.trailing_zeros() as u64;
        let hi = r.line + 32 * (8 - r.sectors.leading_zeros()) as u64;
        a >= lo && a + w <= hi && {
            // Inside the carried sectors, not just their span.
            let s = (a - r.line) / 32;
            r.sectors >> s & 1 == 1
        }
    })
}

fn rules() -> impl Strategy<Value = Rule> {
    prop_oneof![
        Just(Rule::HalfWarpStrict),
        Just(Rule::HalfWarpSegments),
        Just(Rule::Lines { bytes: 128 }),
        Just(Rule::Lines { bytes: 32 }),
        Just(Rule::Sectors),
    ]
}

fn access() -> impl Strategy<Value = (u8, u32, [u64; 32])> {
    let widths = prop_oneof![Just(1u8), Just(2), Just(4), Just(8), Just(16)];
    (
        widths,
        any::<u32>(),
        prop::array::uniform32(0u64..4096),
        0u64..3,
    )
        .prop_map(|(w, mask, raw, mode)| {
            let addrs = lanes(|l| {
                let word = match mode {
                    0 => raw[l as usize],                 // scattered
                    1 => raw[0] / 64 + l * (raw[1] % 40), // strided
                    _ => raw[0] / 64 + l,                 // contiguous, offset
                };
                0x20_0000 + word * w as u64
            });
            (w, mask, addrs)
        })
}

proptest! {
    #[test]
    fn every_active_lane_is_covered((w, mask, addrs) in access(), rule in rules()) {
        let (_, _, reqs) = run(rule, w, mask, &addrs);
        for (l, &a) in addrs.iter().enumerate().take(32) {
            if mask >> l & 1 == 1 {
                prop_assert!(covered(&reqs, a, w as u64), "lane {} uncovered", l);
            }
        }
    }

    #[test]
    fn no_transaction_that_no_lane_needs((w, mask, addrs) in access(), rule in rules()) {
        let (_, _, reqs) = run(rule, w, mask, &addrs);
        for r in &reqs {
            // Each transaction (each sector of a 32-byte line request, the
            // whole span otherwise) holds a byte some active lane asked for.
            let spans: Vec<(u64, u64)> = if r.size == 32 {
                (0..4).filter(|s| r.sectors >> s & 1 == 1)
                    .map(|s| (r.line + 32 * s, r.line + 32 * s + 32)).collect()
            } else {
                let lo = r.line + 32 * r.sectors.trailing_zeros() as u64;
                vec![(lo, lo + r.size as u64)]
            };
            for (lo, hi) in spans {
                let needed = (0..32).any(|l| mask >> l & 1 == 1
                    && addrs[l] < hi && addrs[l] + w as u64 > lo);
                prop_assert!(needed, "transaction {:?} needed by no lane", r);
            }
        }
    }

    #[test]
    fn counts_within_rule_maximum((w, mask, addrs) in access(), rule in rules()) {
        let (_, s, reqs) = run(rule, w, mask, &addrs);
        let total: u32 = s.transactions.iter().sum();
        prop_assert!(total <= rule.max_transactions());
        prop_assert!(total <= mask.count_ones() * w.div_ceil(16) as u32);
        // Transactions are aligned to their size.
        for r in &reqs {
            let lo = r.line + 32 * r.sectors.trailing_zeros() as u64;
            prop_assert_eq!(lo % r.size as u64, 0);
            if r.size != 32 {
                prop_assert_eq!(r.sector_count() as u64 * 32, r.size as u64);
            }
        }
        if mask == 0 { prop_assert!(reqs.is_empty()); }
    }

    #[test]
    fn sectors_equal_distinct_sectors_touched((w, mask, addrs) in access()) {
        let (req, s, _) = run(Rule::Sectors, w, mask, &addrs);
        let mut set: Vec<u64> = (0..32).filter(|l| mask >> l & 1 == 1)
            .map(|l| addrs[l] / 32).collect();
        set.sort_unstable();
        set.dedup();
        prop_assert_eq!(s.sectors as usize, set.len());
        prop_assert_eq!(req, (mask != 0) as u32);
    }
}

#[test]
fn memo_serves_a_strided_streams_warps_from_one_pattern() {
    let mut memo = Memo::new();
    for rule in [
        Rule::HalfWarpSegments,
        Rule::Sectors,
        Rule::Lines { bytes: 128 },
    ] {
        let before = memo.hits;
        for warp in 0..8u64 {
            // Float stride 32: each warp's 32 lanes span 4 KiB.
            let a = lanes(|l| 0x10_0000 + warp * 4096 + l * 128);
            let mut got = Vec::new();
            memo.coalesce(
                rule,
                &Access {
                    width: 4,
                    mask: u32::MAX,
                    addrs: &a,
                },
                &mut got,
            );
            assert_eq!(got, run(rule, 4, u32::MAX, &a).2);
        }
        assert_eq!(
            memo.hits - before,
            7,
            "{rule:?}: all warps but the first from the table"
        );
    }
}

proptest! {
    /// The memo gives the rule's requests, in the rule's order, for a
    /// pattern seen before at another base (whole spans away, or not) and
    /// for one it has not seen, with one table across all of them.
    #[test]
    fn memo_equals_the_rule(
        (w, mask, addrs) in access(),
        rule in rules(),
        shifts in prop::collection::vec((0u64..64, any::<bool>()), 1..12),
    ) {
        let mut memo = Memo::new();
        for (k, whole) in shifts {
            // Whole spans keep the pattern; 16-byte steps (a multiple of
            // every word size) may not.
            let d = if whole { k * rule.span() } else { k * 16 };
            let a = lanes(|l| addrs[l as usize] + d);
            let (want_parts, _, want) = run(rule, w, mask, &a);
            let mut got = vec![LineRequest { line: 1, sectors: 1, size: 32, request: 9 }];
            let parts = memo.coalesce(rule, &Access { width: w, mask, addrs: &a }, &mut got);
            prop_assert_eq!(parts, want_parts);
            prop_assert_eq!(got, want);
        }
    }
}
