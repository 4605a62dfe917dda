//! Hashing for the hot path: small integer keys (group ids, label key
//! numbers) and short strings (label values, topology domains). Its own
//! file because both the labels and the cluster view use it.

/// A hasher for group ids and other small integers: one multiply. The
/// standard library's SipHash costs more than the lookups it guards when a
/// prepare step visits every pod group of every node.
#[derive(Clone, Copy, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    /// Strings (label values as topology domains) 8 bytes at a time.
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.write_u64(word);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            // The length tells "ab" from "ab\0".
            self.write_u64(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// A map keyed by group id (or any small integer), hashed with [`IdHasher`].
pub type IdMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<IdHasher>>;
/// A map keyed by strings, hashed with [`IdHasher`] (label values as
/// topology domains).
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;
/// A set hashed with [`IdHasher`].
pub type FastSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<IdHasher>>;
