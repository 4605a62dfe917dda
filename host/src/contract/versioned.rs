//! The one place that knows contract versions (Zed's `wasm_host/wit.rs`):
//! every `match` over them is here, one method per WIT call, each adapting
//! its arguments to the component's version or saying that the version
//! lacks the call. The rest of `contract/` calls these methods and never
//! names a version; a new contract version touches its own module and this
//! file.
//!
//! Methods take the store but never set its deadline: the parent module's
//! one call helper does, for every call (a call site that forgot would be a
//! sandbox hole).

use super::{Describe, PreScored, Reserved, Verdicts, v0_1, v0_2, v0_3, v0_4, v0_5, v0_6, v0_7};
use crate::cluster::Snapshot;
use crate::cluster::snapshot::Namespaces;
use crate::engine::plugin::PrepareOutcome;
use crate::runtime::InstanceState;
use crate::text::printable;
use serde_json::Value;
use sift_sdk::{NodeFields, NominatedPod, PodGroup, Status};
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::Component;
use wasmtime::component::{InstancePre, Linker};

/// A value of one version's generated types.
pub(super) enum Versioned<A, B, C, D, E, F, G> {
    V0_1(A),
    V0_2(B),
    V0_3(C),
    V0_4(D),
    V0_5(E),
    V0_6(F),
    V0_7(G),
}

pub(super) type Pre = Versioned<
    v0_1::Pre<InstanceState>,
    v0_2::Pre<InstanceState>,
    v0_3::Pre<InstanceState>,
    v0_4::Pre<InstanceState>,
    v0_5::Pre<InstanceState>,
    v0_6::Pre<InstanceState>,
    v0_7::Pre<InstanceState>,
>;
pub(super) type Bindings = Versioned<
    v0_1::Bindings,
    v0_2::Bindings,
    v0_3::Bindings,
    v0_4::Bindings,
    v0_5::Bindings,
    v0_6::Bindings,
    v0_7::Bindings,
>;
pub(super) type WirePod = Versioned<
    v0_1::WirePod,
    v0_2::WirePod,
    v0_3::WirePod,
    v0_4::WirePod,
    v0_5::WirePod,
    v0_6::WirePod,
    v0_7::WirePod,
>;

type S = Store<InstanceState>;

/// The contract versions this sift runs, oldest first. Adding one is a
/// `wit/<version>/`, a `v<major>_<minor>.rs` beside this file, a variant
/// of [`Version`], an entry here and its arms in this file's matches.
pub const SUPPORTED: &[&str] = &[
    "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0",
];

/// A contract version a component implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V0_1,
    V0_2,
    V0_3,
    V0_4,
    V0_5,
    V0_6,
    V0_7,
}

impl Version {
    /// Every version, oldest first (as [`SUPPORTED`]).
    pub const ALL: [Version; 7] = [
        Version::V0_1,
        Version::V0_2,
        Version::V0_3,
        Version::V0_4,
        Version::V0_5,
        Version::V0_6,
        Version::V0_7,
    ];

    /// The newest: what new plugins are written against.
    pub const LATEST: Version = Version::V0_7;

    /// The version named "0.7.0" (or "0.7"); an error names those known.
    pub fn parse(name: &str) -> Result<Version, String> {
        Version::ALL
            .into_iter()
            .find(|v| v.as_str() == name || v.as_str().strip_suffix(".0") == Some(name))
            .ok_or_else(|| {
                format!(
                    "unknown contract version {name:?}: this sift knows {}",
                    SUPPORTED.join(", ")
                )
            })
    }

    /// The contract's WIT (`wit/<version>/predicate.wit`), embedded so that
    /// what sift builds and scaffolds always matches what it runs.
    pub fn wit(self) -> &'static str {
        match self {
            Version::V0_1 => include_str!("../../../wit/0.1.0/predicate.wit"),
            Version::V0_2 => include_str!("../../../wit/0.2.0/predicate.wit"),
            Version::V0_3 => include_str!("../../../wit/0.3.0/predicate.wit"),
            Version::V0_4 => include_str!("../../../wit/0.4.0/predicate.wit"),
            Version::V0_5 => include_str!("../../../wit/0.5.0/predicate.wit"),
            Version::V0_6 => include_str!("../../../wit/0.6.0/predicate.wit"),
            Version::V0_7 => include_str!("../../../wit/0.7.0/predicate.wit"),
        }
    }

    /// The world a component of this version implements.
    pub fn world(self) -> &'static str {
        match self {
            Version::V0_1 | Version::V0_2 => "predicate-plugin",
            Version::V0_3 | Version::V0_4 | Version::V0_5 | Version::V0_6 | Version::V0_7 => {
                "plugin"
            }
        }
    }

    /// Why a call cannot be made: this version lacks it (e.g. `reserve`
    /// before 0.3).
    pub fn lacks(self, call: &str) -> String {
        format!("{call} is not in contract {}", self.as_str())
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V0_1 => "0.1.0",
            Version::V0_2 => "0.2.0",
            Version::V0_3 => "0.3.0",
            Version::V0_4 => "0.4.0",
            Version::V0_5 => "0.5.0",
            Version::V0_6 => "0.6.0",
            Version::V0_7 => "0.7.0",
        }
    }

    /// The version a component implements, from the predicate interface
    /// it exports; an error names the version found and those supported.
    pub fn of(component: &Component, engine: &wasmtime::Engine) -> Result<Version, String> {
        const INTERFACE: &str = "sift:predicate/predicate@";
        let exported: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_string())
            .collect();
        for name in &exported {
            if name == v0_1::EXPORT {
                return Ok(Version::V0_1);
            }
            if name == v0_2::EXPORT {
                return Ok(Version::V0_2);
            }
            if name == v0_3::EXPORT {
                return Ok(Version::V0_3);
            }
            if name == v0_4::EXPORT {
                return Ok(Version::V0_4);
            }
            if name == v0_5::EXPORT {
                return Ok(Version::V0_5);
            }
            if name == v0_6::EXPORT {
                return Ok(Version::V0_6);
            }
            if name == v0_7::EXPORT {
                return Ok(Version::V0_7);
            }
        }
        let supported = SUPPORTED.join(", ");
        match exported.iter().find_map(|n| n.strip_prefix(INTERFACE)) {
            Some(v) => Err(format!(
                "implements sift's contract {}, which this sift does not run (it runs {supported})",
                printable(v)
            )),
            None => Err(format!(
                "does not implement sift's contract: it exports no {INTERFACE}<version> \
                 interface (this sift runs {supported})"
            )),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The calls every version has: each arm calls the same function of its
/// version's module.
macro_rules! by_version {
    ($value:expr, $v:ident => $body:expr) => {
        match $value {
            Versioned::V0_1($v) => {
                #[allow(unused_imports)]
                use v0_1 as api;
                $body
            }
            Versioned::V0_2($v) => {
                #[allow(unused_imports)]
                use v0_2 as api;
                $body
            }
            Versioned::V0_3($v) => {
                #[allow(unused_imports)]
                use v0_3 as api;
                $body
            }
            Versioned::V0_4($v) => {
                #[allow(unused_imports)]
                use v0_4 as api;
                $body
            }
            Versioned::V0_5($v) => {
                #[allow(unused_imports)]
                use v0_5 as api;
                $body
            }
            Versioned::V0_6($v) => {
                #[allow(unused_imports)]
                use v0_6 as api;
                $body
            }
            Versioned::V0_7($v) => {
                #[allow(unused_imports)]
                use v0_7 as api;
                $body
            }
        }
    };
}

/// Adds what a component of `version` imports from the host to `linker`.
pub(super) fn link(linker: &mut Linker<InstanceState>, version: Version) -> wasmtime::Result<()> {
    match version {
        Version::V0_1 => v0_1::link(linker),
        Version::V0_2 => v0_2::link(linker),
        Version::V0_3 => v0_3::link(linker),
        Version::V0_4 => v0_4::link(linker),
        Version::V0_5 => v0_5::link(linker),
        Version::V0_6 => v0_6::link(linker),
        Version::V0_7 => v0_7::link(linker),
    }
}

/// The component's pod in its version's wire form.
pub(super) fn pod_to_wire(version: Version, pod: &sift_sdk::Pod, pod_object: bool) -> WirePod {
    match version {
        Version::V0_1 => Versioned::V0_1(v0_1::pod_to_wire(pod)),
        Version::V0_2 => Versioned::V0_2(v0_2::pod_to_wire(pod, pod_object)),
        Version::V0_3 => Versioned::V0_3(v0_3::pod_to_wire(pod, pod_object)),
        Version::V0_4 => Versioned::V0_4(v0_4::pod_to_wire(pod, pod_object)),
        Version::V0_5 => Versioned::V0_5(v0_5::pod_to_wire(pod, pod_object)),
        Version::V0_6 => Versioned::V0_6(v0_6::pod_to_wire(pod, pod_object)),
        Version::V0_7 => Versioned::V0_7(v0_7::pod_to_wire(pod, pod_object)),
    }
}

impl Pre {
    /// Checks that a linked component implements `version`'s world.
    pub(super) fn new(
        version: Version,
        instance_pre: InstancePre<InstanceState>,
    ) -> wasmtime::Result<Pre> {
        match version {
            Version::V0_1 => v0_1::pre(instance_pre).map(Versioned::V0_1),
            Version::V0_2 => v0_2::pre(instance_pre).map(Versioned::V0_2),
            Version::V0_3 => v0_3::pre(instance_pre).map(Versioned::V0_3),
            Version::V0_4 => v0_4::pre(instance_pre).map(Versioned::V0_4),
            Version::V0_5 => v0_5::pre(instance_pre).map(Versioned::V0_5),
            Version::V0_6 => v0_6::pre(instance_pre).map(Versioned::V0_6),
            Version::V0_7 => v0_7::pre(instance_pre).map(Versioned::V0_7),
        }
    }

    pub(super) fn instantiate(&self, store: &mut S) -> wasmtime::Result<Bindings> {
        match self {
            Versioned::V0_1(pre) => pre.instantiate(store).map(Versioned::V0_1),
            Versioned::V0_2(pre) => pre.instantiate(store).map(Versioned::V0_2),
            Versioned::V0_3(pre) => pre.instantiate(store).map(Versioned::V0_3),
            Versioned::V0_4(pre) => pre.instantiate(store).map(Versioned::V0_4),
            Versioned::V0_5(pre) => pre.instantiate(store).map(Versioned::V0_5),
            Versioned::V0_6(pre) => pre.instantiate(store).map(Versioned::V0_6),
            Versioned::V0_7(pre) => pre.instantiate(store).map(Versioned::V0_7),
        }
    }
}

impl Clone for Pre {
    fn clone(&self) -> Pre {
        match self {
            Versioned::V0_1(p) => Versioned::V0_1(p.clone()),
            Versioned::V0_2(p) => Versioned::V0_2(p.clone()),
            Versioned::V0_3(p) => Versioned::V0_3(p.clone()),
            Versioned::V0_4(p) => Versioned::V0_4(p.clone()),
            Versioned::V0_5(p) => Versioned::V0_5(p.clone()),
            Versioned::V0_6(p) => Versioned::V0_6(p.clone()),
            Versioned::V0_7(p) => Versioned::V0_7(p.clone()),
        }
    }
}

impl Bindings {
    pub(super) fn describe(&self, store: &mut S) -> wasmtime::Result<Describe> {
        by_version!(self, b => api::describe(b, store))
    }

    pub(super) fn init(&self, store: &mut S, args: &str) -> wasmtime::Result<Result<(), String>> {
        by_version!(self, b => api::init(b, store, args))
    }

    pub(super) fn sync_nodes(
        &self,
        store: &mut S,
        snapshot: &Snapshot,
        slots: &[u32],
        removals: &[u32],
        fields: NodeFields,
    ) -> wasmtime::Result<()> {
        by_version!(self, b => api::sync_nodes(b, store, snapshot, slots, removals, fields))
    }

    /// One node given rather than taken from a snapshot: the scratch slot
    /// of a 0.1 component's nominated pass. `None` for later versions,
    /// which have `filter-nominated` instead.
    pub(super) fn sync_node(
        &self,
        store: &mut S,
        slot: u32,
        node: &sift_sdk::Node,
        fields: NodeFields,
    ) -> Option<wasmtime::Result<()>> {
        match self {
            Versioned::V0_1(b) => Some(v0_1::sync_node(b, store, slot, node, fields)),
            _ => None,
        }
    }

    /// The cluster view's pod groups; 0.1 has no cluster view (nothing to
    /// send).
    pub(super) fn sync_pod_groups(
        &self,
        store: &mut S,
        upserts: &[&PodGroup],
        removals: &[u64],
    ) -> wasmtime::Result<()> {
        match self {
            Versioned::V0_1(_) => Ok(()),
            Versioned::V0_2(b) => v0_2::sync_pod_groups(b, store, upserts, removals),
            Versioned::V0_3(b) => v0_3::sync_pod_groups(b, store, upserts, removals),
            Versioned::V0_4(b) => v0_4::sync_pod_groups(b, store, upserts, removals),
            Versioned::V0_5(b) => v0_5::sync_pod_groups(b, store, upserts, removals),
            Versioned::V0_6(b) => v0_6::sync_pod_groups(b, store, upserts, removals),
            Versioned::V0_7(b) => v0_7::sync_pod_groups(b, store, upserts, removals),
        }
    }

    /// Which groups' pods sit on `slots`; nothing for 0.1.
    pub(super) fn sync_placements(
        &self,
        store: &mut S,
        snapshot: &Snapshot,
        slots: &[u32],
    ) -> wasmtime::Result<()> {
        match self {
            Versioned::V0_1(_) => Ok(()),
            Versioned::V0_2(b) => v0_2::sync_placements(b, store, snapshot, slots),
            Versioned::V0_3(b) => v0_3::sync_placements(b, store, snapshot, slots),
            Versioned::V0_4(b) => v0_4::sync_placements(b, store, snapshot, slots),
            Versioned::V0_5(b) => v0_5::sync_placements(b, store, snapshot, slots),
            Versioned::V0_6(b) => v0_6::sync_placements(b, store, snapshot, slots),
            Versioned::V0_7(b) => v0_7::sync_placements(b, store, snapshot, slots),
        }
    }

    /// The namespaces; nothing for 0.1.
    pub(super) fn sync_namespaces(
        &self,
        store: &mut S,
        namespaces: &Namespaces,
        removals: &[String],
    ) -> wasmtime::Result<()> {
        match self {
            Versioned::V0_1(_) => Ok(()),
            Versioned::V0_2(b) => v0_2::sync_namespaces(b, store, namespaces, removals),
            Versioned::V0_3(b) => v0_3::sync_namespaces(b, store, namespaces, removals),
            Versioned::V0_4(b) => v0_4::sync_namespaces(b, store, namespaces, removals),
            Versioned::V0_5(b) => v0_5::sync_namespaces(b, store, namespaces, removals),
            Versioned::V0_6(b) => v0_6::sync_namespaces(b, store, namespaces, removals),
            Versioned::V0_7(b) => v0_7::sync_namespaces(b, store, namespaces, removals),
        }
    }

    /// The objects of one kind; nothing before 0.6, whose plugins name no
    /// kinds.
    pub(super) fn sync_objects(
        &self,
        store: &mut S,
        kind: &str,
        upserts: &[(&str, &Arc<Value>)],
        removals: &[String],
    ) -> wasmtime::Result<()> {
        match self {
            Versioned::V0_6(b) => v0_6::sync_objects(b, store, kind, upserts, removals),
            Versioned::V0_7(b) => v0_7::sync_objects(b, store, kind, upserts, removals),
            _ => Ok(()),
        }
    }

    /// `None` when `pod` was converted for another version.
    pub(super) fn prepare(
        &self,
        store: &mut S,
        pod: &WirePod,
    ) -> Option<wasmtime::Result<PrepareOutcome>> {
        Some(match (self, pod) {
            (Versioned::V0_1(b), Versioned::V0_1(p)) => v0_1::prepare(b, store, p),
            (Versioned::V0_2(b), Versioned::V0_2(p)) => v0_2::prepare(b, store, p),
            (Versioned::V0_3(b), Versioned::V0_3(p)) => v0_3::prepare(b, store, p),
            (Versioned::V0_4(b), Versioned::V0_4(p)) => v0_4::prepare(b, store, p),
            (Versioned::V0_5(b), Versioned::V0_5(p)) => v0_5::prepare(b, store, p),
            (Versioned::V0_6(b), Versioned::V0_6(p)) => v0_6::prepare(b, store, p),
            (Versioned::V0_7(b), Versioned::V0_7(p)) => v0_7::prepare(b, store, p),
            _ => return None,
        })
    }

    pub(super) fn filter(&self, store: &mut S, slots: &[u32]) -> wasmtime::Result<Verdicts> {
        by_version!(self, b => api::filter(b, store, slots))
    }

    /// `None` for 0.1, which has no such call (see the scratch slot).
    pub(super) fn filter_nominated(
        &self,
        store: &mut S,
        slot: u32,
        added: &[NominatedPod],
    ) -> Option<wasmtime::Result<Status>> {
        match self {
            Versioned::V0_1(_) => None,
            Versioned::V0_2(b) => Some(v0_2::filter_nominated(b, store, slot, added)),
            Versioned::V0_3(b) => Some(v0_3::filter_nominated(b, store, slot, added)),
            Versioned::V0_4(b) => Some(v0_4::filter_nominated(b, store, slot, added)),
            Versioned::V0_5(b) => Some(v0_5::filter_nominated(b, store, slot, added)),
            Versioned::V0_6(b) => Some(v0_6::filter_nominated(b, store, slot, added)),
            Versioned::V0_7(b) => Some(v0_7::filter_nominated(b, store, slot, added)),
        }
    }

    /// PreScore; `None` before 0.3 (no scoring), or for a pod converted
    /// for another version.
    pub(super) fn pre_score(
        &self,
        store: &mut S,
        pod: &WirePod,
        feasible: &[u32],
    ) -> Option<wasmtime::Result<PreScored>> {
        Some(match (self, pod) {
            (Versioned::V0_3(b), Versioned::V0_3(pod)) => v0_3::pre_score(b, store, pod, feasible),
            (Versioned::V0_4(b), Versioned::V0_4(pod)) => v0_4::pre_score(b, store, pod, feasible),
            (Versioned::V0_5(b), Versioned::V0_5(pod)) => v0_5::pre_score(b, store, pod, feasible),
            (Versioned::V0_6(b), Versioned::V0_6(pod)) => v0_6::pre_score(b, store, pod, feasible),
            (Versioned::V0_7(b), Versioned::V0_7(pod)) => v0_7::pre_score(b, store, pod, feasible),
            _ => return None,
        })
    }

    /// Score; `None` before 0.3.
    pub(super) fn score(
        &self,
        store: &mut S,
        feasible: &[u32],
    ) -> Option<wasmtime::Result<Result<Vec<i64>, Status>>> {
        match self {
            Versioned::V0_3(b) => Some(v0_3::score(b, store, feasible)),
            Versioned::V0_4(b) => Some(v0_4::score(b, store, feasible)),
            Versioned::V0_5(b) => Some(v0_5::score(b, store, feasible)),
            Versioned::V0_6(b) => Some(v0_6::score(b, store, feasible)),
            Versioned::V0_7(b) => Some(v0_7::score(b, store, feasible)),
            _ => None,
        }
    }

    /// NormalizeScore; `None` before 0.3.
    pub(super) fn normalize_scores(
        &self,
        store: &mut S,
        raw: &[i64],
    ) -> Option<wasmtime::Result<Result<Vec<i64>, Status>>> {
        match self {
            Versioned::V0_3(b) => Some(v0_3::normalize_scores(b, store, raw)),
            Versioned::V0_4(b) => Some(v0_4::normalize_scores(b, store, raw)),
            Versioned::V0_5(b) => Some(v0_5::normalize_scores(b, store, raw)),
            Versioned::V0_6(b) => Some(v0_6::normalize_scores(b, store, raw)),
            Versioned::V0_7(b) => Some(v0_7::normalize_scores(b, store, raw)),
            _ => None,
        }
    }

    /// Reserve; `None` before 0.3, or for a pod of another version.
    pub(super) fn reserve(
        &self,
        store: &mut S,
        pod: &WirePod,
        slot: u32,
    ) -> Option<wasmtime::Result<Result<Reserved, Status>>> {
        match (self, pod) {
            (Versioned::V0_3(b), Versioned::V0_3(pod)) => Some(v0_3::reserve(b, store, pod, slot)),
            (Versioned::V0_4(b), Versioned::V0_4(pod)) => Some(v0_4::reserve(b, store, pod, slot)),
            (Versioned::V0_5(b), Versioned::V0_5(pod)) => Some(v0_5::reserve(b, store, pod, slot)),
            (Versioned::V0_6(b), Versioned::V0_6(pod)) => Some(v0_6::reserve(b, store, pod, slot)),
            (Versioned::V0_7(b), Versioned::V0_7(pod)) => Some(v0_7::reserve(b, store, pod, slot)),
            _ => None,
        }
    }
}
