//! The cluster as one scheduling cycle sees it: every node with what its
//! bound pods use (kube-scheduler's NodeInfo list), in kube-scheduler's
//! node order.

use crate::input::Objects;
use crate::kube;
use anyhow::{Result, bail};
use sift_sdk::Node;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// An immutable view of the cluster. Each snapshot has a unique generation:
/// a Wasm instance that has seen this generation holds its node table.
#[derive(Debug)]
pub struct Snapshot {
    generation: u64,
    /// Nodes by slot; a slot is the node's index in the instance tables.
    nodes: Vec<Node>,
    /// Node names by slot, shared into cycle outcomes without copying.
    names: Vec<Arc<str>>,
    /// Slots in kube-scheduler's order: zones interleaved (its NodeTree).
    order: Vec<u32>,
    by_name: HashMap<String, u32>,
}

impl Snapshot {
    /// Builds from nodes (in input order) and the pods bound to them.
    /// Pods in phase Succeeded or Failed hold nothing.
    pub fn from_objects(objects: &Objects) -> Result<Snapshot> {
        let mut nodes = Vec::with_capacity(objects.nodes.len());
        let mut zones = Vec::with_capacity(objects.nodes.len());
        let mut by_name = HashMap::with_capacity(objects.nodes.len());
        for (obj, origin) in &objects.nodes {
            let node = kube::node(obj).map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
            if node.name.is_empty() {
                bail!("{origin}: node has no metadata.name");
            }
            if by_name
                .insert(node.name.clone(), nodes.len() as u32)
                .is_some()
            {
                bail!("{origin}: node {} appears more than once", node.name);
            }
            zones.push(zone_key(&node));
            nodes.push(node);
        }
        for (pod, origin) in &objects.pods {
            let Some(node_name) = kube::bound_node(pod) else {
                continue;
            };
            if !kube::pod_is_active(pod) {
                continue;
            }
            let Some(&slot) = by_name.get(node_name) else {
                continue; // bound to a node outside the snapshot
            };
            let requests =
                kube::pod_resources(pod).map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
            let node = &mut nodes[slot as usize];
            node.requested.add(&requests);
            node.pod_count += 1;
            node.used_ports.extend(kube::pod_host_ports(pod));
        }
        Ok(Snapshot::new(nodes, &zones, by_name))
    }

    /// Builds from ready-made nodes (benchmarks, tests).
    pub fn from_nodes(nodes: Vec<Node>) -> Result<Snapshot> {
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if by_name.insert(n.name.clone(), i as u32).is_some() {
                bail!("node {} appears more than once", n.name);
            }
        }
        let zones: Vec<String> = nodes.iter().map(zone_key).collect();
        Ok(Snapshot::new(nodes, &zones, by_name))
    }

    fn new(nodes: Vec<Node>, zones: &[String], by_name: HashMap<String, u32>) -> Snapshot {
        Snapshot {
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            order: node_tree_order(zones),
            names: nodes.iter().map(|n| Arc::from(n.name.as_str())).collect(),
            nodes,
            by_name,
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// All nodes by slot.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, slot: u32) -> &Node {
        &self.nodes[slot as usize]
    }

    pub fn name(&self, slot: u32) -> &Arc<str> {
        &self.names[slot as usize]
    }

    /// Slots in the order kube-scheduler lists nodes.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    pub fn slot_of(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
}

/// kube-scheduler's zone key (`utilnode.GetZoneKey`): the deprecated beta
/// labels win when present (even empty), else the topology labels.
fn zone_key(node: &Node) -> String {
    let get = |beta: &str, ga: &str| {
        node.labels
            .get(beta)
            .or_else(|| node.labels.get(ga))
            .unwrap_or("")
    };
    let zone = get(
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    );
    let region = get(
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/region",
    );
    if region.is_empty() && zone.is_empty() {
        String::new()
    } else {
        format!("{region}:\x00:{zone}")
    }
}

/// kube-scheduler's NodeTree listing: zones in order of first appearance,
/// taking one node from each zone in turn, so that sampling a prefix of
/// the list spreads over zones.
fn node_tree_order(zones: &[String]) -> Vec<u32> {
    let mut zone_ids: HashMap<&str, usize> = HashMap::new();
    let mut per_zone: Vec<Vec<u32>> = Vec::new();
    for (slot, z) in zones.iter().enumerate() {
        let id = *zone_ids.entry(z.as_str()).or_insert_with(|| {
            per_zone.push(Vec::new());
            per_zone.len() - 1
        });
        per_zone[id].push(slot as u32);
    }
    let mut order = Vec::with_capacity(zones.len());
    let mut index = 0;
    while order.len() < zones.len() {
        for zone in &per_zone {
            if let Some(&slot) = zone.get(index) {
                order.push(slot);
            }
        }
        index += 1;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_are_interleaved_in_order_of_appearance() {
        let z = |s: &str| s.to_string();
        let zones = vec![z("a"), z("a"), z("b"), z("a"), z("c"), z("b")];
        assert_eq!(node_tree_order(&zones), vec![0, 2, 4, 1, 5, 3]);
    }

    #[test]
    fn generations_are_unique() {
        let a = Snapshot::from_nodes(vec![]).unwrap();
        let b = Snapshot::from_nodes(vec![]).unwrap();
        assert_ne!(a.generation(), b.generation());
    }
}
