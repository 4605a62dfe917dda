//! `sift simulate --mode batch`: Volcano's scheduler (v1.11; kube-batch
//! v0.5 before it) over the same workload, clock, cluster state and
//! report as the scheduler mode.
//!
//! Every `schedulePeriod` of simulated time a **session** opens over the
//! cluster as it is: jobs (PodGroups; a pod without
//! `scheduling.k8s.io/group-name` is a job of one), their tasks (pods),
//! queues and nodes ([`framework`]). The configured **actions** run in order
//! ([`actions`]): `allocate` places whole gangs or nothing, `backfill`
//! places best-effort pods. The **plugins** of the tiers order queues,
//! jobs and tasks and judge jobs ([`plugins`]); `predicates` runs sift's
//! filter plugins after the idle-resource check ([`idle_fit`]),
//! `nodeorder` its score plugins. At close, gang writes each PodGroup's
//! condition, the job's phase follows, and pods not bound carry Volcano's
//! message.
//!
//! Where kube-batch v0.5 and Volcano differ, sift follows Volcano: v0.5
//! has no Statement, so a gang that never becomes ready keeps its
//! tentative placements (hiding capacity) for the rest of the session;
//! here they are discarded at once. Deterministic rules where upstream is
//! random: ties between best nodes go to the first in node order (or a
//! seeded choice), the predicate scan order is the node order, and the
//! "origin" task of a FitError is the first by name. Sessions in which
//! nothing could change (no arrival or departure since a session that
//! bound nothing) are skipped: upstream they would only advance the
//! predicate scan's start node.

pub mod actions;
pub mod error_cache;
pub mod framework;
pub mod idle_fit;
pub mod job;
pub mod node_rule;
pub mod plugins;
pub mod pod_number;
pub mod predicates;
pub mod resource;

pub use predicates::{Schedulers, schedulers};

use super::Progress;
use super::report::{GroupCondition, GroupOutcome, Outputs, QueueSample, Report, Tracker};
use crate::cluster::ClusterState;
use crate::config::batch::Session as SessionConfig;
use crate::input::kube;
use crate::input::volcano::{self, PodGroup, Queue};
use crate::input::workload::{EventType, Events};
use anyhow::{Context, Result};
use framework::plugin::JobCondition;
use framework::registry::Registry;
use framework::session::Session;
use framework::state::{QueueInfo, State};
use job::{Job, Task, TaskStatus};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use resource::Res;
use sift_sdk::Resources;
use std::collections::BTreeMap;
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

/// How the loop runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop after this many sessions (upstream's unit tests run one).
    pub max_sessions: Option<u32>,
    /// Only pods with this `spec.schedulerName`; by default pods of
    /// `default-scheduler`, `volcano` and `kube-batch` are taken.
    pub scheduler_name: Option<String>,
}

/// Scheduler names batch mode takes when none is configured.
const BATCH_SCHEDULERS: [&str; 3] = [kube::DEFAULT_SCHEDULER_NAME, "volcano", "kube-batch"];

/// Which pods are batch mode's.
struct Intake {
    scheduler_name: Option<String>,
}

impl Intake {
    /// A pending pod is scheduled when its `spec.schedulerName` is the
    /// configured one, or (none configured) `volcano`, `kube-batch` or
    /// `default-scheduler` (so kubectl dumps and traces need no edit).
    /// Pods with scheduling gates are tasks too; allocate skips them.
    fn skips_pending(&self, pod: &k8s::Pod) -> Option<kube::SkipReason> {
        let name = kube::scheduler_name(pod);
        let ours = match &self.scheduler_name {
            Some(n) => name == n,
            None => BATCH_SCHEDULERS.contains(&name),
        };
        match kube::not_for_scheduler(pod, name) {
            Some(kube::SkipReason::Gated) | None if ours => None,
            Some(why) => Some(why),
            None => Some(kube::SkipReason::OtherScheduler),
        }
    }

    /// A placed (or finished) pod is a task of a job when it names a
    /// PodGroup or a batch scheduler: Volcano never makes jobs of other
    /// schedulers' pods (kube-system's, say), which only hold resources.
    fn owns_placed(&self, pod: &k8s::Pod) -> bool {
        let grouped = pod
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(volcano::GROUP_NAME_ANNOTATION));
        let name = kube::scheduler_name(pod);
        grouped
            || match &self.scheduler_name {
                Some(n) => name == n,
                None => name == "volcano" || name == "kube-batch",
            }
    }
}

/// A pod's task status (Volcano's `getTaskStatus`, without the
/// terminating states sift does not model).
fn status_of(pod: &k8s::Pod) -> TaskStatus {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    match phase {
        Some("Succeeded") => TaskStatus::Succeeded,
        Some("Failed") => TaskStatus::Failed,
        Some("Running") if kube::bound_node(pod).is_some() => TaskStatus::Running,
        _ if kube::bound_node(pod).is_some() => TaskStatus::Bound,
        _ => TaskStatus::Pending,
    }
}

struct TaskRec {
    object: Arc<k8s::Pod>,
    requests: Resources,
    /// Volcano's view of `requests` (one pod included).
    resreq: Res,
    status: TaskStatus,
    node: Option<Arc<str>>,
    group: String,
}

struct GroupRec {
    pg: PodGroup,
    /// A job of one for a pod without a group: not reported as a group.
    shadow: bool,
    phase: String,
    condition: Option<GroupCondition>,
    event: Option<String>,
    placed: Option<u64>,
    discarded: u32,
    /// Its tasks in the world.
    members: usize,
    /// Closed once with no tasks: later sessions would say the same.
    closed_empty: bool,
    /// Its pods ran and all left: the job is over and the PodGroup leaves
    /// the sessions (phase Completed), as when its job is deleted.
    finished: bool,
}

impl GroupRec {
    /// A PodGroup as the input (or, `shadow`, the controller) made it;
    /// the controller's start Pending.
    fn new(pg: PodGroup, shadow: bool) -> GroupRec {
        let phase = match (&pg.status.phase, shadow) {
            (Some(p), _) => p.clone(),
            (None, true) => "Pending".into(),
            (None, false) => String::new(),
        };
        GroupRec {
            pg,
            shadow,
            phase,
            condition: None,
            event: None,
            placed: None,
            discarded: 0,
            members: 0,
            closed_empty: false,
            finished: false,
        }
    }
}

/// What persists between sessions.
struct World {
    tasks: BTreeMap<String, TaskRec>,
    groups: BTreeMap<String, GroupRec>,
    queues: Vec<QueueInfo>,
    classes: BTreeMap<String, i32>,
    default_priority: i32,
    has_global_default: bool,
    /// All nodes' allocatable (`TotalResource`).
    total: std::sync::OnceLock<Res>,
}

impl World {
    fn new(input: &BatchInput) -> Result<World> {
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
            queues.push(QueueInfo {
                name: volcano::DEFAULT_QUEUE.into(),
                weight: 1,
                priority: 0,
                created: None,
                capability: None,
                guarantee: Res::default(),
            });
        }
        let groups = input
            .pod_groups
            .iter()
            .map(|pg| (pg.key(), GroupRec::new(pg.clone(), false)))
            .collect();
        Ok(World {
            tasks: BTreeMap::new(),
            groups,
            queues,
            classes,
            default_priority,
            has_global_default,
            total: Default::default(),
        })
    }

    fn class_value(&self, name: Option<&str>) -> i32 {
        name.and_then(|n| self.classes.get(n).copied())
            .unwrap_or(self.default_priority)
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
                // Volcano's PodGroup controller: one PodGroup per
                // controller (`podgroup-<owner uid>`), else per pod, with
                // minMember 1 and the pod's queue annotation.
                let id = pod
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .find(|o| o.controller == Some(true))
                    .map(|o| o.uid.clone())
                    .or_else(|| pod.metadata.uid.clone())
                    .unwrap_or_else(|| pod.metadata.name.clone().unwrap_or_default());
                let key = format!("{ns}/podgroup-{id}");
                if !self.groups.contains_key(&key) {
                    let mut pg = PodGroup::default();
                    pg.metadata.name = Some(format!("podgroup-{id}"));
                    pg.metadata.namespace = Some(ns.to_string());
                    pg.metadata.creation_timestamp = pod.metadata.creation_timestamp.clone();
                    pg.spec.min_member = Some(1);
                    pg.spec.queue = pod
                        .metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get(volcano::QUEUE_NAME_ANNOTATION))
                        .cloned();
                    pg.spec.priority_class_name = pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.priority_class_name.clone());
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

    fn add(&mut self, pod: &k8s::Pod, status: TaskStatus) -> Result<(), String> {
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
    fn left(&mut self, group: &str) {
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

    fn has_pending(&self) -> bool {
        self.tasks.values().any(|t| t.status == TaskStatus::Pending)
    }

    /// The session's snapshot of jobs, tasks and queues.
    fn state(&self, cluster: &mut ClusterState) -> State {
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
        let mut job_index: std::collections::HashMap<&str, usize> = Default::default();
        for (key, g) in &self.groups {
            // Volcano's snapshot leaves out jobs of missing queues.
            if g.finished || !self.queues.iter().any(|q| q.name == g.pg.queue()) {
                continue;
            }
            let (ns, name) = key.split_once('/').unwrap_or(("default", key));
            let task_min: BTreeMap<String, i32> = g.pg.spec.min_task_member.clone();
            job_index.insert(key, jobs.len());
            jobs.push(Job {
                uid: key.clone(),
                name: name.to_string(),
                namespace: ns.to_string(),
                queue: g.pg.queue().to_string(),
                min_available: g.pg.min_member(),
                task_min_total: task_min.values().sum(),
                task_min,
                priority: self.class_value(g.pg.spec.priority_class_name.as_deref()),
                created: timestamp(g.pg.metadata.creation_timestamp.as_ref()),
                phase: g.phase.clone(),
                tasks: Vec::new(),
                fit_errors: BTreeMap::new(),
                queue_hold: Default::default(),
            });
        }
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for (key, rec) in &self.tasks {
            let Some(&j) = job_index.get(rec.group.as_str()) else {
                continue;
            };
            let pod = &rec.object;
            let spec = pod.spec.as_ref();
            let priority = task_priority(pod, self);
            let name = pod.metadata.name.clone().unwrap_or_default();
            let namespace = pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            let resreq = rec.resreq.clone();
            jobs[j].tasks.push(tasks.len());
            tasks.push(Task {
                key: key.clone(),
                uid: pod
                    .metadata
                    .uid
                    .clone()
                    .unwrap_or_else(|| format!("{namespace}-{name}")),
                name,
                namespace,
                created: timestamp(pod.metadata.creation_timestamp.as_ref()),
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
            });
        }
        State {
            tasks,
            jobs,
            queues: self.queues.clone(),
            total,
        }
    }
}

fn timestamp(
    t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
) -> Option<k8s_openapi::jiff::Timestamp> {
    t.map(|t| t.0)
}

/// A task's priority (`NewTaskInfo`): the `volcano.sh/task-priority`
/// annotation, else `spec.priority`, else what admission would have set
/// from the PriorityClasses given, else Volcano's default of 1.
fn task_priority(pod: &k8s::Pod, world: &World) -> i32 {
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
    match class.and_then(|c| world.classes.get(c)) {
        Some(v) => *v,
        None if world.has_global_default => world.default_priority,
        None => 1,
    }
}

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

fn queue_info(q: &Queue) -> Result<QueueInfo> {
    let list = |m: &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
                path: &str|
     -> Result<Res> {
        let list =
            kube::resource_list(Some(m), path).with_context(|| format!("Queue {}", q.name()))?;
        let r = Resources::from_list(&list);
        let mut res = Res::allocatable(&r);
        if r.allowed_pod_number == 0 {
            res.scalars.remove(resource::PODS);
        }
        Ok(res)
    };
    let capability = if q.spec.capability.is_empty() {
        None
    } else {
        let mut c = list(&q.spec.capability, "spec.capability")?;
        if c.cpu <= 0.0 {
            c.cpu = f64::MAX;
        }
        if c.memory <= 0.0 {
            c.memory = f64::MAX;
        }
        Some(c)
    };
    if q.weight() < 0 {
        anyhow::bail!("Queue {}: spec.weight {} is negative", q.name(), q.weight());
    }
    Ok(QueueInfo {
        name: q.name().to_string(),
        weight: q.weight(),
        priority: q.spec.priority.unwrap_or(0),
        created: timestamp(q.metadata.creation_timestamp.as_ref()),
        capability,
        guarantee: list(&q.spec.guarantee.resource, "spec.guarantee.resource")?,
    })
}

/// Replays the workload `events` (read as it goes) over `cluster` in
/// sessions; the report's pods and samples go to `outputs`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    schedulers: &mut Schedulers,
    mut cluster: ClusterState,
    input: &BatchInput,
    events: &mut Events,
    config: &SessionConfig,
    options: &Options,
    outputs: Outputs,
    progress: &mut dyn Progress,
) -> Result<Report> {
    let mut tracker = Tracker::new(&mut cluster, outputs);
    let mut world = World::new(input)?;
    let registry = plugins::registry();
    let intake = Intake {
        scheduler_name: options.scheduler_name.clone(),
    };
    // Bound and finished pods of the cluster files are tasks of their
    // jobs when batch mode owns them; others only hold their nodes'
    // resources (the cluster state has those).
    for pod in &input.bound_pods {
        if intake.owns_placed(pod) {
            let _ = world.add(pod, status_of(pod));
        }
    }
    // Pods that can never be scheduled (missing PodGroup or queue).
    let mut stranded: std::collections::HashSet<String> = Default::default();
    let period_ms = (config.period.as_millis() as u64).max(1);
    let mut now_ms: u64 = 0;
    let mut sessions = 0u32;
    loop {
        let mut changed_by_events = false;
        while events
            .peek_time()?
            .is_some_and(|t| t.saturating_mul(1000) <= now_ms)
        {
            let Some(event) = events.next()? else { break };
            changed_by_events = true;
            let now = event.time.unwrap_or(0);
            let key = kube::pod_key(&event.object);
            match event.kind {
                EventType::Added => {
                    let pod = &event.object;
                    let status = status_of(pod);
                    if status != TaskStatus::Pending {
                        // Whoever's it is, it holds its node: the report
                        // counts it, so its departure frees what it held.
                        if kube::bound_node(pod).is_some() && kube::pod_is_active(pod) {
                            cluster.upsert_pod(pod)?;
                            tracker.bound_from_input(&cluster, &key, &events.origin());
                        }
                        if intake.owns_placed(pod) {
                            let _ = world.add(pod, status);
                        }
                        continue;
                    }
                    if let Some(why) = intake.skips_pending(pod) {
                        tracker.skipped(why);
                        continue;
                    }
                    tracker.arrived(&key, now);
                    if let Err(why) = world.add(pod, status) {
                        let requests = kube::pod(pod).ok().map(|p| p.requests);
                        tracker.failed(&key, requests.as_ref(), why, None);
                        stranded.insert(key);
                    }
                }
                EventType::Deleted => {
                    if stranded.remove(&key) {
                        tracker.departed(&key, now, None);
                        continue;
                    }
                    let removed = world.tasks.remove(&key);
                    if let Some(rec) = &removed {
                        world.left(&rec.group);
                    }
                    if removed.is_some_and(|rec| rec.status == TaskStatus::Pending) {
                        tracker.departed(&key, now, None);
                        continue;
                    }
                    if cluster.bound_requests(&key).is_some() {
                        let requests = super::held(&cluster, &key);
                        cluster.remove_pod_key(&key);
                        tracker.departed(&key, now, requests.as_ref());
                    }
                }
            }
        }
        let now = now_ms / 1000;
        let mut bound = 0;
        if world.has_pending() || changed_by_events {
            bound = run_session(
                schedulers,
                &registry,
                &mut cluster,
                &mut world,
                &mut tracker,
                config,
                now,
            )?;
            sessions += 1;
            tracker.session();
            tracker.sample(
                now,
                world
                    .tasks
                    .values()
                    .filter(|t| t.status == TaskStatus::Pending)
                    .count(),
            );
        }
        let (done, total) = events.progress();
        progress.attempted(done, total);
        if options.max_sessions.is_some_and(|m| sessions >= m) {
            break;
        }
        let next = events.peek_time()?;
        if next.is_none() && bound == 0 {
            break;
        }
        now_ms += period_ms;
        if bound == 0
            && let Some(next) = next
        {
            // Nothing can change before the next event: skip to the first
            // session at or after it.
            let next = next.saturating_mul(1000);
            if next > now_ms {
                now_ms += (next - now_ms).div_ceil(period_ms) * period_ms;
            }
        }
    }
    // (tasks, bound) per group.
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for t in world.tasks.values() {
        let c = counts.entry(t.group.as_str()).or_default();
        c.0 += 1;
        if t.status.allocated() {
            c.1 += 1;
        }
    }
    tracker.set_groups(
        world
            .groups
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
            .collect(),
    );
    tracker.finish()
}

/// One session: open, actions, close. Returns how many pods it bound.
fn run_session(
    schedulers: &mut Schedulers,
    registry: &Registry,
    cluster: &mut ClusterState,
    world: &mut World,
    tracker: &mut Tracker,
    config: &SessionConfig,
    now: u64,
) -> Result<usize> {
    let state = world.state(cluster);
    let plugins = registry.build(&config.tiers, &state);
    let mut s = Session::open(state, plugins, cluster, schedulers);
    for action in &config.actions {
        actions::execute(action, &mut s, &config.tiers)?;
    }
    // Close: gang's conditions, the cache's events and pod messages, the
    // jobs' phases; then what was never bound leaves the nodes.
    let mut messages: Vec<(usize, String)> = Vec::new();
    // Jobs were made from the groups in key order: walk both together
    // instead of looking each job's group up.
    let mut groups = world.groups.iter_mut();
    for j in 0..s.state.jobs.len() {
        let job = &s.state.jobs[j];
        let st = &s.state;
        let group = groups
            .by_ref()
            .find(|(k, _)| **k == job.uid)
            .map(|(_, g)| g);
        // A PodGroup without pods closes the same way every session (the
        // openb gangs' PodGroups exist long before their pods): once is
        // enough.
        if job.tasks.is_empty() && group.as_ref().is_some_and(|g| g.closed_empty) {
            continue;
        }
        let condition = s.job_condition(j);
        let unschedulable = match &condition {
            Some(JobCondition::Unschedulable { message, .. }) => Some(message.clone()),
            _ => None,
        };
        if let Some(g) = group {
            if job.tasks.is_empty() {
                g.closed_empty = true;
            }
            if let Some(c) = condition {
                g.condition = Some(match c {
                    JobCondition::Unschedulable { reason, message } => GroupCondition {
                        kind: "Unschedulable".into(),
                        reason: reason.into(),
                        message,
                    },
                    JobCondition::Scheduled { reason } => GroupCondition {
                        kind: "Scheduled".into(),
                        reason: reason.into(),
                        message: String::new(),
                    },
                });
            }
            // `jobStatus`: completed tasks count as allocated.
            let finished = |t: usize| {
                matches!(
                    st.tasks[t].status,
                    TaskStatus::Succeeded | TaskStatus::Failed
                )
            };
            let allocated = job
                .tasks
                .iter()
                .filter(|&&t| st.tasks[t].status.allocated() || finished(t))
                .count();
            let done = job.tasks.iter().filter(|&&t| finished(t)).count();
            let running = job
                .tasks
                .iter()
                .any(|&t| st.tasks[t].status == TaskStatus::Running);
            let phase = if running && unschedulable.is_some() {
                "Unknown".to_string()
            } else if allocated as i32 >= job.min_available {
                if done == allocated {
                    "Completed".to_string()
                } else {
                    "Running".to_string()
                }
            } else if job.phase != "Inqueue" {
                "Pending".to_string()
            } else {
                job.phase.clone()
            };
            if phase == "Running" && g.placed.is_none() {
                g.placed = Some(now);
            }
            // The cache's RecordJobStatusEvent: every job left Pending,
            // Inqueue or Unknown gets the Warning.
            if matches!(phase.as_str(), "Pending" | "Inqueue" | "Unknown") {
                g.event = Some(unschedulable_event(st, job));
            }
            if job.tasks.iter().any(|&t| st.tasks[t].last.is_some()) {
                g.discarded += 1;
            }
            g.phase = phase;
        }
        let mut base: Option<String> = None;
        for &t in &job.tasks {
            // A gated pod keeps the API server's SchedulingGated condition.
            if matches!(
                st.tasks[t].status,
                TaskStatus::Pending | TaskStatus::Allocated
            ) && !st.tasks[t].gated
            {
                let (_, msg) = job.task_reason(&st.tasks, t);
                let msg = if msg.is_empty() {
                    base.get_or_insert_with(|| job.fit_error(&st.tasks)).clone()
                } else {
                    msg
                };
                messages.push((t, msg));
            }
        }
    }
    for q in &s.state.queues {
        if let Some((deserved, allocated)) = s.queue_share(&q.name) {
            let mut names: Vec<&str> = deserved.names();
            for n in allocated.names() {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            let share = deserved
                .names()
                .iter()
                .map(|n| resource::share(allocated.get(n), deserved.get(n)))
                .fold(0.0, f64::max);
            tracker.queue_sample(QueueSample {
                time: now,
                queue: q.name.clone(),
                weight: q.weight,
                share,
                resources: names
                    .into_iter()
                    .map(|n| {
                        let scale = if n == "cpu" || n == "memory" || n == resource::PODS {
                            1.0
                        } else {
                            1000.0
                        };
                        (
                            n.to_string(),
                            allocated.get(n) / scale,
                            deserved.get(n) / scale,
                        )
                    })
                    .collect(),
            });
        }
    }
    s.release_undispatched();
    let dispatched = std::mem::take(&mut s.dispatched);
    let state = s.state;
    let bound = dispatched.len();
    for (t, decision) in dispatched {
        let task = &state.tasks[t];
        if let Some(rec) = world.tasks.get_mut(&task.key) {
            rec.status = TaskStatus::Running;
            rec.node = Some(decision.node.clone());
            tracker.bound(&task.key, now, &decision, &rec.requests);
        }
    }
    for (t, msg) in messages {
        let key = &state.tasks[t].key;
        if let Some(rec) = world.tasks.get(key)
            && rec.status == TaskStatus::Pending
        {
            tracker.failed(key, Some(&rec.requests), msg, None);
        }
    }
    Ok(bound)
}

/// The event the cache records for a job left Pending, Inqueue or Unknown
/// (`RecordJobStatusEvent`): gang's text with the number of Pending tasks
/// first.
fn unschedulable_event(st: &State, job: &Job) -> String {
    let pending = job
        .tasks
        .iter()
        .filter(|&&t| st.tasks[t].status == TaskStatus::Pending)
        .count();
    format!(
        "{pending}/{} tasks in gang unschedulable: {}",
        job.tasks.len(),
        job.fit_error(&st.tasks)
    )
}
