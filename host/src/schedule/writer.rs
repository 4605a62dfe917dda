//! What the live scheduler writes to the API server, as kube-scheduler
//! writes it: PreBind's objects ([`prebind`]), then the binding
//! (`POST pods/NAME/binding`), the `PodScheduled`
//! condition and nomination (a strategic-merge patch of `pods/status`),
//! preemption's `DisruptionTarget` condition and graceful delete, and
//! events (events.k8s.io/v1, with series).
//!
//! Every call returns at once: the write runs on the tokio runtime, so
//! the scheduling loop starts its next cycle while a bind is in flight
//! (upstream's asynchronous binding cycle). Binds run at most
//! `bind_concurrency` at a time; their outcome comes back to the loop as
//! an [`Input::Bound`]. Status patches are retried on 409, 500, 503 and
//! connection errors, as upstream's `util.PatchPodStatus` (its
//! `retry.DefaultBackoff`: 4 tries from 10 ms, ×5).

use super::api_error::error_text;
use super::events::{Recorder, Regarding};
use super::input::{BindOutcome, Input};
use super::metrics::Metrics;
use super::prebind::{self, PreBind};
use crate::input::kube as model;
use crate::input::volcano::PodGroup;
use k8s_openapi::api::core::v1 as k8s;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// The scheduler's API writes.
#[derive(Clone)]
pub struct Writer {
    client: kube::Client,
    runtime: tokio::runtime::Handle,
    binds: Arc<Semaphore>,
    /// Status patches and deletes at once, beside the binds.
    writes: Arc<Semaphore>,
    events: Arc<Mutex<Recorder>>,
    scheduler_name: String,
    tx: Sender<Input>,
    metrics: Arc<Metrics>,
}

/// `PodScheduled=False` as kube-scheduler writes it after a failed attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unschedulable {
    /// `Unschedulable` (no node fits) or `SchedulerError`.
    pub reason: &'static str,
    pub message: String,
    /// The node its preemption nominated it to.
    pub nominated: Option<String>,
}

impl Writer {
    pub fn new(
        client: kube::Client,
        runtime: tokio::runtime::Handle,
        bind_concurrency: usize,
        scheduler_name: &str,
        instance: &str,
        tx: Sender<Input>,
        metrics: Arc<Metrics>,
    ) -> Writer {
        Writer {
            events: Arc::new(Mutex::new(Recorder::new(
                client.clone(),
                runtime.clone(),
                scheduler_name,
                instance,
                metrics.clone(),
            ))),
            client,
            runtime,
            binds: Arc::new(Semaphore::new(bind_concurrency.max(1))),
            writes: Arc::new(Semaphore::new(16)),
            scheduler_name: scheduler_name.to_string(),
            tx,
            metrics,
        }
    }

    fn pods(&self, namespace: &str) -> kube::Api<k8s::Pod> {
        kube::Api::namespaced(self.client.clone(), namespace)
    }

    /// Binds `pod` (as assumed: `spec.nodeName` set, reserve annotations
    /// added) to its node, after its PreBind writes ([`prebind::run`]);
    /// the outcome comes back as [`Input::Bound`].
    pub fn bind(&self, pod: &k8s::Pod, prebind: PreBind) {
        let key = model::pod_key(pod);
        let (namespace, name) = namespace_name(pod);
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let node = model::bound_node(pod).unwrap_or_default().to_string();
        let mut metadata = json!({"name": name, "namespace": namespace});
        if !uid.is_empty() {
            metadata["uid"] = json!(uid);
        }
        if let Some(a) = pod.metadata.annotations.as_ref().filter(|a| !a.is_empty()) {
            metadata["annotations"] = json!(a);
        }
        let binding = json!({
            "apiVersion": "v1", "kind": "Binding", "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        });
        let api = self.pods(&namespace);
        let permits = self.binds.clone();
        let tx = self.tx.clone();
        let events = self.events.clone();
        let regarding = Regarding::of(pod);
        let metrics = self.metrics.clone();
        let client = self.client.clone();
        self.runtime.spawn(async move {
            // Not under a bind permit: a pod waiting for its volumes must
            // not hold back the binds of others.
            if !prebind.writes.is_empty()
                && let Err(why) = prebind::run(&client, &node, &prebind).await
            {
                let outcome = BindOutcome::PreBindFailed(why);
                metrics.binds(&outcome);
                let _ = tx.send(Input::Bound { key, uid, outcome });
                return;
            }
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            let result = api
                .create_subresource::<Value, Value>(
                    "binding",
                    &name,
                    &PostParams::default(),
                    &binding,
                )
                .await;
            let outcome = match result {
                Ok(_) => BindOutcome::Bound,
                Err(kube::Error::Api(s)) if s.code == 404 => BindOutcome::Gone(s.message.clone()),
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    BindOutcome::Conflict(s.message.clone())
                }
                Err(e) => BindOutcome::Failed(error_text(&e)),
            };
            metrics.binds(&outcome);
            if outcome == BindOutcome::Bound {
                let note = format!("Successfully assigned {namespace}/{name} to {node}");
                Recorder::record(&events, regarding, "Normal", "Scheduled", "Binding", note);
            }
            let _ = tx.send(Input::Bound { key, uid, outcome });
        });
    }

    /// Writes a failed attempt: the `FailedScheduling` event (always, as
    /// series) and the `PodScheduled=False` condition with the nomination,
    /// patched only when they differ from what `pod` already shows.
    pub fn unschedulable(&self, pod: &k8s::Pod, failure: Unschedulable) {
        Recorder::record(
            &self.events,
            Regarding::of(pod),
            "Warning",
            "FailedScheduling",
            "Scheduling",
            failure.message.clone(),
        );
        let Some(patch) = status_patch(pod, &failure) else {
            return;
        };
        let (namespace, name) = namespace_name(pod);
        let api = self.pods(&namespace);
        let permits = self.writes.clone();
        self.runtime.spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            if let Err(e) = patch_status(&api, &name, &patch).await {
                tracing::warn!(
                    "cannot write the PodScheduled condition of {namespace}/{name}: {}",
                    error_text(&e)
                );
            }
        });
    }

    /// Preempts `victim` (namespace/name) on `node` for `preemptor`: the
    /// `DisruptionTarget` condition, then a graceful delete, then the
    /// `Preempted` event. A victim already gone is success; another
    /// failure comes back as [`Input::PreemptionFailed`].
    pub fn preempt(&self, victim: &str, preemptor: &k8s::Pod, node: &str) {
        let Some((namespace, name)) = victim.split_once('/') else {
            return;
        };
        let (namespace, name) = (namespace.to_string(), name.to_string());
        let api = self.pods(&namespace);
        let permits = self.writes.clone();
        let tx = self.tx.clone();
        let events = self.events.clone();
        let condition = json!({"status": {"conditions": [{
            "type": "DisruptionTarget", "status": "True",
            "reason": "PreemptionByScheduler",
            "message": format!("{}: preempting to accommodate a higher priority pod", self.scheduler_name),
            "lastTransitionTime": now_rfc3339(),
        }]}});
        let preemptor_key = model::pod_key(preemptor);
        let note = format!(
            "Preempted by pod {} on node {node}",
            preemptor.metadata.uid.as_deref().unwrap_or_default()
        );
        let regarding = Regarding::key(&namespace, &name);
        self.runtime.spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            let patched = patch_status(&api, &name, &condition).await;
            let deleted = match patched {
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                Err(e) => Err(e),
                Ok(()) => match api.delete(&name, &DeleteParams::default()).await {
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                    r => r.map(|_| ()),
                },
            };
            match deleted {
                Ok(()) => Recorder::record(
                    &events,
                    regarding,
                    "Normal",
                    "Preempted",
                    "Preempting",
                    note,
                ),
                Err(e) => {
                    tracing::warn!("cannot preempt {namespace}/{name}: {}", error_text(&e));
                    let _ = tx.send(Input::PreemptionFailed {
                        preemptor: preemptor_key,
                    });
                }
            }
        });
    }
}

impl Writer {
    /// Writes a PodGroup's status as Volcano's job updater does after a
    /// session, and its event: Warning `Unschedulable` while the job
    /// waits, Normal `Scheduled` once it runs. Volcano PUTs the whole
    /// PodGroup (its CRD has no status subresource); sift sends a merge
    /// patch of `status`, which cannot drop the fields it does not model.
    pub fn pod_group_status(&self, key: &str, status: Value, event: Option<(bool, String)>) {
        let Some((namespace, name)) = key.split_once('/') else {
            return;
        };
        let api: kube::Api<PodGroup> = kube::Api::namespaced(self.client.clone(), namespace);
        let name = name.to_string();
        let permits = self.writes.clone();
        let events = self.events.clone();
        let key = key.to_string();
        self.runtime.spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            let patch = json!({ "status": status });
            let written = with_retries(|| {
                let (api, name, patch) = (api.clone(), name.clone(), patch.clone());
                async move {
                    api.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                        .await
                        .map(|_| ())
                }
            })
            .await;
            match written {
                Ok(()) => {
                    if let Some((waiting, note)) = event {
                        let (kind, reason) = if waiting {
                            ("Warning", "Unschedulable")
                        } else {
                            ("Normal", "Scheduled")
                        };
                        Recorder::record(
                            &events,
                            Regarding::pod_group(&key),
                            kind,
                            reason,
                            "Scheduling",
                            note,
                        );
                    }
                }
                Err(e) => tracing::warn!(
                    "cannot write the status of PodGroup {key}: {}",
                    error_text(&e)
                ),
            }
        });
    }
}

/// The patch that brings `pod`'s status to `failure`, or `None` when it
/// already shows it (upstream sends it only when the condition or the
/// nomination changed).
pub fn status_patch(pod: &k8s::Pod, failure: &Unschedulable) -> Option<Value> {
    let status = pod.status.as_ref();
    let current = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"));
    let same_condition = current.is_some_and(|c| {
        c.status == "False"
            && c.reason.as_deref() == Some(failure.reason)
            && c.message.as_deref() == Some(failure.message.as_str())
    });
    let current_nomination = status
        .and_then(|s| s.nominated_node_name.as_deref())
        .filter(|n| !n.is_empty());
    let nomination_changes =
        failure.nominated.is_some() && failure.nominated.as_deref() != current_nomination;
    if same_condition && !nomination_changes {
        return None;
    }
    let mut condition = json!({
        "type": "PodScheduled", "status": "False",
        "reason": failure.reason, "message": failure.message,
    });
    // The transition time moves only when the status does.
    if current.is_none_or(|c| c.status != "False") {
        condition["lastTransitionTime"] = json!(now_rfc3339());
    }
    if let Some(generation) = pod.metadata.generation {
        condition["observedGeneration"] = json!(generation);
    }
    let mut patch = json!({"status": {"conditions": [condition]}});
    if nomination_changes {
        patch["status"]["nominatedNodeName"] = json!(failure.nominated);
    }
    Some(patch)
}

fn namespace_name(pod: &k8s::Pod) -> (String, String) {
    (
        pod.metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

/// Whether upstream's `util.Retriable` retries it.
fn retriable(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => matches!(s.code, 409 | 500 | 503),
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Runs `call` up to 4 times, 10 ms, 50 ms, 250 ms apart, while it fails
/// with a retriable error.
async fn with_retries<F, Fut>(mut call: F) -> Result<(), kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), kube::Error>>,
{
    let mut wait = Duration::from_millis(10);
    for _ in 0..3 {
        match call().await {
            Err(e) if retriable(&e) => {
                tokio::time::sleep(wait).await;
                wait *= 5;
            }
            r => return r,
        }
    }
    call().await
}

/// A strategic-merge patch of a pod's status, retried as upstream's
/// `util.PatchPodStatus`.
async fn patch_status(
    api: &kube::Api<k8s::Pod>,
    name: &str,
    patch: &Value,
) -> Result<(), kube::Error> {
    with_retries(|| async move {
        api.patch_status::<Value>(
            name,
            &PatchParams::default(),
            &Patch::Strategic(patch.clone()),
        )
        .await
        .map(|_| ())
    })
    .await
}

pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(status: Value) -> k8s::Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns", "generation": 3},
            "spec": {"containers": []}, "status": status,
        }))
        .unwrap()
    }

    fn failure(message: &str, nominated: Option<&str>) -> Unschedulable {
        Unschedulable {
            reason: "Unschedulable",
            message: message.into(),
            nominated: nominated.map(str::to_string),
        }
    }

    #[test]
    fn the_condition_is_patched_only_when_it_changes() {
        let fresh = pod(json!({}));
        let patch = status_patch(&fresh, &failure("0/3 nodes are available.", None)).unwrap();
        let c = &patch["status"]["conditions"][0];
        assert_eq!(c["type"], "PodScheduled");
        assert_eq!(c["status"], "False");
        assert_eq!(c["reason"], "Unschedulable");
        assert_eq!(c["message"], "0/3 nodes are available.");
        assert_eq!(c["observedGeneration"], 3);
        assert!(c["lastTransitionTime"].is_string());
        assert!(patch["status"].get("nominatedNodeName").is_none());
        let shown = pod(
            json!({"conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/3 nodes are available."}]}),
        );
        assert_eq!(
            status_patch(&shown, &failure("0/3 nodes are available.", None)),
            None
        );
        let moved = status_patch(&shown, &failure("0/4 nodes are available.", None)).unwrap();
        assert!(
            moved["status"]["conditions"][0]
                .get("lastTransitionTime")
                .is_none(),
            "still False: the transition time stays"
        );
        let nominated = status_patch(&shown, &failure("0/3 nodes are available.", Some("n1")));
        assert_eq!(nominated.unwrap()["status"]["nominatedNodeName"], "n1");
    }
}
