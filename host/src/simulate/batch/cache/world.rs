//! What persists between sessions (the state of Volcano's
//! `SchedulerCache`): every task of a job, every PodGroup with what the
//! last close wrote on it, the queues and the priority classes. Sessions
//! start from a snapshot of it (`snapshot.rs`) and write back only at
//! close.

use super::super::framework::state::QueueInfo;
use super::super::job::TaskStatus;
use super::super::resource::Res;
use super::group::{self, GroupRec};
use super::intake::{Intake, status_of};
use super::queue::{default_queue, queue_info};
use crate::input::kube;
use crate::input::volcano::{self, PodGroup, Queue};
use crate::simulate::report::GroupOutcome;
use anyhow::Result;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use sift_sdk::Resources;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// What batch mode reads besides the workload.
#[derive(Clone, Debug, Default)]
pub struct BatchInput {
    pub pod_groups: Vec<PodGroup>,
    pub queues: Vec<Queue>,
    pub priority_classes: Vec<PriorityClass>,
    /// Pods bound in the cluster files: running tasks of their jobs.
    pub bound_pods: Vec<k8s::Pod>,
}

/// A task as the cache keeps it between sessions.
pub struct TaskRec {
    pub object: Arc<k8s::Pod>,
    pub requests: Resources,
    /// Volcano's view of `requests` (one pod included).
    pub resreq: Res,
    pub status: TaskStatus,
    pub node: Option<Arc<str>>,
    pub group: String,
}

/// What persists between sessions.
pub struct World {
    pub tasks: BTreeMap<String, TaskRec>,
    pub groups: BTreeMap<String, GroupRec>,
    pub(super) queues: Vec<QueueInfo>,
    pub(super) classes: BTreeMap<String, i32>,
    pub(super) default_priority: i32,
    pub(super) has_global_default: bool,
    /// All nodes' allocatable (`TotalResource`).
    pub(super) total: std::sync::OnceLock<Res>,
    pub(super) intake: Intake,
    /// Pods that can never be scheduled (missing PodGroup or queue).
    pub(super) stranded: HashSet<String>,
}

impl World {
    /// The cache as the input files load it: PodGroups, queues (and
    /// Volcano's `default`), priority classes, and the bound and finished
    /// pods `intake` owns as tasks of their jobs; other bound pods only
    /// hold their nodes' resources (the cluster state has those).
    pub fn new(input: &BatchInput, intake: Intake) -> Result<World> {
        let mut classes = BTreeMap::new();
        let mut default_priority = 0;
        let mut has_global_default = false;
        for pc in &input.priority_classes {
            let name = pc.metadata.name.clone().unwrap_or_default();
            classes.insert(name, pc.value);
            if pc.global_default == Some(true) {
                default_priority = pc.value;
                has_global_default = true;
            }
        }
        let mut queues: Vec<QueueInfo> =
            input.queues.iter().map(queue_info).collect::<Result<_>>()?;
        if !queues.iter().any(|q| q.name == volcano::DEFAULT_QUEUE) {
            queues.push(default_queue());
        }
        let groups = input
            .pod_groups
            .iter()
            .map(|pg| (pg.key(), GroupRec::new(pg.clone(), false)))
            .collect();
        let mut world = World {
            tasks: BTreeMap::new(),
            groups,
            queues,
            classes,
            default_priority,
            has_global_default,
            total: Default::default(),
            intake,
            stranded: HashSet::new(),
        };
        for pod in &input.bound_pods {
            if world.intake.owns_placed(pod) {
                let _ = world.add(pod, status_of(pod));
            }
        }
        Ok(world)
    }

    /// The job a pod belongs to, creating a job of one for a pod without
    /// a group; `Err` says why the pod can never be scheduled.
    fn group_of(&mut self, pod: &k8s::Pod) -> Result<String, String> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let named = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(volcano::GROUP_NAME_ANNOTATION))
            .filter(|g| !g.is_empty());
        let key = match named {
            Some(g) => {
                let key = format!("{ns}/{g}");
                if !self.groups.contains_key(&key) {
                    return Err(format!(
                        "PodGroup {key} (annotation {}) is not in the input: Volcano does not schedule pods of a missing PodGroup",
                        volcano::GROUP_NAME_ANNOTATION
                    ));
                }
                key
            }
            None => {
                let name = group::controller_group_name(pod);
                let key = format!("{ns}/{name}");
                if !self.groups.contains_key(&key) {
                    let pg = group::controller_group(pod, ns, name);
                    self.groups.insert(key.clone(), GroupRec::new(pg, true));
                }
                key
            }
        };
        let queue = self.groups[&key].pg.queue().to_string();
        if !self.queues.iter().any(|q| q.name == queue) {
            return Err(format!(
                "queue {queue:?} of PodGroup {key} is not in the input: Volcano does not schedule jobs of a missing queue"
            ));
        }
        Ok(key)
    }

    /// A pod becomes a task of its job (replacing a task of the same key);
    /// `Err` says why it can never be scheduled.
    pub(super) fn add(&mut self, pod: &k8s::Pod, status: TaskStatus) -> Result<(), String> {
        let model = kube::pod(pod).map_err(|e| format!("{e:#}"))?;
        let group = self.group_of(pod)?;
        let node = kube::bound_node(pod).map(Arc::from);
        if let Some(g) = self.groups.get_mut(&group) {
            g.members += 1;
            g.finished = false;
            g.closed_empty = false;
        }
        let replaced = self.tasks.insert(
            kube::pod_key(pod),
            TaskRec {
                object: Arc::new(pod.clone()),
                resreq: Res::request(&model.requests),
                requests: model.requests,
                status,
                node,
                group,
            },
        );
        if let Some(old) = replaced {
            self.left(&old.group);
        }
        Ok(())
    }

    /// A task left: a group that ran and has no pod left is over; a
    /// PodGroup the controller made for pods goes with its last pod.
    pub(super) fn left(&mut self, group: &str) {
        let Some(g) = self.groups.get_mut(group) else {
            return;
        };
        g.members = g.members.saturating_sub(1);
        if g.members == 0 && g.shadow {
            self.groups.remove(group);
            return;
        }
        if g.members == 0 && g.placed.is_some() {
            g.finished = true;
            g.phase = "Completed".into();
            g.condition = None;
            g.event = None;
        }
    }

    /// A session is due even without events while a task waits.
    pub fn has_pending(&self) -> bool {
        self.tasks.values().any(|t| t.status == TaskStatus::Pending)
    }

    /// Tasks waiting for a node, for the report's samples.
    pub fn pending_count(&self) -> usize {
        self.tasks
            .values()
            .filter(|t| t.status == TaskStatus::Pending)
            .count()
    }

    /// Every PodGroup of the input (not the controller's) as the report
    /// shows it at the end: its tasks, how many are bound, and what the
    /// last close wrote.
    pub fn outcomes(&self) -> Vec<GroupOutcome> {
        // (tasks, bound) per group.
        let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for t in self.tasks.values() {
            let c = counts.entry(t.group.as_str()).or_default();
            c.0 += 1;
            if t.status.allocated() {
                c.1 += 1;
            }
        }
        self.groups
            .iter()
            .filter(|(_, g)| !g.shadow)
            .map(|(key, g)| {
                let (tasks, bound) = counts.get(key.as_str()).copied().unwrap_or_default();
                GroupOutcome {
                    group: key.clone(),
                    queue: g.pg.queue().to_string(),
                    min_member: g.pg.min_member(),
                    tasks,
                    bound,
                    phase: g.phase.clone(),
                    placed: g.placed,
                    discarded: g.discarded,
                    condition: g.condition.clone(),
                    event: g.event.clone(),
                }
            })
            .collect()
    }
}
