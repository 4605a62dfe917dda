//! `sift simulate`: kube-scheduler's `scheduleOne` loop over a cluster and
//! a workload of pod events.
//!
//! The loop, per instant of the workload's clock: apply the events (a pod
//! arrives and is queued; a pod leaves and frees its node), wake the
//! unschedulable pods if a bound pod left, then drain the active queue:
//! each pod gets one cycle ([`Scheduler::schedule`]: filters, scores, host
//! selection, reserve). A pod that fits is **assumed**: bound in the
//! cluster state with the annotations its reserve steps returned, so only
//! its node changes and only that node is resynced into plugin instances.
//! A pod that fits nowhere records kube-scheduler's FitError message, the
//! PostFilter part included, and waits in the unschedulable pool
//! ([`queue`]); when DefaultPreemption finds victims ([`preemption`]) they
//! are evicted (they leave the simulation: no controller recreates them),
//! the pod is nominated to their node and every unschedulable pod is
//! retried at once. Binding always succeeds (assume =
//! commit), so assumed pods never expire, as upstream with a working
//! binder.
//!
//! The pieces a batch mode (sessions of actions over tiers of plugins) will
//! share are separate: the workload and clock (`input::workload`), the
//! cluster state, and the report ([`report`]).

pub mod api;
pub mod batch;
pub mod clock;
pub mod fgd_replay;
pub mod plot;
pub mod prebind;
pub mod preemption;
pub mod queue;
pub mod report;

use crate::cluster::ClusterState;
use crate::engine::schedule::{Attempt, Scheduler};
use crate::input::kube;
use crate::input::workload::EventType;
use anyhow::Result;
use api::Api;
use clock::Clock;
use k8s_openapi::api::core::v1 as k8s;
use preemption::PostFilter;
use queue::{QueueKey, SchedulingQueue};
use report::{Explanation, Outputs, Report, Tracker};
use sift_sdk::Resources;

/// The pod as assumed on its chosen node: `spec.nodeName` set, the
/// reserve steps' annotations added.
pub fn assumed(object: &k8s::Pod, decision: &crate::engine::schedule::Decision) -> k8s::Pod {
    let mut assumed = object.clone();
    assumed.spec.get_or_insert_with(Default::default).node_name = Some(decision.node.to_string());
    if !decision.annotations.is_empty() {
        let annotations = assumed
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        for (k, v) in &decision.annotations {
            annotations.insert(k.clone(), v.clone());
        }
    }
    assumed
}

/// How the loop runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// One attempt per pod: a pod that fails is never retried (the FGD
    /// paper's replay protocol).
    pub no_retry: bool,
    /// The pod (namespace/name) whose last attempt is explained node by
    /// node and plugin by plugin.
    pub explain: Option<String>,
    /// Only pods with this `spec.schedulerName` are scheduled (default
    /// `default-scheduler`).
    pub scheduler_name: Option<String>,
}

/// Told after each instant (e.g. a progress bar): how far into the
/// workload file the replay is, in bytes, and its size.
pub trait Progress {
    fn attempted(&mut self, _done: u64, _total: u64) {}
}

impl Progress for () {}

/// What a bound pod holds on a node of the cluster: nothing when its node
/// is not in the cluster (kube-scheduler's cache keeps such a pod on a
/// node-less NodeInfo, using no node's capacity).
pub fn held(cluster: &ClusterState, key: &str) -> Option<Resources> {
    cluster
        .bound_requests(key)
        .filter(|(node, _)| cluster.contains_node(node))
        .map(|(_, r)| r.clone())
}

/// What one scheduling cycle works with besides the cluster state.
struct Loop<'a> {
    scheduler: &'a mut Scheduler,
    api: &'a mut dyn Api,
    options: &'a Options,
}

/// kube-scheduler's loop over `cluster` with `scheduler`: pod events and
/// instants from `clock`, binds and evictions to `api` (the simulation's:
/// the workload's virtual clock and [`api::InMemory`] binds); the report's pods
/// and samples go to `outputs`.
pub fn run(
    scheduler: &mut Scheduler,
    mut cluster: ClusterState,
    clock: &mut dyn Clock,
    api: &mut dyn Api,
    options: &Options,
    outputs: Outputs,
    progress: &mut dyn Progress,
) -> Result<Report> {
    let scheduler_name = options
        .scheduler_name
        .clone()
        .unwrap_or_else(|| kube::DEFAULT_SCHEDULER_NAME.to_string());
    let mut tracker = Tracker::new(&mut cluster, outputs);
    let mut queue: SchedulingQueue<k8s::Pod> = SchedulingQueue::new();
    let mut cycle = Loop {
        scheduler,
        api,
        options,
    };
    while let Some(now) = clock.next_instant()? {
        let mut freed = false;
        while let Some(event) = clock.next_event_at(now)? {
            let key = kube::pod_key(&event.object);
            match event.kind {
                EventType::Added => {
                    if kube::bound_node(&event.object).is_some() {
                        cluster.upsert_pod(&event.object)?;
                        tracker.bound_from_input(&cluster, &key, &clock.origin());
                        continue;
                    }
                    if let Some(why) = kube::not_for_scheduler(&event.object, &scheduler_name) {
                        tracker.skipped(why);
                        continue;
                    }
                    let priority = event
                        .object
                        .spec
                        .as_ref()
                        .and_then(|s| s.priority)
                        .unwrap_or(0);
                    let created = event
                        .object
                        .metadata
                        .creation_timestamp
                        .as_ref()
                        .map(|t| t.0.to_string())
                        .unwrap_or_default();
                    let qkey = QueueKey::new(priority, now, created, key.clone());
                    if queue.add(qkey, event.object) {
                        tracker.arrived(&key, now);
                    }
                }
                EventType::Deleted => {
                    if queue.remove(&key) {
                        cluster.clear_nomination(&key);
                        tracker.departed(&key, now, None);
                    } else if cluster.bound_requests(&key).is_some() {
                        let requests = held(&cluster, &key);
                        cluster.remove_pod_key(&key);
                        tracker.departed(&key, now, requests.as_ref());
                        freed = true;
                    }
                }
            }
        }
        if freed && !options.no_retry {
            queue.wake_all();
        }
        while let Some((qkey, object)) = queue.pop() {
            let key = qkey.key().to_string();
            let tried = cycle.attempt(&mut cluster, &mut tracker, &object, &key, now)?;
            if tried != Tried::Bound && !options.no_retry {
                queue.park(qkey, object, now);
            }
            // Victims left: every unschedulable pod may fit now, the
            // preemptor (nominated) first by priority.
            if tried == Tried::Preempted {
                queue.wake_all();
            }
            tracker.sample(now, queue.active_len() + queue.unschedulable_len());
        }
        tracker.sample(now, queue.active_len() + queue.unschedulable_len());
        let (done, total) = clock.progress();
        progress.attempted(done, total);
    }
    tracker.finish()
}

/// What one scheduling cycle did with a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tried {
    Bound,
    Failed,
    /// It failed, and its preemption evicted pods and nominated it.
    Preempted,
}

impl Loop<'_> {
    /// One scheduling cycle for a queued pod.
    fn attempt(
        &mut self,
        cluster: &mut ClusterState,
        tracker: &mut Tracker,
        object: &k8s::Pod,
        key: &str,
        now: u64,
    ) -> Result<Tried> {
        let mut pod = match kube::pod(object) {
            Ok(p) => p,
            Err(e) => {
                tracker.failed(key, None, format!("{e:#}"), None);
                return Ok(Tried::Failed);
            }
        };
        // The cluster state holds the pod's nomination (a preemption's), not
        // the queued object.
        pod.nominated_node_name = cluster.nomination(key).unwrap_or_default().to_string();
        if self.scheduler.engine().full_objects().pod {
            pod.object = Some(kube::object_json(object));
        }
        let snapshot = cluster.snapshot();
        let Attempt {
            filter,
            decision,
            error,
        } = self.scheduler.schedule(&snapshot, pod.clone());
        let explain = self.options.explain.as_deref() == Some(key);
        if explain {
            tracker.explain(Explanation::of(
                &filter,
                decision.as_ref(),
                error.as_deref(),
            ));
        }
        if let Some(decision) = decision {
            let assumed = assumed(object, &decision);
            cluster.upsert_pod(&assumed)?;
            if !decision.writes.is_empty() {
                let labels = &snapshot.node(decision.slot).labels;
                let objects: Vec<_> = decision.writes.iter().map(|w| w.object.clone()).collect();
                prebind::apply(cluster, &objects, labels)?;
            }
            self.api.bind(&assumed)?;
            tracker.bound(key, now, &decision, &pod.requests);
            return Ok(Tried::Bound);
        }
        if let Some(error) = error.or_else(|| filter.error.clone()) {
            tracker.failed(key, Some(&pod.requests), error, None);
            return Ok(Tried::Failed);
        }
        let fit_error = filter
            .message
            .clone()
            .unwrap_or_else(|| crate::engine::diagnosis::no_node_available(snapshot.len()));
        let post = preemption::post_filter(
            self.scheduler.engine(),
            cluster,
            &snapshot,
            object,
            &pod,
            &filter,
            &|k| tracker.started(k),
        );
        match post {
            PostFilter::Ineligible(text) => {
                let message = format!("{fit_error} {text}");
                tracker.failed(key, Some(&pod.requests), message, None);
                Ok(Tried::Failed)
            }
            PostFilter::NotHelpful(text) => {
                cluster.clear_nomination(key);
                let message = format!("{fit_error} {text}");
                tracker.failed(key, Some(&pod.requests), message, None);
                Ok(Tried::Failed)
            }
            // Without retries the pod would never use the room: report it.
            PostFilter::Preempt { node, victims } if self.options.no_retry => {
                let note = format!(
                    "preemption would evict {} from {node} (not done: --no-retry)",
                    victims.join(", ")
                );
                tracker.failed(key, Some(&pod.requests), fit_error, Some(note));
                Ok(Tried::Failed)
            }
            // prepareCandidate: evict the victims, clear lower-priority
            // nominations to the node, nominate the pod there. Its message
            // is the FitError without a PostFilter part, as upstream's.
            PostFilter::Preempt { victims, .. } if victims.is_empty() => {
                // Never produced; evicting nothing would retry the pod forever.
                tracker.failed(key, Some(&pod.requests), fit_error, None);
                Ok(Tried::Failed)
            }
            PostFilter::Preempt { node, victims } => {
                tracker.failed(key, Some(&pod.requests), fit_error, None);
                for v in &victims {
                    let freed = held(cluster, v);
                    cluster.remove_pod_key(v);
                    self.api.evict(v, key)?;
                    tracker.preempted(v, key, now, freed.as_ref());
                }
                cluster.clear_nominations_below(&node, pod.priority);
                cluster.nominate(&pod, &node);
                tracker.nominated(key, &node);
                Ok(Tried::Preempted)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineOptions;
    use crate::engine::Engine;
    use crate::engine::schedule::TieBreak;
    use crate::input::workload::{Event, Events};
    use anyhow::bail;

    /// Remembers what the loop asked of the cluster.
    #[derive(Default)]
    struct Recorder {
        binds: Vec<(String, Option<String>)>,
        refuse: bool,
    }

    impl Api for Recorder {
        fn bind(&mut self, pod: &k8s::Pod) -> Result<()> {
            if self.refuse {
                bail!("the API server said no");
            }
            let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
            self.binds.push((kube::pod_key(pod), node));
            Ok(())
        }

        fn evict(&mut self, _victim: &str, _preemptor: &str) -> Result<()> {
            Ok(())
        }
    }

    fn pending(name: &str) -> Event {
        Event {
            kind: EventType::Added,
            time: Some(0),
            object: serde_json::from_value(serde_json::json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": []}
            }))
            .unwrap(),
        }
    }

    fn replay(api: &mut Recorder) -> Result<Report> {
        let mut cluster = ClusterState::default();
        for name in ["n1", "n2"] {
            cluster.upsert_node(sift_sdk::Node {
                name: name.into(),
                ..Default::default()
            });
        }
        // No filter: every node fits, the first in node order is chosen.
        let engine = Engine::new(Vec::new(), EngineOptions::default()).unwrap();
        let mut scheduler = Scheduler::new(engine, Vec::new(), TieBreak::NodeOrder);
        let mut clock = Events::new(vec![pending("a"), pending("b")]);
        let outputs = Outputs::keep_all();
        let options = Options::default();
        run(
            &mut scheduler,
            cluster,
            &mut clock,
            api,
            &options,
            outputs,
            &mut (),
        )
    }

    #[test]
    fn every_assumed_pod_is_bound_through_the_api_once_with_its_node() {
        let mut api = Recorder::default();
        let report = replay(&mut api).unwrap();
        assert_eq!(report.counts().0, 2);
        let nodes: Vec<_> = api.binds.iter().map(|(_, n)| n.as_deref()).collect();
        assert_eq!(nodes, [Some("n1"), Some("n1")]);
        let keys: Vec<_> = api.binds.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["default/a", "default/b"]);
    }

    #[test]
    fn a_failed_bind_stops_the_simulation_with_the_api_error() {
        let mut api = Recorder {
            refuse: true,
            ..Recorder::default()
        };
        let err = replay(&mut api).unwrap_err();
        assert!(
            format!("{err:#}").contains("the API server said no"),
            "{err:#}"
        );
    }
}
