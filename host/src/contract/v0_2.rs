//! Contract 0.2 (`wit/0.2.0`, `sift:predicate/predicate-plugin@0.2.0`):
//! 0.1's pods and nodes plus priority, owners, annotations, spread
//! constraints and pod (anti-)affinity, and the cluster view (pod groups,
//! their placements, namespaces) synced into plugins that read it.
//!
//! Sections, the same in every version's file: bindings, host imports,
//! calls, conversions.

use super::wire::{node_conversions, shared_calls, shared_conversions, shared_imports};
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
    })
}

/// Cluster view: new groups, and groups no placement names any more.
pub(super) fn sync_pod_groups(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    upserts: &[&PodGroup],
    removals: &[u64],
) -> wasmtime::Result<()> {
    let upserts: Vec<wire::PodGroup> = upserts.iter().map(|g| group_to_wire(g)).collect();
    b.sift_predicate_predicate()
        .call_sync_pod_groups(store, &upserts, removals)
}

/// Cluster view: the pods on the nodes at `slots`.
pub(super) fn sync_placements(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    snapshot: &Snapshot,
    slots: &[u32],
) -> wasmtime::Result<()> {
    let upserts: Vec<wire::Placement> = slots
        .iter()
        .map(|&slot| wire::Placement {
            slot,
            groups: snapshot
                .pods_on(slot)
                .iter()
                .map(|g| wire::GroupCount {
                    group: g.group.id,
                    count: g.count,
                })
                .collect(),
        })
        .collect();
    b.sift_predicate_predicate()
        .call_sync_placements(store, &upserts)
}

/// Cluster view: namespaces' labels.
pub(super) fn sync_namespaces(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    namespaces: &Namespaces,
    removals: &[String],
) -> wasmtime::Result<()> {
    let upserts: Vec<wire::Namespace> = namespaces
        .iter()
        .map(|(name, labels)| wire::Namespace {
            name: name.clone(),
            labels: labels_to_wire(labels),
        })
        .collect();
    b.sift_predicate_predicate()
        .call_sync_namespaces(store, &upserts, removals)
}

/// The node at `slot` with `added` on it: a nominated first pass.
pub(super) fn filter_nominated(
    b: &Bindings,
    store: &mut Store<InstanceState>,
    slot: u32,
    added: &[NominatedPod],
) -> wasmtime::Result<Status> {
    let added: Vec<wire::NominatedPod> = added
        .iter()
        .map(|n| wire::NominatedPod {
            requests: resources_to_wire(&n.requests),
            host_ports: n.host_ports.iter().map(port_to_wire).collect(),
            group: group_to_wire(&n.group),
        })
        .collect();
    let status = b
        .sift_predicate_predicate()
        .call_filter_nominated(store, slot, &added)?;
    Ok(status_from_wire(status))
}

// --- conversions ----------------------------------------------------------------

fn group_to_wire(g: &PodGroup) -> wire::PodGroup {
    wire::PodGroup {
        id: g.id,
        namespace: g.namespace.clone(),
        labels: labels_to_wire(&g.labels),
        anti_affinity: g.anti_affinity.iter().map(affinity_term_to_wire).collect(),
        terminating: g.terminating,
    }
}

shared_conversions!();

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

/// The pod; its whole object only for a plugin that reads it.
pub(super) fn pod_to_wire(p: &sift_sdk::Pod, with_object: bool) -> WirePod {
    wire::Pod {
        object: match (&p.object, with_object) {
            (Some(json), true) => json.to_string(),
            _ => String::new(),
        },
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
        annotations: labels_to_wire(&p.annotations),
        owner_references: p
            .owner_references
            .iter()
            .map(|o| wire::OwnerReference {
                kind: o.kind.clone(),
                name: o.name.clone(),
                controller: o.controller,
            })
            .collect(),
        priority: p.priority,
        priority_class_name: p.priority_class_name.clone(),
        scheduler_name: p.scheduler_name.clone(),
        nominated_node_name: p.nominated_node_name.clone(),
        terminating: p.terminating,
        topology_spread_constraints: p
            .topology_spread_constraints
            .iter()
            .map(|c| wire::TopologySpreadConstraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.clone(),
                when_unsatisfiable: c.when_unsatisfiable.clone(),
                label_selector: c.label_selector.as_ref().map(selector_to_wire),
                min_domains: c.min_domains,
                node_affinity_policy: c.node_affinity_policy.clone(),
                node_taints_policy: c.node_taints_policy.clone(),
                match_label_keys: c.match_label_keys.clone(),
            })
            .collect(),
        pod_affinity: p.pod_affinity.iter().map(affinity_term_to_wire).collect(),
        pod_anti_affinity: p
            .pod_anti_affinity
            .iter()
            .map(affinity_term_to_wire)
            .collect(),
    }
}

fn selector_to_wire(s: &sift_sdk::LabelSelector) -> wire::LabelSelector {
    wire::LabelSelector {
        match_labels: s
            .match_labels
            .iter()
            .map(|(k, v)| wire::Label {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
        match_expressions: s
            .match_expressions
            .iter()
            .map(requirement_to_wire)
            .collect(),
    }
}

fn affinity_term_to_wire(t: &sift_sdk::PodAffinityTerm) -> wire::PodAffinityTerm {
    wire::PodAffinityTerm {
        label_selector: t.label_selector.as_ref().map(selector_to_wire),
        namespaces: t.namespaces.clone(),
        namespace_selector: t.namespace_selector.as_ref().map(selector_to_wire),
        topology_key: t.topology_key.clone(),
        match_label_keys: t.match_label_keys.clone(),
        mismatch_label_keys: t.mismatch_label_keys.clone(),
    }
}
