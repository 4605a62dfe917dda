//! Contract 0.2 (`wit/0.2.0`, `sift:predicate/predicate-plugin@0.2.0`):
//! 0.1's pods and nodes plus priority, owners, annotations, spread
//! constraints and pod (anti-)affinity, and the cluster view (pod groups,
//! their placements, namespaces) synced into plugins that read it.
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{
    node_conversions, owners_without_api_version, shared_calls, shared_conversions, shared_imports,
    since_0_2_calls, since_0_2_conversions,
};
use super::{Describe, Verdicts};
use crate::cluster::Snapshot;
use crate::cluster::snapshot::Namespaces;
use crate::engine::plugin::PrepareOutcome;
use crate::runtime::{InstanceState, LogLevel};
use sift_sdk::{Code, NodeFields, NominatedPod, PodGroup, Status};
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

// --- bindings ---------------------------------------------------------------

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit/0.2.0",
        world: "predicate-plugin",
    });
}

use bindings::sift::predicate::types as wire;
pub(super) use bindings::{PredicatePlugin as Bindings, PredicatePluginPre as Pre};
pub(super) type WirePod = wire::Pod;

/// The export that says a component implements this version.
pub(super) const EXPORT: &str = "sift:predicate/predicate@0.2.0";

// --- host imports -------------------------------------------------------------

shared_imports!();

// --- calls ----------------------------------------------------------------------

shared_calls!();

since_0_2_calls!();

pub(super) fn describe(
    b: &Bindings,
    store: &mut Store<InstanceState>,
) -> wasmtime::Result<Describe> {
    let info = b.sift_predicate_predicate().call_describe(store)?;
    Ok(Describe {
        name: info.name,
        node_fields: node_fields_from_wire(info.node_fields),
        cluster: info.cluster,
        pod_object: info.pod_object,
        extension_points: sift_sdk::ExtensionPoints::FILTER,
        pod_annotation_keys: Vec::new(),
        object_kinds: Vec::new(),
    })
}

// --- conversions ----------------------------------------------------------------

shared_conversions!();

owners_without_api_version!();

since_0_2_conversions!();

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
    }
}
