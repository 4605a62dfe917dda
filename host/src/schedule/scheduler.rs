//! The live scheduling loop: kube-scheduler's `scheduleOne`, serial, on a
//! thread of its own (it owns the plugin instances), fed by one channel
//! ([`Input`]): watch events and the writes' outcomes are applied between
//! two cycles, so every cycle sees one consistent cache.
//!
//! The cache is the cluster state plus the **assumed** pods: a pod that
//! fits is assumed on its node at once (its usage counts for the next
//! cycle) and its bind runs beside the loop ([`Writer::bind`]), after
//! the objects its PreBind writes (a claim's selected node, a volume's
//! claim, a device allocation; [`super::prebind`]), which are assumed in
//! the cache meanwhile ([`AssumedObjects`]). The watch's update that shows it bound confirms it; a failed bind forgets
//! it (its usage leaves the node), wakes the pods waiting for room and
//! requeues it with backoff, unless the API server said it is gone (404)
//! or bound already (409). Assumed pods never expire (upstream removed
//! the expiry in 1.36). A pod is in exactly one place, the queue, the
//! assumed set or the cache's bound pods, so it is never bound twice.
//!
//! Preemption acts as upstream's: victims get the `DisruptionTarget`
//! condition and a graceful delete, the preemptor its nomination; it waits
//! out of activeQ until every victim's deletion is seen (the victims keep
//! their room until then, so nothing is bound onto a node that cannot
//! hold it yet).

use super::assume::AssumedObjects;
use super::input::{BindOutcome, Input};
use super::metrics::Metrics;
use super::prebind::{self, Planned, PreBind};
use super::queue::{Failure, Queue, QueuedPod};
use super::writer::{Unschedulable, Writer};
use crate::cluster::ClusterState;
use crate::engine::schedule::{Attempt, Scheduler};
use crate::framework::{Framework, Mode, Runner};
use crate::input::kube;
use crate::serve::ClusterEvent;
use crate::serve::reload::Profile;
use crate::simulate::preemption::{self, PostFilter};
use crate::simulate::queue::QueueKey;
use arc_swap::ArcSwap;
use k8s_openapi::api::core::v1 as k8s;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A pod assumed on a node while its bind is in flight.
struct Assumed {
    uid: String,
    entry: QueuedPod,
}

/// What the loop needs from outside.
pub struct Parts {
    pub profile: Arc<ArcSwap<Profile>>,
    pub scheduler_name: String,
    pub writer: Writer,
    pub metrics: Arc<Metrics>,
    pub inputs: Receiver<Input>,
    /// Set while this replica may schedule (it holds the lease).
    pub leading: Arc<AtomicBool>,
    /// Whether every watched kind's first list is in.
    pub synced: Box<dyn Fn() -> bool + Send>,
    /// Whether whole node objects are kept: shared with the watch's sink.
    pub node_objects: Arc<AtomicBool>,
    /// Why the current profile cannot schedule (e.g. a configured score
    /// plugin is not loaded), for `/readyz`.
    pub build_error: Arc<Mutex<Option<String>>>,
}

pub struct Loop {
    parts: Parts,
    cache: ClusterState,
    assumed: HashMap<String, Assumed>,
    /// The objects assumed pods' PreBind writes, until the watch shows them.
    objects: AssumedObjects,
    queue: Queue,
    /// Bound pods' start times (seconds since the epoch), for preemption's
    /// victim order.
    started: HashMap<String, u64>,
    /// Preemptors waiting for their victims, and each victim's preemptor.
    preempting: HashMap<String, BTreeSet<String>>,
    victim_of: HashMap<String, String>,
    scheduler: Option<(u64, Scheduler)>,
    /// VolumeBinding's `bindTimeoutSeconds` in the scheduler's profile.
    bind_timeout: Duration,
    /// The profile generation that failed to build (tried once).
    failed: Option<u64>,
    start: Instant,
    /// Pods queued before the first cycle all count as queued at 0, so
    /// that PrioritySort orders them by priority, creation time and name
    /// alone, as `sift simulate` does for pods present at its start.
    scheduling: bool,
}

impl Loop {
    /// A loop whose scheduler is built from the current profile (at
    /// start, before any pod arrives, so the cache keeps from the first
    /// event what its plugins read).
    pub fn new(parts: Parts) -> Loop {
        let cache = ClusterState::new(&parts.scheduler_name, &[]);
        let mut this = Loop {
            parts,
            cache,
            assumed: HashMap::new(),
            objects: AssumedObjects::default(),
            queue: Queue::new(),
            started: HashMap::new(),
            preempting: HashMap::new(),
            victim_of: HashMap::new(),
            scheduler: None,
            bind_timeout: prebind::BIND_TIMEOUT,
            failed: None,
            start: Instant::now(),
            scheduling: false,
        };
        this.refresh_scheduler();
        this
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Runs until [`Input::Stop`] or the channel closes.
    pub fn run(mut self) {
        loop {
            // Everything that arrived, applied before the next cycle.
            loop {
                match self.parts.inputs.try_recv() {
                    Ok(Input::Stop) => return,
                    Ok(input) => self.apply(input),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                }
            }
            self.parts.metrics.pending(self.queue.pending());
            let ready = self.parts.leading.load(Ordering::SeqCst)
                && (self.parts.synced)()
                && self.refresh_scheduler();
            if ready {
                self.scheduling = true;
                let now = self.now();
                self.queue.flush(now);
                if let Some(entry) = self.queue.pop() {
                    self.cycle(entry);
                    continue;
                }
            }
            let wait = match (ready, self.queue.next_due()) {
                (true, Some(due)) => Duration::from_millis(due.saturating_sub(self.now()).max(1)),
                _ => Duration::from_millis(200),
            };
            match self
                .parts
                .inputs
                .recv_timeout(wait.min(Duration::from_secs(1)))
            {
                Ok(Input::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(input) => self.apply(input),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Builds the scheduler from the current profile when it changed;
    /// false while there is none that may schedule (no plugins yet, or an
    /// enabled plugin missing: scheduling without it could bind a pod
    /// where it cannot run).
    fn refresh_scheduler(&mut self) -> bool {
        let profile = self.parts.profile.load();
        if self.scheduler.as_ref().map(|(g, _)| *g) == Some(profile.generation) {
            return true;
        }
        if self.failed == Some(profile.generation) {
            return self.scheduler.is_some();
        }
        let Some(source) = profile.source.as_ref() else {
            return false;
        };
        if !profile.unready.is_empty() {
            return false;
        }
        match Framework::build(
            &source.config,
            &source.catalog,
            Mode::Scheduler,
            &source.overrides,
        ) {
            Ok(Framework {
                runner: Runner::Scheduler(s),
                ..
            }) => {
                let keys = s.pod_annotation_keys();
                if self.cache.add_pod_annotation_keys(&keys) && self.scheduling {
                    tracing::warn!(
                        "the new profile reads bound pods' annotations {keys:?}: pods bound \
                         before it show them from their next update"
                    );
                }
                self.parts
                    .node_objects
                    .store(s.engine().full_objects().node, Ordering::SeqCst);
                tracing::info!(
                    generation = profile.generation,
                    "scheduling with a new profile"
                );
                self.parts
                    .metrics
                    .profile_generation
                    .set(profile.generation as i64);
                self.bind_timeout = prebind::bind_timeout(&source.config.args_for("VolumeBinding"));
                self.scheduler = Some((profile.generation, s));
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::error!("cannot build the scheduler from the profile: {e:#}");
                // Keep the previous one if any: it still matches its plugins.
                self.scheduler.is_some()
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
            Input::Bound { key, uid, outcome } => self.bound(key, uid, outcome),
            Input::PreemptionFailed { preemptor } => {
                if let Some(victims) = self.preempting.remove(&preemptor) {
                    for v in victims {
                        self.victim_of.remove(&v);
                    }
                }
                self.queue.release(&preemptor, self.now());
            }
            Input::Stop => {}
        }
    }

    fn apply_event(&mut self, event: ClusterEvent) {
        let now = self.now();
        match event {
            ClusterEvent::UpsertNode(n) => {
                if self.cache.upsert_node(*n) {
                    self.queue.move_all(now);
                }
            }
            ClusterEvent::DeleteNode(name) => {
                self.cache.remove_node(&name);
            }
            ClusterEvent::UpsertNamespace(ns) => {
                if self.cache.upsert_namespace(&ns) {
                    self.queue.move_all(now);
                }
            }
            ClusterEvent::DeleteNamespace(name) => {
                self.cache.remove_namespace(&name);
            }
            ClusterEvent::UpsertPod(pod) => self.upsert_pod(*pod, now),
            ClusterEvent::DeletePod(pod) => self.delete_pod(&kube::pod_key(&pod), now),
            ClusterEvent::DeletePodKey(key) => self.delete_pod(&key, now),
            // No plugin waits on a budget: upstream's queue moves nothing.
            ClusterEvent::UpsertBudget(pdb) => {
                self.cache.upsert_budget(&pdb);
            }
            ClusterEvent::DeleteBudget(key) => {
                self.cache.remove_budget(&key);
            }
            // Upstream's queue moves nothing on these either.
            ClusterEvent::UpsertWorkload(w) => self.cache.edit_workloads(|ws| ws.upsert(&w)),
            ClusterEvent::DeleteWorkload(kind, ns, name) => self.cache.edit_workloads(|ws| {
                ws.remove(kind, &ns, &name);
            }),
            // A claim bound, a volume or class added, may make a pod that a
            // volume filter rejected fit: the volume plugins register these
            // events upstream, and sift's components declare no hints.
            ClusterEvent::UpsertApiObject(o) => {
                if self.objects.observe(&o) && self.cache.edit_api_objects(|os| os.upsert(&o)) {
                    self.queue.move_all(now);
                }
            }
            ClusterEvent::DeleteApiObject(kind, key) => {
                self.objects.deleted(kind, &key);
                self.cache.edit_api_objects(|os| os.remove(kind, &key));
            }
            ClusterEvent::Bookmark | ClusterEvent::Batch(_) => {}
        }
    }

    fn upsert_pod(&mut self, pod: k8s::Pod, now: u64) {
        let key = kube::pod_key(&pod);
        if kube::bound_node(&pod).is_some() {
            // Bound: by our bind (confirming the assumed pod) or anyone's.
            self.assumed.remove(&key);
            self.queue.remove(&key);
            if let Some(t) = started(&pod) {
                self.started.insert(key.clone(), t);
            }
            if let Err(e) = self.cache.upsert_pod(&pod) {
                tracing::error!("pod {key} not applied: {e:#}");
            }
            return;
        }
        if self.assumed.contains_key(&key) {
            // Our own status write, or the pod before the bind shows: the
            // assumed copy stands until the bind's outcome.
            return;
        }
        // A pending pod: nominations count for every cycle.
        let _ = self.cache.upsert_pod(&pod);
        let ours = kube::scheduler_name(&pod) == self.parts.scheduler_name;
        if !ours || !kube::pod_is_active(&pod) || pod.metadata.deletion_timestamp.is_some() {
            self.queue.remove(&key);
            return;
        }
        let priority = pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
        let created = pod
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.to_string())
            .unwrap_or_default();
        let queued_at = if self.scheduling { now } else { 0 };
        let qkey = QueueKey::new(priority, queued_at, created, key);
        self.queue.add_or_update(pod, qkey, now);
    }

    fn delete_pod(&mut self, key: &str, now: u64) {
        self.queue.remove(key);
        self.started.remove(key);
        let was_assumed = self.assumed.remove(key).is_some();
        if was_assumed {
            // Its PreBind may not have written everything: what it did
            // write comes back through the watch.
            self.objects.restore(&mut self.cache, key);
        }
        let held = self.cache.bound_requests(key).is_some();
        self.cache.remove_pod_key(key);
        self.cache.clear_nomination(key);
        if let Some(preemptor) = self.victim_of.remove(key) {
            let done = self.preempting.get_mut(&preemptor).is_none_or(|v| {
                v.remove(key);
                v.is_empty()
            });
            if done {
                self.preempting.remove(&preemptor);
                self.queue.release(&preemptor, now);
            }
        }
        if held || was_assumed {
            // AssignedPodDelete: room freed.
            self.queue.move_all(now);
        }
    }

    fn bound(&mut self, key: String, uid: String, outcome: BindOutcome) {
        let now = self.now();
        let Some(assumed) = self.assumed.get(&key) else {
            // Confirmed by the watch already, or deleted meanwhile.
            return;
        };
        if assumed.uid != uid {
            return;
        }
        match outcome {
            BindOutcome::Bound => {
                self.objects.settle(&key);
                let attempts = assumed.entry.attempts + 1;
                let since = now.saturating_sub(assumed.entry.first_queued);
                self.parts
                    .metrics
                    .scheduled(attempts, Duration::from_millis(since));
            }
            BindOutcome::Gone(why) | BindOutcome::Conflict(why) => {
                // 404: deleted; 409: bound already (the watch brings where)
                // or being deleted. Not retried.
                tracing::info!("bind of {key} not retried: {why}");
                self.forget(&key);
            }
            BindOutcome::Failed(why) => self.retry(&key, format!("binding rejected: {why}"), now),
            BindOutcome::PreBindFailed(why) => self.retry(&key, why, now),
        }
    }

    /// A bind or its PreBind failed: the pod leaves its node, the waiting
    /// pods are woken, and it is retried with the error backoff.
    fn retry(&mut self, key: &str, message: String, now: u64) {
        tracing::warn!("bind of {key} failed, retrying with backoff: {message}");
        if let Some(a) = self.forget(key) {
            self.queue.move_all(now);
            self.parts.writer.unschedulable(
                &a.entry.pod,
                Unschedulable {
                    reason: "SchedulerError",
                    message,
                    nominated: None,
                },
            );
            self.queue.failed(a.entry, Failure::Error, now);
        }
    }

    /// Undoes an assumption: the pod's usage leaves its node, the objects
    /// its PreBind wrote go back to what the watch showed.
    fn forget(&mut self, key: &str) -> Option<Assumed> {
        let a = self.assumed.remove(key)?;
        self.cache.remove_pod_key(key);
        self.objects.restore(&mut self.cache, key);
        Some(a)
    }

    /// One scheduling cycle.
    fn cycle(&mut self, entry: QueuedPod) {
        let started = Instant::now();
        let key = entry.key.key().to_string();
        let object = entry.pod.clone();
        let mut pod = match kube::pod(&object) {
            Ok(p) => p,
            Err(e) => {
                self.fail(entry, "SchedulerError", format!("{e:#}"), started);
                return;
            }
        };
        pod.nominated_node_name = self.cache.nomination(&key).unwrap_or_default().to_string();
        let Some((_, scheduler)) = self.scheduler.as_mut() else {
            self.queue.failed(entry, Failure::Error, self.now());
            return;
        };
        if scheduler.engine().full_objects().pod {
            pod.object = Some(kube::object_json(&object));
        }
        let snapshot = self.cache.snapshot();
        let Attempt {
            filter,
            decision,
            error,
        } = scheduler.schedule(&snapshot, pod.clone());
        if let Some(decision) = decision {
            let assumed = crate::simulate::assumed(&object, &decision);
            if let Err(e) = self.cache.upsert_pod(&assumed) {
                self.fail(entry, "SchedulerError", format!("{e:#}"), started);
                return;
            }
            self.cache.clear_nomination(&key);
            let uid = object.metadata.uid.clone().unwrap_or_default();
            let objects = self.cache.api_objects();
            let writes: Vec<Planned> = decision
                .writes
                .iter()
                .map(|w| prebind::plan(w, objects.get(w.object.kind, &w.object.key)))
                .collect();
            self.objects.assume(&mut self.cache, &key, &decision.writes);
            let prebind = PreBind {
                writes,
                timeout: self.bind_timeout,
            };
            self.parts.writer.bind(&assumed, prebind);
            self.assumed.insert(key, Assumed { uid, entry });
            self.parts.metrics.attempt("scheduled", started.elapsed());
            return;
        }
        if let Some(error) = error.or_else(|| filter.error.clone()) {
            self.fail(entry, "SchedulerError", error, started);
            return;
        }
        let fit_error = filter
            .message
            .clone()
            .unwrap_or_else(|| crate::engine::diagnosis::no_node_available(snapshot.len()));
        let starts = &self.started;
        let post = preemption::post_filter(
            scheduler.engine(),
            &self.cache,
            &snapshot,
            &object,
            &pod,
            &filter,
            &|k| starts.get(k).copied().unwrap_or(0),
        );
        self.parts.metrics.preemption_attempts.inc();
        match post {
            PostFilter::Ineligible(text) => {
                self.fail(
                    entry,
                    "Unschedulable",
                    format!("{fit_error} {text}"),
                    started,
                );
            }
            PostFilter::NotHelpful(text) => {
                self.cache.clear_nomination(&key);
                self.fail(
                    entry,
                    "Unschedulable",
                    format!("{fit_error} {text}"),
                    started,
                );
            }
            PostFilter::Preempt { victims, .. } if victims.is_empty() => {
                self.fail(entry, "Unschedulable", fit_error, started);
            }
            PostFilter::Preempt { node, victims } => {
                self.preempt(entry, &pod, node, victims, fit_error, started);
            }
        }
    }

    /// DefaultPreemption's `prepareCandidate`, acting: the victims are
    /// evicted, lower nominations to the node cleared, the pod nominated
    /// there and held until its victims are gone.
    fn preempt(
        &mut self,
        entry: QueuedPod,
        pod: &sift_sdk::Pod,
        node: String,
        victims: Vec<String>,
        fit_error: String,
        started: Instant,
    ) {
        let key = entry.key.key().to_string();
        self.parts
            .metrics
            .preemption_victims
            .observe(victims.len() as f64);
        for v in &victims {
            self.parts.writer.preempt(v, &entry.pod, &node);
            self.victim_of.insert(v.clone(), key.clone());
        }
        self.preempting.insert(key, victims.into_iter().collect());
        self.cache.clear_nominations_below(&node, pod.priority);
        self.cache.nominate(pod, &node);
        self.parts.writer.unschedulable(
            &entry.pod,
            Unschedulable {
                reason: "Unschedulable",
                message: fit_error,
                nominated: Some(node),
            },
        );
        self.parts
            .metrics
            .attempt("unschedulable", started.elapsed());
        self.queue.hold(entry, self.now());
    }

    /// A failed attempt: its API writes, and back to the queue.
    fn fail(&mut self, entry: QueuedPod, reason: &'static str, message: String, started: Instant) {
        let failure = if reason == "Unschedulable" {
            Failure::Unschedulable
        } else {
            Failure::Error
        };
        self.parts.writer.unschedulable(
            &entry.pod,
            Unschedulable {
                reason,
                message,
                nominated: None,
            },
        );
        let result = if failure == Failure::Unschedulable {
            "unschedulable"
        } else {
            "error"
        };
        self.parts.metrics.attempt(result, started.elapsed());
        self.queue.failed(entry, failure, self.now());
    }
}

/// A pod bound pod's `status.startTime`, in seconds since the epoch.
fn started(pod: &k8s::Pod) -> Option<u64> {
    let t = pod.status.as_ref()?.start_time.as_ref()?;
    u64::try_from(t.0.as_second()).ok()
}
