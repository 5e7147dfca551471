//! Declared contents of global buffers, so that a loaded value can feed an
//! address (`out[i] = in[idx[i]]`).
//!
//! Contents are functions of the element index, computed when a lane loads
//! the element: a buffer of any size costs no memory (except raw words read
//! from a file). The pseudo-random kinds are defined exactly here, so that a
//! measurement program on a real GPU can fill its buffers with the same
//! values (`tools/measure/shared/shared.cu` does):
//!
//! ```text
//! mix64(z):  z ^= z >> 30; z *= 0xbf58476d1ce4e5b9; z ^= z >> 27;
//!            z *= 0x94d049bb133111eb; z ^= z >> 31           (SplitMix64's finaliser)
//! permute(x, m, key): a bijection of [0, m): a balanced 4-round Feistel
//!            network on 2h bits (h = ceil(bits(m - 1) / 2)), round k's
//!            function mix64(r ^ (key + k * 0x9e3779b97f4a7c15)) & (2^h - 1),
//!            repeated (cycle walking) until the result is below m
//! window permutation, element i, windows of w, seed s:
//!            k = i / w; start = k * w; m = min(w, n - start);
//!            start + permute(i - start, m, mix64(s * 0x9e3779b97f4a7c15 + k))
//! uniform in lo..=hi, element i, seed s:
//!            lo + mix64(s * 0x9e3779b97f4a7c15 + i) mod (hi - lo + 1)
//! ```
//! (all arithmetic wrapping, in 64 bits).

use std::sync::Arc;

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a well-mixed 64-bit hash.
pub fn mix64(mut z: u64) -> u64 {
    z ^= z >> 30;
    z = z.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A bijection of `0..m` chosen by `key` (see the module docs); `x < m`.
pub fn permute(mut x: u64, m: u64, key: u64) -> u64 {
    if m <= 1 {
        return 0;
    }
    let bits = 64 - (m - 1).leading_zeros();
    let h = bits.div_ceil(2);
    let mask = (1u64 << h) - 1;
    loop {
        let (mut l, mut r) = (x >> h, x & mask);
        for k in 0..4u64 {
            let f = mix64(r ^ key.wrapping_add(k.wrapping_mul(GOLDEN))) & mask;
            (l, r) = (r, l ^ f);
        }
        x = (l << h) | r;
        if x < m {
            return x;
        }
    }
}

/// Element `i` of a permutation of `n` elements confined to windows of `w`
/// (`w >= n` permutes the whole buffer), with `seed`.
pub fn window_permutation(i: u64, n: u64, w: u64, seed: u64) -> u64 {
    let k = i / w;
    let start = k * w;
    let m = (n - start).min(w);
    let key = mix64(seed.wrapping_mul(GOLDEN).wrapping_add(k));
    start + permute(i - start, m, key)
}

/// What a buffer holds, element by element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    /// Every element the same value.
    Const(i64),
    /// Element `i` holds `i`.
    Iota,
    /// A permutation of the element indices confined to windows of `window`
    /// elements.
    Permutation {
        /// Window, in elements (at least 1).
        window: u64,
        /// Seed.
        seed: u64,
    },
    /// Uniform pseudo-random values in `lo..=hi`.
    Uniform {
        /// Smallest value.
        lo: i64,
        /// Largest value.
        hi: i64,
        /// Seed.
        seed: u64,
    },
    /// Raw little-endian words (sign-extended), one per element.
    Words(Arc<[i64]>),
}

/// A buffer's declared contents: signed little-endian integers of
/// `elem_bytes` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferData {
    /// Bytes per element: 4 or 8.
    pub elem_bytes: u8,
    /// Elements in the buffer.
    pub elems: u64,
    /// The values.
    pub contents: Contents,
}

impl BufferData {
    /// The value of element `i` (`i < elems`).
    #[inline]
    pub fn value(&self, i: u64) -> i64 {
        match &self.contents {
            Contents::Const(v) => *v,
            Contents::Iota => i as i64,
            Contents::Permutation { window, seed } => {
                window_permutation(i, self.elems, *window, *seed) as i64
            }
            Contents::Uniform { lo, hi, seed } => {
                let span = (*hi as i128 - *lo as i128 + 1) as u128;
                let r = mix64(seed.wrapping_mul(GOLDEN).wrapping_add(i)) as u128 % span;
                (*lo as i128 + r as i128) as i64
            }
            Contents::Words(w) => w[i as usize],
        }
    }

    /// The smallest and largest value an element of `elem_bytes` can hold.
    pub fn range(elem_bytes: u8) -> (i64, i64) {
        if elem_bytes >= 8 {
            (i64::MIN, i64::MAX)
        } else {
            let b = 8 * elem_bytes as u32 - 1;
            (-(1i64 << b), (1i64 << b) - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_is_a_bijection_for_every_small_size() {
        for m in 1..300u64 {
            let mut seen = vec![false; m as usize];
            for x in 0..m {
                let y = permute(x, m, mix64(m));
                assert!(y < m);
                assert!(!seen[y as usize], "m={m}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn windows_stay_in_their_window_and_cover_it() {
        let (n, w) = (1000u64, 64u64);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let v = window_permutation(i, n, w, 1);
            assert_eq!(v / w, i / w, "element {i} left its window");
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        // A window of one is the identity.
        assert!((0..n).all(|i| window_permutation(i, n, 1, 7) == i));
    }

    #[test]
    fn uniform_values_stay_in_range() {
        let d = BufferData {
            elem_bytes: 4,
            elems: 10_000,
            contents: Contents::Uniform {
                lo: -3,
                hi: 5,
                seed: 9,
            },
        };
        let v: Vec<i64> = (0..10_000).map(|i| d.value(i)).collect();
        assert!(v.iter().all(|x| (-3..=5).contains(x)));
        assert!((-3..=5).all(|k| v.contains(&k)));
    }
}
