//! Shared-memory banks: how many wavefronts (passes through the banks) a
//! warp's shared-memory instruction needs.
//!
//! ```text
//!  32 lanes ──split into groups of at most pass_lanes lanes whose words total at
//!             most {load,store}_group_bytes──▶ per group: bank = word % banks
//!          ──▶ wavefronts of a group = most distinct words any one bank serves
//! ```
//!
//! Shared memory is `banks` banks of `bank_bytes`-byte words; successive
//! words go to successive banks, and each bank delivers one word per cycle
//! (CUDA C++ Programming Guide, "Shared Memory" under each compute
//! capability). Lanes reading the same word get it in the same pass (a
//! broadcast), so only *distinct* words in one bank conflict. Wide words
//! are served a part of the warp at a time: the lanes are taken in groups
//! whose words total at most `store_group_bytes` for stores (128 on GH100:
//! half a warp of 8-byte words, a quarter of 16-byte words, the Guide's
//! rule for 64- and 128-bit accesses since CC 2.0) and `load_group_bytes`
//! for loads (256 on GH100: the whole warp of 8-byte words, half of 16-byte
//! words; measured on an H200, `tools/measure/shared/`, where a broadcast
//! 8-byte load takes one wavefront and an 8-byte store two). CC 1.x serves
//! each half-warp separately on 16 banks.
//!
//! A group's conflict-free cost is its distinct words over the banks,
//! rounded up; the wavefronts beyond it are bank conflicts (so consecutive
//! 8-byte words, two wavefronts, have none), as Nsight Compute counts them
//! on the H200.
//!
//! Peak: one wavefront of `banks x bank_bytes` bytes per SM cycle.

use crate::Access;
use serde::Deserialize;

/// The banks of one SM's shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Banks {
    /// Number of banks.
    pub banks: u32,
    /// Bytes per bank word.
    pub bank_bytes: u32,
    /// Lanes served in one pass at most (32; 16 on CC 1.x, which serves
    /// half-warps).
    pub pass_lanes: u32,
    /// Bytes of words a load serves as one group of lanes.
    pub load_group_bytes: u32,
    /// Bytes of words a store serves as one group of lanes.
    pub store_group_bytes: u32,
}

/// What one warp-wide shared-memory instruction costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wavefronts {
    /// Passes through the banks
    /// (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`).
    pub wavefronts: u32,
    /// Passes beyond one per group of lanes that could share a pass: the
    /// replays that bank conflicts cause
    /// (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum`).
    pub conflicts: u32,
}

impl Banks {
    /// Lanes served as one group for words of `width` bytes.
    pub fn group_lanes(&self, width: u8, is_load: bool) -> u32 {
        let bytes = if is_load {
            self.load_group_bytes
        } else {
            self.store_group_bytes
        };
        (bytes / (width as u32).max(self.bank_bytes)).clamp(1, self.pass_lanes.max(1))
    }

    /// Wavefronts of `acc` (addresses are byte offsets in shared memory),
    /// a load or a store.
    pub fn wavefronts(&self, acc: &Access<'_>, is_load: bool) -> Wavefronts {
        let g = self.group_lanes(acc.width, is_load) as usize;
        let bb = self.bank_bytes as u64;
        let nb = self.banks as u64;
        let words_per_lane = (acc.width as u64).div_ceil(bb).max(1);
        let mut out = Wavefronts::default();
        // Distinct words of one pass (at most 32 lanes x 4 words).
        let mut words: [u64; 128] = [0; 128];
        for first in (0..32).step_by(g) {
            let mut n = 0usize;
            for lane in first..(first + g).min(32) {
                if acc.mask >> lane & 1 == 0 {
                    continue;
                }
                let w0 = acc.addrs[lane] / bb;
                for w in w0..w0 + words_per_lane {
                    if !words[..n].contains(&w) {
                        words[n] = w;
                        n += 1;
                    }
                }
            }
            if n == 0 {
                continue;
            }
            let mut per_bank = [0u32; 64];
            let mut most = 0;
            for &w in &words[..n] {
                let b = (w % nb) as usize % 64;
                per_bank[b] += 1;
                most = most.max(per_bank[b]);
            }
            out.wavefronts += most;
            out.conflicts += most - (n as u32).div_ceil(self.banks);
        }
        out
    }
}

/// One group of lanes served together, for reports (`gpusim explain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// First and last lane of the group.
    pub lanes: (u32, u32),
    /// Distinct bank words the group's active lanes touch.
    pub distinct: u32,
    /// Passes needed without conflicts: `distinct / banks`, rounded up.
    pub ideal: u32,
    /// Passes needed: the most distinct words of one bank.
    pub wavefronts: u32,
    /// A bank with that many, and its words (byte addresses).
    pub worst_bank: u32,
    /// The words of `worst_bank`, as byte addresses.
    pub worst_words: Vec<u64>,
}

impl Banks {
    /// The groups of `acc` with what each costs (groups without an active
    /// lane left out); their wavefronts add up to [`Banks::wavefronts`].
    pub fn groups(&self, acc: &Access<'_>, is_load: bool) -> Vec<Group> {
        let g = self.group_lanes(acc.width, is_load);
        let bb = self.bank_bytes as u64;
        let words_per_lane = (acc.width as u64).div_ceil(bb).max(1);
        let mut out = Vec::new();
        for first in (0..32).step_by(g as usize) {
            let last = (first + g).min(32) - 1;
            let mut per_bank: Vec<Vec<u64>> = vec![Vec::new(); self.banks as usize];
            for lane in first..=last {
                if acc.mask >> lane & 1 == 0 {
                    continue;
                }
                let w0 = acc.addrs[lane as usize] / bb;
                for w in w0..w0 + words_per_lane {
                    let v = &mut per_bank[(w % self.banks as u64) as usize];
                    if !v.contains(&w) {
                        v.push(w);
                    }
                }
            }
            let distinct: usize = per_bank.iter().map(Vec::len).sum();
            if distinct == 0 {
                continue;
            }
            let most = per_bank.iter().map(Vec::len).max().unwrap_or(0);
            let worst = per_bank.iter().position(|v| v.len() == most).unwrap_or(0);
            out.push(Group {
                lanes: (first, last),
                distinct: distinct as u32,
                ideal: (distinct as u32).div_ceil(self.banks),
                wavefronts: most as u32,
                worst_bank: worst as u32,
                worst_words: per_bank[worst].iter().map(|w| w * bb).collect(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // As configs/h200.ron.
    const GH100: Banks = Banks {
        banks: 32,
        bank_bytes: 4,
        pass_lanes: 32,
        load_group_bytes: 256,
        store_group_bytes: 128,
    };
    const TESLA: Banks = Banks {
        banks: 16,
        bank_bytes: 4,
        pass_lanes: 16,
        load_group_bytes: 64,
        store_group_bytes: 64,
    };

    fn strided(width: u8, stride_words: u64) -> [u64; 32] {
        let mut a = [0u64; 32];
        for (l, x) in a.iter_mut().enumerate() {
            *x = l as u64 * stride_words * width as u64;
        }
        a
    }

    fn wf_op(b: Banks, width: u8, stride: u64, is_load: bool) -> (u32, u32) {
        let addrs = strided(width, stride);
        let w = b.wavefronts(
            &Access {
                width,
                mask: u32::MAX,
                addrs: &addrs,
            },
            is_load,
        );
        (w.wavefronts, w.conflicts)
    }

    /// A load and a store cost the same.
    fn wf(b: Banks, width: u8, stride: u64) -> (u32, u32) {
        let ld = wf_op(b, width, stride, true);
        if width <= 4 {
            assert_eq!(ld, wf_op(b, width, stride, false));
        }
        ld
    }

    #[test]
    fn consecutive_words_take_one_pass() {
        assert_eq!(wf(GH100, 4, 1), (1, 0));
    }

    #[test]
    fn a_column_of_a_32_wide_tile_is_a_32_way_conflict() {
        // tile[threadIdx.x][c] with 32 floats per row: every lane in bank c.
        assert_eq!(wf(GH100, 4, 32), (32, 31));
        // Padding the row to 33 floats spreads the column over all banks.
        assert_eq!(wf(GH100, 4, 33), (1, 0));
    }

    #[test]
    fn strides_conflict_by_their_common_factor_with_the_banks() {
        assert_eq!(wf(GH100, 4, 2), (2, 1));
        assert_eq!(wf(GH100, 4, 3), (1, 0));
        assert_eq!(wf(GH100, 4, 8), (8, 7));
        assert_eq!(wf(GH100, 4, 17), (1, 0));
    }

    #[test]
    fn one_word_for_every_lane_is_a_broadcast() {
        assert_eq!(wf(GH100, 4, 0), (1, 0));
    }

    #[test]
    fn wide_words_are_served_a_part_of_the_warp_at_a_time() {
        assert_eq!(wf(GH100, 8, 1), (2, 0));
        assert_eq!(wf(GH100, 16, 1), (4, 0));
        assert_eq!(wf_op(GH100, 8, 1, false), (2, 0));
        assert_eq!(wf_op(GH100, 16, 1, false), (4, 0));
    }

    /// tools/measure/shared/results (H200): wavefronts per instruction of
    /// lane l at word l * stride, strides 0, 1, 2, 3, 4, 8, 16, 17, 32.
    #[test]
    fn the_h200_measurements_of_every_width_and_stride() {
        let strides = [0, 1, 2, 3, 4, 8, 16, 17, 32];
        let measured: [(u8, bool, [u32; 9]); 5] = [
            (4, true, [1, 1, 2, 1, 4, 8, 16, 1, 32]),
            (8, true, [1, 2, 4, 2, 8, 16, 32, 2, 32]),
            (8, false, [2, 2, 4, 2, 8, 16, 32, 2, 32]),
            (16, true, [2, 4, 8, 4, 16, 32, 32, 4, 32]),
            (16, false, [4, 4, 8, 4, 16, 32, 32, 4, 32]),
        ];
        for (width, is_load, want) in measured {
            for (s, w) in strides.iter().zip(want) {
                // Elements of `width` bytes, (l * s) % 1024 as in the kernel.
                let mut addrs = [0u64; 32];
                for (l, a) in addrs.iter_mut().enumerate() {
                    *a = (l as u64 * s % 1024) * width as u64;
                }
                let got = GH100.wavefronts(
                    &Access {
                        width,
                        mask: u32::MAX,
                        addrs: &addrs,
                    },
                    is_load,
                );
                assert_eq!(got.wavefronts, w, "width {width} stride {s} load {is_load}");
                // Conflicts: wavefronts beyond width/4, except the wide
                // broadcast loads, which have none.
                let ideal = if *s == 0 && is_load {
                    w
                } else {
                    width as u32 / 4
                };
                assert_eq!(
                    got.conflicts,
                    w - ideal,
                    "width {width} stride {s} load {is_load}"
                );
            }
        }
    }

    /// 4-byte words at a stride of s words over B banks: B / gcd(s, B)
    /// distinct banks, so max(1, 32 gcd(s, B) / B) passes
    /// (studies/h200-shared-banks.ron).
    #[test]
    fn strided_words_need_the_passes_of_their_common_factor_with_the_banks() {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        for banks in [16u32, 32, 64] {
            let b = Banks { banks, ..GH100 };
            for s in 1..=64u64 {
                let want = (32 * gcd(s, banks as u64) / banks as u64).max(1) as u32;
                assert_eq!(wf(b, 4, s).0, want, "{banks} banks, stride {s}");
            }
        }
    }

    #[test]
    fn compute_capability_1_serves_half_warps_on_16_banks() {
        assert_eq!(wf(TESLA, 4, 1), (2, 0));
        assert_eq!(wf(TESLA, 4, 2), (4, 2));
        assert_eq!(wf(TESLA, 4, 16), (32, 30));
    }

    #[test]
    fn inactive_lanes_cost_nothing() {
        let addrs = strided(4, 32);
        let w = GH100.wavefronts(
            &Access {
                width: 4,
                mask: 0b1011,
                addrs: &addrs,
            },
            true,
        );
        assert_eq!((w.wavefronts, w.conflicts), (3, 2));
        let none = GH100.wavefronts(
            &Access {
                width: 4,
                mask: 0,
                addrs: &addrs,
            },
            true,
        );
        assert_eq!(none, Wavefronts::default());
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    const GH100: Banks = Banks {
        banks: 32,
        bank_bytes: 4,
        pass_lanes: 32,
        load_group_bytes: 256,
        store_group_bytes: 128,
    };

    fn access() -> impl Strategy<Value = (u8, u32, [u64; 32], bool)> {
        (
            prop::sample::select(vec![1u8, 2, 4, 8, 16]),
            any::<u32>(),
            prop::array::uniform32(0u64..2048),
            any::<bool>(),
        )
            .prop_map(|(w, m, a, ld)| (w, m, a.map(|x| x / w as u64 * w as u64), ld))
    }

    proptest! {
        /// Between the conflict-free number of passes and one pass per
        /// word; the same wherever the pattern sits, rotated by whole rows
        /// of banks.
        #[test]
        fn wavefronts_are_bounded_and_shift_invariant((width, mask, addrs, ld) in access(), rows in 0u64..64) {
            let acc = Access { width, mask, addrs: &addrs };
            let w = GH100.wavefronts(&acc, ld);
            let words = (width as u32).div_ceil(4);
            prop_assert!(w.wavefronts <= mask.count_ones() * words);
            prop_assert!(w.conflicts <= w.wavefronts);
            prop_assert_eq!(mask == 0, w.wavefronts == 0);
            let groups = GH100.groups(&acc, ld);
            prop_assert_eq!(groups.iter().map(|g| g.wavefronts).sum::<u32>(), w.wavefronts);
            prop_assert_eq!(groups.iter().map(|g| g.wavefronts - g.ideal).sum::<u32>(), w.conflicts);
            let moved = addrs.map(|a| a + rows * 128);
            let w2 = GH100.wavefronts(&Access { width, mask, addrs: &moved }, ld);
            prop_assert_eq!(w, w2);
        }

        /// Fewer active lanes never need more passes.
        #[test]
        fn fewer_lanes_never_cost_more((width, mask, addrs, ld) in access(), drop in any::<u32>()) {
            let all = GH100.wavefronts(&Access { width, mask, addrs: &addrs }, ld);
            let some = GH100.wavefronts(&Access { width, mask: mask & drop, addrs: &addrs }, ld);
            prop_assert!(some.wavefronts <= all.wavefronts);
        }
    }
}
