//! `gang`: a job is placed only when `minMember` of its tasks (and each
//! role's `minTaskMember`) can be; jobs that are not ready yet go first.
//! At session close it writes the PodGroup condition
//! (`<x>/<y> tasks in gang unschedulable: <fit error>`).

use super::super::framework::plugin::{Invalid, JobCondition, Plugin, Vote};
use super::super::framework::state::State;
use super::super::job::Job;
use std::cmp::Ordering;

pub struct Gang;

/// Volcano's `v1beta1.NotEnoughPodsOfTaskReason` and `NotEnoughPodsReason`.
const NOT_ENOUGH_PODS_OF_TASK: &str = "NotEnoughPodsOfTask";
const NOT_ENOUGH_PODS: &str = "NotEnoughTasks";
/// `v1beta1.NotEnoughResourcesReason`.
const NOT_ENOUGH_RESOURCES: &str = "NotEnoughResources";

impl Plugin for Gang {
    fn name(&self) -> &'static str {
        "gang"
    }

    fn job_valid(&self, s: &State, job: &Job) -> Option<Invalid> {
        if !job.check_task_valid(&s.tasks) {
            return Some(Invalid {
                reason: NOT_ENOUGH_PODS_OF_TASK,
                message: "Not enough valid pods of each task for gang-scheduling".into(),
            });
        }
        let valid = job.valid_num(&s.tasks);
        if valid < job.min_available {
            return Some(Invalid {
                reason: NOT_ENOUGH_PODS,
                message: format!(
                    "Not enough valid tasks for gang-scheduling, valid: {valid}, min: {}",
                    job.min_available
                ),
            });
        }
        None
    }

    fn job_order(&self, s: &State, l: usize, r: usize) -> Ordering {
        let lr = s.jobs[l].is_ready(&s.tasks);
        let rr = s.jobs[r].is_ready(&s.tasks);
        match (lr, rr) {
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => Ordering::Equal,
        }
    }

    fn job_ready(&self, s: &State, job: &Job) -> Option<bool> {
        Some(job.check_task_ready(&s.tasks) && job.is_ready(&s.tasks))
    }

    fn job_pipelined(&self, s: &State, job: &Job) -> Option<Vote> {
        Some(
            if job.check_task_pipelined(&s.tasks) && job.is_pipelined(&s.tasks) {
                Vote::Permit
            } else {
                Vote::Reject
            },
        )
    }

    /// `OnSessionClose`: Unschedulable with the gang message while the job
    /// is not ready, else Scheduled.
    fn job_condition(&self, s: &State, job: &Job) -> Option<JobCondition> {
        Some(match unschedulable_message(s, job) {
            Some(message) => JobCondition::Unschedulable {
                reason: NOT_ENOUGH_RESOURCES,
                message,
            },
            None => JobCondition::Scheduled {
                reason: "tasks in gang are ready to be scheduled",
            },
        })
    }
}

/// The message of the condition gang writes on a job that is not ready;
/// `None` when it is.
fn unschedulable_message(s: &State, job: &Job) -> Option<String> {
    if job.is_ready(&s.tasks) {
        return None;
    }
    // Pending tasks that were placed before a discard count as
    // schedulable.
    let schedulable = job
        .pending(&s.tasks)
        .iter()
        .filter(|&&t| {
            let task = &s.tasks[t];
            let status = task.last.as_ref().map_or(task.status, |(st, _)| *st);
            status.allocated()
        })
        .count() as i32
        + job.ready_num(&s.tasks);
    Some(format!(
        "{}/{} tasks in gang unschedulable: {}",
        job.min_available - schedulable,
        job.tasks.len(),
        job.fit_error(&s.tasks)
    ))
}
