//! The cluster as sift knows it between cycles: nodes and the pods bound
//! to them, changed one object at a time (as an informer delivers them),
//! from which immutable snapshots are taken. kube-scheduler's scheduler
//! cache plays this part upstream.
//!
//! Each node keeps its slot for as long as it exists, so a snapshot can
//! tell Wasm instances which slots changed and they resync only those.

use crate::kube;
use crate::snapshot::Snapshot;
use anyhow::Result;
use k8s_openapi::api::core::v1 as k8s;
use sift_sdk::resources::Resources;
use sift_sdk::{HostPort, Node};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// What a bound pod holds on its node.
#[derive(Clone, Debug, PartialEq)]
struct Usage {
    node: String,
    requests: Resources,
    ports: Vec<HostPort>,
}

/// Nodes by slot and pods by key, with the snapshot of the last state.
#[derive(Default)]
pub struct ClusterState {
    /// The node objects as given, without what pods use.
    bases: Vec<Node>,
    /// The nodes with their pods' usage added: what snapshots share.
    nodes: Vec<Arc<Node>>,
    slots: HashMap<String, u32>,
    /// Active bound pods by "namespace/name".
    pods: HashMap<String, Usage>,
    /// Pods by node name, for recomputing a node's usage. A pod may name a
    /// node that does not exist (yet): it counts once the node appears.
    pods_on: HashMap<String, BTreeSet<String>>,
    /// Slots changed since `current` was taken.
    dirty: BTreeSet<u32>,
    current: Option<Arc<Snapshot>>,
}

impl ClusterState {
    pub fn contains_node(&self, name: &str) -> bool {
        self.slots.contains_key(name)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    /// Adds or replaces a node (matched by name). Returns whether anything
    /// changed.
    pub fn upsert_node(&mut self, node: Node) -> bool {
        match self.slots.get(&node.name) {
            Some(&slot) if self.bases[slot as usize] == node => false,
            Some(&slot) => {
                self.bases[slot as usize] = node;
                self.recompute(slot);
                true
            }
            None => {
                let slot = self.bases.len() as u32;
                self.slots.insert(node.name.clone(), slot);
                self.nodes.push(Arc::new(node.clone()));
                self.bases.push(node);
                self.recompute(slot);
                true
            }
        }
    }

    /// Removes a node; the last node moves into its slot. Pods bound to it
    /// are kept: they count again if the node comes back.
    pub fn remove_node(&mut self, name: &str) -> bool {
        let Some(slot) = self.slots.remove(name) else {
            return false;
        };
        let last = self.bases.len() as u32 - 1;
        self.bases.swap_remove(slot as usize);
        self.nodes.swap_remove(slot as usize);
        if slot != last {
            self.slots
                .insert(self.bases[slot as usize].name.clone(), slot);
            self.dirty.insert(slot);
        }
        self.dirty.insert(last);
        true
    }

    /// Adds, replaces or (when it no longer holds resources: unbound,
    /// Succeeded or Failed) forgets a pod.
    pub fn upsert_pod(&mut self, pod: &k8s::Pod) -> Result<bool> {
        let key = kube::pod_key(pod);
        let usage = match kube::bound_node(pod) {
            Some(node) if kube::pod_is_active(pod) => Some(Usage {
                node: node.to_string(),
                requests: kube::pod_resources(pod)?,
                ports: kube::pod_host_ports(pod),
            }),
            _ => None,
        };
        if self.pods.get(&key) == usage.as_ref() {
            return Ok(false);
        }
        self.forget_pod(&key);
        if let Some(usage) = usage {
            let node = usage.node.clone();
            self.pods_on
                .entry(node.clone())
                .or_default()
                .insert(key.clone());
            self.pods.insert(key, usage);
            self.recompute_named(&node);
        }
        Ok(true)
    }

    pub fn remove_pod(&mut self, pod: &k8s::Pod) -> bool {
        self.forget_pod(&kube::pod_key(pod))
    }

    /// Removes a pod by "namespace/name".
    pub fn remove_pod_key(&mut self, key: &str) -> bool {
        self.forget_pod(key)
    }

    fn forget_pod(&mut self, key: &str) -> bool {
        let Some(old) = self.pods.remove(key) else {
            return false;
        };
        if let Some(set) = self.pods_on.get_mut(&old.node) {
            set.remove(key);
            if set.is_empty() {
                self.pods_on.remove(&old.node);
            }
        }
        self.recompute_named(&old.node);
        true
    }

    fn recompute_named(&mut self, node: &str) {
        if let Some(&slot) = self.slots.get(node) {
            self.recompute(slot);
        }
    }

    /// A node's usage from scratch: its base plus each bound pod, in a
    /// fixed (sorted) order so equal states give equal nodes.
    fn recompute(&mut self, slot: u32) {
        let mut node = self.bases[slot as usize].clone();
        for key in self.pods_on.get(&node.name).into_iter().flatten() {
            if let Some(u) = self.pods.get(key) {
                node.requested.add(&u.requests);
                node.pod_count += 1;
                node.used_ports.extend(u.ports.iter().cloned());
            }
        }
        self.nodes[slot as usize] = Arc::new(node);
        self.dirty.insert(slot);
    }

    /// The current state as an immutable snapshot; the same one until
    /// something changes.
    pub fn snapshot(&mut self) -> Arc<Snapshot> {
        if let Some(current) = &self.current
            && self.dirty.is_empty()
        {
            return current.clone();
        }
        let next = match &self.current {
            Some(prev) => prev.successor(self.nodes.clone(), &self.dirty),
            None => Snapshot::from_shared(self.nodes.clone()),
        };
        self.dirty.clear();
        let next = Arc::new(next);
        self.current = Some(next.clone());
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Node {
        Node {
            name: name.into(),
            ..Node::default()
        }
    }

    fn pod(name: &str, node: &str, cpu: &str) -> k8s::Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
        }))
        .unwrap()
    }

    #[test]
    fn pods_count_against_their_node_and_only_changes_resync() {
        let mut c = ClusterState::default();
        for n in ["a", "b", "c"] {
            c.upsert_node(node(n));
        }
        let s1 = c.snapshot();
        assert!(c.upsert_pod(&pod("p", "b", "500m")).unwrap());
        assert!(!c.upsert_pod(&pod("p", "b", "500m")).unwrap(), "no change");
        let s2 = c.snapshot();
        assert_eq!(s2.changes_since(s1.generation()), Some(&[1][..]));
        let b = s2.node(s2.slot_of("b").unwrap());
        assert_eq!((b.requested.milli_cpu, b.pod_count), (500, 1));
        // Moving the pod changes both nodes.
        c.upsert_pod(&pod("p", "c", "250m")).unwrap();
        let s3 = c.snapshot();
        assert_eq!(s3.changes_since(s2.generation()), Some(&[1, 2][..]));
        assert_eq!(s3.node(1).pod_count, 0);
        assert_eq!(s3.node(2).requested.milli_cpu, 250);
        // Unchanged state: the same snapshot.
        assert!(Arc::ptr_eq(&s3, &c.snapshot()));
    }

    #[test]
    fn removing_a_node_moves_the_last_into_its_slot() {
        let mut c = ClusterState::default();
        for n in ["a", "b", "c"] {
            c.upsert_node(node(n));
        }
        c.upsert_pod(&pod("p", "c", "1")).unwrap();
        let s1 = c.snapshot();
        assert!(c.remove_node("a"));
        let s2 = c.snapshot();
        assert_eq!(s2.len(), 2);
        assert_eq!(s2.slot_of("c"), Some(0));
        assert_eq!(s2.node(0).requested.milli_cpu, 1000);
        assert_eq!(s2.changes_since(s1.generation()), Some(&[0][..]));
        // A pod on a node that comes later counts once it exists.
        c.upsert_pod(&pod("q", "d", "2")).unwrap();
        c.upsert_node(node("d"));
        let s3 = c.snapshot();
        assert_eq!(s3.node(s3.slot_of("d").unwrap()).requested.milli_cpu, 2000);
    }
}
