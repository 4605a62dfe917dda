//! Prometheus metrics of `sift serve`, named after kube-scheduler's own
//! (`scheduler_plugin_execution_duration_seconds`, ...) with the `sift_`
//! prefix, so dashboards built for one read the other.
//!
//! prometheus-client (the Prometheus project's Rust client) provides the
//! types and the text exposition format.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PluginCall {
    pub plugin: String,
    /// "PreFilter" or "Filter", as kube-scheduler's extension points.
    pub extension_point: String,
    /// "Success" or "Error" (a trap, a missed deadline...).
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabel {
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PluginResult {
    pub plugin: String,
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PluginLabel {
    pub plugin: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CodeLabel {
    pub code: String,
}

/// A watched kind: Node, Pod, Namespace.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    pub kind: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    // 10 µs to ~42 s.
    Histogram::new(exponential_buckets(1e-5, 2.0, 23))
}

fn count_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 16))
}

pub struct Metrics {
    registry: Registry,
    pub plugin_execution_duration: HistogramFamily<PluginCall>,
    pub filter_duration: HistogramFamily<ResultLabel>,
    pub feasible_nodes: Histogram,
    pub requests: Family<CodeLabel, Counter>,
    pub plugin_reloads: Family<PluginResult, Counter>,
    pub plugin_instances: Family<PluginLabel, Gauge>,
    pub queue_depth: Gauge,
    pub in_flight: Gauge,
    pub cluster_nodes: Gauge,
    pub cluster_pods: Gauge,
    pub watch_events: Family<KindLabel, Counter>,
    pub watch_relists: Family<KindLabel, Counter>,
    pub watch_gone: Family<KindLabel, Counter>,
    pub watch_errors: Family<KindLabel, Counter>,
    pub watch_synced: Family<KindLabel, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("sift");
        let m = Metrics {
            plugin_execution_duration: Family::new_with_constructor(duration_histogram),
            filter_duration: Family::new_with_constructor(duration_histogram),
            feasible_nodes: count_histogram(),
            requests: Family::default(),
            plugin_reloads: Family::default(),
            plugin_instances: Family::default(),
            queue_depth: Gauge::default(),
            in_flight: Gauge::default(),
            cluster_nodes: Gauge::default(),
            cluster_pods: Gauge::default(),
            watch_events: Family::default(),
            watch_relists: Family::default(),
            watch_gone: Family::default(),
            watch_errors: Family::default(),
            watch_synced: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "plugin_execution_duration_seconds",
            "Duration of one plugin call (a prepare, or a filter over a batch of nodes)",
            m.plugin_execution_duration.clone(),
        );
        registry.register(
            "filter_duration_seconds",
            "Duration of answering one extender filter request, by result (success, error)",
            m.filter_duration.clone(),
        );
        registry.register(
            "feasible_nodes",
            "Feasible nodes per filter request",
            m.feasible_nodes.clone(),
        );
        registry.register(
            "http_requests",
            "Filter requests answered, by HTTP status code",
            m.requests.clone(),
        );
        registry.register(
            "plugin_reloads",
            "Plugin and config loads after start, by result (success, failure)",
            m.plugin_reloads.clone(),
        );
        registry.register(
            "plugin_instances",
            "Live Wasm instances per plugin (pooled or in use)",
            m.plugin_instances.clone(),
        );
        registry.register(
            "queue_depth",
            "Filter requests waiting for a worker",
            m.queue_depth.clone(),
        );
        registry.register(
            "in_flight_requests",
            "Filter requests being evaluated",
            m.in_flight.clone(),
        );
        registry.register(
            "cluster_nodes",
            "Nodes in sift's cluster state",
            m.cluster_nodes.clone(),
        );
        registry.register(
            "cluster_pods",
            "Bound pods in sift's cluster state",
            m.cluster_pods.clone(),
        );
        registry.register(
            "watch_events",
            "Objects added, changed or deleted by the API server watch, by kind",
            m.watch_events.clone(),
        );
        registry.register(
            "watch_relists",
            "Lists after the first (after 410 Gone or a watch that could not resume), by kind",
            m.watch_relists.clone(),
        );
        registry.register(
            "watch_gone",
            "Watches the API server ended with 410 Gone (each is followed by a relist; one \
             within two minutes of another waits with backoff, and counts as an error), by kind",
            m.watch_gone.clone(),
        );
        registry.register(
            "watch_errors",
            "Failed lists and watches, missed deadlines (--watch-timeout) and repeated 410 Gone \
             (each retried with backoff), by kind",
            m.watch_errors.clone(),
        );
        registry.register(
            "watch_synced",
            "1 once the kind's first list is in",
            m.watch_synced.clone(),
        );
        Metrics { registry, ..m }
    }

    pub fn plugin_call(&self, plugin: &str, point: &str, ok: bool, elapsed: Duration) {
        self.plugin_execution_duration
            .get_or_create(&PluginCall {
                plugin: plugin.to_string(),
                extension_point: point.to_string(),
                status: if ok { "Success" } else { "Error" }.to_string(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn reload(&self, plugin: &str, ok: bool) {
        self.plugin_reloads
            .get_or_create(&PluginResult {
                plugin: plugin.to_string(),
                result: if ok { "success" } else { "failure" }.to_string(),
            })
            .inc();
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

impl crate::engine::CallObserver for Metrics {
    fn plugin_call(&self, plugin: &str, point: &'static str, ok: bool, elapsed: Duration) {
        Metrics::plugin_call(self, plugin, point, ok, elapsed);
    }
}
