//! Tiny deterministic pseudo-random number generators.
//!
//! We need randomness in three places: the R-MAT generator (which must be
//! *counter based*, so that edge `i` can be produced by whichever process owns
//! it without generating edges `0..i` first), the seeded vertex relabelling,
//! and randomized tests. A `rand` dependency would buy nothing here and its
//! streams are not guaranteed stable across versions, which would break the
//! "same graph for the same seed forever" property the benchmarks rely on.

/// The SplitMix64 finaliser: a bijective 64-bit mixing function with good
/// avalanche behaviour. Used as the core of the counter-based hash.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Counter-based hash of `(seed, counter)`.
///
/// Two rounds of mixing keep nearby seeds and nearby counters uncorrelated.
/// This is what makes parallel generation reproducible: the value depends on
/// nothing but its two arguments, never on how work was split.
#[inline]
pub fn hash2(seed: u64, counter: u64) -> u64 {
    mix64(mix64(seed ^ 0x6a09_e667_f3bc_c909).wrapping_add(counter.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// Sequential SplitMix64 stream; mainly used to seed [`Xoshiro256`].
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Creates a stream starting at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }
}

/// xoshiro256** by Blackman & Vigna: a fast, high-quality sequential
/// generator for tests and for the seeded permutation.
#[derive(Clone, Debug)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Seeds the four state words from a SplitMix64 stream (the seeding
    /// procedure recommended by the authors; it never yields the all-zero
    /// state for practical seeds).
    pub fn new(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256 {
            s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()],
        }
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform `f64` in `[0, 1)` with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `0..bound` (Lemire's multiply-shift with rejection,
    /// so there is no modulo bias). `bound` must be non-zero.
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "below(0)");
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (bound as u128);
            let low = m as u64;
            if low >= bound.wrapping_neg() % bound {
                return (m >> 64) as u64;
            }
        }
    }
}

/// A uniformly random permutation of `0..n` (Fisher–Yates), fully
/// determined by `seed`.
pub fn permutation(n: usize, seed: u64) -> Vec<u32> {
    assert!(n as u64 <= u32::MAX as u64 + 1, "permutation too large for u32 ids");
    let mut p: Vec<u32> = (0..n as u64).map(|i| i as u32).collect();
    shuffle(&mut p, seed);
    p
}

/// Fisher–Yates shuffle of `p` in place, fully determined by `seed` (the one
/// [`permutation`] applies to `0..n`).
pub fn shuffle(p: &mut [u32], seed: u64) {
    let mut rng = Xoshiro256::new(seed);
    for i in (1..p.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_known_value() {
        // Reference output of SplitMix64 seeded with 1234567 (first value),
        // from the published C implementation.
        let mut sm = SplitMix64::new(1234567);
        assert_eq!(sm.next_u64(), 6457827717110365317);
    }

    #[test]
    fn xoshiro_is_deterministic_and_varies() {
        let mut a = Xoshiro256::new(42);
        let mut b = Xoshiro256::new(42);
        let mut c = Xoshiro256::new(43);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn f64_in_unit_interval_with_sane_mean() {
        let mut r = Xoshiro256::new(7);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
            sum += x;
        }
        let mean = sum / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
    }

    #[test]
    fn below_is_in_range_and_covers() {
        let mut r = Xoshiro256::new(9);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            seen[r.below(7) as usize] += 1;
        }
        for &c in &seen {
            assert!(c > 800 && c < 1200, "{seen:?}");
        }
    }

    #[test]
    fn permutation_is_a_permutation() {
        let p = permutation(1000, 5);
        let mut s = p.clone();
        s.sort_unstable();
        assert!(s.iter().enumerate().all(|(i, &v)| v as usize == i));
        assert_ne!(p, s, "identity permutation is astronomically unlikely");
        assert_eq!(p, permutation(1000, 5));
        assert_ne!(p, permutation(1000, 6));
    }

    #[test]
    fn hash2_depends_on_both_arguments() {
        assert_ne!(hash2(1, 0), hash2(1, 1));
        assert_ne!(hash2(1, 0), hash2(2, 0));
        assert_eq!(hash2(3, 4), hash2(3, 4));
    }
}
