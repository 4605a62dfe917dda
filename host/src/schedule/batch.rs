//! `sift schedule --mode batch`: Volcano's scheduler on a live cluster.
//! Every `schedulePeriod` (counted from the end of the last session, as
//! Volcano's `wait.Until`) a session opens over the cache the watch keeps
//! (pods as tasks of their jobs, PodGroups, Queues, PriorityClasses) and
//! runs the configured actions, exactly as `sift simulate --mode batch`
//! runs them; then what it decided is written:
//!
//! - the dispatched tasks are bound (a gang's tasks are dispatched only
//!   when its Statement commits, so a gang binds whole or not at all); a
//!   bind that fails puts its task back to pending (Volcano's
//!   `resyncTask`);
//! - each PodGroup whose status changed gets it (phase, conditions,
//!   running/succeeded/failed) and its event;
//! - each pod that still waits gets `PodScheduled=False` with Volcano's
//!   message and a `FailedScheduling` event (a series).

use super::input::{BindOutcome, Input};
use super::prebind::PreBind;
use super::scheduler::Parts;
use super::writer::{Unschedulable, now_rfc3339};
use crate::cluster::ClusterState;
use crate::config::batch::Session as SessionConfig;
use crate::framework::{Framework, Mode, Runner};
use crate::serve::ClusterEvent;
use crate::serve::requests::BatchEvent;
use crate::simulate::batch::cache::World;
use crate::simulate::batch::cache::intake::Intake;
use crate::simulate::batch::cache::live::GroupStatus;
use crate::simulate::batch::framework::registry::Registry;
use crate::simulate::batch::{BatchInput, Schedulers, plugins, scheduler};
use crate::simulate::report::{GroupCondition, Outputs, Tracker};
use k8s_openapi::api::core::v1 as k8s;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

pub struct BatchLoop {
    parts: Parts,
    cluster: ClusterState,
    world: World,
    tracker: Tracker,
    registry: Registry,
    built: Option<(u64, Schedulers, SessionConfig)>,
    failed: Option<u64>,
    /// Pods the cache could not take yet (their PodGroup or queue has not
    /// arrived): retried when one does.
    stranded: BTreeMap<String, k8s::Pod>,
    /// Each PodGroup's status as last written, and its conditions by type.
    written: HashMap<String, GroupStatus>,
    conditions: HashMap<String, BTreeMap<String, Value>>,
    /// Something changed since the last session.
    changed: bool,
    sessions: u64,
}

impl BatchLoop {
    pub fn new(parts: Parts) -> anyhow::Result<BatchLoop> {
        let mut cluster = ClusterState::new(&parts.scheduler_name, &[]);
        let intake = Intake::new(Some(parts.scheduler_name.clone()));
        let world = World::new(&BatchInput::default(), intake)?;
        let tracker = Tracker::new(&mut cluster, Outputs::default());
        let mut this = BatchLoop {
            parts,
            cluster,
            world,
            tracker,
            registry: plugins::registry(),
            built: None,
            failed: None,
            stranded: BTreeMap::new(),
            written: HashMap::new(),
            conditions: HashMap::new(),
            changed: true,
            sessions: 0,
        };
        this.refresh();
        Ok(this)
    }

    /// Runs sessions until [`Input::Stop`].
    pub fn run(mut self) {
        let mut last = Instant::now();
        loop {
            let period = self
                .built
                .as_ref()
                .map_or(Duration::from_secs(1), |(_, _, c)| c.period);
            let due = last + period;
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                match self.parts.inputs.recv_timeout(due - now) {
                    Ok(Input::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                    Ok(input) => self.apply(input),
                    Err(RecvTimeoutError::Timeout) => break,
                }
            }
            let ready = self.parts.leading.load(Ordering::SeqCst)
                && (self.parts.synced)()
                && self.refresh();
            if ready && (self.changed || self.world.has_pending()) {
                self.session();
            }
            last = Instant::now();
        }
    }

    /// Builds the session's schedulers from the current profile when it
    /// changed; false while none may schedule.
    fn refresh(&mut self) -> bool {
        let profile = self.parts.profile.load();
        if self.built.as_ref().map(|b| b.0) == Some(profile.generation) {
            return true;
        }
        if self.failed == Some(profile.generation) {
            return self.built.is_some();
        }
        let Some(source) = profile.source.as_ref() else {
            return false;
        };
        if !profile.unready.is_empty() {
            return false;
        }
        let built = Framework::build(
            &source.config,
            &source.catalog,
            Mode::Batch,
            &source.overrides,
        );
        match built {
            Ok(Framework {
                runner: Runner::Batch(b),
                ..
            }) => {
                let (schedulers, session) = *b;
                let keys = schedulers.main().pod_annotation_keys();
                self.cluster.add_pod_annotation_keys(&keys);
                self.parts.node_objects.store(
                    schedulers.main().engine().full_objects().node,
                    Ordering::SeqCst,
                );
                self.parts
                    .metrics
                    .profile_generation
                    .set(profile.generation as i64);
                tracing::info!(
                    generation = profile.generation,
                    "sessions with a new profile"
                );
                self.built = Some((profile.generation, schedulers, session));
                self.changed = true;
                true
            }
            Ok(_) => false,
            Err(e) => {
                let message = format!(
                    "cannot build the batch scheduler from profile {}: {e:#}",
                    profile.generation
                );
                tracing::error!("{message}");
                self.failed = Some(profile.generation);
                if self.built.is_none() {
                    *self
                        .parts
                        .build_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()) = Some(message);
                }
                self.built.is_some()
            }
        }
    }

    fn apply(&mut self, input: Input) {
        match input {
            Input::Cluster(events) => {
                for e in events {
                    self.apply_event(e);
                }
            }
            Input::Bound { key, outcome, .. } => {
                if outcome != BindOutcome::Bound {
                    tracing::info!("bind of {key} did not happen: {outcome:?}");
                    self.world.unbind(&key, &mut self.cluster);
                    self.changed = true;
                }
            }
            Input::PreemptionFailed { .. } | Input::Stop => {}
        }
    }

    fn apply_event(&mut self, event: ClusterEvent) {
        self.changed = true;
        let result = match event {
            ClusterEvent::UpsertNode(n) => {
                if self.cluster.upsert_node(*n) {
                    self.world.nodes_changed();
                }
                Ok(())
            }
            ClusterEvent::DeleteNode(name) => {
                if self.cluster.remove_node(&name) {
                    self.world.nodes_changed();
                }
                Ok(())
            }
            ClusterEvent::UpsertNamespace(ns) => {
                self.cluster.upsert_namespace(&ns);
                Ok(())
            }
            ClusterEvent::DeleteNamespace(name) => {
                self.cluster.remove_namespace(&name);
                Ok(())
            }
            ClusterEvent::UpsertPod(pod) => self.upsert_pod(*pod),
            ClusterEvent::DeletePod(pod) => {
                self.remove_pod(&crate::input::kube::pod_key(&pod));
                Ok(())
            }
            ClusterEvent::DeletePodKey(key) => {
                self.remove_pod(&key);
                Ok(())
            }
            ClusterEvent::Batch(b) => self.apply_batch(b),
            // Batch mode's actions (allocate, backfill) preempt nothing.
            ClusterEvent::UpsertBudget(_) | ClusterEvent::DeleteBudget(_) => Ok(()),
            // Batch mode's own cache keeps no workloads yet.
            ClusterEvent::UpsertWorkload(_) | ClusterEvent::DeleteWorkload(..) => Ok(()),
            // Nor the objects the volume filters read.
            ClusterEvent::UpsertApiObject(_) | ClusterEvent::DeleteApiObject(..) => Ok(()),
            ClusterEvent::Bookmark => Ok(()),
        };
        if let Err(e) = result {
            tracing::error!("watch event not applied: {e:#}");
        }
    }

    fn upsert_pod(&mut self, pod: k8s::Pod) -> anyhow::Result<()> {
        let key = crate::input::kube::pod_key(&pod);
        self.stranded.remove(&key);
        self.world
            .pod_upserted(&pod, &mut self.cluster, &mut self.tracker)?;
        if self.world.is_stranded(&key) {
            self.stranded.insert(key, pod);
        }
        Ok(())
    }

    fn remove_pod(&mut self, key: &str) {
        self.stranded.remove(key);
        self.world
            .pod_removed(key, &mut self.cluster, &mut self.tracker);
    }

    fn apply_batch(&mut self, event: BatchEvent) -> anyhow::Result<()> {
        match event {
            BatchEvent::UpsertPodGroup(pg) => self.world.upsert_group(*pg),
            BatchEvent::DeletePodGroup(key) => self.world.remove_group(&key),
            BatchEvent::UpsertQueue(q) => self.world.upsert_queue(&q)?,
            BatchEvent::DeleteQueue(_) => {}
            BatchEvent::UpsertPriorityClass(pc) => self.world.upsert_priority_class(&pc),
            BatchEvent::DeletePriorityClass(name) => self.world.remove_priority_class(&name),
        }
        // Pods that waited for a PodGroup or queue are taken again.
        for (_, pod) in std::mem::take(&mut self.stranded) {
            self.upsert_pod(pod)?;
        }
        Ok(())
    }

    fn session(&mut self) {
        let Some((_, schedulers, config)) = self.built.as_mut() else {
            return;
        };
        let started = Instant::now();
        self.sessions += 1;
        let closed = match scheduler::session(
            schedulers,
            &self.registry,
            &mut self.cluster,
            &mut self.world,
            &mut self.tracker,
            config,
            self.sessions,
        ) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!("session {} failed: {e:#}", self.sessions);
                return;
            }
        };
        self.changed = false;
        let mut bound = 0;
        for (key, decision) in &closed.bound {
            if let Some(pod) = self.world.task_object(key) {
                let assumed = crate::simulate::assumed(&pod, decision);
                self.parts.writer.bind(&assumed, PreBind::none());
                bound += 1;
            }
        }
        for (key, message) in closed.waiting {
            if let Some(pod) = self.world.task_object(&key) {
                self.parts.writer.unschedulable(
                    &pod,
                    Unschedulable {
                        reason: "Unschedulable",
                        message,
                        nominated: None,
                    },
                );
            }
        }
        self.write_groups();
        // In batch mode an attempt is a session (kube-scheduler's metric
        // names, Volcano's unit of work): `scheduled` when it bound a pod.
        let result = if bound > 0 {
            "scheduled"
        } else {
            "unschedulable"
        };
        self.parts.metrics.attempt(result, started.elapsed());
        tracing::debug!(
            session = self.sessions,
            bound,
            pending = self.world.pending_count(),
            "session closed"
        );
    }

    /// Writes every PodGroup status that changed since it was last written.
    fn write_groups(&mut self) {
        for key in self.world.group_keys() {
            let Some(status) = self.world.group_status(&key) else {
                continue;
            };
            if self.written.get(&key) == Some(&status) {
                continue;
            }
            let conditions = self.conditions.entry(key.clone()).or_default();
            if let Some(c) = &status.condition {
                let changed = conditions.get(&c.kind).is_none_or(|old| {
                    old["reason"] != c.reason.as_str() || old["message"] != c.message.as_str()
                });
                if changed {
                    conditions.insert(c.kind.clone(), condition_json(c));
                }
            }
            let body = json!({
                "phase": status.phase,
                "conditions": conditions.values().cloned().collect::<Vec<_>>(),
                "running": status.running,
                "succeeded": status.succeeded,
                "failed": status.failed,
            });
            let waiting = matches!(status.phase.as_str(), "Pending" | "Inqueue" | "Unknown");
            let event = if waiting {
                status.event.clone().map(|e| (true, e))
            } else {
                Some((false, "pod group is ready".to_string()))
            };
            self.parts.writer.pod_group_status(&key, body, event);
            self.written.insert(key, status);
        }
    }
}

/// A PodGroup condition as Volcano writes it.
fn condition_json(c: &GroupCondition) -> Value {
    json!({
        "type": c.kind,
        "status": "True",
        "reason": c.reason,
        "message": c.message,
        "lastTransitionTime": now_rfc3339(),
    })
}
