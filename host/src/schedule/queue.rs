//! The live scheduling queue: kube-scheduler's activeQ, backoffQ and
//! unschedulable pool (`backend/queue/scheduling_queue.go`), on a clock
//! the caller passes in (milliseconds), so tests drive time.
//!
//! - activeQ orders by PrioritySort, as the simulation's queue does
//!   ([`QueueKey`]: priority, then the time the pod entered the queue,
//!   then creation time and name for a deterministic order).
//! - A pod whose attempt failed goes to the unschedulable pool, or to
//!   backoffQ when a cluster event arrived while it was being scheduled
//!   (upstream's `moveRequestCycle`), or when the failure was an error.
//!   Backoff is 1 s doubling per attempt to 10 s
//!   (`podInitialBackoffSeconds`/`podMaxBackoffSeconds`' defaults).
//! - A cluster event that can make pods schedulable moves the pool to
//!   backoffQ (still backing off) or activeQ: sift's plugins are Wasm
//!   components that declare no queueing hints, so every relevant event
//!   moves every pod (upstream's default for a plugin without
//!   `EnqueueExtensions`).
//! - Pods left in the pool 5 minutes are flushed back
//!   (`DefaultPodMaxInUnschedulablePodsDuration`).
//! - Gated pods (`spec.schedulingGates`) wait in the gated pool until an
//!   update removes their gates (the SchedulingGates PreEnqueue); pods
//!   whose preemption is still evicting victims wait in it too
//!   (DefaultPreemption's PreEnqueue).

use crate::simulate::queue::QueueKey;
use k8s_openapi::api::core::v1 as k8s;
use std::collections::{BTreeMap, HashMap};

/// Upstream's defaults, in milliseconds.
pub const INITIAL_BACKOFF_MS: u64 = 1_000;
pub const MAX_BACKOFF_MS: u64 = 10_000;
pub const MAX_UNSCHEDULABLE_MS: u64 = 5 * 60 * 1_000;

/// A queued pod and its scheduling history.
#[derive(Clone, Debug)]
pub struct QueuedPod {
    pub pod: k8s::Pod,
    pub key: QueueKey,
    /// Failed attempts (upstream's `UnschedulableCount`).
    pub attempts: u32,
    /// Consecutive attempts that ended in an error.
    pub errors: u32,
    /// When its last attempt failed.
    pub failed_at: u64,
    /// When it was first queued, for the scheduling SLI.
    pub first_queued: u64,
    /// The queue's cycle when it was popped.
    pub popped_cycle: u64,
}

impl QueuedPod {
    fn backoff_ms(&self) -> u64 {
        let n = if self.errors > 0 {
            self.errors
        } else {
            self.attempts
        };
        if n == 0 {
            return 0;
        }
        INITIAL_BACKOFF_MS
            .saturating_mul(1u64 << (n - 1).min(20))
            .min(MAX_BACKOFF_MS)
    }

    fn backoff_until(&self) -> u64 {
        self.failed_at + self.backoff_ms()
    }
}

/// How an attempt ended, for where the pod waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No node fits: wait for a cluster change.
    Unschedulable,
    /// An error (plugin, API): retry after backoff.
    Error,
}

/// Which pool a queued pod is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pool {
    Active,
    Backoff,
    Unschedulable,
    Gated,
    /// Held by [`Queue::hold`]: its own updates do not release it.
    Held,
}

#[derive(Default)]
pub struct Queue {
    active: BTreeMap<QueueKey, QueuedPod>,
    /// By (backoff expiry, key).
    backoff: BTreeMap<(u64, String), QueuedPod>,
    unschedulable: HashMap<String, QueuedPod>,
    gated: HashMap<String, QueuedPod>,
    held: HashMap<String, QueuedPod>,
    pools: HashMap<String, Pool>,
    /// Pops so far.
    cycle: u64,
    /// The cycle of the last move event.
    move_cycle: u64,
}

/// Pods waiting in each pool, as `scheduler_pending_pods{queue}` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub active: usize,
    pub backoff: usize,
    pub unschedulable: usize,
    pub gated: usize,
}

/// Whether an update changed what scheduling reads: the spec, labels or
/// annotations (not the status, nor the resourceVersion).
fn scheduling_changed(old: Option<&QueuedPod>, new: &k8s::Pod) -> bool {
    let Some(old) = old.map(|e| &e.pod) else {
        return true;
    };
    old.spec != new.spec
        || old.metadata.labels != new.metadata.labels
        || old.metadata.annotations != new.metadata.annotations
}

fn gated(pod: &k8s::Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|g| !g.is_empty())
}

impl Queue {
    pub fn new() -> Queue {
        Queue::default()
    }

    /// A pending pod arrived, or changed. A new pod enters activeQ (or the
    /// gated pool) at `now`; a queued one is updated in place, and a gated
    /// one whose gates are gone moves to activeQ.
    pub fn add_or_update(&mut self, pod: k8s::Pod, key: QueueKey, now: u64) {
        let name = key.key().to_string();
        match self.pools.get(&name).copied() {
            None => {
                let entry = QueuedPod {
                    pod,
                    key,
                    attempts: 0,
                    errors: 0,
                    failed_at: now,
                    first_queued: now,
                    popped_cycle: 0,
                };
                if gated(&entry.pod) {
                    self.put(Pool::Gated, entry);
                } else {
                    self.put(Pool::Active, entry);
                }
            }
            Some(Pool::Held) => {
                if let Some(entry) = self.held.get_mut(&name) {
                    entry.pod = pod;
                }
            }
            Some(pool) if !scheduling_changed(self.get(pool, &name), &pod) => {
                // Only its status changed (our own condition patch, say):
                // nothing that can make it schedulable (upstream's
                // `isPodUpdated` ignores status).
                if let Some(entry) = self.get_mut(pool, &name) {
                    entry.pod = pod;
                }
            }
            Some(_) => {
                let Some(mut entry) = self.take(&name) else {
                    return;
                };
                let was_gated = gated(&entry.pod);
                entry.pod = pod;
                if gated(&entry.pod) {
                    self.put(Pool::Gated, entry);
                } else if was_gated {
                    entry.key = entry.key.requeued(now);
                    self.put(Pool::Active, entry);
                } else {
                    // An update may make it schedulable: upstream runs
                    // the pod's own update hints; sift retries it.
                    self.requeue(entry, now);
                }
            }
        }
    }

    /// The next pod to schedule (highest PrioritySort first).
    pub fn pop(&mut self) -> Option<QueuedPod> {
        let (_, mut entry) = self.active.pop_first()?;
        self.pools.remove(entry.key.key());
        self.cycle += 1;
        entry.popped_cycle = self.cycle;
        Some(entry)
    }

    /// A popped pod's attempt failed at `now`.
    pub fn failed(&mut self, mut entry: QueuedPod, failure: Failure, now: u64) {
        entry.failed_at = now;
        entry.key = entry.key.requeued(now);
        match failure {
            Failure::Error => {
                entry.errors += 1;
                self.put(Pool::Backoff, entry);
            }
            Failure::Unschedulable => {
                entry.errors = 0;
                entry.attempts += 1;
                // An event while it was in flight may have made room.
                if self.move_cycle >= entry.popped_cycle {
                    self.put(Pool::Backoff, entry);
                } else {
                    self.put(Pool::Unschedulable, entry);
                }
            }
        }
    }

    /// A popped pod waits, out of activeQ, until [`Queue::release`]
    /// (its preemption's victims are leaving).
    pub fn hold(&mut self, mut entry: QueuedPod, now: u64) {
        entry.failed_at = now;
        entry.attempts += 1;
        entry.key = entry.key.requeued(now);
        self.put(Pool::Held, entry);
    }

    /// A held pod goes back to activeQ.
    pub fn release(&mut self, key: &str, now: u64) {
        if self.pools.get(key) == Some(&Pool::Held)
            && let Some(mut entry) = self.take(key)
        {
            if gated(&entry.pod) {
                self.put(Pool::Gated, entry);
            } else {
                entry.key = entry.key.requeued(now);
                self.put(Pool::Active, entry);
            }
        }
    }

    /// A cluster event that can make pods schedulable: every
    /// unschedulable pod moves to backoffQ or activeQ.
    pub fn move_all(&mut self, now: u64) {
        self.move_cycle = self.cycle;
        let keys: Vec<String> = self.unschedulable.keys().cloned().collect();
        for key in keys {
            if let Some(entry) = self.unschedulable.remove(&key) {
                self.pools.remove(&key);
                self.requeue(entry, now);
            }
        }
    }

    /// Moves what is due at `now`: backoffQ pods whose backoff ended, and
    /// pods unschedulable for 5 minutes.
    pub fn flush(&mut self, now: u64) {
        while let Some(((until, _), _)) = self.backoff.first_key_value() {
            if *until > now {
                break;
            }
            let Some((_, entry)) = self.backoff.pop_first() else {
                break;
            };
            self.pools.remove(entry.key.key());
            self.put(Pool::Active, entry);
        }
        let stale: Vec<String> = self
            .unschedulable
            .iter()
            .filter(|(_, e)| e.failed_at + MAX_UNSCHEDULABLE_MS <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in stale {
            if let Some(entry) = self.unschedulable.remove(&key) {
                self.pools.remove(&key);
                self.requeue(entry, now);
            }
        }
    }

    /// When [`Queue::flush`] next has something to do.
    pub fn next_due(&self) -> Option<u64> {
        let backoff = self.backoff.first_key_value().map(|((t, _), _)| *t);
        let stale = self
            .unschedulable
            .values()
            .map(|e| e.failed_at + MAX_UNSCHEDULABLE_MS)
            .min();
        match (backoff, stale) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes a pod (deleted, or bound by someone else); whether it was
    /// queued.
    pub fn remove(&mut self, key: &str) -> bool {
        self.take(key).is_some()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.pools.contains_key(key)
    }

    pub fn pending(&self) -> Pending {
        Pending {
            active: self.active.len(),
            backoff: self.backoff.len(),
            unschedulable: self.unschedulable.len(),
            gated: self.gated.len() + self.held.len(),
        }
    }

    fn get(&self, pool: Pool, key: &str) -> Option<&QueuedPod> {
        match pool {
            Pool::Active => self.active.values().find(|e| e.key.key() == key),
            Pool::Backoff => self.backoff.values().find(|e| e.key.key() == key),
            Pool::Unschedulable => self.unschedulable.get(key),
            Pool::Gated => self.gated.get(key),
            Pool::Held => self.held.get(key),
        }
    }

    fn get_mut(&mut self, pool: Pool, key: &str) -> Option<&mut QueuedPod> {
        match pool {
            Pool::Active => self.active.values_mut().find(|e| e.key.key() == key),
            Pool::Backoff => self.backoff.values_mut().find(|e| e.key.key() == key),
            Pool::Unschedulable => self.unschedulable.get_mut(key),
            Pool::Gated => self.gated.get_mut(key),
            Pool::Held => self.held.get_mut(key),
        }
    }

    /// To backoffQ if still backing off, else activeQ.
    fn requeue(&mut self, entry: QueuedPod, now: u64) {
        if entry.backoff_until() > now {
            self.put(Pool::Backoff, entry);
        } else {
            self.put(Pool::Active, entry);
        }
    }

    fn put(&mut self, pool: Pool, entry: QueuedPod) {
        let key = entry.key.key().to_string();
        self.pools.insert(key.clone(), pool);
        match pool {
            Pool::Active => {
                self.active.insert(entry.key.clone(), entry);
            }
            Pool::Backoff => {
                self.backoff.insert((entry.backoff_until(), key), entry);
            }
            Pool::Unschedulable => {
                self.unschedulable.insert(key, entry);
            }
            Pool::Gated => {
                self.gated.insert(key, entry);
            }
            Pool::Held => {
                self.held.insert(key, entry);
            }
        }
    }

    fn take(&mut self, key: &str) -> Option<QueuedPod> {
        match self.pools.remove(key)? {
            Pool::Active => {
                let k = self.active.keys().find(|k| k.key() == key)?.clone();
                self.active.remove(&k)
            }
            Pool::Backoff => {
                let k = self.backoff.keys().find(|(_, k)| k == key)?.clone();
                self.backoff.remove(&k)
            }
            Pool::Unschedulable => self.unschedulable.remove(key),
            Pool::Gated => self.gated.remove(key),
            Pool::Held => self.held.remove(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, gates: bool) -> k8s::Pod {
        let mut v = serde_json::json!({
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": []}
        });
        if gates {
            v["spec"]["schedulingGates"] = serde_json::json!([{"name": "wait"}]);
        }
        serde_json::from_value(v).unwrap()
    }

    fn add(q: &mut Queue, name: &str, priority: i32, now: u64) {
        let key = QueueKey::new(priority, now, String::new(), format!("ns/{name}"));
        q.add_or_update(pod(name, false), key, now);
    }

    #[test]
    fn active_pops_by_priority_then_arrival() {
        let mut q = Queue::new();
        add(&mut q, "low", 0, 0);
        add(&mut q, "high", 10, 5);
        add(&mut q, "low2", 0, 1);
        let order: Vec<String> =
            std::iter::from_fn(|| q.pop().map(|e| e.key.key().to_string())).collect();
        assert_eq!(order, ["ns/high", "ns/low", "ns/low2"]);
    }

    #[test]
    fn backoff_doubles_from_one_second_to_ten() {
        let mut q = Queue::new();
        add(&mut q, "a", 0, 0);
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..6 {
            let e = q.pop().unwrap();
            q.failed(e, Failure::Error, now);
            let due = q.next_due().unwrap();
            waits.push(due - now);
            q.flush(due - 1);
            assert!(q.pop().is_none(), "not before its backoff ends");
            q.flush(due);
            now = due;
        }
        assert_eq!(waits, [1000, 2000, 4000, 8000, 10000, 10000]);
    }

    #[test]
    fn unschedulable_pods_wait_for_an_event_or_five_minutes() {
        let mut q = Queue::new();
        add(&mut q, "a", 0, 0);
        let e = q.pop().unwrap();
        q.failed(e, Failure::Unschedulable, 100);
        q.flush(100_000);
        assert!(q.pop().is_none(), "an unschedulable pod waits for an event");
        assert_eq!(q.pending().unschedulable, 1);
        // An event moves it: its 1 s backoff ended long ago.
        q.move_all(100_000);
        assert_eq!(q.pop().unwrap().key.key(), "ns/a");
        // Failed again, no event: flushed after five minutes.
        let e = QueuedPod {
            popped_cycle: q.cycle,
            ..q_entry("b")
        };
        q.failed(e, Failure::Unschedulable, 200_000);
        q.flush(200_000 + MAX_UNSCHEDULABLE_MS - 1);
        assert!(q.pop().is_none());
        q.flush(200_000 + MAX_UNSCHEDULABLE_MS);
        assert_eq!(q.pop().unwrap().key.key(), "ns/b");
    }

    fn q_entry(name: &str) -> QueuedPod {
        QueuedPod {
            pod: pod(name, false),
            key: QueueKey::new(0, 0, String::new(), format!("ns/{name}")),
            attempts: 0,
            errors: 0,
            failed_at: 0,
            first_queued: 0,
            popped_cycle: 0,
        }
    }

    #[test]
    fn an_event_during_the_attempt_sends_the_pod_to_backoff_not_the_pool() {
        let mut q = Queue::new();
        add(&mut q, "a", 0, 0);
        let e = q.pop().unwrap();
        q.move_all(10);
        q.failed(e, Failure::Unschedulable, 20);
        assert_eq!(q.pending().backoff, 1);
        q.flush(20 + INITIAL_BACKOFF_MS);
        assert_eq!(q.pop().unwrap().key.key(), "ns/a");
    }

    #[test]
    fn gated_pods_wait_until_an_update_removes_their_gates() {
        let mut q = Queue::new();
        let key = QueueKey::new(0, 0, String::new(), "ns/g".into());
        q.add_or_update(pod("g", true), key.clone(), 0);
        q.move_all(1);
        q.flush(u64::MAX / 2);
        assert!(q.pop().is_none());
        assert_eq!(q.pending().gated, 1);
        q.add_or_update(pod("g", false), key, 5);
        assert_eq!(q.pop().unwrap().key.key(), "ns/g");
        assert!(!q.contains("ns/g"));
    }

    #[test]
    fn a_held_pod_stays_out_of_activeq_through_its_own_updates_until_released() {
        let mut q = Queue::new();
        add(&mut q, "p", 0, 0);
        let e = q.pop().unwrap();
        q.hold(e, 10);
        let key = QueueKey::new(0, 20, String::new(), "ns/p".into());
        q.add_or_update(pod("p", false), key, 20);
        q.move_all(30);
        q.flush(u64::MAX / 2);
        assert!(
            q.pop().is_none(),
            "held through an update, a move and a flush"
        );
        assert_eq!(q.pending().gated, 1);
        q.release("ns/p", 40);
        assert_eq!(q.pop().unwrap().key.key(), "ns/p");
    }

    #[test]
    fn a_status_only_update_leaves_an_unschedulable_pod_waiting() {
        let mut q = Queue::new();
        add(&mut q, "p", 0, 0);
        let e = q.pop().unwrap();
        q.failed(e, Failure::Unschedulable, 10);
        let mut updated = pod("p", false);
        updated.status = Some(k8s::PodStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
        let key = QueueKey::new(0, 20, String::new(), "ns/p".into());
        q.add_or_update(updated, key.clone(), 20_000);
        assert_eq!(q.pending().unschedulable, 1);
        assert!(q.pop().is_none());
        let mut relabeled = pod("p", false);
        relabeled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
        q.add_or_update(relabeled, key, 20_000);
        assert_eq!(
            q.pop().unwrap().key.key(),
            "ns/p",
            "a label change retries it"
        );
    }

    #[test]
    fn removed_pods_leave_every_pool() {
        let mut q = Queue::new();
        add(&mut q, "a", 0, 0);
        add(&mut q, "b", 0, 0);
        let e = q.pop().unwrap();
        q.failed(e, Failure::Error, 0);
        assert!(q.remove("ns/a") && q.remove("ns/b"));
        assert!(!q.remove("ns/a"));
        assert_eq!(q.pending(), Pending::default());
        assert_eq!(q.next_due(), None);
    }
}
