//! How workload events change the cache (Volcano's cache event handlers,
//! `AddPod` and `DeletePod`): a pending pod becomes a task of its job, a
//! placed one holds its node, a departure frees what it held.

use super::super::job::TaskStatus;
use super::intake::status_of;
use super::world::World;
use crate::cluster::ClusterState;
use crate::input::kube;
use crate::input::workload::EventType;
use crate::simulate::clock::Clock;
use crate::simulate::held;
use crate::simulate::report::Tracker;
use anyhow::Result;
use k8s_openapi::api::core::v1 as k8s;

impl World {
    /// Applies the events due by `now_ms`, each at its own time (between
    /// sessions, as informers deliver them); true when there was any.
    pub fn apply_due(
        &mut self,
        events: &mut dyn Clock,
        now_ms: u64,
        cluster: &mut ClusterState,
        tracker: &mut Tracker,
    ) -> Result<bool> {
        let mut changed = false;
        while let Some(t) = events.next_instant()?
            && t.saturating_mul(1000) <= now_ms
        {
            let Some(event) = events.next_event_at(t)? else {
                break;
            };
            changed = true;
            let now = event.time.unwrap_or(0);
            let key = kube::pod_key(&event.object);
            match event.kind {
                EventType::Added => {
                    let origin = events.origin();
                    self.pod_added(&event.object, key, now, &origin, cluster, tracker)?
                }
                EventType::Deleted => self.pod_deleted(&key, now, cluster, tracker),
            }
        }
        Ok(changed)
    }

    /// A pod arrived: a placed one holds its node (and is a task when
    /// batch mode owns it); a pending one of ours is a task, or stranded
    /// when its PodGroup or queue is missing.
    pub(super) fn pod_added(
        &mut self,
        pod: &k8s::Pod,
        key: String,
        now: u64,
        origin: &str,
        cluster: &mut ClusterState,
        tracker: &mut Tracker,
    ) -> Result<()> {
        let status = status_of(pod);
        if status != TaskStatus::Pending {
            // Whoever's it is, it holds its node: the report counts it, so
            // its departure frees what it held.
            if kube::bound_node(pod).is_some() && kube::pod_is_active(pod) {
                cluster.upsert_pod(pod)?;
                tracker.bound_from_input(cluster, &key, origin);
            }
            if self.intake.owns_placed(pod) {
                let _ = self.add(pod, status);
            }
            return Ok(());
        }
        if let Some(why) = self.intake.skips_pending(pod) {
            tracker.skipped(why);
            return Ok(());
        }
        tracker.arrived(&key, now);
        if let Err(why) = self.add(pod, status) {
            let requests = kube::pod(pod).ok().map(|p| p.requests);
            tracker.failed(&key, requests.as_ref(), why, None);
            self.stranded.insert(key);
        }
        Ok(())
    }

    /// A pod left: a task leaves its job, a bound pod frees its node.
    pub(super) fn pod_deleted(
        &mut self,
        key: &str,
        now: u64,
        cluster: &mut ClusterState,
        tracker: &mut Tracker,
    ) {
        if self.stranded.remove(key) {
            tracker.departed(key, now, None);
            return;
        }
        let removed = self.tasks.remove(key);
        if let Some(rec) = &removed {
            self.left(&rec.group);
        }
        if removed.is_some_and(|rec| rec.status == TaskStatus::Pending) {
            tracker.departed(key, now, None);
            return;
        }
        if cluster.bound_requests(key).is_some() {
            let requests = held(cluster, key);
            cluster.remove_pod_key(key);
            tracker.departed(key, now, requests.as_ref());
        }
    }
}
