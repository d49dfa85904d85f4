//! The one random generator upktgen uses: xorshift64* (Marsaglia; Vigna's multiplier),
//! seeded through one splitmix64 step so that any seed, 0 included, starts a good stream.
//! Fast, small and reproducible from its seed — the draws of pktgen's random fields, the
//! simulator's jitter, the bootstrap's resamples and the property tests' inputs need that,
//! not cryptographic strength.

/// xorshift64*.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A stream from `seed` (mixed by splitmix64; the state is never zero).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// A stream from a raw state (0 is replaced by 1), for callers that fix the state itself.
    pub fn from_state(state: u64) -> Rng {
        Rng(state.max(1))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[0, n)` (n > 0), by multiply-shift (bias below 2^-32).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next_u32()) * u64::from(n)) >> 32) as u32
    }

    /// Uniform in `[lo, hi]` (lo <= hi).
    #[inline]
    pub fn inclusive(&mut self, lo: u32, hi: u32) -> u32 {
        let span = u64::from(hi - lo) + 1;
        lo + ((u64::from(self.next_u32()) * span) >> 32) as u32
    }

    /// An index in `[0, n)` (n > 0) by modulo (bias below 2^-40 for the small n it serves).
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in `[-1, 1)`, 53 bits.
    #[inline]
    pub fn signed_unit(&mut self) -> f64 {
        let v = self.next_u64() >> 11;
        (v as f64) * (2.0 / (1u64 << 53) as f64) - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_in_range() {
        let (mut a, mut b) = (Rng::new(0), Rng::new(0));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut r = Rng::new(7);
        let mut seen = [false; 10];
        for _ in 0..10_000 {
            let x = r.inclusive(3, 7);
            assert!((3..=7).contains(&x));
            let y = r.below(10) as usize;
            seen[y] = true;
            let u = r.signed_unit();
            assert!((-1.0..1.0).contains(&u));
            assert!(r.index(3) < 3);
        }
        assert!(seen.iter().all(|&s| s));
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
