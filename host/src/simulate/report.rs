//! What a simulation shows: each pod's outcome, a summary, and the
//! allocation over time, as JSON lines, CSV and text.

use crate::cluster::ClusterState;
use crate::engine::CycleOutcome;
use crate::engine::schedule::Decision;
use crate::input::kube::{SkipReason, SkippedPods};
use anyhow::Result;
use serde::Serialize;
use sift_sdk::Resources;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;

/// One pod of the workload: where it went, or why not.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodOutcome {
    /// namespace/name.
    pub pod: String,
    /// The node it was bound to (it may have left since).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The last FitError (or plugin error) message, while unscheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Scheduling cycles it went through.
    pub attempts: u32,
    /// Simulated seconds.
    pub arrived: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub departed: Option<u64>,
    /// Annotations its reserve steps gave it (e.g. GPU ids).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// With `--no-retry`: where DefaultPreemption would have evicted pods
    /// for it (not done: the pod gets no second attempt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<String>,
    /// The node its last successful preemption nominated it to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nominated_node: Option<String>,
    /// Pods its preemptions evicted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preempted: Vec<String>,
    /// The pod whose preemption evicted it (it left then: `departed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preempted_by: Option<String>,
}

/// The cluster after one instant (or one attempt) of the replay.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    pub time: u64,
    pub attempts: u64,
    pub scheduled: u64,
    pub pending: u64,
    /// Per tracked resource: bound requests.
    pub used: Vec<i64>,
    /// Per tracked resource: requests of the pods attempted so far (failed
    /// ones included): the FGD paper's "arrived" demand.
    pub arrived: Vec<i64>,
}

/// A PodGroup at the end of a batch simulation: placed whole or not, and
/// what Volcano would have written on it.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupOutcome {
    /// namespace/name.
    pub group: String,
    pub queue: String,
    pub min_member: i32,
    pub tasks: usize,
    /// Its tasks bound (running) at the end.
    pub bound: usize,
    /// PodGroup phase: Pending, Inqueue, Running, Unknown.
    pub phase: String,
    /// When it first became Running (simulated seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed: Option<u64>,
    /// Sessions that tried it and left it not ready (their placements
    /// discarded).
    pub discarded: u32,
    /// The last condition gang wrote (`Unschedulable` or `Scheduled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<GroupCondition>,
    /// The last Warning event: `<pending>/<tasks> tasks in gang
    /// unschedulable: ...`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GroupCondition {
    #[serde(rename = "type")]
    pub kind: String,
    pub reason: String,
    pub message: String,
}

/// A queue after one session: its allocation and what proportion says it
/// deserves, per resource.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueSample {
    pub time: u64,
    pub queue: String,
    pub weight: i32,
    /// max over resources of allocated / deserved.
    pub share: f64,
    /// (resource, allocated, deserved), cpu in millicores, scalars in
    /// units, memory in bytes.
    pub resources: Vec<(String, f64, f64)>,
}

/// One pod's last attempt, node by node and plugin by plugin.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub filter: CycleOutcome,
    /// Per feasible node (in evaluation order): each plugin's score and
    /// the weighted total.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<NodeScores>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeScores {
    pub node: String,
    /// Plugin -> normalized score (before weighting); absent when skipped.
    pub plugins: BTreeMap<String, i64>,
    pub total: i64,
}

impl Explanation {
    pub fn of(
        filter: &CycleOutcome,
        decision: Option<&Decision>,
        error: Option<&str>,
    ) -> Explanation {
        let scores = decision
            .map(|d| {
                d.feasible
                    .iter()
                    .enumerate()
                    .filter(|_| !d.totals.is_empty())
                    .map(|(i, node)| NodeScores {
                        node: node.to_string(),
                        plugins: d
                            .by_plugin
                            .iter()
                            .filter_map(|p| {
                                p.scores
                                    .as_ref()
                                    .map(|s| (p.plugin.clone(), s.get(i).copied().unwrap_or(0)))
                            })
                            .collect(),
                        total: d.totals[i],
                    })
                    .collect()
            })
            .unwrap_or_default();
        Explanation {
            filter: filter.clone(),
            scores,
            chosen: decision.map(|d| d.node.to_string()),
            error: error.map(str::to_string),
        }
    }
}

/// The whole result of a replay.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// In order of first arrival; only when the tracker keeps them
    /// ([`Outputs::keep`]), else they went to `--pods-out` as they
    /// finished.
    pub pods: Vec<PodOutcome>,
    /// Tracked resources and the cluster's allocatable total of each.
    pub resources: Vec<(String, i64)>,
    /// Every sample with [`Outputs::keep`]; else at most
    /// [`PLOT_SAMPLES`] of them, evenly thinned, the last one included.
    pub samples: Vec<Sample>,
    /// Pods the scheduler does not take, by reason.
    pub skipped: BTreeMap<String, usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    /// Batch mode: every PodGroup.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupOutcome>,
    /// Batch mode: queue shares per session.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueSample>,
    /// Batch mode: sessions run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u32>,
    /// Pods of the workload bound to a node the cluster does not have
    /// (kube-scheduler's cache keeps them on a node-less NodeInfo): they
    /// use no node's capacity and count neither as scheduled nor in
    /// allocation.
    #[serde(skip_serializing_if = "is_zero")]
    pub off_cluster: usize,
    /// Counts over every pod, kept as they finished.
    #[serde(skip)]
    pub totals: Totals,
    /// Per resource: the samples bucketed by arrived demand.
    #[serde(skip)]
    arrived_buckets: Vec<ArrivedBuckets>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Counts over all pods of a replay, summed as each pod finishes, so the
/// report needs no pod kept.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// Pods bound by the loop or bound in the workload (they may have left
    /// since).
    pub bound: usize,
    /// Pods neither bound nor gone at the end.
    pub unscheduled: usize,
    /// Scheduling cycles.
    pub attempts: u64,
    /// Bound pods evicted by preemption.
    pub preempted: usize,
    /// Unscheduled pods by the reasons in their message.
    pub unscheduled_by_reason: BTreeMap<String, usize>,
}

/// Where a report goes as the replay runs, so nothing per pod or per
/// attempt has to be kept for a long workload.
#[derive(Default)]
pub struct Outputs {
    /// Each pod's outcome as a JSON line, written when the pod is finished
    /// (it left, or the replay ended).
    pub pods: Option<Output>,
    /// The timeline CSV, a row per sample as it is taken.
    pub timeline: Option<Output>,
    /// Keep every pod's outcome and every sample in the report (`--json`,
    /// the conformance cases).
    pub keep: bool,
}

impl Outputs {
    /// Everything kept in the report, nothing written.
    pub fn keep_all() -> Outputs {
        Outputs {
            keep: true,
            ..Default::default()
        }
    }
}

/// A file the tracker writes.
pub struct Output {
    /// For messages.
    pub name: String,
    pub out: Box<dyn Write>,
}

/// Samples kept for plots when not all are: enough for any screen.
pub const PLOT_SAMPLES: usize = 1 << 15;

/// The samples of one resource by arrived demand (% of capacity, rounded
/// half to even), for [`Report::allocation_at_arrived`]: each bucket's
/// allocation % summed in sample order, as the metric's script sums them.
#[derive(Clone, Debug, Default)]
struct ArrivedBuckets {
    buckets: BTreeMap<i64, Bucket>,
}

#[derive(Clone, Debug, Default)]
struct Bucket {
    n: usize,
    sum: f64,
    /// When the bucket below is empty: the sum of the bucket two below
    /// continued with this one's values, in sample order (the fallback of
    /// an empty bucket averages its two neighbours).
    gap: Option<f64>,
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round_ties_even() / 100.0
}

impl ArrivedBuckets {
    /// Arrived demand only grows, so a bucket's samples all come after
    /// those of the buckets below it: sums per bucket in sample order are
    /// the sums over all samples in order, bucket by bucket.
    fn record(&mut self, arrived: i64, used: i64, cap: i64) {
        if cap <= 0 {
            return;
        }
        let a = (100.0 * arrived as f64 / cap as f64).round_ties_even() as i64;
        let v = round2(100.0 * used as f64 / cap as f64);
        if !self.buckets.contains_key(&a) {
            let gap = (!self.buckets.contains_key(&(a - 1)))
                .then(|| self.buckets.get(&(a - 2)).map_or(0.0, |b| b.sum));
            self.buckets.insert(
                a,
                Bucket {
                    gap,
                    ..Default::default()
                },
            );
        }
        let b = self.buckets.get_mut(&a).expect("inserted above");
        b.n += 1;
        b.sum += v;
        if let Some(g) = &mut b.gap {
            *g += v;
        }
    }

    fn at(&self, k: i64) -> Option<f64> {
        let get = |a: i64| self.buckets.get(&a).filter(|b| b.n > 0);
        if let Some(b) = get(k) {
            return Some(round2(b.sum / b.n as f64));
        }
        match (get(k - 1), get(k + 1)) {
            (below, Some(above)) => {
                let n = below.map_or(0, |b| b.n) + above.n;
                above.gap.map(|g| round2(g / n as f64))
            }
            (Some(below), None) => Some(round2(below.sum / below.n as f64)),
            (None, None) => None,
        }
    }
}

/// A pod in the replay now.
struct Live {
    /// Order of first arrival.
    seq: u64,
    outcome: PodOutcome,
    /// Its requests are counted into `arrived` (at its first attempt).
    counted: bool,
    /// Bound to a node the cluster does not have.
    off_cluster: bool,
}

/// Builds the report as the loop goes. It holds state for the pods in the
/// replay now only: a pod that leaves is written out and summed into the
/// totals.
pub struct Tracker {
    live: HashMap<String, Live>,
    next_seq: u64,
    /// Finished pods, with [`Outputs::keep`].
    kept: Vec<(u64, PodOutcome)>,
    totals: Totals,
    off_cluster: usize,
    resources: Vec<(String, i64)>,
    used: Vec<i64>,
    arrived: Vec<i64>,
    scheduled: u64,
    last: Sample,
    samples: Vec<Sample>,
    /// Samples taken (after deduplication).
    taken: u64,
    /// Without `keep`: one sample in `stride` goes to `samples`.
    stride: u64,
    arrived_buckets: Vec<ArrivedBuckets>,
    skipped: SkippedPods,
    explanation: Option<Explanation>,
    groups: Vec<GroupOutcome>,
    queues: Vec<QueueSample>,
    sessions: Option<u32>,
    outputs: Outputs,
    /// The first write error, reported by [`Tracker::finish`].
    write_error: Option<anyhow::Error>,
}

/// cpu, memory, then every extended resource a node offers, by name.
fn tracked_resources(snapshot: &crate::cluster::Snapshot) -> Vec<(String, i64)> {
    let mut total = Resources::default();
    for n in snapshot.nodes() {
        total.add(&n.allocatable);
    }
    let mut out = vec![
        ("cpu".to_string(), total.milli_cpu),
        ("memory".to_string(), total.memory),
    ];
    let mut scalar: Vec<(String, i64)> = total
        .scalar
        .iter()
        .filter(|(_, v)| *v > 0)
        .cloned()
        .collect();
    scalar.sort();
    out.extend(scalar);
    out
}

fn amount(r: &Resources, name: &str) -> i64 {
    match name {
        "cpu" => r.milli_cpu,
        "memory" => r.memory,
        other => r.scalar(other),
    }
}

impl Tracker {
    pub fn new(cluster: &mut ClusterState, outputs: Outputs) -> Tracker {
        let snapshot = cluster.snapshot();
        let resources = tracked_resources(&snapshot);
        let mut used = vec![0; resources.len()];
        for n in snapshot.nodes() {
            for (i, (name, _)) in resources.iter().enumerate() {
                used[i] += amount(&n.requested, name);
            }
        }
        let first = Sample {
            time: 0,
            attempts: 0,
            scheduled: 0,
            pending: 0,
            used: used.clone(),
            arrived: vec![0; resources.len()],
        };
        let mut tracker = Tracker {
            arrived: vec![0; resources.len()],
            used,
            arrived_buckets: vec![ArrivedBuckets::default(); resources.len()],
            resources,
            live: HashMap::new(),
            next_seq: 0,
            kept: Vec::new(),
            totals: Totals::default(),
            off_cluster: 0,
            scheduled: 0,
            last: first.clone(),
            samples: Vec::new(),
            taken: 0,
            stride: 1,
            skipped: SkippedPods::default(),
            explanation: None,
            groups: Vec::new(),
            queues: Vec::new(),
            sessions: None,
            outputs,
            write_error: None,
        };
        if let Some(out) = &mut tracker.outputs.timeline {
            let header = timeline_header(&tracker.resources);
            let r = writeln!(out.out, "{header}");
            note(&mut tracker.write_error, &out.name, r);
        }
        tracker.record(first);
        tracker
    }

    fn outcome(&mut self, key: &str) -> &mut PodOutcome {
        &mut self.live_mut(key).outcome
    }

    fn live_mut(&mut self, key: &str) -> &mut Live {
        if !self.live.contains_key(key) {
            self.live.insert(
                key.to_string(),
                Live {
                    seq: self.next_seq,
                    outcome: PodOutcome {
                        pod: key.to_string(),
                        ..Default::default()
                    },
                    counted: false,
                    off_cluster: false,
                },
            );
            self.next_seq += 1;
        }
        self.live.get_mut(key).expect("inserted above")
    }

    /// Pods the tracker holds state for: those in the replay now.
    pub fn live_pods(&self) -> usize {
        self.live.len()
    }

    pub fn arrived(&mut self, key: &str, now: u64) {
        let o = self.outcome(key);
        o.arrived = now;
    }

    /// A pod of the workload that came already bound (`origin`: where, for
    /// the warning about a node the cluster does not have).
    pub fn bound_from_input(&mut self, cluster: &ClusterState, key: &str, origin: &str) {
        if let Some((node, requests)) = cluster.bound_requests(key) {
            let node = node.to_string();
            let on_cluster = cluster.contains_node(&node);
            if on_cluster {
                let requests = requests.clone();
                self.add_used(&requests, 1);
            } else {
                tracing::warn!(
                    "{origin}: pod {key} is bound to node {node}, which is not in the cluster: it uses no node's capacity and is counted apart, not in allocation"
                );
            }
            let live = self.live_mut(key);
            live.off_cluster = !on_cluster;
            live.outcome.node = Some(node);
        }
    }

    pub fn skipped(&mut self, why: SkipReason) {
        self.skipped.add(why);
    }

    fn add_used(&mut self, r: &Resources, sign: i64) {
        for (i, (name, _)) in self.resources.iter().enumerate() {
            self.used[i] += sign * amount(r, name);
        }
    }

    fn count_attempt(&mut self, key: &str, requests: Option<&Resources>) {
        self.totals.attempts += 1;
        let live = self.live_mut(key);
        live.outcome.attempts += 1;
        let first = requests.is_some() && !live.counted;
        if first {
            live.counted = true;
        }
        if let Some(r) = requests.filter(|_| first) {
            for (i, (name, _)) in self.resources.iter().enumerate() {
                self.arrived[i] += amount(r, name);
            }
        }
    }

    pub fn bound(&mut self, key: &str, now: u64, decision: &Decision, requests: &Resources) {
        self.count_attempt(key, Some(requests));
        self.add_used(requests, 1);
        self.scheduled += 1;
        let o = self.outcome(key);
        o.node = Some(decision.node.to_string());
        o.scheduled = Some(now);
        o.message = None;
        o.preemption = None;
        o.annotations = decision.annotations.iter().cloned().collect();
    }

    /// A failed attempt; `requests` count as arrived demand at the first.
    pub fn failed(
        &mut self,
        key: &str,
        requests: Option<&Resources>,
        message: String,
        preemption: Option<String>,
    ) {
        self.count_attempt(key, requests);
        let o = self.outcome(key);
        o.message = Some(message);
        o.preemption = preemption;
    }

    /// A pod left: `freed` is what it held on a node of the cluster. Its
    /// outcome is final: written out, and the tracker forgets it.
    pub fn departed(&mut self, key: &str, now: u64, freed: Option<&Resources>) {
        if let Some(r) = freed {
            self.add_used(r, -1);
        }
        self.outcome(key).departed = Some(now);
        if let Some(live) = self.live.remove(key) {
            self.finish_pod(live);
        }
    }

    /// When a pod started: bound by the loop at `scheduled`, else 0 (it
    /// came bound).
    pub fn started(&self, key: &str) -> u64 {
        self.live
            .get(key)
            .and_then(|l| l.outcome.scheduled)
            .unwrap_or(0)
    }

    /// A preemption evicted `victim` for `by`; `freed` is what it held.
    pub fn preempted(&mut self, victim: &str, by: &str, now: u64, freed: Option<&Resources>) {
        self.outcome(victim).preempted_by = Some(by.to_string());
        self.outcome(by).preempted.push(victim.to_string());
        self.departed(victim, now, freed);
    }

    /// A preemption nominated `key` to `node`.
    pub fn nominated(&mut self, key: &str, node: &str) {
        self.outcome(key).nominated_node = Some(node.to_string());
    }

    pub fn explain(&mut self, e: Explanation) {
        self.explanation = Some(e);
    }

    /// A pod's outcome is final: summed, written, kept if asked.
    fn finish_pod(&mut self, live: Live) {
        let o = live.outcome;
        if live.off_cluster {
            self.off_cluster += 1;
        } else if o.node.is_some() {
            self.totals.bound += 1;
        } else if o.departed.is_none() {
            self.totals.unscheduled += 1;
            for r in reasons_of(o.message.as_deref().unwrap_or("")) {
                *self.totals.unscheduled_by_reason.entry(r).or_default() += 1;
            }
        }
        if o.preempted_by.is_some() {
            self.totals.preempted += 1;
        }
        if let Some(out) = &mut self.outputs.pods {
            let r = serde_json::to_writer(&mut out.out, &o)
                .map_err(std::io::Error::from)
                .and_then(|_| out.out.write_all(b"\n"));
            note(&mut self.write_error, &out.name, r);
        }
        if self.outputs.keep {
            self.kept.push((live.seq, o));
        }
    }

    /// Records the cluster now; one sample per attempt is what the FGD
    /// paper's curves need, so the loop calls it per attempt too.
    pub fn sample(&mut self, time: u64, pending: usize) {
        let l = &self.last;
        if l.attempts == self.totals.attempts && l.time == time && l.used == self.used {
            return;
        }
        let s = Sample {
            time,
            attempts: self.totals.attempts,
            scheduled: self.scheduled,
            pending: pending as u64,
            used: self.used.clone(),
            arrived: self.arrived.clone(),
        };
        self.record(s);
    }

    /// A new sample: to the timeline, the arrived-demand buckets and
    /// (every one, or one in `stride`) the report's samples.
    fn record(&mut self, s: Sample) {
        if let Some(out) = &mut self.outputs.timeline {
            let r = writeln!(out.out, "{}", timeline_row(&s, &self.resources));
            note(&mut self.write_error, &out.name, r);
        }
        for (i, (_, cap)) in self.resources.iter().enumerate() {
            self.arrived_buckets[i].record(s.arrived[i], s.used[i], *cap);
        }
        if self.outputs.keep || self.taken.is_multiple_of(self.stride) {
            self.samples.push(s.clone());
            if !self.outputs.keep && self.samples.len() >= PLOT_SAMPLES {
                // Thin to every other one: the kept samples stay evenly
                // spaced among those taken.
                let mut i = 0;
                self.samples.retain(|_| {
                    i += 1;
                    (i - 1) % 2 == 0
                });
                self.stride *= 2;
            }
        }
        self.taken += 1;
        self.last = s;
    }

    /// The report: pods still in the replay are finished (in order of
    /// arrival) and written; an error names the output that failed.
    pub fn finish(mut self) -> Result<Report> {
        let mut live: Vec<Live> = std::mem::take(&mut self.live).into_values().collect();
        live.sort_by_key(|l| l.seq);
        for l in live {
            self.finish_pod(l);
        }
        let mut samples = std::mem::take(&mut self.samples);
        if samples.last().is_none_or(|s| {
            s.attempts != self.last.attempts
                || s.time != self.last.time
                || s.used != self.last.used
                || s.pending != self.last.pending
        }) {
            samples.push(self.last.clone());
        }
        for out in [&mut self.outputs.pods, &mut self.outputs.timeline]
            .into_iter()
            .flatten()
        {
            let r = out.out.flush();
            note(&mut self.write_error, &out.name, r);
        }
        if let Some(e) = self.write_error {
            return Err(e);
        }
        self.kept.sort_by_key(|(seq, _)| *seq);
        Ok(Report {
            pods: self.kept.into_iter().map(|(_, o)| o).collect(),
            resources: self.resources,
            samples,
            skipped: self
                .skipped
                .iter()
                .map(|(why, n)| (why.describe().to_string(), n))
                .collect(),
            explanation: self.explanation,
            groups: self.groups,
            queues: self.queues,
            sessions: self.sessions,
            off_cluster: self.off_cluster,
            totals: self.totals,
            arrived_buckets: self.arrived_buckets,
        })
    }

    /// Batch mode: the PodGroups as they ended.
    pub fn set_groups(&mut self, groups: Vec<GroupOutcome>) {
        self.groups = groups;
    }

    /// Batch mode: one more session ran.
    pub fn session(&mut self) {
        *self.sessions.get_or_insert(0) += 1;
    }

    pub fn queue_sample(&mut self, sample: QueueSample) {
        self.queues.push(sample);
    }
}

/// Keeps the first write error, naming the file.
fn note(slot: &mut Option<anyhow::Error>, name: &str, r: std::io::Result<()>) {
    if let Err(e) = r
        && slot.is_none()
    {
        *slot = Some(anyhow::anyhow!("cannot write {name}: {e}"));
    }
}

/// The timeline CSV's header: time, attempts, scheduled, pending, then per
/// resource the allocated and arrived percentages of capacity.
fn timeline_header(resources: &[(String, i64)]) -> String {
    let mut header = vec![
        "time".to_string(),
        "attempts".into(),
        "scheduled".into(),
        "pending".into(),
    ];
    for (name, _) in resources {
        header.push(format!("{name}_allocated_pct"));
        header.push(format!("{name}_arrived_pct"));
    }
    header.join(",")
}

fn timeline_row(s: &Sample, resources: &[(String, i64)]) -> String {
    let mut row = vec![
        s.time.to_string(),
        s.attempts.to_string(),
        s.scheduled.to_string(),
        s.pending.to_string(),
    ];
    for (i, (_, cap)) in resources.iter().enumerate() {
        row.push(format!("{:.4}", 100.0 * ratio(s.used[i], *cap)));
        row.push(format!("{:.4}", 100.0 * ratio(s.arrived[i], *cap)));
    }
    row.join(",")
}

impl Report {
    /// Pods bound and still unscheduled (those that left while pending
    /// count as neither; those bound off the cluster are apart).
    pub fn counts(&self) -> (usize, usize) {
        (self.totals.bound, self.totals.unscheduled)
    }

    /// Unscheduled pods by the reasons in their message: the histogram
    /// part ("3 Insufficient cpu" counts as "Insufficient cpu").
    pub fn unscheduled_by_reason(&self) -> BTreeMap<String, usize> {
        self.totals.unscheduled_by_reason.clone()
    }

    /// Allocation of each tracked resource at the end, as a fraction.
    pub fn final_allocation(&self) -> Vec<(String, f64)> {
        let last = self.samples.last();
        self.resources
            .iter()
            .enumerate()
            .map(|(i, (name, cap))| {
                let used = last.map_or(0, |s| s.used[i]);
                (name.clone(), ratio(used, *cap))
            })
            .collect()
    }

    /// The resource plots and the arrived-demand metric follow: the first
    /// extended resource the cluster offers (e.g. GPU milli), else cpu.
    /// Extended resources nothing asked for (e.g. a GPU count only nodes
    /// declare) are passed over.
    pub fn main_resource(&self) -> usize {
        let demanded = |i: usize| self.samples.last().is_some_and(|s| s.arrived[i] > 0);
        (0..self.resources.len())
            .find(|&i| !matches!(self.resources[i].0.as_str(), "cpu" | "memory") && demanded(i))
            .unwrap_or(0)
    }

    /// The FGD paper's metric: the allocation (% of capacity) of resource
    /// `r` when arrived demand reaches `k` % of capacity. Samples are
    /// bucketed by arrived % rounded half to even (NumPy's `round`), each
    /// bucket's allocation % (rounded to 2 decimals) averaged; an empty
    /// bucket takes `k-1..=k+1` (`merge_alloc_discrete.py`). Summed as
    /// the samples were taken, so every sample counts, kept or not.
    pub fn allocation_at_arrived(&self, r: usize, k: i64) -> Option<f64> {
        if self.resources.get(r)?.1 <= 0 {
            return None;
        }
        self.arrived_buckets.get(r)?.at(k)
    }

    /// Batch mode: one JSON line per PodGroup.
    pub fn write_groups(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for g in &self.groups {
            serde_json::to_writer(&mut *out, g)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Batch mode: queue shares per session as CSV, one row per queue and
    /// resource (cpu in millicores, memory in bytes, others in units).
    pub fn write_queues(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "time,queue,weight,share,resource,allocated,deserved")?;
        for q in &self.queues {
            for (name, allocated, deserved) in &q.resources {
                writeln!(
                    out,
                    "{},{},{},{:.6},{},{},{}",
                    q.time, q.queue, q.weight, q.share, name, allocated, deserved
                )?;
            }
        }
        Ok(())
    }
}

fn ratio(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The reasons of a FitError message: "0/3 nodes are available: 2 A, 1
/// B. preemption: ..." gives ["A", "B"]; another message is its own reason.
pub fn reasons_of(message: &str) -> Vec<String> {
    // Volcano's FitErrors say "nodes are unavailable"; a gang's task that
    // fit but was discarded, or never got its turn, says so.
    let found = message
        .split_once("nodes are available: ")
        .or_else(|| message.split_once("nodes are unavailable: "));
    let Some(rest) = found.map(|(_, r)| r) else {
        if message.starts_with("Pod ") && message.contains(" can possibly be assigned to ") {
            return vec!["fit, but its gang did not (placement discarded)".to_string()];
        }
        if message.starts_with("pod group is not ready") {
            return vec!["pod group is not ready".to_string()];
        }
        return vec![message.to_string()];
    };
    let histogram = rest.split(". preemption:").next().unwrap_or(rest);
    let histogram = histogram.trim_end_matches('.');
    histogram
        .split(", ")
        .filter_map(|entry| {
            let (n, reason) = entry.split_once(' ')?;
            n.parse::<usize>().ok().map(|_| reason.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(points: &[(i64, i64)]) -> Report {
        let resources = vec![
            ("cpu".to_string(), 1000),
            ("example.com/gpu".to_string(), 1000),
        ];
        let mut arrived_buckets = vec![ArrivedBuckets::default(); 2];
        let samples: Vec<Sample> = points
            .iter()
            .map(|&(arrived, used)| Sample {
                time: 0,
                attempts: 0,
                scheduled: 0,
                pending: 0,
                used: vec![0, used],
                arrived: vec![0, arrived],
            })
            .collect();
        for s in &samples {
            for (i, (_, cap)) in resources.iter().enumerate() {
                arrived_buckets[i].record(s.arrived[i], s.used[i], *cap);
            }
        }
        Report {
            pods: Vec::new(),
            resources,
            samples,
            skipped: BTreeMap::new(),
            explanation: None,
            groups: Vec::new(),
            queues: Vec::new(),
            sessions: None,
            off_cluster: 0,
            totals: Totals::default(),
            arrived_buckets,
        }
    }

    /// The metric as `merge_alloc_discrete.py` computes it, over every
    /// sample at once (what the report did when it kept them all).
    fn over_all_samples(points: &[(i64, i64)], cap: i64, k: i64) -> Option<f64> {
        let points: Vec<(i64, f64)> = points
            .iter()
            .map(|&(a, u)| {
                let a = (100.0 * a as f64 / cap as f64).round_ties_even() as i64;
                (a, round2(100.0 * u as f64 / cap as f64))
            })
            .collect();
        let mean = |ok: &dyn Fn(i64) -> bool| {
            let (sum, n) = points
                .iter()
                .filter(|(a, _)| ok(*a))
                .fold((0.0, 0usize), |(s, n), (_, v)| (s + v, n + 1));
            (n > 0).then(|| round2(sum / n as f64))
        };
        mean(&|a| a == k).or_else(|| mean(&|a| (k - 1..=k + 1).contains(&a)))
    }

    #[test]
    fn running_sums_give_the_metric_of_all_samples_bit_for_bit() {
        // Arrived demand grows by uneven steps (some buckets empty, some
        // with many samples), allocation wanders: every k from 0 to 130
        // matches the computation over all samples exactly.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..50 {
            let cap = 1000 + rand(7000) as i64;
            let mut arrived = 0i64;
            let mut points = vec![(0, 0)];
            for _ in 0..400 {
                arrived += rand(cap as u64 / 40) as i64;
                let used = (rand(cap as u64) as i64).min(arrived);
                points.push((arrived, used));
            }
            let mut b = ArrivedBuckets::default();
            for &(a, u) in &points {
                b.record(a, u, cap);
            }
            for k in 0..=130 {
                assert_eq!(b.at(k), over_all_samples(&points, cap, k), "k={k}");
            }
        }
    }

    /// Issue 29 §5: memory follows the pods in the replay now, not every
    /// pod ever seen: a pod that left is written out and forgotten, and
    /// the samples kept for plots are bounded.
    #[test]
    fn the_tracker_holds_no_state_for_pods_that_left() {
        let sink = |name: &str| Output {
            name: name.into(),
            out: Box::new(std::io::sink()),
        };
        let outputs = Outputs {
            pods: Some(sink("pods")),
            timeline: Some(sink("timeline")),
            keep: false,
        };
        let mut cluster = ClusterState::new("default-scheduler", &[]);
        let mut t = Tracker::new(&mut cluster, outputs);
        let requests = Resources {
            milli_cpu: 100,
            ..Default::default()
        };
        let n = 3 * PLOT_SAMPLES as u64;
        for i in 0..n {
            let key = format!("default/p{i}");
            t.arrived(&key, i);
            t.failed(&key, Some(&requests), "no room".into(), None);
            t.sample(i, 1);
            if i >= 10 {
                t.departed(&format!("default/p{}", i - 10), i, None);
            }
            assert!(t.live_pods() <= 11);
            assert!(t.samples.len() <= PLOT_SAMPLES);
        }
        let report = t.finish().unwrap();
        assert!(report.pods.is_empty());
        assert_eq!(report.totals.attempts, n);
        assert_eq!(
            report.totals.unscheduled, 10,
            "those still there at the end"
        );
        assert_eq!(report.unscheduled_by_reason()["no room"], 10);
        assert_eq!(
            report.samples.last().unwrap().attempts,
            n,
            "the last sample is kept"
        );
    }

    #[test]
    fn allocation_at_arrived_averages_the_bucket_or_its_neighbours() {
        // Arrived 99.5% and 100.4% both round to 100 (half to even): mean of
        // 90 and 92; 101% is a bucket of its own.
        let r = report(&[(0, 0), (995, 900), (1004, 920), (1010, 930)]);
        assert_eq!(r.main_resource(), 1);
        assert_eq!(r.allocation_at_arrived(1, 100), Some(91.0));
        assert_eq!(r.allocation_at_arrived(1, 101), Some(93.0));
        // 102 is empty: 101..=103 gives 93.
        assert_eq!(r.allocation_at_arrived(1, 102), Some(93.0));
        assert_eq!(r.allocation_at_arrived(1, 50), None);
    }

    #[test]
    fn reasons_of_a_fit_error() {
        assert_eq!(
            reasons_of(
                "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
            ),
            ["node(s) had untolerated taint(s)", "Insufficient cpu"]
        );
        assert_eq!(reasons_of("plugin X: trapped"), ["plugin X: trapped"]);
    }

    #[test]
    fn reasons_of_volcano_messages() {
        assert_eq!(
            reasons_of(
                "pod group is not ready, 2 Pending, 2 minAvailable; Pending: 2 Unschedulable. Origin reason is p1: 0/3 nodes are unavailable: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
            ),
            [
                "Insufficient cpu",
                "node(s) didn't match Pod's node affinity/selector"
            ]
        );
        assert_eq!(
            reasons_of("pod group is not ready, 2 Pending, 3 minAvailable"),
            ["pod group is not ready"]
        );
        assert_eq!(
            reasons_of("Pod c1/p0 can possibly be assigned to n1"),
            ["fit, but its gang did not (placement discarded)"]
        );
    }
}
