//! Contract 0.5 (`wit/0.5.0`, `sift:predicate/plugin@0.5.0`): 0.4's calls
//! and records, the pod with its workload selector (kube-scheduler's
//! DefaultSelector, what PodTopologySpread's default constraints spread
//! over).
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

annotations_reserved!();

// --- conversions ----------------------------------------------------------------

shared_conversions!();

since_0_4_conversions!(|p| {
    workload_selector: p.workload_selector.as_ref().map(selector_to_wire),
});

fn owner_to_wire(o: &sift_sdk::OwnerReference) -> wire::OwnerReference {
    wire::OwnerReference {
        kind: o.kind.clone(),
        name: o.name.clone(),
        controller: o.controller,
        api_version: o.api_version.clone(),
    }
}
