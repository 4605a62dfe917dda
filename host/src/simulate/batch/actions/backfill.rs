//! `backfill` (Volcano v1.11 `actions/backfill/backfill.go`): best-effort
//! tasks (no resource request), which allocate skips, in queue, job and
//! task order; each goes to the best node that passes the predicates and
//! binds once its job is ready. As upstream, the first task that fits no
//! node ends the action for this session.

use super::super::framework::priority_queue::PriorityQueue;
use super::super::framework::session::Session;
use super::super::idle_fit;
use anyhow::Result;
use std::collections::BTreeMap;

pub fn execute(s: &mut Session) -> Result<()> {
    for t in pick_up_pending_tasks(s) {
        let job = s.state.tasks[t].job;
        match s.place(t, true, None).0 {
            Err(fit) => {
                s.state.jobs[job].fit_errors.insert(t, fit);
                break;
            }
            Ok(decision) => {
                // Binding checks the node's idle resources (the cache's
                // AddBindTask): on an overcommitted node the task stays
                // Allocated, unbound, and backfill goes on.
                let snapshot = s.cluster.snapshot();
                let fits = idle_fit::fits(&s.state.tasks[t].resreq, snapshot.node(decision.slot));
                if fits {
                    s.allocate_and_dispatch(t, decision)?;
                } else {
                    s.allocate_unbindable(t, decision)?;
                }
            }
        }
    }
    Ok(())
}

fn pick_up_pending_tasks(s: &Session) -> Vec<usize> {
    let mut queues = PriorityQueue::default();
    let mut jobs: BTreeMap<usize, PriorityQueue> = BTreeMap::new();
    let mut tasks: BTreeMap<usize, PriorityQueue> = BTreeMap::new();
    for j in 0..s.state.jobs.len() {
        let job = &s.state.jobs[j];
        if job.phase.is_empty() || job.phase == "Pending" || s.job_valid(j).is_some() {
            continue;
        }
        let Some(q) = s.state.queues.iter().position(|q| q.name == job.queue) else {
            continue;
        };
        let mut pq = PriorityQueue::default();
        for t in job.pending(&s.state.tasks) {
            if s.state.tasks[t].best_effort && !s.state.tasks[t].gated {
                pq.push(t, &|a, b| s.task_less(a, b));
            }
        }
        if pq.is_empty() {
            continue;
        }
        tasks.insert(j, pq);
        let jq = jobs.entry(q).or_insert_with(|| {
            queues.push(q, &|a, b| s.queue_less(a, b));
            PriorityQueue::default()
        });
        jq.push(j, &|a, b| s.job_less(a, b));
    }
    let mut out = Vec::new();
    while let Some(q) = queues.pop(&|a, b| s.queue_less(a, b)) {
        let Some(jq) = jobs.get_mut(&q) else { continue };
        while let Some(j) = jq.pop(&|a, b| s.job_less(a, b)) {
            if let Some(tq) = tasks.get_mut(&j) {
                while let Some(t) = tq.pop(&|a, b| s.task_less(a, b)) {
                    out.push(t);
                }
            }
        }
    }
    out
}
