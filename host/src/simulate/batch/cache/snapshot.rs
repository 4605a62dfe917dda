//! The snapshot a session opens on (Volcano's `SchedulerCache.Snapshot`):
//! jobs and tasks as the session's indexed [`State`], built fresh each
//! session so that nothing a session tries outlives it unless close
//! writes it back.

use super::super::framework::state::State;
use super::super::job::{Job, Task};
use super::super::resource::Res;
use super::group::GroupRec;
use super::world::{TaskRec, World};
use crate::cluster::ClusterState;
use crate::input::volcano;
use k8s_openapi::api::core::v1 as k8s;
use std::collections::{BTreeMap, HashMap};

impl World {
    /// The session's snapshot of jobs, tasks and queues.
    pub fn state(&self, cluster: &mut ClusterState) -> State {
        // Nodes never change in a workload: their total is computed once.
        let total = self
            .total
            .get_or_init(|| {
                let mut total = Res::default();
                for n in cluster.snapshot().nodes() {
                    total.add(&Res::allocatable(&n.allocatable));
                }
                total
            })
            .clone();
        let mut jobs: Vec<Job> = Vec::new();
        let mut job_index: HashMap<&str, usize> = Default::default();
        for (key, g) in &self.groups {
            // Volcano's snapshot leaves out jobs of missing queues.
            if g.finished || !self.queues.iter().any(|q| q.name == g.pg.queue()) {
                continue;
            }
            job_index.insert(key, jobs.len());
            jobs.push(self.job(key, g));
        }
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for (key, rec) in &self.tasks {
            let Some(&j) = job_index.get(rec.group.as_str()) else {
                continue;
            };
            jobs[j].tasks.push(tasks.len());
            tasks.push(self.task(key, rec, j));
        }
        State {
            tasks,
            jobs,
            queues: self.queues.clone(),
            total,
        }
    }

    /// A PodGroup as a job without tasks (`NewJobInfo`).
    fn job(&self, key: &str, g: &GroupRec) -> Job {
        let (ns, name) = key.split_once('/').unwrap_or(("default", key));
        let task_min: BTreeMap<String, i32> = g.pg.spec.min_task_member.clone();
        Job {
            uid: key.to_string(),
            name: name.to_string(),
            namespace: ns.to_string(),
            queue: g.pg.queue().to_string(),
            min_available: g.pg.min_member(),
            task_min_total: task_min.values().sum(),
            task_min,
            priority: self.class_value(g.pg.spec.priority_class_name.as_deref()),
            created: g.pg.metadata.creation_timestamp.as_ref().map(|t| t.0),
            phase: g.phase.clone(),
            tasks: Vec::new(),
            fit_errors: BTreeMap::new(),
            queue_hold: Default::default(),
        }
    }

    /// A task of job `j` (`NewTaskInfo`).
    fn task(&self, key: &str, rec: &TaskRec, j: usize) -> Task {
        let pod = &rec.object;
        let spec = pod.spec.as_ref();
        let priority = self.task_priority(pod);
        let name = pod.metadata.name.clone().unwrap_or_default();
        let namespace = pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let resreq = rec.resreq.clone();
        Task {
            key: key.to_string(),
            uid: pod
                .metadata
                .uid
                .clone()
                .unwrap_or_else(|| format!("{namespace}-{name}")),
            name,
            namespace,
            created: pod.metadata.creation_timestamp.as_ref().map(|t| t.0),
            role: role_of(pod),
            gated: spec
                .and_then(|s| s.scheduling_gates.as_ref())
                .is_some_and(|g| !g.is_empty()),
            priority,
            best_effort: resreq.is_empty(),
            resreq,
            status: rec.status,
            node: rec.node.clone(),
            last: None,
            object: rec.object.clone(),
            job: j,
        }
    }

    /// A job's priority: its PriorityClass's value, else the global
    /// default's (0 without one).
    fn class_value(&self, name: Option<&str>) -> i32 {
        name.and_then(|n| self.classes.get(n).copied())
            .unwrap_or(self.default_priority)
    }

    /// A task's priority (`NewTaskInfo`): the `volcano.sh/task-priority`
    /// annotation, else `spec.priority`, else what admission would have set
    /// from the PriorityClasses given, else Volcano's default of 1.
    fn task_priority(&self, pod: &k8s::Pod) -> i32 {
        if let Some(p) = pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(volcano::TASK_PRIORITY_ANNOTATION))
            .and_then(|v| v.parse::<i32>().ok())
        {
            return p;
        }
        let spec = pod.spec.as_ref();
        if let Some(p) = spec.and_then(|s| s.priority) {
            return p;
        }
        let class = spec.and_then(|s| s.priority_class_name.as_deref());
        match class.and_then(|c| self.classes.get(c)) {
            Some(v) => *v,
            None if self.has_global_default => self.default_priority,
            None => 1,
        }
    }
}

/// A task's role in its job (`volcano.sh/task-spec`, annotation before
/// label), empty when none.
fn role_of(pod: &k8s::Pod) -> String {
    let from = |m: &Option<BTreeMap<String, String>>| {
        m.as_ref()
            .and_then(|m| m.get(volcano::TASK_SPEC_KEY))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    from(&pod.metadata.annotations)
        .or_else(|| from(&pod.metadata.labels))
        .unwrap_or_default()
}
