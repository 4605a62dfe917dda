//! A vector by slot whose copies share fixed-size chunks: copying one
//! costs O(len / CHUNK), changing one slot copies one chunk if another
//! copy still holds it. Each scheduling cycle's snapshot copies the
//! cluster's node tables and changes a slot or two; with plain vectors
//! that copy (and the drop of the previous snapshot's) was O(nodes) a
//! cycle, about a quarter of the live scheduler's loop at 5,000 nodes
//! (BENCHMARKS.md, `sift schedule` end to end).

use std::sync::Arc;

/// Slots per chunk: a changed slot copies this many refcounted values.
const CHUNK: usize = 64;

/// Values by slot, in chunks shared between copies.
#[derive(Clone)]
pub struct Table<T> {
    chunks: Vec<Arc<Vec<T>>>,
    len: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Table<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, slot: usize) -> Option<&T> {
        (slot < self.len).then(|| &self.chunks[slot / CHUNK][slot % CHUNK])
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flat_map(|c| c.iter())
    }
}

impl<T: Clone> Table<T> {
    /// Replaces the value in `slot` (which must exist).
    pub fn set(&mut self, slot: usize, value: T) {
        assert!(slot < self.len, "slot {slot} of {}", self.len);
        Arc::make_mut(&mut self.chunks[slot / CHUNK])[slot % CHUNK] = value;
    }

    pub fn push(&mut self, value: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Arc::new(Vec::with_capacity(CHUNK)));
        }
        let last = self.chunks.last_mut().expect("a chunk with room");
        Arc::make_mut(last).push(value);
        self.len += 1;
    }

    /// Removes and returns the last value.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.chunks.last_mut()?;
        let value = Arc::make_mut(last).pop();
        if last.is_empty() {
            self.chunks.pop();
        }
        self.len -= 1;
        value
    }

    /// Removes `slot`, moving the last value into it (as
    /// `Vec::swap_remove`).
    pub fn swap_remove(&mut self, slot: usize) -> T {
        let last = self.pop().expect("a value to remove");
        if slot == self.len {
            return last;
        }
        let removed = self[slot].clone();
        self.set(slot, last);
        removed
    }
}

impl<T> std::ops::Index<usize> for Table<T> {
    type Output = T;

    fn index(&self, slot: usize) -> &T {
        self.get(slot)
            .unwrap_or_else(|| panic!("slot {slot} of {}", self.len))
    }
}

impl<T: Clone> FromIterator<T> for Table<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut table = Table::default();
        for v in iter {
            table.push(v);
        }
        table
    }
}

impl<'a, T> IntoIterator for &'a Table<T> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_vector_and_copies_share_what_did_not_change() {
        let n = CHUNK * 3 + 5;
        let mut table: Table<u32> = (0..n as u32).collect();
        let mut model: Vec<u32> = (0..n as u32).collect();
        let copy = table.clone();
        table.set(7, 700);
        model[7] = 700;
        assert_eq!(copy[7], 7, "a copy keeps its value");
        assert!(Arc::ptr_eq(&table.chunks[1], &copy.chunks[1]));
        assert!(!Arc::ptr_eq(&table.chunks[0], &copy.chunks[0]));
        // The first, one at a chunk's start, the last, one near the end.
        for back in [None, None, Some(1), Some(3)] {
            let slot = match back {
                None if table.len() == n => 0,
                None => CHUNK,
                Some(b) => table.len() - b,
            };
            assert_eq!(table.swap_remove(slot), model.swap_remove(slot));
        }
        table.push(9);
        model.push(9);
        while table.len() > CHUNK - 1 {
            assert_eq!(table.pop(), model.pop());
        }
        assert_eq!(table.iter().copied().collect::<Vec<_>>(), model);
        assert_eq!(table.len(), model.len());
        assert_eq!(table.get(model.len()), None);
        assert_eq!(copy.iter().count(), n);
    }
}
