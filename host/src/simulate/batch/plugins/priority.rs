//! `priority`: higher-priority tasks first within a job, higher-priority
//! jobs (their PodGroup's PriorityClass) first within a queue.

use super::super::framework::plugin::Plugin;
use super::super::framework::state::State;
use super::super::job::Task;
use std::cmp::Ordering;

pub struct Priority;

impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "priority"
    }

    fn task_order(&self, l: &Task, r: &Task) -> Ordering {
        r.priority.cmp(&l.priority)
    }

    fn job_order(&self, s: &State, l: usize, r: usize) -> Ordering {
        s.jobs[r].priority.cmp(&s.jobs[l].priority)
    }
}
