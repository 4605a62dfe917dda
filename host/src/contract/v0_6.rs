//! Contract 0.6 (`wit/0.6.0`, `sift:predicate/plugin@0.6.0`): 0.5's calls
//! and records, with what the volume filters read: the pod's volumes, the
//! volumes of each node's pods, and whole cluster objects of the kinds a
//! plugin names (`sync-objects`).
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{
    annotations_reserved, node_conversions, shared_calls, shared_conversions, shared_imports,
    since_0_2_calls, since_0_2_conversions, since_0_3_calls, since_0_4_conversions,
};
use super::{Describe, PreScored, Reserved, Verdicts};
use crate::cluster::Snapshot;
use crate::cluster::snapshot::Namespaces;
use crate::engine::plugin::PrepareOutcome;
use crate::runtime::{InstanceState, LogLevel};
use serde_json::Value;
use sift_sdk::{Code, ExtensionPoints, NodeFields, NominatedPod, PodGroup, Status};
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

// --- bindings ---------------------------------------------------------------

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit/0.6.0",
        world: "plugin",
    });
}

use bindings::sift::predicate::types as wire;
pub(super) use bindings::{Plugin as Bindings, PluginPre as Pre};
pub(super) type WirePod = wire::Pod;

/// The export that says a component implements this version.
pub(super) const EXPORT: &str = "sift:predicate/predicate@0.6.0";

// --- host imports -------------------------------------------------------------

shared_imports!();

// --- calls ----------------------------------------------------------------------

shared_calls!();

since_0_2_calls!();

since_0_3_calls!(|info| { object_kinds: info.object_kinds });

annotations_reserved!();

/// The objects of one kind that changed, and the keys gone.
pub(super) fn sync_objects(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    kind: &str,
    upserts: &[(&str, &Arc<Value>)],
    removals: &[String],
) -> wasmtime::Result<()> {
    let upserts: Vec<wire::ClusterObject> = upserts
        .iter()
        .map(|(key, value)| wire::ClusterObject {
            key: key.to_string(),
            object: value.to_string(),
        })
        .collect();
    b.sift_predicate_predicate()
        .call_sync_objects(store, kind, &upserts, removals)
}

// --- conversions ----------------------------------------------------------------

shared_conversions!();

since_0_4_conversions!(|p| {
    workload_selector: p.workload_selector.as_ref().map(selector_to_wire),
    volumes: p.volumes.iter().map(volume_to_wire).collect(),
}, node: [VOLUMES] |n, fields| {
    volumes: masked(fields, NodeFields::VOLUMES, || {
        n.volumes
            .iter()
            .map(|p| wire::PodVolumes {
                pod: p.pod.clone(),
                volumes: p.volumes.iter().map(volume_to_wire).collect(),
            })
            .collect()
    }),
});

fn volume_to_wire(v: &sift_sdk::Volume) -> wire::Volume {
    wire::Volume {
        name: v.name.clone(),
        claim_name: v.claim_name.clone(),
        ephemeral: v.ephemeral,
        object: v.object.to_string(),
    }
}

fn owner_to_wire(o: &sift_sdk::OwnerReference) -> wire::OwnerReference {
    wire::OwnerReference {
        kind: o.kind.clone(),
        name: o.name.clone(),
        controller: o.controller,
        api_version: o.api_version.clone(),
    }
}
