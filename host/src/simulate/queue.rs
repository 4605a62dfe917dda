//! The scheduling queue of a simulation: kube-scheduler's activeQ ordered
//! by PrioritySort, and its unschedulable pool.
//!
//! Order: priority descending, then the time the pod entered the queue,
//! then `metadata.creationTimestamp`, then namespace/name. Upstream's heap
//! is not stable on equal (priority, timestamp); sift breaks those ties by
//! creation time and name so a replay is deterministic.
//!
//! Queueing hints, simplified: a pod that failed waits in the unschedulable
//! pool until the cluster changes in a way that could help it (a bound pod
//! leaves, a node is added); then every waiting pod moves back to the
//! active queue with its timestamp refreshed to the failure time, as
//! NodeResourcesFit's hint does for an assigned pod's deletion. Pod
//! arrivals never wake them (upstream's NodeResourcesFit ignores pod adds).
//! Backoff is not modelled: the simulation has no wall clock between
//! events, so a woken pod is retried at the next drain.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Where a pod sorts in the active queue.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueKey {
    /// Negated priority: higher priority first.
    neg_priority: i64,
    /// When it entered the queue (simulated seconds).
    queued_at: u64,
    /// metadata.creationTimestamp (RFC 3339, which sorts as time for
    /// the UTC "Z" form the API server writes); empty sorts first.
    created: String,
    /// namespace/name.
    key: String,
}

impl QueueKey {
    pub fn new(priority: i32, queued_at: u64, created: String, key: String) -> QueueKey {
        QueueKey {
            neg_priority: -(priority as i64),
            queued_at,
            created,
            key,
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The same pod entering the queue again at `now`.
    pub fn requeued(&self, now: u64) -> QueueKey {
        QueueKey {
            queued_at: now,
            ..self.clone()
        }
    }
}

/// Pending pods: active (ordered) and unschedulable (waiting for a change).
#[derive(Default)]
pub struct SchedulingQueue<T> {
    active: BTreeMap<QueueKey, T>,
    /// Failed pods by key, with the time they failed.
    unschedulable: HashMap<String, (QueueKey, T)>,
    /// Keys in either, so a pod is queued once.
    keys: BTreeSet<String>,
}

impl<T> SchedulingQueue<T> {
    pub fn new() -> Self {
        SchedulingQueue {
            active: BTreeMap::new(),
            unschedulable: HashMap::new(),
            keys: BTreeSet::new(),
        }
    }

    /// Queues a pod; false when one with its key is already queued.
    pub fn add(&mut self, key: QueueKey, item: T) -> bool {
        if !self.keys.insert(key.key.clone()) {
            return false;
        }
        self.active.insert(key, item);
        true
    }

    /// The next pod to schedule.
    pub fn pop(&mut self) -> Option<(QueueKey, T)> {
        let (k, v) = self.active.pop_first()?;
        self.keys.remove(&k.key);
        Some((k, v))
    }

    /// A pod that failed: it waits for a cluster change, its queue time
    /// refreshed to `now`.
    pub fn park(&mut self, mut key: QueueKey, item: T, now: u64) {
        key.queued_at = now;
        self.keys.insert(key.key.clone());
        self.unschedulable.insert(key.key.clone(), (key, item));
    }

    /// Moves every waiting pod back to the active queue.
    pub fn wake_all(&mut self) -> usize {
        let n = self.unschedulable.len();
        for (_, (k, v)) in self.unschedulable.drain() {
            self.active.insert(k, v);
        }
        n
    }

    /// Removes a pending pod (it was deleted); whether it was queued.
    pub fn remove(&mut self, key: &str) -> bool {
        if !self.keys.remove(key) {
            return false;
        }
        if self.unschedulable.remove(key).is_none() {
            self.active.retain(|k, _| k.key != key);
        }
        true
    }

    pub fn active_len(&self) -> usize {
        self.active.len()
    }

    pub fn unschedulable_len(&self) -> usize {
        self.unschedulable.len()
    }

    /// The pods still waiting, by key (sorted).
    pub fn waiting(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.unschedulable.keys().map(String::as_str).collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: i32, t: u64, created: &str, name: &str) -> QueueKey {
        QueueKey::new(p, t, created.into(), name.into())
    }

    #[test]
    fn priority_then_time_then_creation_then_name() {
        let mut q = SchedulingQueue::new();
        q.add(key(0, 0, "2024-01-01T00:00:02Z", "ns/a"), ());
        q.add(key(10, 5, "2024-01-01T00:00:09Z", "ns/b"), ());
        q.add(key(0, 0, "2024-01-01T00:00:01Z", "ns/c"), ());
        q.add(key(0, 0, "2024-01-01T00:00:01Z", "ns/b2"), ());
        let order: Vec<String> = std::iter::from_fn(|| q.pop().map(|(k, _)| k.key)).collect();
        assert_eq!(order, ["ns/b", "ns/b2", "ns/c", "ns/a"]);
    }

    #[test]
    fn parked_pods_wait_until_woken_with_a_refreshed_time() {
        let mut q = SchedulingQueue::new();
        q.add(key(0, 0, "", "ns/old"), 1);
        let (k, v) = q.pop().unwrap();
        q.park(k, v, 7);
        assert!(!q.add(key(0, 0, "", "ns/old"), 2), "queued once");
        q.add(key(0, 3, "", "ns/new"), 3);
        assert_eq!(q.pop().unwrap().0.key, "ns/new");
        assert!(q.pop().is_none());
        assert_eq!(q.wake_all(), 1);
        let (k, v) = q.pop().unwrap();
        assert_eq!((k.queued_at, v), (7, 1));
        assert!(!q.remove("ns/none"));
    }
}
