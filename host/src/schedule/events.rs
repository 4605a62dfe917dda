//! Events as kube-scheduler's recorder writes them (client-go
//! `tools/events`, events.k8s.io/v1): named `<object>.<hex nanoseconds>`,
//! `reportingController` the scheduler's name, `reportingInstance`
//! `<name>-<host>`, the note cut to 1,024 bytes.
//!
//! Repeats are a **series**, not new events: occurrences with the same
//! (object, type, reason, action) within 6 minutes of the last one are
//! one event; the second patches `series.count`, later ones only count in
//! memory, and the count is patched again after 30 minutes. A backlog of
//! 10,000 unschedulable pods retried every few seconds is then 10,000
//! events and 10,000 patches, not one write per attempt. At most 1,000
//! writes wait at once; beyond that events are dropped and counted
//! (`sift_events_dropped_total`), as upstream's `maxQueuedEvents`.

use super::metrics::Metrics;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NOTE_LIMIT: usize = 1024;
const SERIES_END: Duration = Duration::from_secs(6 * 60);
const SERIES_REFRESH: Duration = Duration::from_secs(30 * 60);
const MAX_QUEUED: usize = 1000;

/// The object an event is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Regarding {
    api_version: &'static str,
    kind: &'static str,
    namespace: String,
    name: String,
    uid: String,
}

impl Regarding {
    pub fn of(pod: &k8s::Pod) -> Regarding {
        Regarding {
            api_version: "v1",
            kind: "Pod",
            namespace: pod
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into()),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
        }
    }

    pub fn key(namespace: &str, name: &str) -> Regarding {
        Regarding {
            api_version: "v1",
            kind: "Pod",
            namespace: namespace.into(),
            name: name.into(),
            uid: String::new(),
        }
    }

    /// A Volcano PodGroup, by namespace/name.
    pub fn pod_group(key: &str) -> Regarding {
        let (namespace, name) = key.split_once('/').unwrap_or(("default", key));
        Regarding {
            api_version: "scheduling.volcano.sh/v1beta1",
            kind: "PodGroup",
            namespace: namespace.into(),
            name: name.into(),
            uid: String::new(),
        }
    }

    fn json(&self) -> Value {
        let mut v = json!({"apiVersion": self.api_version, "kind": self.kind,
                           "namespace": self.namespace, "name": self.name});
        if !self.uid.is_empty() {
            v["uid"] = json!(self.uid);
        }
        v
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SeriesKey {
    regarding: Regarding,
    type_: &'static str,
    reason: &'static str,
    action: &'static str,
}

struct Series {
    name: String,
    count: u32,
    last_seen: Instant,
    last_sent: Instant,
}

pub struct Recorder {
    client: kube::Client,
    runtime: tokio::runtime::Handle,
    controller: String,
    instance: String,
    series: HashMap<SeriesKey, Series>,
    queued: Arc<AtomicUsize>,
    metrics: Arc<Metrics>,
    recorded: u64,
}

/// The note cut to upstream's limit, on a character boundary, with " ...".
pub fn truncate_note(note: &str) -> String {
    if note.len() <= NOTE_LIMIT {
        return note.to_string();
    }
    let mut end = NOTE_LIMIT - 4;
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &note[..end])
}

impl Recorder {
    pub fn new(
        client: kube::Client,
        runtime: tokio::runtime::Handle,
        controller: &str,
        instance: &str,
        metrics: Arc<Metrics>,
    ) -> Recorder {
        Recorder {
            client,
            runtime,
            controller: controller.into(),
            instance: instance.into(),
            series: HashMap::new(),
            queued: Arc::new(AtomicUsize::new(0)),
            metrics,
            recorded: 0,
        }
    }

    /// Records one occurrence; the write (if any) runs on the runtime.
    pub fn record(
        this: &Mutex<Recorder>,
        regarding: Regarding,
        type_: &'static str,
        reason: &'static str,
        action: &'static str,
        note: String,
    ) {
        let mut r = this.lock().unwrap_or_else(|e| e.into_inner());
        r.occurrence(
            SeriesKey {
                regarding,
                type_,
                reason,
                action,
            },
            note,
        );
    }

    fn occurrence(&mut self, key: SeriesKey, note: String) {
        let now = Instant::now();
        self.recorded += 1;
        if self.recorded.is_multiple_of(1024) {
            self.series
                .retain(|_, s| now.duration_since(s.last_seen) < SERIES_END);
        }
        let namespace = key.regarding.namespace.clone();
        if let Some(s) = self
            .series
            .get_mut(&key)
            .filter(|s| now.duration_since(s.last_seen) < SERIES_END)
        {
            s.count += 1;
            s.last_seen = now;
            if s.count == 2 || now.duration_since(s.last_sent) >= SERIES_REFRESH {
                s.last_sent = now;
                let patch = json!({"series": {"count": s.count, "lastObservedTime": micro_now()}});
                let name = s.name.clone();
                self.send(
                    move |api: kube::Api<Event>| async move {
                        api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                            .await
                            .map(|_| ())
                    },
                    &namespace,
                );
            }
            return;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name = format!("{}.{nanos:x}", key.regarding.name);
        let event = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "eventTime": micro_now(),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": key.action, "reason": key.reason, "type": key.type_,
            "regarding": key.regarding.json(),
            "note": truncate_note(&note),
        });
        self.series.insert(
            key,
            Series {
                name,
                count: 1,
                last_seen: now,
                last_sent: now,
            },
        );
        let Ok(event) = serde_json::from_value::<Event>(event) else {
            return;
        };
        self.send(
            move |api: kube::Api<Event>| async move {
                api.create(&PostParams::default(), &event).await.map(|_| ())
            },
            &namespace,
        );
    }

    fn send<F, Fut>(&self, call: F, namespace: &str)
    where
        F: FnOnce(kube::Api<Event>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<(), kube::Error>> + Send,
    {
        if self.queued.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            self.metrics.events_dropped.inc();
            return;
        }
        let api = kube::Api::namespaced(self.client.clone(), namespace);
        let queued = self.queued.clone();
        let metrics = self.metrics.clone();
        self.runtime.spawn(async move {
            if let Err(e) = call(api).await {
                metrics.events_failed.inc();
                tracing::debug!("event not written: {e}");
            }
            queued.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

fn micro_now() -> String {
    jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%S%.6fZ", jiff::Timestamp::now()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_cut_at_1024_bytes_with_an_ellipsis() {
        assert_eq!(truncate_note("short"), "short");
        let long = "é".repeat(600);
        let cut = truncate_note(&long);
        assert!(cut.len() <= NOTE_LIMIT, "{}", cut.len());
        assert!(cut.ends_with(" ..."));
        assert!(cut.starts_with("éé"));
    }
}
