//! The cache fed by an API server's watch (`sift schedule --mode batch`),
//! where a workload only adds and deletes pods: objects change, and arrive
//! in any order (a PodGroup may come after its pods, as Volcano's
//! informers deliver them).
//!
//! An update of a task the cache holds as allocated but whose pod shows
//! no node yet is ignored, as Volcano's `updatePod` ignores it while the
//! bind is in flight; the update that shows the node confirms it.

use super::super::job::TaskStatus;
use super::group::GroupRec;
use super::intake::status_of;
use super::queue::queue_info;
use super::world::World;
use crate::cluster::ClusterState;
use crate::input::kube;
use crate::input::volcano::{PodGroup, Queue};
use crate::simulate::report::{GroupCondition, Tracker};
use anyhow::Result;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use std::sync::Arc;

/// What Volcano's job updater writes on a PodGroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupStatus {
    pub phase: String,
    pub condition: Option<GroupCondition>,
    pub running: usize,
    pub succeeded: usize,
    pub failed: usize,
    /// The event the cache records for a job left waiting.
    pub event: Option<String>,
}

impl World {
    /// A pod added or changed on the API server.
    pub fn pod_upserted(
        &mut self,
        pod: &k8s::Pod,
        cluster: &mut ClusterState,
        tracker: &mut Tracker,
    ) -> Result<()> {
        let key = kube::pod_key(pod);
        if let Some(rec) = self.tasks.get_mut(&key) {
            let status = status_of(pod);
            rec.object = Arc::new(pod.clone());
            if status != TaskStatus::Pending {
                rec.status = status;
                rec.node = kube::bound_node(pod).map(Arc::from);
                if kube::pod_is_active(pod) {
                    cluster.upsert_pod(pod)?;
                }
            }
            return Ok(());
        }
        self.stranded.remove(&key);
        self.pod_added(pod, key, 0, "the API server", cluster, tracker)
    }

    /// A pod deleted on the API server.
    pub fn pod_removed(&mut self, key: &str, cluster: &mut ClusterState, tracker: &mut Tracker) {
        self.pod_deleted(key, 0, cluster, tracker);
    }

    /// Whether a pod waits for a PodGroup or queue the cache lacks.
    pub fn is_stranded(&self, key: &str) -> bool {
        self.stranded.contains(key)
    }

    /// A bind that failed: the task waits again and its node forgets it
    /// (Volcano's `resyncTask` reads the pod back as pending).
    pub fn unbind(&mut self, key: &str, cluster: &mut ClusterState) {
        if let Some(rec) = self.tasks.get_mut(key)
            && rec.status.allocated()
        {
            rec.status = TaskStatus::Pending;
            rec.node = None;
            cluster.remove_pod_key(key);
        }
    }

    /// A node was added, changed or removed: the cluster's total
    /// (proportion's base) is computed again at the next session.
    pub fn nodes_changed(&mut self) {
        self.total = Default::default();
    }

    pub fn upsert_group(&mut self, pg: PodGroup) {
        let key = pg.key();
        match self.groups.get_mut(&key) {
            Some(g) => g.pg = pg,
            None => {
                self.groups.insert(key, GroupRec::new(pg, false));
            }
        }
    }

    pub fn remove_group(&mut self, key: &str) {
        if self.groups.get(key).is_some_and(|g| g.members == 0) {
            self.groups.remove(key);
        }
    }

    pub fn upsert_queue(&mut self, q: &Queue) -> Result<()> {
        let info = queue_info(q)?;
        match self.queues.iter_mut().find(|x| x.name == info.name) {
            Some(existing) => *existing = info,
            None => self.queues.push(info),
        }
        Ok(())
    }

    pub fn upsert_priority_class(&mut self, pc: &PriorityClass) {
        let name = pc.metadata.name.clone().unwrap_or_default();
        self.classes.insert(name, pc.value);
        if pc.global_default == Some(true) {
            self.default_priority = pc.value;
            self.has_global_default = true;
        }
    }

    pub fn remove_priority_class(&mut self, name: &str) {
        self.classes.remove(name);
    }

    /// The status a PodGroup (not one the controller would make for a
    /// lone pod) carries after the last close.
    pub fn group_status(&self, key: &str) -> Option<GroupStatus> {
        let g = self.groups.get(key).filter(|g| !g.shadow)?;
        let (mut running, mut succeeded, mut failed) = (0, 0, 0);
        for t in self.tasks.values().filter(|t| t.group == key) {
            match t.status {
                TaskStatus::Running | TaskStatus::Bound | TaskStatus::Binding => running += 1,
                TaskStatus::Succeeded => succeeded += 1,
                TaskStatus::Failed => failed += 1,
                _ => {}
            }
        }
        Some(GroupStatus {
            phase: if g.phase.is_empty() {
                "Pending".into()
            } else {
                g.phase.clone()
            },
            condition: g.condition.clone(),
            running,
            succeeded,
            failed,
            event: g.event.clone(),
        })
    }

    /// The keys of every PodGroup the cache holds (not the controller's).
    pub fn group_keys(&self) -> Vec<String> {
        self.groups
            .iter()
            .filter(|(_, g)| !g.shadow)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// A task's pod as last seen.
    pub fn task_object(&self, key: &str) -> Option<Arc<k8s::Pod>> {
        self.tasks.get(key).map(|t| t.object.clone())
    }
}
