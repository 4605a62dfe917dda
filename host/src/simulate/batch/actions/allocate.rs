//! `allocate` (Volcano v1.11 `actions/allocate/allocate.go`): queues by
//! queue order, jobs of a queue by job order, a job's pending tasks by task
//! order. Each task is checked against its queue (`Allocatable`), then
//! against the nodes (idle resources, predicates) and placed on the best
//! node by node order, inside the job's Statement. The Statement is
//! committed when the job is ready (gang: `minMember` placed) and
//! discarded otherwise, so a gang that cannot run holds nothing. A job
//! that became ready with tasks left goes back into its queue, which
//! interleaves jobs and queues by their updated shares.
//!
//! Without an `enqueue` action (sift has none), a Pending PodGroup is
//! moved to Inqueue here, as Volcano does. Predicate failures of a role's
//! tasks are cached for the rest of the job's pass
//! ([`super::super::error_cache`]).

use super::super::error_cache::NodeErrors;
use super::super::framework::priority_queue::PriorityQueue;
use super::super::framework::session::Session;
use super::super::framework::statement::Statement;
use crate::config::batch::PluginOption;
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub fn execute(s: &mut Session, tiers: &[Vec<PluginOption>]) -> Result<()> {
    let mut queues = PriorityQueue::default();
    let mut jobs_by_queue: BTreeMap<usize, PriorityQueue> = BTreeMap::new();
    for j in 0..s.state.jobs.len() {
        let job = &mut s.state.jobs[j];
        if job.phase.is_empty() || job.phase == "Pending" {
            job.phase = "Inqueue".into();
        }
        if s.job_valid(j).is_some() {
            continue;
        }
        let queue_name = s.state.jobs[j].queue.clone();
        let Some(q) = s.state.queues.iter().position(|q| q.name == queue_name) else {
            continue;
        };
        let jobs = jobs_by_queue.entry(q).or_insert_with(|| {
            queues.push(q, &|a, b| s.queue_less(a, b));
            PriorityQueue::default()
        });
        jobs.push(j, &|a, b| s.job_less(a, b));
    }

    let mut pending_tasks: HashMap<usize, PriorityQueue> = HashMap::new();
    while let Some(q) = queues.pop(&|a, b| s.queue_less(a, b)) {
        if s.overused(q) {
            // The queue's jobs left untried are held back by it.
            for &j in jobs_by_queue.get(&q).map_or(&[][..], |jobs| jobs.items()) {
                if s.state.jobs[j].may_be_held() {
                    let why = s.queue_limit(q, None);
                    s.state.jobs[j].held_by_queue(why);
                }
            }
            continue;
        }
        let Some(jobs) = jobs_by_queue.get_mut(&q) else {
            continue;
        };
        let Some(j) = jobs.pop(&|a, b| s.job_less(a, b)) else {
            continue;
        };
        let tasks = pending_tasks.entry(j).or_insert_with(|| {
            let mut pq = PriorityQueue::default();
            for t in s.state.jobs[j].pending(&s.state.tasks) {
                if !s.state.tasks[t].best_effort && !s.state.tasks[t].gated {
                    pq.push(t, &|a, b| s.task_less(a, b));
                }
            }
            pq
        });
        if tasks.is_empty() {
            queues.push(q, &|a, b| s.queue_less(a, b));
            continue;
        }
        allocate_for_tasks(s, tasks, j, jobs, q, tiers)?;
        queues.push(q, &|a, b| s.queue_less(a, b));
    }
    Ok(())
}

fn allocate_for_tasks(
    s: &mut Session,
    tasks: &mut PriorityQueue,
    job: usize,
    jobs: &mut PriorityQueue,
    queue: usize,
    tiers: &[Vec<PluginOption>],
) -> Result<()> {
    let mut stmt = Statement::default();
    // The predicate error cache, by role, for this pass.
    let mut failed_by_role: HashMap<String, Arc<NodeErrors>> = HashMap::new();
    while let Some(t) = tasks.pop(&|a, b| s.task_less(a, b)) {
        if !s.allocatable(queue, t) {
            if s.state.jobs[job].may_be_held() {
                let why = s.queue_limit(queue, Some(t));
                s.state.jobs[job].held_by_queue(why);
            }
            continue;
        }
        if s.state.jobs[job].task_has_fit_errors(&s.state.tasks, t) {
            continue;
        }
        s.state.jobs[job].tried();
        let role = s.state.tasks[t].role.clone();
        let cached = (!role.is_empty())
            .then(|| failed_by_role.get(&role).cloned())
            .flatten();
        let (placed, failed) = s.place(t, false, cached);
        if !role.is_empty() && !failed.is_empty() {
            let entry = failed_by_role.entry(role).or_default();
            let map = Arc::make_mut(entry);
            for f in failed {
                map.insert(f.node, f.reasons);
            }
        }
        match placed {
            Err(fit) => {
                s.state.jobs[job].fit_errors.insert(t, fit);
                if s.state.jobs[job].need_continue_allocating(&s.state.tasks) {
                    continue;
                }
                break;
            }
            Ok(decision) => stmt.allocate(s, t, decision)?,
        }
        if s.job_ready(job) && !tasks.is_empty() {
            jobs.push(job, &|a, b| s.job_less(a, b));
            break;
        }
    }
    if s.job_ready(job) {
        stmt.commit(s);
    } else if !s.job_pipelined(job, tiers) {
        stmt.discard(s);
    }
    Ok(())
}
