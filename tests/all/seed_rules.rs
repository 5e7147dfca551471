//! Seed 000's coalescing rules on CC 1.0 (C870) and CC 1.3 (C1060): transactions per warp
//! for the offset and stride kernels. Every warp of these kernels has the same alignment, so
//! per-warp counts are the totals divided by the number of warp instructions (a load and a
//! store per warp, coalesced alike). Each expectation says why.

use super::*;

/// Per-warp-instruction transactions [32 B, 64 B, 128 B] of `wl` at `param = value`.
fn per_warp(dev: &str, wl: &str, elem: i64, param: &str, value: i64) -> [u64; 3] {
    let d = device(dev);
    let w = workload(wl);
    let r = &run(
        &d,
        &w,
        &[("nMB", &[1]), ("elem", &[elem]), (param, &[value])],
    )[0];
    let instrs = r.counters.requests_ld + r.counters.requests_st;
    let t = r.counters.transactions;
    assert!(
        t.iter().all(|x| x % instrs == 0),
        "uniform warps: {t:?} over {instrs}"
    );
    [t[0] / instrs, t[1] / instrs, t[2] / instrs]
}

#[test]
fn c870_offset_and_stride_follow_the_strict_half_warp_rule() {
    // CC 1.0: a half-warp coalesces only if thread k reads word k of a segment aligned to
    // 16 words (64 B for floats, 128 B for doubles); then one 64-B (float) or 128-B
    // (double) transaction. Otherwise 16 separate 32-byte transactions.
    let c = |wl, e, p, v| per_warp("c870", wl, e, p, v);
    // float: offset 0 and 16 (= 64 B) are aligned: 2 half-warps x one 64-B transaction.
    assert_eq!(c("offset", 4, "offset", 0), [0, 2, 0]);
    assert_eq!(c("offset", 4, "offset", 16), [0, 2, 0]);
    // offset 1 and 8 (4 and 32 B) break the alignment: 32 x 32 B.
    assert_eq!(c("offset", 4, "offset", 1), [32, 0, 0]);
    assert_eq!(c("offset", 4, "offset", 8), [32, 0, 0]);
    // Any stride other than 1: thread k no longer reads word k.
    for s in [2, 16, 32] {
        assert_eq!(c("stride", 4, "stride", s), [32, 0, 0], "float stride {s}");
    }
    // double: 16 words = 128 B. Offset 16 (128 B) is aligned, offset 8 (64 B) is not.
    assert_eq!(c("offset", 8, "offset", 0), [0, 0, 2]);
    assert_eq!(c("offset", 8, "offset", 16), [0, 0, 2]);
    assert_eq!(c("offset", 8, "offset", 1), [32, 0, 0]);
    assert_eq!(c("offset", 8, "offset", 8), [32, 0, 0]);
    for s in [2, 16, 32] {
        assert_eq!(c("stride", 8, "stride", s), [32, 0, 0], "double stride {s}");
    }
}

#[test]
fn c1060_offset_and_stride_follow_the_segment_protocol() {
    // CC 1.3: per half-warp, the 128-B segment of the lowest active thread serves every
    // thread in it; it shrinks to 64 then 32 B while only one half is used; repeat.
    let c = |wl, e, p, v| per_warp("c1060", wl, e, p, v);
    // float offset 0: each half-warp reads 64 B within one 128-B segment: 64 B each.
    assert_eq!(c("offset", 4, "offset", 0), [0, 2, 0]);
    // offset 1: half-warp 0 reads bytes 4..68 (both halves: 128 B); half-warp 1 reads
    // 68..132: 64..128 (upper half: 64 B), then 128..132 (32 B).
    assert_eq!(c("offset", 4, "offset", 1), [1, 1, 1]);
    // offset 8: half-warp 0 reads 32..96 (128 B); half-warp 1 reads 96..160: 96..128 is
    // the upper quarter (32 B), 128..160 the lower (32 B). The "blip" of the figures.
    assert_eq!(c("offset", 4, "offset", 8), [2, 0, 1]);
    // offset 16 = 64 B: 64..128 and 128..192, one 64-B half each.
    assert_eq!(c("offset", 4, "offset", 16), [0, 2, 0]);
    // stride 2: a half-warp spans 128 B using both halves: one 128-B transaction each.
    assert_eq!(c("stride", 4, "stride", 2), [0, 0, 2]);
    // stride 16 (64 B apart): two threads per segment, one in each half: 8 x 128 B per
    // half-warp, the worst case.
    assert_eq!(c("stride", 4, "stride", 16), [0, 0, 16]);
    // stride 32 (128 B apart): one thread per segment, reduced to 32 B: 16 per half-warp.
    assert_eq!(c("stride", 4, "stride", 32), [32, 0, 0]);
    // double offset 0: a half-warp reads exactly one 128-B segment.
    assert_eq!(c("offset", 8, "offset", 0), [0, 0, 2]);
    // offset 1 (8 B): 8..128 (128 B) + 128..136 (32 B); 136..256 (128 B) + 256..264 (32 B).
    assert_eq!(c("offset", 8, "offset", 1), [2, 0, 2]);
    // offset 8 (64 B): every half-warp covers the upper half of one segment and the lower
    // half of the next: four 64-B transactions.
    assert_eq!(c("offset", 8, "offset", 8), [0, 4, 0]);
    // offset 16 (128 B): aligned again.
    assert_eq!(c("offset", 8, "offset", 16), [0, 0, 2]);
    // stride 2 (16 B apart): a half-warp spans two segments, both halves used in each.
    assert_eq!(c("stride", 8, "stride", 2), [0, 0, 4]);
    // stride 16 and 32 (128 and 256 B apart): one 8-byte word per segment, 32 B each.
    assert_eq!(c("stride", 8, "stride", 16), [32, 0, 0]);
    assert_eq!(c("stride", 8, "stride", 32), [32, 0, 0]);
}
