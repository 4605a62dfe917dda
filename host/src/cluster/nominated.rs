//! Pods nominated to nodes: pending pods with `status.nominatedNodeName`
//! (set when preemption made room for them). kube-scheduler's filter checks
//! a node first as if the nominated pods of at least the incoming pod's
//! priority already ran there (`addGENominatedPods`), then without them.
//!
//! Nominations change no node: they are kept beside the node table, so a
//! nomination coming or going never resyncs a node into plugin instances.

use sift_sdk::{Node, NominatedPod, Pod, PodGroup};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A pending pod nominated to a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Nominated {
    /// "namespace/name".
    pub key: String,
    pub uid: String,
    /// `spec.priority` (0 when unset).
    pub priority: i32,
    pub node: String,
    /// What placing it on the node adds.
    pub pod: NominatedPod,
}

impl Nominated {
    /// The nomination `pod` carries, if it is pending (no `spec.nodeName`)
    /// with `status.nominatedNodeName` set.
    pub fn of(pod: &Pod) -> Option<Nominated> {
        if !pod.node_name.is_empty() || pod.nominated_node_name.is_empty() {
            return None;
        }
        Some(Nominated {
            key: format!("{}/{}", pod.namespace, pod.name),
            uid: pod.uid.clone(),
            priority: pod.priority,
            node: pod.nominated_node_name.clone(),
            pod: NominatedPod {
                requests: pod.requests.clone(),
                host_ports: pod.host_ports.clone(),
                group: PodGroup {
                    id: 0,
                    namespace: pod.namespace.clone(),
                    labels: pod.labels.clone(),
                    anti_affinity: pod.pod_anti_affinity.clone(),
                    terminating: pod.terminating,
                    affinity: pod.pod_affinity.clone(),
                    preferred_affinity: pod.preferred_pod_affinity.clone(),
                    preferred_anti_affinity: pod.preferred_pod_anti_affinity.clone(),
                },
            },
        })
    }

    /// Whether this is the incoming pod itself: same UID (upstream's rule)
    /// or, when either has none (case files, hand-written pods), the same
    /// namespace and name.
    fn is(&self, pod: &Pod) -> bool {
        if !self.uid.is_empty() && !pod.uid.is_empty() {
            return self.uid == pod.uid;
        }
        self.key.split_once('/') == Some((pod.namespace.as_str(), pod.name.as_str()))
    }
}

/// Nominations by pod key: sorted, so a node's nominated pods are always
/// added in the same order.
pub type Nominations = BTreeMap<String, Arc<Nominated>>;

/// Nominations by node slot, for one snapshot.
pub type NominatedBySlot = HashMap<u32, Vec<Arc<Nominated>>>;

/// Groups `all` by the slot of their node (`slot_of`); nominations to nodes
/// the snapshot lacks are left out.
pub fn by_slot(all: &Nominations, slot_of: impl Fn(&str) -> Option<u32>) -> NominatedBySlot {
    let mut out = NominatedBySlot::new();
    for n in all.values() {
        if let Some(slot) = slot_of(&n.node) {
            out.entry(slot).or_default().push(n.clone());
        }
    }
    out
}

/// A node's first filter pass for one pod: the node with the nominated
/// pods it must hold added, and those pods.
#[derive(Clone, Debug)]
pub struct NominatedPass {
    pub node: Node,
    pub added: Vec<NominatedPod>,
}

/// The first passes `pod` needs: for each node with pods nominated to it
/// of priority at least `pod`'s (other than `pod` itself).
pub fn passes_for(
    pod: &Pod,
    nominated: &NominatedBySlot,
    node: impl Fn(u32) -> Node,
) -> HashMap<u32, NominatedPass> {
    let mut out = HashMap::new();
    for (&slot, pods) in nominated {
        let added: Vec<NominatedPod> = pods
            .iter()
            .filter(|n| n.priority >= pod.priority && !n.is(pod))
            .map(|n| n.pod.clone())
            .collect();
        if added.is_empty() {
            continue;
        }
        let mut with = node(slot);
        for a in &added {
            with.add_pod(&a.requests, &a.host_ports);
        }
        out.insert(slot, NominatedPass { node: with, added });
    }
    out
}
