//! Contract 0.3 (`wit/0.3.0`, `sift:predicate/plugin@0.3.0`): 0.2's
//! filter side plus scorers (PreScore, Score, NormalizeScore), reservers
//! (Reserve), and the annotations of each node's pods for the keys a
//! plugin names (device assignments).
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{
    annotations_reserved, node_conversions, owners_without_api_version, shared_calls,
    shared_conversions, shared_imports, since_0_2_calls, since_0_2_conversions, since_0_3_calls,
};
use super::{Describe, PreScored, Reserved, Verdicts};
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
        path: "../wit/0.3.0",
        world: "plugin",
    });
}

use bindings::sift::predicate::types as wire;
pub(super) use bindings::{Plugin as Bindings, PluginPre as Pre};
pub(super) type WirePod = wire::Pod;

/// The export that says a component implements this version.
pub(super) const EXPORT: &str = "sift:predicate/predicate@0.3.0";

// --- host imports -------------------------------------------------------------

shared_imports!();

// --- calls ----------------------------------------------------------------------

shared_calls!();

since_0_2_calls!();

since_0_3_calls!();

annotations_reserved!();

// --- conversions ----------------------------------------------------------------

shared_conversions!();

owners_without_api_version!();

since_0_2_conversions!(|p| {
    non_zero_requests: wire::NonZero {
        milli_cpu: p.non_zero_requests.milli_cpu,
        memory: p.non_zero_requests.memory,
    },
});

node_conversions! {
    flags: [LABELS, TAINTS, UNSCHEDULABLE, RESOURCES, PORTS, ANNOTATIONS, CONDITIONS, OBJECT],
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
