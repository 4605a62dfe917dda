//! The cluster as one scheduling cycle sees it: every node with what its
//! bound pods use (kube-scheduler's NodeInfo list), in kube-scheduler's
//! node order; the pods on each node by group; namespaces' labels.

use super::api_objects::ApiObjects;
use super::nominated::{self, NominatedBySlot, Nominations};
use super::table::Table;
use super::workloads::Workloads;
use anyhow::{Result, bail};
use sift_sdk::{GroupCount, Labels, Node};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// How many earlier generations a snapshot remembers its changes against.
const HISTORY: usize = 16;

/// Namespace labels by name.
pub type Namespaces = BTreeMap<String, Labels>;

/// What a snapshot is made of, by slot: shared with the cluster state and
/// the snapshots before and after.
pub struct ClusterView {
    pub nodes: Table<Arc<Node>>,
    /// The pods on each node, by group; same length as `nodes`.
    pub pods: Table<Arc<[GroupCount]>>,
    pub namespaces: Arc<Namespaces>,
    /// Distinct pod groups in the cluster (an upper bound of those in
    /// `pods`): how many a plugin instance needs to hold.
    pub group_count: usize,
    /// Pending pods nominated to nodes (by pod key).
    pub nominations: Arc<Nominations>,
    /// The Services and controllers that give pods their workload selector.
    pub workloads: Arc<Workloads>,
    /// The objects plugins read whole (claims, volumes, classes, CSI).
    pub api_objects: Arc<ApiObjects>,
}

/// What a snapshot derives from node names and zone labels only.
#[derive(Debug)]
struct Layout {
    /// Node names by slot, shared into cycle outcomes without copying.
    names: Vec<Arc<str>>,
    /// Slots in kube-scheduler's order: zones interleaved (its NodeTree).
    order: Vec<u32>,
    by_name: HashMap<String, u32>,
    /// Zone key by slot.
    zones: Vec<String>,
}

impl Layout {
    fn of(nodes: &Table<Arc<Node>>, by_name: HashMap<String, u32>) -> Layout {
        let zones: Vec<String> = nodes.iter().map(|n| zone_key(n)).collect();
        Layout {
            order: node_tree_order(&zones),
            names: nodes.iter().map(|n| Arc::from(n.name.as_str())).collect(),
            by_name,
            zones,
        }
    }

    /// Whether `nodes` have this layout, given that only `changed` slots
    /// may differ from the nodes it was made of.
    fn fits(&self, nodes: &Table<Arc<Node>>, changed: &[u32]) -> bool {
        nodes.len() == self.names.len()
            && changed.iter().all(|&s| {
                let n = &nodes[s as usize];
                *self.names[s as usize] == *n.name && self.zones[s as usize] == zone_key(n)
            })
    }
}

/// An immutable view of the cluster. Each snapshot has a unique generation:
/// a Wasm instance that has seen this generation holds its node table.
#[derive(Debug)]
pub struct Snapshot {
    generation: u64,
    /// Nodes by slot; a slot is the node's index in the instance tables.
    /// Shared, chunk by chunk, with the snapshots before and after this
    /// one.
    nodes: Table<Arc<Node>>,
    /// The pods on each node by group, by slot.
    pods: Table<Arc<[GroupCount]>>,
    namespaces: Arc<Namespaces>,
    group_count: usize,
    nominations: Arc<Nominations>,
    workloads: Arc<Workloads>,
    api_objects: Arc<ApiObjects>,
    /// The nominations by the slot of their node.
    nominated: NominatedBySlot,
    /// Slots with pods with required anti-affinity, computed when first
    /// asked (InterPodAffinity asks for every pod).
    anti_affinity_slots: std::sync::OnceLock<Vec<u32>>,
    /// Slots with pods whose affinity terms InterPodAffinity's scoring
    /// weighs, likewise.
    affinity_slots: std::sync::OnceLock<Vec<u32>>,
    /// Topology domains by label key and the group index, computed when
    /// first asked (see [`sift_sdk::ClusterView`]).
    domains: std::sync::Mutex<HashMap<String, Arc<sift_sdk::Domains>>>,
    group_index: std::sync::OnceLock<Arc<sift_sdk::GroupIndex>>,
    /// Names, order and zones: shared with the previous snapshot when only
    /// nodes' contents changed (every bind in a simulation), so a snapshot
    /// costs O(changed nodes), not O(nodes).
    layout: Arc<Layout>,
    /// Slots that changed since recent earlier generations, oldest first:
    /// an instance that saw one of those is synced with only these slots
    /// (plus the removal of slots at or past `len`), not the whole table.
    changes: Vec<(u64, Arc<[u32]>)>,
}

impl Snapshot {
    /// Builds from ready-made nodes (benchmarks, tests).
    pub fn from_nodes(nodes: Vec<Node>) -> Result<Snapshot> {
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if by_name.insert(n.name.clone(), i as u32).is_some() {
                bail!("node {} appears more than once", n.name);
            }
        }
        let pods = nodes.iter().map(|_| Arc::from([])).collect();
        let view = ClusterView {
            nodes: nodes.into_iter().map(Arc::new).collect(),
            pods,
            namespaces: Arc::default(),
            group_count: 0,
            nominations: Arc::default(),
            workloads: Arc::default(),
            api_objects: Arc::default(),
        };
        let layout = Arc::new(Layout::of(&view.nodes, by_name));
        Ok(Snapshot::build(view, layout, Vec::new()))
    }

    /// Builds from a view whose nodes have unique names.
    pub fn from_view(view: ClusterView) -> Snapshot {
        let by_name = view
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i as u32))
            .collect();
        let layout = Arc::new(Layout::of(&view.nodes, by_name));
        Snapshot::build(view, layout, Vec::new())
    }

    fn build(view: ClusterView, layout: Arc<Layout>, changes: Vec<(u64, Arc<[u32]>)>) -> Snapshot {
        let ClusterView {
            nodes,
            pods,
            namespaces,
            group_count,
            nominations,
            workloads,
            api_objects,
        } = view;
        debug_assert_eq!(nodes.len(), pods.len());
        let nominated = nominated::by_slot(&nominations, |n| layout.by_name.get(n).copied());
        Snapshot {
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            layout,
            nodes,
            pods,
            namespaces,
            group_count,
            nominations,
            workloads,
            api_objects,
            nominated,
            anti_affinity_slots: std::sync::OnceLock::new(),
            affinity_slots: std::sync::OnceLock::new(),
            domains: Default::default(),
            group_index: std::sync::OnceLock::new(),
            changes,
        }
    }

    /// The next snapshot: `view` by slot, of which `changed` differ from
    /// this one's (slots past the new length are removed).
    pub fn successor(&self, view: ClusterView, changed: &BTreeSet<u32>) -> Snapshot {
        let nodes = &view.nodes;
        let len = nodes.len() as u32;
        let changed: Vec<u32> = changed.iter().copied().filter(|&s| s < len).collect();
        let changed_now = changed.clone();
        let mut changes: Vec<(u64, Arc<[u32]>)> = Vec::with_capacity(HISTORY);
        // Beyond half the table a full sync costs no more: forget those.
        for (since, slots) in self.changes.iter() {
            let mut union: BTreeSet<u32> = slots.iter().copied().filter(|&s| s < len).collect();
            union.extend(changed.iter().copied());
            if union.len() <= nodes.len() / 2 {
                changes.push((*since, union.into_iter().collect()));
            }
        }
        changes.push((self.generation, changed.into()));
        if changes.len() > HISTORY {
            changes.drain(..changes.len() - HISTORY);
        }
        let layout = if self.layout.fits(nodes, &changed_now) {
            self.layout.clone()
        } else {
            let by_name = nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.clone(), i as u32))
                .collect();
            Arc::new(Layout::of(nodes, by_name))
        };
        Snapshot::build(view, layout, changes)
    }

    /// The slots that changed since `generation`, if this snapshot still
    /// knows (else the whole table must be synced).
    pub fn changes_since(&self, generation: u64) -> Option<&[u32]> {
        self.changes
            .iter()
            .find(|(since, _)| *since == generation)
            .map(|(_, slots)| &slots[..])
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
    pub fn nodes(&self) -> &Table<Arc<Node>> {
        &self.nodes
    }

    pub fn node(&self, slot: u32) -> &Node {
        &self.nodes[slot as usize]
    }

    /// The pods bound to the node at `slot`, by group.
    pub fn pods_on(&self, slot: u32) -> &[GroupCount] {
        &self.pods[slot as usize]
    }

    /// Distinct pod groups in the cluster (at least those on its nodes).
    pub fn group_count(&self) -> usize {
        self.group_count
    }

    /// Namespace labels by name (empty unless Namespace objects were given).
    pub fn namespaces(&self) -> &Arc<Namespaces> {
        &self.namespaces
    }

    pub fn workloads(&self) -> &Arc<Workloads> {
        &self.workloads
    }

    pub fn api_objects(&self) -> &Arc<ApiObjects> {
        &self.api_objects
    }

    /// Pending pods nominated to nodes, by pod key.
    pub fn nominations(&self) -> &Arc<Nominations> {
        &self.nominations
    }

    /// The pods nominated to each node that has some, by slot.
    pub fn nominated(&self) -> &NominatedBySlot {
        &self.nominated
    }

    pub fn name(&self, slot: u32) -> &Arc<str> {
        &self.layout.names[slot as usize]
    }

    /// Slots in the order kube-scheduler lists nodes.
    pub fn order(&self) -> &[u32] {
        &self.layout.order
    }

    pub fn slot_of(&self, name: &str) -> Option<u32> {
        self.layout.by_name.get(name).copied()
    }
}

/// What a native plugin's prepare step reads (see [`sift_sdk::ClusterView`]).
impl sift_sdk::ClusterView for Snapshot {
    fn slots(&self) -> u32 {
        self.nodes.len() as u32
    }
    fn generation(&self) -> Option<u64> {
        Some(self.generation)
    }
    fn node(&self, slot: u32) -> Option<&Node> {
        self.nodes.get(slot as usize).map(|n| &**n)
    }
    fn pods_on(&self, slot: u32) -> &[GroupCount] {
        self.pods.get(slot as usize).map_or(&[], |p| &p[..])
    }
    fn namespace_labels(&self, namespace: &str) -> Option<&Labels> {
        self.namespaces.get(namespace)
    }
    fn namespaces(&self) -> Vec<(&str, &Labels)> {
        self.namespaces
            .iter()
            .map(|(n, l)| (n.as_str(), l))
            .collect()
    }
    fn object(&self, kind: &str, key: &str) -> Option<&serde_json::Value> {
        self.api_objects.get(kind, key)
    }
    fn objects(&self, kind: &str) -> Vec<(&str, &serde_json::Value)> {
        self.api_objects
            .of_kind(kind)
            .map(|(k, v)| (k, &**v))
            .collect()
    }
    fn domains(&self, key: &str) -> Arc<sift_sdk::Domains> {
        let Ok(mut cache) = self.domains.lock() else {
            return Arc::new(sift_sdk::Domains::scan(self, key));
        };
        cache
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(sift_sdk::Domains::scan(self, key)))
            .clone()
    }
    fn group_index(&self) -> Arc<sift_sdk::GroupIndex> {
        self.group_index
            .get_or_init(|| Arc::new(sift_sdk::GroupIndex::scan(self)))
            .clone()
    }
    fn affinity_slots(&self) -> Vec<u32> {
        self.affinity_slots
            .get_or_init(|| {
                (0..self.pods.len() as u32)
                    .filter(|&s| {
                        self.pods[s as usize]
                            .iter()
                            .any(|g| g.group.has_scored_affinity())
                    })
                    .collect()
            })
            .clone()
    }
    fn anti_affinity_slots(&self) -> Vec<u32> {
        self.anti_affinity_slots
            .get_or_init(|| {
                (0..self.pods.len() as u32)
                    .filter(|&s| {
                        self.pods[s as usize]
                            .iter()
                            .any(|g| !g.group.anti_affinity.is_empty())
                    })
                    .collect()
            })
            .clone()
    }
}

impl Clone for Snapshot {
    /// A copy with a new generation, so instances treat it as new.
    fn clone(&self) -> Snapshot {
        let view = ClusterView {
            nodes: self.nodes.clone(),
            pods: self.pods.clone(),
            namespaces: self.namespaces.clone(),
            group_count: self.group_count,
            nominations: self.nominations.clone(),
            workloads: self.workloads.clone(),
            api_objects: self.api_objects.clone(),
        };
        Snapshot::build(view, self.layout.clone(), Vec::new())
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

    fn node(name: &str) -> Arc<Node> {
        Arc::new(Node {
            name: name.into(),
            ..Node::default()
        })
    }

    fn view(nodes: Vec<Arc<Node>>) -> ClusterView {
        ClusterView {
            pods: nodes.iter().map(|_| Arc::from([])).collect(),
            nodes: nodes.into_iter().collect(),
            namespaces: Arc::default(),
            group_count: 0,
            nominations: Arc::default(),
            workloads: Arc::default(),
            api_objects: Arc::default(),
        }
    }

    #[test]
    fn successors_remember_what_changed() {
        let first =
            Snapshot::from_nodes((0..10).map(|i| (*node(&format!("n{i}"))).clone()).collect())
                .unwrap();
        let mut nodes: Vec<Arc<Node>> = first.nodes().iter().cloned().collect();
        nodes[3] = node("n3");
        let second = first.successor(view(nodes.clone()), &BTreeSet::from([3]));
        assert_eq!(second.changes_since(first.generation()), Some(&[3][..]));
        nodes.truncate(8);
        nodes[1] = node("n9");
        let third = second.successor(view(nodes), &BTreeSet::from([1, 9]));
        // Slot 9 is gone (past the length): removal, not an upsert.
        assert_eq!(third.changes_since(second.generation()), Some(&[1][..]));
        assert_eq!(third.changes_since(first.generation()), Some(&[1, 3][..]));
        assert_eq!(third.changes_since(12345), None);
        assert_eq!(third.slot_of("n9"), Some(1));
    }

    #[test]
    fn generations_are_unique() {
        let a = Snapshot::from_nodes(vec![]).unwrap();
        let b = Snapshot::from_nodes(vec![]).unwrap();
        assert_ne!(a.generation(), b.generation());
    }
}
