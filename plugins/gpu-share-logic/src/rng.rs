//! Caller-controlled randomness.
//!
//! The simulator draws every random number (workload shuffle and tuning, the
//! Random policy's PreScore pick, `-gpusel random`) from Go's single global
//! `math/rand` stream; its kube-scheduler fork breaks score ties by node name
//! and draws nothing (see the `policy` module). We do **not** emulate Go's
//! generator: for the Random policy the stream interleaves with scheduling,
//! and bit-exactness is not the goal (see `simulation-notes.md` §3.5). Instead every function that needs randomness
//! takes a [`RandomSource`], and this module ships a small deterministic PRNG
//! ([`Xoshiro256`], seeded through SplitMix64) so runs are reproducible from a
//! `u64` seed. Results are therefore comparable to the paper only as
//! distributions over seeds, never pod-for-pod.

/// A source of uniformly distributed 64-bit values.
///
/// Implemented for [`Xoshiro256`] and for any `FnMut() -> u64` closure, so a
/// host can plug in its own generator.
pub trait RandomSource {
    /// Next uniformly distributed `u64`.
    fn next_u64(&mut self) -> u64;

    /// Uniform integer in `[0, n)`; the role of Go's `rand.Intn(n)`.
    ///
    /// Uses Lemire's multiply-and-reject method, so it is unbiased.
    ///
    /// # Panics
    /// If `n == 0` (Go's `Intn` panics too).
    fn intn(&mut self, n: usize) -> usize {
        assert!(n > 0, "intn: n must be > 0");
        let n64 = n as u64;
        let mut m = u128::from(self.next_u64()) * u128::from(n64);
        let mut low = m as u64;
        if low < n64 {
            let threshold = n64.wrapping_neg() % n64;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n64);
                low = m as u64;
            }
        }
        (m >> 64) as usize
    }
}

impl<F: FnMut() -> u64> RandomSource for F {
    fn next_u64(&mut self) -> u64 {
        self()
    }
}

/// One SplitMix64 step: advances `state` and returns the mixed output.
/// Used to expand a single `u64` seed into xoshiro's 256-bit state.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** (Blackman & Vigna), a small, fast, well-tested generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Seeds the generator from one `u64` via SplitMix64 (never all-zero state).
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Xoshiro256 { s }
    }
}

impl RandomSource for Xoshiro256 {
    fn next_u64(&mut self) -> u64 {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // Reference outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn deterministic_per_seed() {
        let mut a = Xoshiro256::seed_from_u64(42);
        let mut b = Xoshiro256::seed_from_u64(42);
        let mut c = Xoshiro256::seed_from_u64(43);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn intn_in_range_and_covers() {
        let mut r = Xoshiro256::seed_from_u64(7);
        let mut seen = [0usize; 5];
        for _ in 0..10_000 {
            let v = r.intn(5);
            assert!(v < 5);
            seen[v] += 1;
        }
        // Roughly uniform: every bucket within 10% of 2000.
        for &c in &seen {
            assert!((1800..=2200).contains(&c), "{seen:?}");
        }
        assert_eq!(r.intn(1), 0);
    }

    #[test]
    fn closure_is_a_source() {
        let mut k = 0u64;
        let mut f = || {
            k += 1;
            k << 62
        };
        // (1<<62) * 4 >> 64 = 1
        assert_eq!(f.intn(4), 1);
    }
}
