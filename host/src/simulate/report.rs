//! What a simulation shows: each pod's outcome, a summary, and the
//! allocation over time, as JSON lines, CSV and text.

use crate::cluster::ClusterState;
use crate::engine::CycleOutcome;
use crate::engine::schedule::Decision;
use crate::input::kube::{SkipReason, SkippedPods};
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

#[derive(Clone, Debug, Default, Serialize)]
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
    /// In order of first arrival.
    pub pods: Vec<PodOutcome>,
    /// Tracked resources and the cluster's allocatable total of each.
    pub resources: Vec<(String, i64)>,
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
}

/// Builds the report as the loop goes.
pub struct Tracker {
    pods: Vec<PodOutcome>,
    index: HashMap<String, usize>,
    resources: Vec<(String, i64)>,
    used: Vec<i64>,
    arrived: Vec<i64>,
    attempts: u64,
    scheduled: u64,
    samples: Vec<Sample>,
    skipped: SkippedPods,
    explanation: Option<Explanation>,
    /// Requests by pod, counted into `arrived` at the first attempt.
    counted: HashMap<String, bool>,
    groups: Vec<GroupOutcome>,
    queues: Vec<QueueSample>,
    sessions: Option<u32>,
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
    pub fn new(cluster: &mut ClusterState) -> Tracker {
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
        Tracker {
            arrived: vec![0; resources.len()],
            used,
            resources,
            pods: Vec::new(),
            index: HashMap::new(),
            attempts: 0,
            scheduled: 0,
            samples: vec![first],
            skipped: SkippedPods::default(),
            explanation: None,
            counted: HashMap::new(),
            groups: Vec::new(),
            queues: Vec::new(),
            sessions: None,
        }
    }

    fn outcome(&mut self, key: &str) -> &mut PodOutcome {
        let i = match self.index.get(key) {
            Some(i) => *i,
            None => {
                self.pods.push(PodOutcome {
                    pod: key.to_string(),
                    ..Default::default()
                });
                self.index.insert(key.to_string(), self.pods.len() - 1);
                self.pods.len() - 1
            }
        };
        &mut self.pods[i]
    }

    pub fn arrived(&mut self, key: &str, now: u64) {
        let o = self.outcome(key);
        o.arrived = now;
    }

    /// A pod of the workload that came already bound.
    pub fn bound_from_input(&mut self, cluster: &ClusterState, key: &str) {
        if let Some((node, requests)) = cluster.bound_requests(key) {
            let node = node.to_string();
            let requests = requests.clone();
            self.add_used(&requests, 1);
            let o = self.outcome(key);
            o.node = Some(node);
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
        self.attempts += 1;
        self.outcome(key).attempts += 1;
        if let Some(r) = requests
            && self.counted.insert(key.to_string(), true).is_none()
        {
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

    /// A pod left: `freed` is what it held when bound.
    pub fn departed(&mut self, key: &str, now: u64, freed: Option<&Resources>) {
        if let Some(r) = freed {
            self.add_used(r, -1);
        }
        self.outcome(key).departed = Some(now);
    }

    /// When a pod started: bound by the loop at `scheduled`, else 0 (it
    /// came bound).
    pub fn started(&self, key: &str) -> u64 {
        self.index
            .get(key)
            .and_then(|i| self.pods[*i].scheduled)
            .unwrap_or(0)
    }

    /// A preemption evicted `victim` for `by`; `freed` is what it held.
    pub fn preempted(&mut self, victim: &str, by: &str, now: u64, freed: Option<&Resources>) {
        self.departed(victim, now, freed);
        self.outcome(victim).preempted_by = Some(by.to_string());
        self.outcome(by).preempted.push(victim.to_string());
    }

    /// A preemption nominated `key` to `node`.
    pub fn nominated(&mut self, key: &str, node: &str) {
        self.outcome(key).nominated_node = Some(node.to_string());
    }

    pub fn explain(&mut self, e: Explanation) {
        self.explanation = Some(e);
    }

    /// Records the cluster now; one sample per attempt is what the FGD
    /// paper's curves need, so the loop calls it per attempt too.
    pub fn sample(&mut self, time: u64, pending: usize) {
        let s = Sample {
            time,
            attempts: self.attempts,
            scheduled: self.scheduled,
            pending: pending as u64,
            used: self.used.clone(),
            arrived: self.arrived.clone(),
        };
        if self
            .samples
            .last()
            .is_some_and(|l| l.attempts == s.attempts && l.time == s.time && l.used == s.used)
        {
            return;
        }
        self.samples.push(s);
    }

    pub fn finish(self) -> Report {
        Report {
            pods: self.pods,
            resources: self.resources,
            samples: self.samples,
            skipped: self
                .skipped
                .iter()
                .map(|(why, n)| (why.describe().to_string(), n))
                .collect(),
            explanation: self.explanation,
            groups: self.groups,
            queues: self.queues,
            sessions: self.sessions,
        }
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

impl Report {
    /// Pods bound and still unscheduled (those that left while pending
    /// count as neither).
    pub fn counts(&self) -> (usize, usize) {
        let bound = self.pods.iter().filter(|p| p.node.is_some()).count();
        let unscheduled = self
            .pods
            .iter()
            .filter(|p| p.node.is_none() && p.departed.is_none())
            .count();
        (bound, unscheduled)
    }

    /// Unscheduled pods by the reasons in their message: the histogram
    /// part ("3 Insufficient cpu" counts as "Insufficient cpu").
    pub fn unscheduled_by_reason(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for p in &self.pods {
            if p.node.is_some() || p.departed.is_some() {
                continue;
            }
            let msg = p.message.as_deref().unwrap_or("");
            for r in reasons_of(msg) {
                *out.entry(r).or_default() += 1;
            }
        }
        out
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
    /// bucket takes `k-1..=k+1` (`merge_alloc_discrete.py`).
    pub fn allocation_at_arrived(&self, r: usize, k: i64) -> Option<f64> {
        let cap = self.resources.get(r)?.1;
        if cap <= 0 {
            return None;
        }
        let round2 = |x: f64| (x * 100.0).round_ties_even() / 100.0;
        let points: Vec<(i64, f64)> = self
            .samples
            .iter()
            .map(|s| {
                let arrived = (100.0 * s.arrived[r] as f64 / cap as f64).round_ties_even() as i64;
                (arrived, round2(100.0 * s.used[r] as f64 / cap as f64))
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

    /// One JSON object per pod.
    pub fn write_pods(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for p in &self.pods {
            serde_json::to_writer(&mut *out, p)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// The samples as CSV: time, attempts, scheduled, pending, then per
    /// resource the allocated and arrived percentages of capacity.
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

    pub fn write_timeline(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut header = vec![
            "time".to_string(),
            "attempts".into(),
            "scheduled".into(),
            "pending".into(),
        ];
        for (name, _) in &self.resources {
            header.push(format!("{name}_allocated_pct"));
            header.push(format!("{name}_arrived_pct"));
        }
        writeln!(out, "{}", header.join(","))?;
        for s in &self.samples {
            let mut row = vec![
                s.time.to_string(),
                s.attempts.to_string(),
                s.scheduled.to_string(),
                s.pending.to_string(),
            ];
            for (i, (_, cap)) in self.resources.iter().enumerate() {
                row.push(format!("{:.4}", 100.0 * ratio(s.used[i], *cap)));
                row.push(format!("{:.4}", 100.0 * ratio(s.arrived[i], *cap)));
            }
            writeln!(out, "{}", row.join(","))?;
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
        Report {
            pods: Vec::new(),
            resources: vec![("cpu".into(), 1000), ("example.com/gpu".into(), 1000)],
            samples: points
                .iter()
                .map(|&(arrived, used)| Sample {
                    time: 0,
                    attempts: 0,
                    scheduled: 0,
                    pending: 0,
                    used: vec![0, used],
                    arrived: vec![0, arrived],
                })
                .collect(),
            skipped: BTreeMap::new(),
            explanation: None,
            groups: Vec::new(),
            queues: Vec::new(),
            sessions: None,
        }
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
