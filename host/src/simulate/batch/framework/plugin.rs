//! What a session plugin is (Volcano's `framework.Plugin` and the
//! functions a plugin registers on the session): the framework's side of
//! the contract, so the session consults plugins it never names.

use super::super::job::{Job, Task};
use super::super::resource::Res;
use super::state::{QueueInfo, State};
use std::cmp::Ordering;

/// A job check that failed (`ValidateResult`).
#[derive(Clone, Debug)]
pub struct Invalid {
    pub reason: &'static str,
    pub message: String,
}

/// A plugin's vote (`util.Permit`, `util.Abstain`, `util.Reject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    Permit,
    Abstain,
    Reject,
}

/// The PodGroup condition a plugin writes on a job when the session
/// closes (gang's `UpdatePodGroupCondition`); the job updater reads an
/// Unschedulable one for the job's phase, as Volcano's `jobStatus` reads
/// the condition of the session that is closing.
#[derive(Clone, Debug)]
pub enum JobCondition {
    Unschedulable {
        reason: &'static str,
        message: String,
    },
    Scheduled {
        reason: &'static str,
    },
}

/// What a plugin registers. Every default means "not registered".
pub trait Plugin {
    fn name(&self) -> &'static str;
    /// Less means first; `Equal` lets the next plugin decide.
    fn job_order(&self, _s: &State, _l: usize, _r: usize) -> Ordering {
        Ordering::Equal
    }
    fn queue_order(&self, _s: &State, _l: &QueueInfo, _r: &QueueInfo) -> Ordering {
        Ordering::Equal
    }
    fn task_order(&self, _l: &Task, _r: &Task) -> Ordering {
        Ordering::Equal
    }
    fn job_valid(&self, _s: &State, _job: &Job) -> Option<Invalid> {
        None
    }
    fn job_ready(&self, _s: &State, _job: &Job) -> Option<bool> {
        None
    }
    fn job_pipelined(&self, _s: &State, _job: &Job) -> Option<Vote> {
        None
    }
    fn overused(&self, _s: &State, _queue: &QueueInfo) -> Option<bool> {
        None
    }
    fn allocatable(&self, _s: &State, _queue: &QueueInfo, _task: &Task) -> Option<bool> {
        None
    }
    /// A task took resources in the session (`AllocateFunc`).
    fn on_allocate(&mut self, _s: &State, _task: usize) {}
    /// A task gave them back (`DeallocateFunc`).
    fn on_deallocate(&mut self, _s: &State, _task: usize) {}
    /// proportion's view of a queue: (deserved, allocated), for the
    /// queue-share report.
    fn queue_share(&self, _queue: &str) -> Option<(Res, Res)> {
        None
    }
    /// The condition its `OnSessionClose` writes on `job`'s PodGroup.
    fn job_condition(&self, _s: &State, _job: &Job) -> Option<JobCondition> {
        None
    }
}
