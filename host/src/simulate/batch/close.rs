//! Closing a session (Volcano's `CloseSession`: the plugins'
//! `OnSessionClose`, the job updater and the cache's status updates).
//! Every job's PodGroup gets the plugins' condition, its phase
//! (`jobStatus`) and the cache's Warning event; pods left unbound carry
//! Volcano's message; proportion's shares are sampled; then what was never
//! bound leaves the nodes and what was bound runs. Only here does a
//! session write back to the cache.

use super::cache::World;
use super::cache::group::GroupRec;
use super::framework::plugin::JobCondition;
use super::framework::session::Session;
use super::framework::state::State;
use super::job::{Job, TaskStatus};
use super::resource;
use crate::engine::schedule::Decision;
use crate::simulate::report::{GroupCondition, QueueSample, Tracker};
use std::collections::BTreeMap;

/// What a session decided, for a live scheduler to write: the pods to
/// bind (namespace/name, and where with what annotations) and the message
/// of each pod that still waits.
#[derive(Debug, Default)]
pub struct Closed {
    pub bound: Vec<(String, Decision)>,
    pub waiting: Vec<(String, String)>,
}

/// Closes the session at `now`, writing to the cache and the report.
pub fn close(mut s: Session, world: &mut World, tracker: &mut Tracker, now: u64) -> Closed {
    let messages = update_jobs(&s, &mut world.groups, now);
    sample_queues(&s, tracker, now);
    s.release_undispatched();
    let dispatched = std::mem::take(&mut s.dispatched);
    let state = s.state;
    let mut closed = Closed::default();
    for (t, decision) in dispatched {
        let task = &state.tasks[t];
        if let Some(rec) = world.tasks.get_mut(&task.key) {
            rec.status = TaskStatus::Running;
            rec.node = Some(decision.node.clone());
            tracker.bound(&task.key, now, &decision, &rec.requests);
            closed.bound.push((task.key.clone(), decision));
        }
    }
    for (t, msg) in messages {
        let key = &state.tasks[t].key;
        if let Some(rec) = world.tasks.get(key)
            && rec.status == TaskStatus::Pending
        {
            tracker.failed(key, Some(&rec.requests), msg.clone(), None);
            closed.waiting.push((key.clone(), msg));
        }
    }
    closed
}

/// The job updater: each job's PodGroup record, and the message of each
/// pod that waits (by task index).
fn update_jobs(
    s: &Session,
    groups: &mut BTreeMap<String, GroupRec>,
    now: u64,
) -> Vec<(usize, String)> {
    let st = &s.state;
    let mut messages: Vec<(usize, String)> = Vec::new();
    // Jobs were made from the groups in key order: walk both together
    // instead of looking each job's group up.
    let mut groups = groups.iter_mut();
    for (j, job) in st.jobs.iter().enumerate() {
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
        if let Some(g) = group {
            update_group(g, s.job_condition(j), st, job, now);
        }
        pod_messages(st, job, &mut messages);
    }
    messages
}

/// Writes the session's outcome on a job's PodGroup record: the plugins'
/// condition, the phase, when it was first placed, the cache's event, and
/// whether a Statement was discarded.
fn update_group(
    g: &mut GroupRec,
    condition: Option<JobCondition>,
    st: &State,
    job: &Job,
    now: u64,
) {
    if job.tasks.is_empty() {
        g.closed_empty = true;
    }
    let unschedulable = matches!(condition, Some(JobCondition::Unschedulable { .. }));
    if let Some(c) = condition {
        g.condition = Some(group_condition(c));
    }
    let phase = job_phase(st, job, unschedulable);
    if phase == "Running" && g.placed.is_none() {
        g.placed = Some(now);
    }
    // The cache's RecordJobStatusEvent: every job left Pending, Inqueue or
    // Unknown gets the Warning.
    if matches!(phase.as_str(), "Pending" | "Inqueue" | "Unknown") {
        g.event = Some(unschedulable_event(st, job));
    }
    if job.tasks.iter().any(|&t| st.tasks[t].last.is_some()) {
        g.discarded += 1;
    }
    g.phase = phase;
}

/// A plugin's condition as the report writes it.
fn group_condition(c: JobCondition) -> GroupCondition {
    match c {
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
    }
}

/// `jobStatus`: Unknown when tasks run but the job is unschedulable this
/// session; Running or Completed once `minAvailable` tasks are allocated
/// (completed tasks count as allocated); else Pending, or Inqueue kept.
fn job_phase(st: &State, job: &Job, unschedulable: bool) -> String {
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
    if running && unschedulable {
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
    }
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

/// Each waiting (Pending or Allocated, not gated) task's message: its own
/// reason, else the job's FitError. A gated pod keeps the API server's
/// SchedulingGated condition.
fn pod_messages(st: &State, job: &Job, messages: &mut Vec<(usize, String)>) {
    let mut base: Option<String> = None;
    for &t in &job.tasks {
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

/// proportion's view of each queue at close: what it holds against what
/// it deserves, per resource (cpu in millicores, memory in bytes and pods
/// as they are; other scalars from Volcano's milli-units), and its share.
fn sample_queues(s: &Session, tracker: &mut Tracker, now: u64) {
    for q in &s.state.queues {
        let Some((deserved, allocated)) = s.queue_share(&q.name) else {
            continue;
        };
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
