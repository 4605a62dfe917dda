//! Labels as the filters read them on thousands of nodes per cycle: keys
//! numbered once per process, values compared by hash then 8 bytes at a
//! time, a node's labels in one sorted buffer. Apart from the object
//! model (`model.rs`), which holds labels but need not know how.

use crate::hash::IdHasher;

/// A label key resolved once (e.g. per pod in `prepare`) to its number in
/// the process's key table, so that looking it up on thousands of nodes
/// compares integers, not strings: label keys share long prefixes
/// (`topology.kubernetes.io/`), and string comparison is a byte loop inside
/// WebAssembly (it was a fifth of a Wasm cycle, BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelKey {
    id: u32,
    key: String,
}

impl LabelKey {
    pub fn new(key: impl Into<String>) -> LabelKey {
        let key = key.into();
        LabelKey {
            id: key_ids::intern(&key),
            key,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.key
    }
}

/// A label value to compare against, with its hash computed once: most
/// mismatches are decided by the hash, without reading the node's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelValue {
    hash: u32,
    value: String,
}

impl LabelValue {
    pub fn new(value: impl Into<String>) -> LabelValue {
        let value = value.into();
        LabelValue {
            hash: hash_value(&value),
            value,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Whether a value found on a node (see [`Labels::get_value`]) is this one.
    #[inline]
    pub fn matches(&self, found: Found<'_>) -> bool {
        self.hash == found.hash && str_eq(&self.value, found.value)
    }
}

/// A label's value as [`Labels::get_value`] finds it, with its hash.
#[derive(Clone, Copy, Debug)]
pub struct Found<'a> {
    hash: u32,
    pub value: &'a str,
}

/// Label keys numbered in order of first appearance, process-wide. Keys
/// are a cluster's vocabulary (tens to a few thousand), not its size, so
/// the table is never pruned; values, which grow with the cluster
/// (hostnames, hashes), are not numbered. Written when nodes, pods and
/// selectors are built, read only there: lookups on the hot path compare
/// the numbers these return.
mod key_ids {
    use std::sync::{LazyLock, PoisonError, RwLock};

    type Table = crate::hash::FastMap<Box<str>, u32>;
    static IDS: LazyLock<RwLock<Table>> = LazyLock::new(Default::default);

    /// The key's number, assigning the next one to a new key.
    pub fn intern(key: &str) -> u32 {
        if let Some(id) = lookup(key) {
            return id;
        }
        let mut ids = IDS.write().unwrap_or_else(PoisonError::into_inner);
        let next = ids.len() as u32;
        *ids.entry(key.into()).or_insert(next)
    }

    /// The key's number if any label or selector ever had the key.
    pub fn lookup(key: &str) -> Option<u32> {
        IDS.read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
    }
}

/// String equality 8 bytes at a time. Inside WebAssembly `==` on strings
/// calls a byte-by-byte `memcmp`, and label values are compared for
/// thousands of nodes per cycle.
#[inline]
pub fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x = u64::from_le_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
        let y = u64::from_le_bytes([y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]]);
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// A fast, deterministic hash of a value: [`IdHasher`]'s,
/// 8 bytes at a time.
fn hash_value(s: &str) -> u32 {
    use std::hash::Hasher;
    let mut h = IdHasher::default();
    h.write(s.as_bytes());
    (h.finish() >> 32) as u32
}

/// Labels, kept sorted by key number so a lookup compares integers, never
/// strings. The numbers sit in their own array: a node's usual 10–20
/// labels are one cache line to scan. Keys and values live in one buffer,
/// which keeps a 5,000-node table scan within fewer cache lines.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    key_ids: Vec<u32>,
    entries: Vec<LabelEntry>,
    text: String,
}

#[derive(Clone, Copy, Debug)]
struct LabelEntry {
    value_hash: u32,
    key: (u32, u32),
    value: (u32, u32),
}

/// Up to this many labels, a lookup scans the key numbers in order (no
/// data-dependent branches until the hit); beyond, a binary search.
const LINEAR_SCAN_LABELS: usize = 16;

impl Labels {
    /// Builds from pairs in any order; a later duplicate key wins.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        let mut sorted: Vec<(u32, String, String)> = pairs
            .into_iter()
            .map(|(k, v)| (key_ids::intern(&k), k, v))
            .collect();
        // Stable sort keeps input order among equal keys; keep the last.
        sorted.sort_by_key(|e| e.0);
        let mut deduped: Vec<(u32, String, String)> = Vec::with_capacity(sorted.len());
        for e in sorted {
            match deduped.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => deduped.push(e),
            }
        }
        let mut text =
            String::with_capacity(deduped.iter().map(|(_, k, v)| k.len() + v.len()).sum());
        let mut span = |s: &str| {
            let start = text.len() as u32;
            text.push_str(s);
            (start, s.len() as u32)
        };
        let entries = deduped
            .iter()
            .map(|(_, k, v)| LabelEntry {
                value_hash: hash_value(v),
                key: span(k),
                value: span(v),
            })
            .collect();
        let key_ids = deduped.iter().map(|e| e.0).collect();
        Labels {
            key_ids,
            entries,
            text,
        }
    }

    #[inline]
    fn str_at(&self, (start, len): (u32, u32)) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    #[inline]
    fn entry(&self, key_id: u32) -> Option<&LabelEntry> {
        let i = if self.key_ids.len() <= LINEAR_SCAN_LABELS {
            self.key_ids.iter().position(|&k| k == key_id)?
        } else {
            self.key_ids.binary_search(&key_id).ok()?
        };
        self.entries.get(i)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        let e = self.entry(key_ids::lookup(key)?)?;
        Some(self.str_at(e.value))
    }

    /// Lookup with a resolved key: the hot path for selectors.
    #[inline]
    pub fn get_key(&self, key: &LabelKey) -> Option<&str> {
        self.entry(key.id).map(|e| self.str_at(e.value))
    }

    /// Lookup with a resolved key, the value with its hash, for
    /// [`LabelValue::matches`].
    #[inline]
    pub fn get_value(&self, key: &LabelKey) -> Option<Found<'_>> {
        self.entry(key.id).map(|e| Found {
            hash: e.value_hash,
            value: self.str_at(e.value),
        })
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The labels in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut order: Vec<&LabelEntry> = self.entries.iter().collect();
        // Key numbers follow the order keys were first seen in: sorting by
        // text keeps what callers see independent of that history.
        order.sort_unstable_by(|a, b| self.str_at(a.key).cmp(self.str_at(b.key)));
        order
            .into_iter()
            .map(|e| (self.str_at(e.key), self.str_at(e.value)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn into_pairs(self) -> Vec<(String, String)> {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

/// Equal when they hold the same pairs (the layout may differ).
impl PartialEq for Labels {
    fn eq(&self, other: &Labels) -> bool {
        self.len() == other.len()
            && self.key_ids.iter().zip(&self.entries).all(|(&id, e)| {
                other
                    .entry(id)
                    .is_some_and(|o| str_eq(other.str_at(o.value), self.str_at(e.value)))
            })
    }
}

impl Eq for Labels {}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Labels::new(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_eq_matches_eq() {
        let words = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "topology.kubernetes.io/zone",
            "topology.kubernetes.io/zonf",
        ];
        for a in words {
            for b in words {
                assert_eq!(str_eq(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn labels_lookup_and_last_duplicate_wins() {
        let l = Labels::new(vec![
            ("topology.kubernetes.io/zone".into(), "a".into()),
            ("disk".into(), "ssd".into()),
            ("topology.kubernetes.io/zone".into(), "b".into()),
        ]);
        assert_eq!(l.len(), 2);
        assert_eq!(l.get("topology.kubernetes.io/zone"), Some("b"));
        assert_eq!(l.get_key(&LabelKey::new("disk")), Some("ssd"));
        assert_eq!(l.get("topology.kubernetes.io/region"), None);
        assert_eq!(l.get(""), None);
    }

    #[test]
    fn labels_iterate_in_key_order_whatever_order_keys_were_first_seen() {
        // Numbered in this order: "zz-first" before "aa-second".
        let _ = LabelKey::new("sdk-test/zz-first");
        let _ = LabelKey::new("sdk-test/aa-second");
        let l = Labels::new(vec![
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "2".into()),
            ("sdk-test/mm-new".into(), "3".into()),
        ]);
        let keys: Vec<&str> = l.iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            ["sdk-test/aa-second", "sdk-test/mm-new", "sdk-test/zz-first"]
        );
        let same = Labels::new(vec![
            ("sdk-test/mm-new".into(), "3".into()),
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "2".into()),
        ]);
        assert_eq!(l, same);
        let other = Labels::new(vec![
            ("sdk-test/mm-new".into(), "3".into()),
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "x".into()),
        ]);
        assert_ne!(l, other);
    }

    #[test]
    fn label_values_match_only_equal_text() {
        let key = LabelKey::new("disk");
        let l = Labels::new(vec![("disk".into(), "ssd".into())]);
        let found = l.get_value(&key).unwrap();
        assert_eq!(found.value, "ssd");
        assert!(LabelValue::new("ssd").matches(found));
        for other in ["", "ss", "ssd ", "SSD", "hdd", "ssdssdssd"] {
            assert!(!LabelValue::new(other).matches(found), "{other:?}");
        }
        // A key no label has ever had is simply absent.
        assert_eq!(
            l.get_value(&LabelKey::new("sdk-test/never-seen"))
                .map(|f| f.value),
            None
        );
        assert_eq!(l.get("sdk-test/never-seen-either"), None);
    }
}
