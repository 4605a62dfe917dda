//! Contract 0.1 (`wit/0.1.0`, `sift:predicate/predicate-plugin@0.1.0`):
//! pods and nodes reduced to what the six classic node filters read. Components
//! built against it (the C, Go, Python, JavaScript and WAT examples) keep
//! running unchanged next to 0.2 ones.
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{node_conversions, shared_calls, shared_conversions, shared_imports};
use super::{Describe, Verdicts};
use crate::cluster::Snapshot;
use crate::engine::plugin::PrepareOutcome;
use crate::runtime::{InstanceState, LogLevel};
use sift_sdk::{Code, NodeFields, Status};
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

// --- bindings ---------------------------------------------------------------

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit/0.1.0",
        world: "predicate-plugin",
    });
}

use bindings::sift::predicate::types as wire;
pub(super) use bindings::{PredicatePlugin as Bindings, PredicatePluginPre as Pre};
pub(super) type WirePod = wire::Pod;

/// The export that says a component implements this version.
pub(super) const EXPORT: &str = "sift:predicate/predicate@0.1.0";

// --- host imports -------------------------------------------------------------

shared_imports!();

// --- calls ----------------------------------------------------------------------

shared_calls!();

pub(super) fn describe(
    b: &Bindings,
    store: &mut Store<InstanceState>,
) -> wasmtime::Result<Describe> {
    let info = b.sift_predicate_predicate().call_describe(store)?;
    Ok(Describe {
        name: info.name,
        node_fields: node_fields_from_wire(info.node_fields),
        cluster: false,
        pod_object: false,
        extension_points: sift_sdk::ExtensionPoints::FILTER,
        pod_annotation_keys: Vec::new(),
        object_kinds: Vec::new(),
    })
}

/// One node, given rather than taken from a snapshot, at `slot`: how a
/// nominated first pass reaches a 0.1 component (see `filter_nominated`
/// in the parent module).
pub(super) fn sync_node(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    slot: u32,
    node: &sift_sdk::Node,
    fields: NodeFields,
) -> wasmtime::Result<()> {
    let entry = wire::NodeEntry {
        slot,
        node: node_to_wire(node, fields),
    };
    b.sift_predicate_predicate()
        .call_sync_nodes(store, &[entry], &[])
}

// --- conversions ----------------------------------------------------------------

shared_conversions!();

node_conversions! {
    flags: [LABELS, TAINTS, UNSCHEDULABLE, RESOURCES, PORTS],
    more: |n, fields| {}
}

pub(super) fn pod_to_wire(p: &sift_sdk::Pod) -> WirePod {
    wire::Pod {
        name: p.name.clone(),
        namespace: p.namespace.clone(),
        uid: p.uid.clone(),
        labels: labels_to_wire(&p.labels),
        node_name: p.node_name.clone(),
        node_selector: labels_to_wire(&p.node_selector),
        required_node_affinity: p.required_node_affinity.as_deref().map(terms_to_wire),
        tolerations: tolerations_to_wire(&p.tolerations),
        host_ports: p.host_ports.iter().map(port_to_wire).collect(),
        requests: resources_to_wire(&p.requests),
    }
}
