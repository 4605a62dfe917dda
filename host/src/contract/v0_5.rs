//! Contract 0.5 (`wit/0.5.0`, `sift:predicate/plugin@0.5.0`): 0.4's calls
//! and records, the pod with its workload selector (kube-scheduler's
//! DefaultSelector, what PodTopologySpread's default constraints spread
//! over).
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{
    node_conversions, shared_calls, shared_conversions, shared_imports, since_0_2_calls,
    since_0_2_conversions, since_0_3_calls,
};
use super::{Describe, PreScored, Verdicts};
use crate::cluster::Snapshot;
use crate::cluster::snapshot::Namespaces;
use crate::engine::plugin::PrepareOutcome;
use crate::runtime::{InstanceState, LogLevel};
use sift_sdk::{Code, ExtensionPoints, NodeFields, NominatedPod, PodGroup, Status};
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

// --- bindings ---------------------------------------------------------------

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit/0.5.0",
        world: "plugin",
    });
}

use bindings::sift::predicate::types as wire;
pub(super) use bindings::{Plugin as Bindings, PluginPre as Pre};
pub(super) type WirePod = wire::Pod;

/// The export that says a component implements this version.
pub(super) const EXPORT: &str = "sift:predicate/predicate@0.5.0";

// --- host imports -------------------------------------------------------------

shared_imports!();

// --- calls ----------------------------------------------------------------------

shared_calls!();

since_0_2_calls!();

since_0_3_calls!();

// --- conversions ----------------------------------------------------------------

shared_conversions!();

since_0_2_conversions!(|p| {
    non_zero_requests: wire::NonZero {
        milli_cpu: p.non_zero_requests.milli_cpu,
        memory: p.non_zero_requests.memory,
    },
    preferred_node_affinity: p
        .preferred_node_affinity
        .iter()
        .map(|t| wire::WeightedSelectorTerm {
            weight: t.weight,
            preference: term_to_wire(&t.preference),
        })
        .collect(),
    preferred_pod_affinity: weighted_to_wire(&p.preferred_pod_affinity),
    preferred_pod_anti_affinity: weighted_to_wire(&p.preferred_pod_anti_affinity),
    images: p.images.clone(),
    workload_selector: p.workload_selector.as_ref().map(selector_to_wire),
}, |g| {
    affinity: g.affinity.iter().map(affinity_term_to_wire).collect(),
    preferred_affinity: weighted_to_wire(&g.preferred_affinity),
    preferred_anti_affinity: weighted_to_wire(&g.preferred_anti_affinity),
});

fn owner_to_wire(o: &sift_sdk::OwnerReference) -> wire::OwnerReference {
    wire::OwnerReference {
        kind: o.kind.clone(),
        name: o.name.clone(),
        controller: o.controller,
        api_version: o.api_version.clone(),
    }
}

fn weighted_to_wire(
    terms: &[sift_sdk::WeightedPodAffinityTerm],
) -> Vec<wire::WeightedPodAffinityTerm> {
    terms
        .iter()
        .map(|t| wire::WeightedPodAffinityTerm {
            weight: t.weight,
            term: affinity_term_to_wire(&t.term),
        })
        .collect()
}

node_conversions! {
    flags: [LABELS, TAINTS, UNSCHEDULABLE, RESOURCES, PORTS, ANNOTATIONS, CONDITIONS, OBJECT, IMAGES],
    more: |n, fields| {
        annotations: masked(fields, NodeFields::ANNOTATIONS, || labels_to_wire(&n.annotations)),
        conditions: masked(fields, NodeFields::CONDITIONS, || {
            n.conditions
                .iter()
                .map(|c| wire::NodeCondition {
                    type_: c.type_.clone(),
                    status: c.status.clone(),
                })
                .collect()
        }),
        object: masked(fields, NodeFields::OBJECT, || {
            n.object.as_deref().unwrap_or_default().to_string()
        }),
        non_zero_requested: if fields.contains(NodeFields::RESOURCES) {
            wire::NonZero {
                milli_cpu: n.non_zero_requested.milli_cpu,
                memory: n.non_zero_requested.memory,
            }
        } else {
            wire::NonZero { milli_cpu: 0, memory: 0 }
        },
        images: masked(fields, NodeFields::IMAGES, || {
            n.images
                .iter()
                .map(|i| wire::ContainerImage {
                    names: i.names.clone(),
                    size_bytes: i.size_bytes,
                })
                .collect()
        }),
        // The host keeps only the keys plugins named (ClusterState).
        pod_annotations: n
            .pod_annotations
            .iter()
            .map(|p| wire::PodAnnotations {
                pod: p.pod.clone(),
                annotations: labels_to_wire(&p.annotations),
            })
            .collect(),
    }
}
