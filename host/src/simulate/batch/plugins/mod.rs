//! Session plugins (Volcano's `pkg/scheduler/plugins`): each contributes
//! order functions, job checks and allocation hooks; the session consults
//! them tier by tier ([`super::session`]). `predicates` and `nodeorder`
//! have no code here: they switch sift's filter and score plugins on in
//! the session's scheduler.

pub mod drf;
pub mod gang;
pub mod priority;
pub mod proportion;

use super::job::{Job, Task};
use super::session::{QueueInfo, State};
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
    fn queue_share(&self, _queue: &str) -> Option<(super::resource::Res, super::resource::Res)> {
        None
    }
}

/// Builds a plugin by its configured name; `None` for the names that only
/// switch sift's own plugins on (`predicates`, `nodeorder`).
pub fn build(name: &str, s: &State) -> Option<Box<dyn Plugin>> {
    match name {
        "priority" => Some(Box::new(priority::Priority)),
        "gang" => Some(Box::new(gang::Gang)),
        "drf" => Some(Box::new(drf::Drf::open(s))),
        "proportion" => Some(Box::new(proportion::Proportion::open(s))),
        _ => None,
    }
}
