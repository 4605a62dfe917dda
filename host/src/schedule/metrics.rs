//! The live scheduler's Prometheus metrics, under kube-scheduler's own
//! names (`scheduler_schedule_attempts_total{result,profile}`, ...), so
//! its dashboards and alerts work unchanged, plus sift's own (`sift_`).
//! `/metrics` shows these beside the watch and plugin metrics that
//! `sift serve` defines.

use super::input::BindOutcome;
use super::queue::Pending;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptLabels {
    /// scheduled, unschedulable or error.
    pub result: String,
    pub profile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabel {
    pub queue: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptsLabel {
    pub attempts: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    pub result: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn seconds() -> Histogram {
    // kube-scheduler's: 1 ms doubling, 15 buckets (to ~16 s).
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

fn sli_seconds() -> Histogram {
    // 10 ms doubling to ~5.8 min, as upstream's SLI histogram.
    Histogram::new(exponential_buckets(0.01, 2.0, 20))
}

pub struct Metrics {
    registry: Registry,
    profile: String,
    pub schedule_attempts: Family<AttemptLabels, Counter>,
    pub attempt_duration: Histograms<AttemptLabels>,
    pub pending_pods: Family<QueueLabel, Gauge>,
    pub preemption_attempts: Counter,
    pub preemption_victims: Histogram,
    pub sli_duration: Histograms<AttemptsLabel>,
    pub bind_results: Family<ResultLabel, Counter>,
    pub events_dropped: Counter,
    pub events_failed: Counter,
    pub leader: Gauge,
    pub profile_generation: Gauge,
}

impl Metrics {
    pub fn new(profile: &str) -> Metrics {
        let m = Metrics {
            registry: Registry::default(),
            profile: profile.to_string(),
            schedule_attempts: Family::default(),
            attempt_duration: Family::new_with_constructor(seconds),
            pending_pods: Family::default(),
            preemption_attempts: Counter::default(),
            preemption_victims: Histogram::new(exponential_buckets(1.0, 2.0, 7)),
            sli_duration: Family::new_with_constructor(sli_seconds),
            bind_results: Family::default(),
            events_dropped: Counter::default(),
            events_failed: Counter::default(),
            leader: Gauge::default(),
            profile_generation: Gauge::default(),
        };
        let mut registry = Registry::default();
        registry.register(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result",
            m.schedule_attempts.clone(),
        );
        registry.register(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            m.attempt_duration.clone(),
        );
        registry.register(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type",
            m.pending_pods.clone(),
        );
        registry.register(
            "scheduler_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            m.preemption_attempts.clone(),
        );
        registry.register(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            m.preemption_victims.clone(),
        );
        registry.register(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the \
             scheduling queue, by the number of attempts",
            m.sli_duration.clone(),
        );
        registry.register(
            "sift_binds",
            "Binds by result: bound, gone (404), conflict (409), failed",
            m.bind_results.clone(),
        );
        registry.register(
            "sift_events_dropped",
            "Events not written because 1,000 writes were already waiting",
            m.events_dropped.clone(),
        );
        registry.register(
            "sift_events_failed",
            "Event writes the API server refused or did not answer",
            m.events_failed.clone(),
        );
        registry.register(
            "sift_leader",
            "1 while this replica holds the leader lease (or runs without election)",
            m.leader.clone(),
        );
        registry.register(
            "sift_profile_generation",
            "Generation of the plugin profile the scheduler runs",
            m.profile_generation.clone(),
        );
        Metrics { registry, ..m }
    }

    /// One scheduling attempt's result and duration.
    pub fn attempt(&self, result: &str, elapsed: Duration) {
        let labels = AttemptLabels {
            result: result.to_string(),
            profile: self.profile.clone(),
        };
        self.schedule_attempts.get_or_create(&labels).inc();
        self.attempt_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// A pod bound after `attempts` attempts, `elapsed` after it was
    /// first queued.
    pub fn scheduled(&self, attempts: u32, elapsed: Duration) {
        let attempts = if attempts >= 15 {
            "15+".to_string()
        } else {
            attempts.to_string()
        };
        self.sli_duration
            .get_or_create(&AttemptsLabel { attempts })
            .observe(elapsed.as_secs_f64());
    }

    pub fn pending(&self, p: Pending) {
        for (queue, n) in [
            ("active", p.active),
            ("backoff", p.backoff),
            ("unschedulable", p.unschedulable),
            ("gated", p.gated),
        ] {
            self.pending_pods
                .get_or_create(&QueueLabel {
                    queue: queue.to_string(),
                })
                .set(n as i64);
        }
    }

    pub fn binds(&self, outcome: &BindOutcome) {
        let result = match outcome {
            BindOutcome::Bound => "bound",
            BindOutcome::Gone(_) => "gone",
            BindOutcome::Conflict(_) => "conflict",
            BindOutcome::Failed(_) => "failed",
            BindOutcome::PreBindFailed(_) => "prebind_failed",
        };
        self.bind_results
            .get_or_create(&ResultLabel {
                result: result.to_string(),
            })
            .inc();
    }

    /// The text exposition format (without its `# EOF` line, so that it
    /// can be joined to another registry's).
    pub fn encode_body(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &self.registry);
        out
    }
}
