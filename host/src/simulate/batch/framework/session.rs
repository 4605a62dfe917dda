//! One scheduling session (Volcano's `framework.Session`): the snapshot
//! it works on, the plugins of the tiers, and the operations actions use:
//! order functions and job checks combined tier by tier, predicates and
//! node order (sift's engine and scorers), and tentative placements that
//! a Statement (`statement.rs`) commits or discards together. The session
//! receives its plugins already built from the registry, so it never names
//! one.

use super::super::error_cache::NodeErrors;
use super::super::job::{FitErrors, NodeFit, Task, TaskStatus};
use super::super::predicates::Schedulers;
use super::super::resource::Res;
use super::plugin::{Invalid, JobCondition, Plugin, Vote};
use super::registry::Registered;
use super::state::State;
use crate::cluster::ClusterState;
use crate::config::batch::PluginOption;
use crate::engine::schedule::{Attempt, Decision};
use crate::input::kube;
use anyhow::Result;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

fn on(flag: Option<bool>) -> bool {
    flag.unwrap_or(true)
}

pub struct Session<'a> {
    pub state: State,
    plugins: Vec<Registered>,
    pub cluster: &'a mut ClusterState,
    pub schedulers: &'a mut Schedulers,
    /// The decision each Allocated task was placed with.
    decisions: HashMap<usize, Decision>,
    /// Tasks dispatched to bind this session, in order, with their
    /// decisions.
    pub dispatched: Vec<(usize, Decision)>,
    /// Allocated tasks whose binding would fail (see
    /// [`Session::allocate_unbindable`]).
    unbindable: std::collections::HashSet<usize>,
}

impl<'a> Session<'a> {
    /// Opens a session over `state` with the tiers' plugins, built for
    /// it in tier order (every plugin's `OnSessionOpen`).
    pub fn open(
        state: State,
        plugins: Vec<Registered>,
        cluster: &'a mut ClusterState,
        schedulers: &'a mut Schedulers,
    ) -> Session<'a> {
        Session {
            state,
            plugins,
            cluster,
            schedulers,
            decisions: HashMap::new(),
            dispatched: Vec::new(),
            unbindable: Default::default(),
        }
    }

    /// The first verdict of the plugins with `enabled` on, in tier order
    /// (`Equal` when none decides): how every order function is combined.
    fn first_verdict(
        &self,
        enabled: fn(&PluginOption) -> Option<bool>,
        verdict: impl Fn(&dyn Plugin) -> Ordering,
    ) -> Ordering {
        self.plugins
            .iter()
            .filter(|p| on(enabled(&p.option)))
            .map(|p| verdict(p.plugin.as_ref()))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    }

    pub fn job_less(&self, l: usize, r: usize) -> bool {
        match self.first_verdict(|o| o.enabled_job_order, |p| p.job_order(&self.state, l, r)) {
            Ordering::Equal => {
                let (lj, rj) = (&self.state.jobs[l], &self.state.jobs[r]);
                (lj.created, &lj.uid) < (rj.created, &rj.uid)
            }
            o => o == Ordering::Less,
        }
    }

    pub fn queue_less(&self, l: usize, r: usize) -> bool {
        let (lq, rq) = (&self.state.queues[l], &self.state.queues[r]);
        match self.first_verdict(
            |o| o.enabled_queue_order,
            |p| p.queue_order(&self.state, lq, rq),
        ) {
            Ordering::Equal => (lq.created, &lq.name) < (rq.created, &rq.name),
            o => o == Ordering::Less,
        }
    }

    pub fn task_less(&self, l: usize, r: usize) -> bool {
        let (lt, rt) = (&self.state.tasks[l], &self.state.tasks[r]);
        match self.first_verdict(|o| o.enabled_task_order, |p| p.task_order(lt, rt)) {
            Ordering::Equal => compare_task(lt, rt),
            o => o == Ordering::Less,
        }
    }

    pub fn job_valid(&self, job: usize) -> Option<Invalid> {
        let j = &self.state.jobs[job];
        self.plugins
            .iter()
            .find_map(|p| p.plugin.job_valid(&self.state, j))
    }

    pub fn job_ready(&self, job: usize) -> bool {
        let j = &self.state.jobs[job];
        self.plugins
            .iter()
            .filter(|p| on(p.option.enabled_job_ready))
            .all(|p| p.plugin.job_ready(&self.state, j).unwrap_or(true))
    }

    /// A Permit in a tier decides unless something rejects; a Reject
    /// anywhere before decides against.
    pub fn job_pipelined(&self, job: usize, tiers: &[Vec<PluginOption>]) -> bool {
        let j = &self.state.jobs[job];
        for tier in tiers {
            let mut permit = false;
            for option in tier {
                if !on(option.enabled_job_pipelined) {
                    continue;
                }
                let Some(p) = self.plugins.iter().find(|p| p.option.name == option.name) else {
                    continue;
                };
                match p.plugin.job_pipelined(&self.state, j) {
                    Some(Vote::Reject) => return false,
                    Some(Vote::Permit) => permit = true,
                    _ => {}
                }
            }
            if permit {
                return true;
            }
        }
        true
    }

    pub fn overused(&self, queue: usize) -> bool {
        let q = &self.state.queues[queue];
        self.plugins
            .iter()
            .filter(|p| on(p.option.enabled_overused))
            .any(|p| p.plugin.overused(&self.state, q).unwrap_or(false))
    }

    pub fn allocatable(&self, queue: usize, task: usize) -> bool {
        let q = &self.state.queues[queue];
        let t = &self.state.tasks[task];
        self.plugins
            .iter()
            .filter(|p| on(p.option.enabled_allocatable))
            .all(|p| p.plugin.allocatable(&self.state, q, t).unwrap_or(true))
    }

    /// Why the queue holds a job back (Overused, or Allocatable for
    /// `task`), naming its deserved share and what it holds, for the job's
    /// message.
    pub fn queue_limit(&self, queue: usize, task: Option<usize>) -> String {
        let q = &self.state.queues[queue];
        let share = self
            .queue_share(&q.name)
            .map(|(deserved, allocated)| format!(" (deserved: {deserved}; allocated: {allocated})"))
            .unwrap_or_default();
        match task {
            None => format!("queue {} is overused{share}", q.name),
            Some(t) => format!(
                "queue {} cannot take task {} (request: {}){share}",
                q.name, self.state.tasks[t].name, self.state.tasks[t].resreq
            ),
        }
    }

    /// proportion's (deserved, allocated) for a queue, if it runs.
    pub fn queue_share(&self, queue: &str) -> Option<(Res, Res)> {
        self.plugins
            .iter()
            .find_map(|p| p.plugin.queue_share(queue))
    }

    /// The condition the plugins write on a job's PodGroup at close: the
    /// first plugin, in tier order, that writes one.
    pub fn job_condition(&self, job: usize) -> Option<JobCondition> {
        let j = &self.state.jobs[job];
        self.plugins
            .iter()
            .find_map(|p| p.plugin.job_condition(&self.state, j))
    }

    /// Predicates and node order for a task on the session's current
    /// state (allocate's, with the idle check and `cached` failures, or
    /// backfill's): the chosen node, or why it fits none; and the nodes
    /// that failed either way.
    pub fn place(
        &mut self,
        task: usize,
        backfill: bool,
        cached: Option<Arc<NodeErrors>>,
    ) -> (Result<Decision, FitErrors>, Vec<NodeFit>) {
        self.schedulers.error_cache.set(cached);
        let out = self.place_inner(task, backfill);
        self.schedulers.error_cache.set(None);
        out
    }

    fn place_inner(
        &mut self,
        task: usize,
        backfill: bool,
    ) -> (Result<Decision, FitErrors>, Vec<NodeFit>) {
        let t = &self.state.tasks[task];
        let mut pod = match kube::pod(&t.object) {
            Ok(p) => p,
            Err(e) => {
                let fit = FitErrors {
                    nodes: vec![NodeFit {
                        node: "".into(),
                        reasons: vec![format!("{e:#}")],
                    }],
                };
                return (Err(fit), Vec::new());
            }
        };
        // Plugins that read the whole pod (DynamicResources,
        // NodeDeclaredFeatures) get it, as in scheduler mode.
        let scheduler = if backfill {
            &self.schedulers.backfill
        } else {
            &self.schedulers.allocate
        };
        if scheduler.engine().full_objects().pod {
            pod.object = Some(kube::object_json(&t.object));
        }
        let snapshot = self.cluster.snapshot();
        let Attempt {
            filter,
            decision,
            error,
        } = if backfill {
            self.schedulers.backfill.schedule(&snapshot, pod)
        } else {
            self.schedulers.allocate.schedule(&snapshot, pod)
        };
        let failed: Vec<NodeFit> = filter
            .statuses()
            .map(|(node, st)| NodeFit {
                node: node.clone(),
                reasons: st.status.reasons().iter().map(|r| r.to_string()).collect(),
            })
            .collect();
        if let Some(d) = decision {
            return (Ok(d), failed);
        }
        // A plugin that failed fails the task on every node, as an Error
        // status does in Volcano's FitErrors.
        if let Some(e) = error.or(filter.error) {
            let fit = FitErrors {
                nodes: (0..snapshot.len() as u32)
                    .map(|s| NodeFit {
                        node: snapshot.name(s).clone(),
                        reasons: vec![e.clone()],
                    })
                    .collect(),
            };
            return (Err(fit), Vec::new());
        }
        (
            Err(FitErrors {
                nodes: failed.clone(),
            }),
            failed,
        )
    }

    /// Places a task on its node in the session: the assumed pod joins
    /// the cluster state (so later predicates see it) and the plugins
    /// account for it.
    pub fn allocate(&mut self, task: usize, decision: Decision) -> Result<()> {
        let assumed = crate::simulate::assumed(&self.state.tasks[task].object, &decision);
        self.cluster.upsert_pod(&assumed)?;
        let t = &mut self.state.tasks[task];
        t.status = TaskStatus::Allocated;
        t.node = Some(decision.node.clone());
        self.decisions.insert(task, decision);
        for p in &mut self.plugins {
            p.plugin.on_allocate(&self.state, task);
        }
        Ok(())
    }

    /// Undoes [`Session::allocate`]: the task is Pending again and
    /// remembers where it had been placed.
    pub fn unallocate(&mut self, task: usize) {
        for p in &mut self.plugins {
            p.plugin.on_deallocate(&self.state, task);
        }
        let t = &mut self.state.tasks[task];
        self.cluster.remove_pod_key(&t.key);
        if let Some(node) = t.node.take() {
            t.last = Some((t.status, node));
        }
        t.status = TaskStatus::Pending;
        self.decisions.remove(&task);
    }

    /// Sends an Allocated task to bind (`dispatch`): status Binding.
    pub fn dispatch(&mut self, task: usize) {
        let t = &mut self.state.tasks[task];
        if t.status != TaskStatus::Allocated {
            return;
        }
        t.status = TaskStatus::Binding;
        t.last = None;
        if let Some(d) = self.decisions.remove(&task) {
            self.dispatched.push((task, d));
        }
    }

    /// `Session.Allocate` (backfill's): allocate, and bind every
    /// Allocated task of the job once it is ready.
    pub fn allocate_and_dispatch(&mut self, task: usize, decision: Decision) -> Result<()> {
        self.allocate(task, decision)?;
        let job = self.state.tasks[task].job;
        if self.job_ready(job) {
            // The job's Allocated tasks bind in order; the first whose node
            // had no room ends it (`ssn.dispatch` returns at the first
            // AddBindTask error).
            for t in self.state.jobs[job].tasks.clone() {
                if self.unbindable.contains(&t) {
                    break;
                }
                self.dispatch(t);
            }
        }
        Ok(())
    }

    /// Places a task that will not bind: its node had no idle room for it
    /// (backfill on an overcommitted node). It stays Allocated.
    pub fn allocate_unbindable(&mut self, task: usize, decision: Decision) -> Result<()> {
        self.allocate(task, decision)?;
        self.unbindable.insert(task);
        Ok(())
    }

    /// Tasks still Allocated when the session closes were never bound:
    /// their pods leave the cluster state. Returns them.
    pub fn release_undispatched(&mut self) -> Vec<usize> {
        let left: Vec<usize> = (0..self.state.tasks.len())
            .filter(|&t| self.state.tasks[t].status == TaskStatus::Allocated)
            .collect();
        for &t in &left {
            let key = self.state.tasks[t].key.clone();
            self.cluster.remove_pod_key(&key);
        }
        left
    }
}

/// Volcano's default task order (`CompareTask`): by the pod name's index
/// suffix (`<job>-<task>-<n>`) when both have one and they differ, else
/// by creation time, then UID.
fn compare_task(l: &Task, r: &Task) -> bool {
    fn index(name: &str) -> Option<i64> {
        let parts: Vec<&str> = name.split('-').collect();
        if parts.len() >= 3 {
            parts[parts.len() - 1].parse().ok()
        } else {
            None
        }
    }
    if let (Some(a), Some(b)) = (index(&l.name), index(&r.name))
        && a != b
    {
        return a < b;
    }
    if l.created == r.created {
        return l.uid < r.uid;
    }
    l.created < r.created
}
