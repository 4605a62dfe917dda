//! Jobs and tasks as a session sees them (Volcano's `JobInfo`,
//! `TaskInfo`): a job is a PodGroup, a task one of its pods. The counts
//! gang scheduling decides by, and the messages Volcano writes, live here.

use super::resource::Res;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `TaskStatus`. sift has no terminating pods, so nothing is ever
/// Releasing or Pipelined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TaskStatus {
    Pending,
    Allocated,
    Pipelined,
    Binding,
    Bound,
    Running,
    Succeeded,
    Failed,
}

impl TaskStatus {
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Pending => "Pending",
            TaskStatus::Allocated => "Allocated",
            TaskStatus::Pipelined => "Pipelined",
            TaskStatus::Binding => "Binding",
            TaskStatus::Bound => "Bound",
            TaskStatus::Running => "Running",
            TaskStatus::Succeeded => "Succeeded",
            TaskStatus::Failed => "Failed",
        }
    }

    /// `AllocatedStatus`: holding a node's resources.
    pub fn allocated(self) -> bool {
        matches!(
            self,
            TaskStatus::Allocated | TaskStatus::Binding | TaskStatus::Bound | TaskStatus::Running
        )
    }
}

#[derive(Clone, Debug)]
pub struct Task {
    /// namespace/name.
    pub key: String,
    pub name: String,
    pub namespace: String,
    /// `metadata.uid`, else namespace-name (the last tie-break).
    pub uid: String,
    /// `metadata.creationTimestamp`; none sorts first (Go's zero time).
    pub created: Option<Timestamp>,
    /// It has scheduling gates: counted in its job, never placed.
    pub gated: bool,
    pub object: Arc<k8s::Pod>,
    /// Its role in the job (`volcano.sh/task-spec`), empty when none.
    pub role: String,
    pub priority: i32,
    pub resreq: Res,
    pub best_effort: bool,
    pub status: TaskStatus,
    pub node: Option<Arc<str>>,
    /// Status and node before a Statement was discarded: what Volcano's
    /// `LastTransaction` tells the pod's condition.
    pub last: Option<(TaskStatus, Arc<str>)>,
    pub job: usize,
}

/// One node's reasons a task did not fit there (`FitError`).
#[derive(Clone, Debug)]
pub struct NodeFit {
    pub node: Arc<str>,
    pub reasons: Vec<String>,
}

/// Why a task fit no node (`FitErrors`).
#[derive(Clone, Debug, Default)]
pub struct FitErrors {
    pub nodes: Vec<NodeFit>,
}

impl FitErrors {
    /// `0/N nodes are unavailable: <count> <reason>, ....` over the nodes
    /// that failed, the histogram sorted as strings.
    pub fn message(&self) -> String {
        let head = format!("0/{} nodes are unavailable", self.nodes.len());
        if self.nodes.is_empty() {
            return head;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &self.nodes {
            for r in &n.reasons {
                *counts.entry(r.as_str()).or_default() += 1;
            }
        }
        format!("{head}: {}.", histogram(counts))
    }
}

/// Go's `sortReasonsHistogram`: "<count> <reason>" strings, sorted as
/// strings, joined by ", ".
pub fn histogram<K: AsRef<str>>(counts: impl IntoIterator<Item = (K, usize)>) -> String {
    let mut parts: Vec<String> = counts
        .into_iter()
        .map(|(k, v)| format!("{v} {}", k.as_ref()))
        .collect();
    parts.sort();
    parts.join(", ")
}

#[derive(Clone, Debug)]
pub struct Job {
    /// namespace/podgroup.
    pub uid: String,
    pub name: String,
    pub namespace: String,
    pub queue: String,
    pub min_available: i32,
    pub task_min: BTreeMap<String, i32>,
    pub task_min_total: i32,
    pub priority: i32,
    pub created: Option<Timestamp>,
    /// The PodGroup's phase.
    pub phase: String,
    pub tasks: Vec<usize>,
    /// This session's fit errors, by task index (`NodesFitErrors`).
    pub fit_errors: BTreeMap<usize, FitErrors>,
    /// Whether the queue held the job back this session.
    pub queue_hold: QueueHold,
}

/// Whether proportion's limits (Overused, Allocatable) held a job back in
/// a session before any of its tasks was tried on the nodes. Volcano 1.11
/// only logs it, so "pod group is not ready" would say nothing of why;
/// sift names the queue's limit after it, as newer Volcano releases give
/// such jobs a pending reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum QueueHold {
    #[default]
    No,
    /// The queue's limit, as the message names it.
    Held(String),
    /// A task was tried on the nodes: the fit errors say why.
    Tried,
}

impl Job {
    /// Whether a queue hold would still be recorded (none yet, no task
    /// tried): the reason is worth formatting.
    pub fn may_be_held(&self) -> bool {
        self.queue_hold == QueueHold::No
    }

    /// The queue held the job back (the first reason stands).
    pub fn held_by_queue(&mut self, why: String) {
        if self.may_be_held() {
            self.queue_hold = QueueHold::Held(why);
        }
    }

    /// A task of the job was tried on the nodes.
    pub fn tried(&mut self) {
        self.queue_hold = QueueHold::Tried;
    }

    fn count(&self, tasks: &[Task], f: impl Fn(&Task) -> bool) -> i32 {
        self.tasks.iter().filter(|&&t| f(&tasks[t])).count() as i32
    }

    /// Bound, Binding, Running, Allocated and Succeeded tasks.
    pub fn ready_num(&self, tasks: &[Task]) -> i32 {
        self.count(tasks, |t| {
            t.status.allocated() || t.status == TaskStatus::Succeeded
        })
    }

    pub fn waiting_num(&self, tasks: &[Task]) -> i32 {
        self.count(tasks, |t| t.status == TaskStatus::Pipelined)
    }

    pub fn pending_best_effort_num(&self, tasks: &[Task]) -> i32 {
        self.count(tasks, |t| t.status == TaskStatus::Pending && t.best_effort)
    }

    /// Tasks that could still run: all but failed ones (`ValidTaskNum`).
    pub fn valid_num(&self, tasks: &[Task]) -> i32 {
        self.count(tasks, |t| t.status != TaskStatus::Failed)
    }

    pub fn pending(&self, tasks: &[Task]) -> Vec<usize> {
        self.tasks
            .iter()
            .copied()
            .filter(|&t| tasks[t].status == TaskStatus::Pending)
            .collect()
    }

    pub fn is_ready(&self, tasks: &[Task]) -> bool {
        self.ready_num(tasks) + self.pending_best_effort_num(tasks) >= self.min_available
    }

    pub fn is_pipelined(&self, tasks: &[Task]) -> bool {
        self.waiting_num(tasks) + self.ready_num(tasks) + self.pending_best_effort_num(tasks)
            >= self.min_available
    }

    /// The per-role checks apply only when the job's minMember is at least
    /// the roles' minima together.
    fn roles_apply(&self) -> bool {
        self.min_available >= self.task_min_total
    }

    fn roles_meet(&self, occupied: &BTreeMap<&str, i32>) -> bool {
        self.task_min.iter().all(|(role, min)| {
            *min == 0 || occupied.get(role.as_str()).copied().unwrap_or(0) >= *min
        })
    }

    fn occupied_by_role<'t>(
        &self,
        tasks: &'t [Task],
        counts: impl Fn(&Task) -> bool,
    ) -> BTreeMap<&'t str, i32> {
        let mut m = BTreeMap::new();
        for &t in &self.tasks {
            if counts(&tasks[t]) {
                *m.entry(tasks[t].role.as_str()).or_default() += 1;
            }
        }
        m
    }

    /// `CheckTaskValid`.
    pub fn check_task_valid(&self, tasks: &[Task]) -> bool {
        !self.roles_apply()
            || self.roles_meet(&self.occupied_by_role(tasks, |t| t.status != TaskStatus::Failed))
    }

    /// `getJobAllocatedRoles`: allocated or succeeded, and pending
    /// best-effort tasks.
    fn allocated_roles<'t>(&self, tasks: &'t [Task]) -> BTreeMap<&'t str, i32> {
        self.occupied_by_role(tasks, |t| {
            t.status.allocated()
                || t.status == TaskStatus::Succeeded
                || (t.status == TaskStatus::Pending && t.best_effort)
        })
    }

    /// `CheckTaskReady`.
    pub fn check_task_ready(&self, tasks: &[Task]) -> bool {
        !self.roles_apply() || self.roles_meet(&self.allocated_roles(tasks))
    }

    /// `CheckTaskPipelined`.
    pub fn check_task_pipelined(&self, tasks: &[Task]) -> bool {
        !self.roles_apply()
            || self.roles_meet(&self.occupied_by_role(tasks, |t| {
                t.status.allocated()
                    || t.status == TaskStatus::Succeeded
                    || t.status == TaskStatus::Pipelined
                    || (t.status == TaskStatus::Pending && t.best_effort)
            }))
    }

    /// Roles with a fit error this session (`FitFailedRoles`).
    fn failed_roles<'t>(&self, tasks: &'t [Task]) -> Vec<&'t str> {
        let mut roles: Vec<&str> = self
            .fit_errors
            .keys()
            .map(|&t| tasks[t].role.as_str())
            .collect();
        roles.sort();
        roles.dedup();
        roles
    }

    /// `TaskHasFitErrors`: a task of a role that already failed is not
    /// tried again this session (tasks without a role always are).
    pub fn task_has_fit_errors(&self, tasks: &[Task], task: usize) -> bool {
        let role = tasks[task].role.as_str();
        !role.is_empty() && self.failed_roles(tasks).contains(&role)
    }

    /// `NeedContinueAllocating`: after a task fit nowhere, may the job's
    /// other tasks still make it ready?
    pub fn need_continue_allocating(&self, tasks: &[Task]) -> bool {
        if self.min_available as usize == self.tasks.len() {
            return false;
        }
        let failed = self.failed_roles(tasks);
        if self.min_available < self.task_min_total {
            let left = self
                .pending(tasks)
                .iter()
                .filter(|&&t| !failed.contains(&tasks[t].role.as_str()))
                .count() as i32;
            return self.ready_num(tasks) + left >= self.min_available;
        }
        let allocated = self.allocated_roles(tasks);
        failed.iter().all(|role| {
            let min = self.task_min.get(*role).copied().unwrap_or(0);
            min == 0 || allocated.get(role).copied().unwrap_or(0) >= min
        })
    }

    /// Why a pending task is where it is (`TaskSchedulingReason`): its
    /// reason and message.
    pub fn task_reason(&self, tasks: &[Task], t: usize) -> (&'static str, String) {
        let task = &tasks[t];
        let (status, node) = match &task.last {
            Some((s, n)) => (*s, Some(n.clone())),
            None => (task.status, task.node.clone()),
        };
        match status {
            TaskStatus::Allocated => (
                "Schedulable",
                format!(
                    "Pod {}/{} can possibly be assigned to {}",
                    task.namespace,
                    task.name,
                    node.as_deref().unwrap_or_default()
                ),
            ),
            TaskStatus::Pending => match self.fit_errors.get(&t) {
                Some(fe) => ("Unschedulable", fe.message()),
                None => ("Unschedulable", String::new()),
            },
            other => (other.name(), String::new()),
        }
    }

    /// `JobInfo.FitError`: `pod group is not ready, <status counts>,
    /// <min> minAvailable[; Pending: <reason counts>][. Origin reason is
    /// <task>: <fit errors>]`. The origin is the first task (by
    /// namespace/name; Volcano ranges over a map) with fit errors.
    pub fn fit_error(&self, tasks: &[Task]) -> String {
        let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
        for &t in &self.tasks {
            *by_status.entry(tasks[t].status.name()).or_default() += 1;
        }
        by_status.insert("minAvailable", self.min_available.max(0) as usize);
        let mut msg = format!("pod group is not ready, {}", histogram(by_status));
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for t in self.pending(tasks) {
            *reasons.entry(self.task_reason(tasks, t).0).or_default() += 1;
        }
        if !reasons.is_empty() {
            msg.push_str(&format!("; Pending: {}", histogram(reasons)));
        }
        let mut with_errors: Vec<usize> = self.fit_errors.keys().copied().collect();
        with_errors.sort_by(|a, b| tasks[*a].key.cmp(&tasks[*b].key));
        if let Some(&t) = with_errors.first() {
            msg.push_str(&format!(
                ". Origin reason is {}: {}",
                tasks[t].name,
                self.fit_errors[&t].message()
            ));
        }
        if let QueueHold::Held(why) = &self.queue_hold {
            msg.push_str(&format!("; {why}"));
        }
        msg
    }
}
