//! Volcano's `util.PriorityQueue`: the order functions the session
//! combines from its plugins change as allocations happen, so a queue
//! takes its comparator on every push and pop instead of owning one.

/// A minimal binary heap over indices with a session comparator, as
/// Volcano's `util.PriorityQueue` (Go's `container/heap`). Elements'
/// keys may change only while they are out of the heap.
#[derive(Default)]
pub struct PriorityQueue {
    items: Vec<usize>,
}

impl PriorityQueue {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn push(&mut self, x: usize, less: &dyn Fn(usize, usize) -> bool) {
        self.items.push(x);
        let mut j = self.items.len() - 1;
        while j > 0 {
            let i = (j - 1) / 2;
            if i == j || !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            j = i;
        }
    }

    /// The items, in no particular order.
    pub fn items(&self) -> &[usize] {
        &self.items
    }

    pub fn pop(&mut self, less: &dyn Fn(usize, usize) -> bool) -> Option<usize> {
        if self.items.is_empty() {
            return None;
        }
        let n = self.items.len() - 1;
        self.items.swap(0, n);
        let mut i = 0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && less(self.items[j2], self.items[j1]) {
                j = j2;
            }
            if !less(self.items[j], self.items[i]) {
                break;
            }
            self.items.swap(i, j);
            i = j;
        }
        self.items.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::PriorityQueue;

    #[test]
    fn heap_pops_in_comparator_order() {
        let keys = [5, 3, 9, 1, 7, 3, 8];
        let less = |a: usize, b: usize| (keys[a], a) < (keys[b], b);
        let mut q = PriorityQueue::default();
        for i in 0..keys.len() {
            q.push(i, &less);
        }
        let mut out = Vec::new();
        while let Some(i) = q.pop(&less) {
            out.push(keys[i]);
        }
        assert_eq!(out, vec![1, 3, 3, 5, 7, 8, 9]);
    }
}
