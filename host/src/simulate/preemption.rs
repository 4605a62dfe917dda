//! The PostFilter part of a FitError message: what kube-scheduler's
//! DefaultPreemption says when preemption cannot help
//! (`default_preemption.go`, `framework/preemption/preemption.go`).
//!
//! 1. A pod with `preemptionPolicy: Never` is not eligible.
//! 2. Only nodes whose filter status is Unschedulable are candidates;
//!    the others count as "Preemption is not helpful for scheduling".
//! 3. On a candidate, the victims are the bound pods of lower priority.
//!    None: "No preemption victims found for incoming pod". Otherwise the
//!    node is filtered again without them (a dry run on a copy of the
//!    cluster state); a rejection there is the node's status.
//! 4. The message is "preemption: " and the FitError text of those
//!    statuses.
//!
//! When the dry run passes somewhere, upstream would evict the victims and
//! nominate the node. sift does not simulate evictions yet: it reports the
//! node where preemption would succeed and leaves the pod unscheduled.

use crate::cluster::{ClusterState, Snapshot};
use crate::engine::diagnosis::no_node_available;
use crate::engine::{CycleOutcome, Engine};
use k8s_openapi::api::core::v1 as k8s;
use sift_sdk::{Code, Pod};
use std::collections::BTreeMap;

/// What DefaultPreemption concluded for a pod that fit nowhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PostFilter {
    /// The text appended to the FitError message.
    NotHelpful(String),
    /// Evicting lower-priority pods from this node would make room.
    WouldPreempt { node: String, victims: Vec<String> },
}

/// Runs DefaultPreemption's analysis for `pod` after a cycle on
/// `snapshot` (the state of `cluster`) that found no node (`failed`).
pub fn post_filter(
    engine: &Engine,
    cluster: &ClusterState,
    snapshot: &Snapshot,
    object: &k8s::Pod,
    pod: &Pod,
    failed: &CycleOutcome,
) -> PostFilter {
    let never = object
        .spec
        .as_ref()
        .and_then(|s| s.preemption_policy.as_deref())
        == Some("Never");
    if never {
        return PostFilter::NotHelpful(
            "preemption: not eligible due to preemptionPolicy=Never.".into(),
        );
    }
    let all = snapshot.len();
    let code_of: std::collections::HashMap<&str, Code> = failed
        .statuses
        .iter()
        .map(|(n, s)| (&**n, s.code()))
        .collect();
    let mut histogram: BTreeMap<String, usize> = BTreeMap::new();
    let mut not_helpful = 0usize;
    let any_victim = cluster.has_bound_below(pod.priority);
    for slot in 0..all as u32 {
        let name: &str = snapshot.name(slot);
        let Some(Code::Unschedulable) = code_of.get(name).copied() else {
            not_helpful += 1;
            continue;
        };
        if !any_victim {
            *histogram
                .entry("No preemption victims found for incoming pod".into())
                .or_default() += 1;
            continue;
        }
        let victims: Vec<String> = cluster
            .bound_pods_on(name)
            .into_iter()
            .filter(|(_, p)| *p < pod.priority)
            .map(|(k, _)| k)
            .collect();
        if victims.is_empty() {
            *histogram
                .entry("No preemption victims found for incoming pod".into())
                .or_default() += 1;
            continue;
        }
        let mut dry = cluster.clone();
        for v in &victims {
            dry.remove_pod_key(v);
        }
        let dry_snapshot = dry.snapshot();
        let Some(dry_slot) = dry_snapshot.slot_of(name) else {
            continue;
        };
        let out =
            engine.filter_candidates(engine.plugins(), &dry_snapshot, pod.clone(), &[dry_slot]);
        match out.status(name) {
            None if out.error.is_none() => {
                return PostFilter::WouldPreempt {
                    node: name.to_string(),
                    victims,
                };
            }
            None => {
                *histogram.entry(out.error.unwrap_or_default()).or_default() += 1;
            }
            Some(status) => {
                for r in status.reasons() {
                    *histogram.entry(r.to_string()).or_default() += 1;
                }
            }
        }
    }
    if not_helpful > 0 {
        *histogram
            .entry("Preemption is not helpful for scheduling".into())
            .or_default() += not_helpful;
    }
    let mut entries: Vec<String> = histogram
        .into_iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    entries.sort();
    PostFilter::NotHelpful(format!(
        "preemption: {}: {}.",
        no_node_available(all),
        entries.join(", ")
    ))
}
