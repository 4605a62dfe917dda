//! Kubernetes objects as filter predicates see them: a pod to place and the
//! nodes it may go to, reduced to the fields kube-scheduler's filters read
//! and in kube-scheduler's units (millicores, bytes).

use crate::resources::Resources;

/// A label key resolved once (e.g. per pod in `prepare`) to its number in
/// the process's key table, so that looking it up on thousands of nodes
/// compares integers, not strings: label keys share long prefixes
/// (`topology.kubernetes.io/`), and string comparison is a byte loop inside
/// WebAssembly (it was a fifth of a Wasm cycle, BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelKey {
    id: u32,
    key: String,
}

impl LabelKey {
    pub fn new(key: impl Into<String>) -> LabelKey {
        let key = key.into();
        LabelKey {
            id: key_ids::intern(&key),
            key,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.key
    }
}

/// A label value to compare against, with its hash computed once: most
/// mismatches are decided by the hash, without reading the node's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelValue {
    hash: u32,
    value: String,
}

impl LabelValue {
    pub fn new(value: impl Into<String>) -> LabelValue {
        let value = value.into();
        LabelValue {
            hash: hash_value(&value),
            value,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Whether a value found on a node (see [`Labels::get_value`]) is this one.
    #[inline]
    pub fn matches(&self, found: Found<'_>) -> bool {
        self.hash == found.hash && str_eq(&self.value, found.value)
    }
}

/// A label's value as [`Labels::get_value`] finds it, with its hash.
#[derive(Clone, Copy, Debug)]
pub struct Found<'a> {
    hash: u32,
    pub value: &'a str,
}

/// Label keys numbered in order of first appearance, process-wide. Keys
/// are a cluster's vocabulary (tens to a few thousand), not its size, so
/// the table is never pruned; values, which grow with the cluster
/// (hostnames, hashes), are not numbered. Written when nodes, pods and
/// selectors are built, read only there: lookups on the hot path compare
/// the numbers these return.
mod key_ids {
    use std::sync::{LazyLock, PoisonError, RwLock};

    type Table = crate::cluster::FastMap<Box<str>, u32>;
    static IDS: LazyLock<RwLock<Table>> = LazyLock::new(Default::default);

    /// The key's number, assigning the next one to a new key.
    pub fn intern(key: &str) -> u32 {
        if let Some(id) = lookup(key) {
            return id;
        }
        let mut ids = IDS.write().unwrap_or_else(PoisonError::into_inner);
        let next = ids.len() as u32;
        *ids.entry(key.into()).or_insert(next)
    }

    /// The key's number if any label or selector ever had the key.
    pub fn lookup(key: &str) -> Option<u32> {
        IDS.read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
    }
}

/// String equality 8 bytes at a time. Inside WebAssembly `==` on strings
/// calls a byte-by-byte `memcmp`, and label values are compared for
/// thousands of nodes per cycle.
#[inline]
pub fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x = u64::from_le_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
        let y = u64::from_le_bytes([y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]]);
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// A fast, deterministic hash of a value: [`crate::cluster::IdHasher`]'s,
/// 8 bytes at a time.
fn hash_value(s: &str) -> u32 {
    use std::hash::Hasher;
    let mut h = crate::cluster::IdHasher::default();
    h.write(s.as_bytes());
    (h.finish() >> 32) as u32
}

/// Labels, kept sorted by key number so a lookup compares integers, never
/// strings. The numbers sit in their own array: a node's usual 10–20
/// labels are one cache line to scan. Keys and values live in one buffer,
/// which keeps a 5,000-node table scan within fewer cache lines.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    key_ids: Vec<u32>,
    entries: Vec<LabelEntry>,
    text: String,
}

#[derive(Clone, Copy, Debug)]
struct LabelEntry {
    value_hash: u32,
    key: (u32, u32),
    value: (u32, u32),
}

/// Up to this many labels, a lookup scans the key numbers in order (no
/// data-dependent branches until the hit); beyond, a binary search.
const LINEAR_SCAN_LABELS: usize = 16;

impl Labels {
    /// Builds from pairs in any order; a later duplicate key wins.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        let mut sorted: Vec<(u32, String, String)> = pairs
            .into_iter()
            .map(|(k, v)| (key_ids::intern(&k), k, v))
            .collect();
        // Stable sort keeps input order among equal keys; keep the last.
        sorted.sort_by_key(|e| e.0);
        let mut deduped: Vec<(u32, String, String)> = Vec::with_capacity(sorted.len());
        for e in sorted {
            match deduped.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => deduped.push(e),
            }
        }
        let mut text =
            String::with_capacity(deduped.iter().map(|(_, k, v)| k.len() + v.len()).sum());
        let mut span = |s: &str| {
            let start = text.len() as u32;
            text.push_str(s);
            (start, s.len() as u32)
        };
        let entries = deduped
            .iter()
            .map(|(_, k, v)| LabelEntry {
                value_hash: hash_value(v),
                key: span(k),
                value: span(v),
            })
            .collect();
        let key_ids = deduped.iter().map(|e| e.0).collect();
        Labels {
            key_ids,
            entries,
            text,
        }
    }

    #[inline]
    fn str_at(&self, (start, len): (u32, u32)) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    #[inline]
    fn entry(&self, key_id: u32) -> Option<&LabelEntry> {
        let i = if self.key_ids.len() <= LINEAR_SCAN_LABELS {
            self.key_ids.iter().position(|&k| k == key_id)?
        } else {
            self.key_ids.binary_search(&key_id).ok()?
        };
        self.entries.get(i)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        let e = self.entry(key_ids::lookup(key)?)?;
        Some(self.str_at(e.value))
    }

    /// Lookup with a resolved key: the hot path for selectors.
    #[inline]
    pub fn get_key(&self, key: &LabelKey) -> Option<&str> {
        self.entry(key.id).map(|e| self.str_at(e.value))
    }

    /// Lookup with a resolved key, the value with its hash, for
    /// [`LabelValue::matches`].
    #[inline]
    pub fn get_value(&self, key: &LabelKey) -> Option<Found<'_>> {
        self.entry(key.id).map(|e| Found {
            hash: e.value_hash,
            value: self.str_at(e.value),
        })
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The labels in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut order: Vec<&LabelEntry> = self.entries.iter().collect();
        // Key numbers follow the order keys were first seen in: sorting by
        // text keeps what callers see independent of that history.
        order.sort_unstable_by(|a, b| self.str_at(a.key).cmp(self.str_at(b.key)));
        order
            .into_iter()
            .map(|e| (self.str_at(e.key), self.str_at(e.value)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn into_pairs(self) -> Vec<(String, String)> {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

/// Equal when they hold the same pairs (the layout may differ).
impl PartialEq for Labels {
    fn eq(&self, other: &Labels) -> bool {
        self.len() == other.len()
            && self.key_ids.iter().zip(&self.entries).all(|(&id, e)| {
                other
                    .entry(id)
                    .is_some_and(|o| str_eq(other.str_at(o.value), self.str_at(e.value)))
            })
    }
}

impl Eq for Labels {}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Labels::new(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// A node taint (`spec.taints[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A pod toleration (`spec.tolerations[]`), empty strings where unset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    /// `Equal` (also when empty) or `Exists`.
    pub operator: String,
    pub value: String,
    pub effect: String,
    pub toleration_seconds: Option<i64>,
}

/// A host port asked for by a pod or in use on a node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostPort {
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`; defaulted to `TCP`.
    pub protocol: String,
    /// Defaulted to `0.0.0.0`, which conflicts with every address.
    pub host_ip: String,
}

/// One node selector requirement, operator as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// Requirements ANDed; a selector's terms are ORed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectorTerm {
    pub match_expressions: Vec<SelectorRequirement>,
    pub match_fields: Vec<SelectorRequirement>,
}

/// A Kubernetes label selector (`metav1.LabelSelector`): `matchLabels`
/// and `matchExpressions` ANDed. Operators are kept as written (`In`,
/// `NotIn`, `Exists`, `DoesNotExist`). Where a selector is optional, `None`
/// (unset) selects nothing and an empty selector selects everything, as
/// upstream's `LabelSelectorAsSelector` has it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    pub match_labels: Vec<(String, String)>,
    pub match_expressions: Vec<SelectorRequirement>,
}

/// A pod's owner (`metadata.ownerReferences[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerReference {
    /// e.g. `ReplicaSet`, `StatefulSet`, `Job`.
    pub kind: String,
    pub name: String,
    /// The managing controller (`controller: true`).
    pub controller: bool,
}

/// A topology spread constraint (`spec.topologySpreadConstraints[]`), as
/// written: defaults (`nodeAffinityPolicy: Honor`, `nodeTaintsPolicy:
/// Ignore`) are the plugin's to apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologySpreadConstraint {
    pub max_skew: i32,
    pub topology_key: String,
    /// `DoNotSchedule` or `ScheduleAnyway`.
    pub when_unsatisfiable: String,
    pub label_selector: Option<LabelSelector>,
    pub min_domains: Option<i32>,
    /// `Honor` or `Ignore`; `None` when unset.
    pub node_affinity_policy: Option<String>,
    /// `Honor` or `Ignore`; `None` when unset.
    pub node_taints_policy: Option<String>,
    pub match_label_keys: Vec<String>,
}

/// A required pod (anti-)affinity term
/// (`requiredDuringSchedulingIgnoredDuringExecution[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodAffinityTerm {
    pub label_selector: Option<LabelSelector>,
    pub namespaces: Vec<String>,
    pub namespace_selector: Option<LabelSelector>,
    pub topology_key: String,
    pub match_label_keys: Vec<String>,
    pub mismatch_label_keys: Vec<String>,
}

/// The pod to place.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pod {
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub labels: Labels,
    /// `metadata.annotations`.
    pub annotations: Labels,
    pub owner_references: Vec<OwnerReference>,
    /// `spec.nodeName`, empty when unset.
    pub node_name: String,
    /// `spec.priority`, 0 when unset.
    pub priority: i32,
    /// `spec.priorityClassName`.
    pub priority_class_name: String,
    /// `spec.schedulerName` (empty when unset; the API server defaults it
    /// to `default-scheduler`).
    pub scheduler_name: String,
    /// `status.nominatedNodeName`, empty when unset.
    pub nominated_node_name: String,
    /// `metadata.deletionTimestamp` is set: the pod is terminating.
    pub terminating: bool,
    /// `spec.nodeSelector`.
    pub node_selector: Labels,
    /// Required node affinity terms; `None` when the pod has none.
    pub required_node_affinity: Option<Vec<SelectorTerm>>,
    pub tolerations: Vec<Toleration>,
    /// Host ports of its containers (hostPort > 0), defaults applied.
    pub host_ports: Vec<HostPort>,
    /// Requests as kube-scheduler computes them (see [`crate::resources::pod_requests`]).
    pub requests: Resources,
    /// CPU and memory as scoring counts them (missing container requests
    /// defaulted, see [`crate::resources::NonZero`]).
    pub non_zero_requests: crate::resources::NonZero,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Required pod affinity terms.
    pub pod_affinity: Vec<PodAffinityTerm>,
    /// Required pod anti-affinity terms.
    pub pod_anti_affinity: Vec<PodAffinityTerm>,
    /// The escape hatch: the whole Pod as `kubectl get -o json` prints it,
    /// for fields this model lacks. Only for plugins that set
    /// [`crate::Predicate::POD_OBJECT`]; `None` otherwise.
    pub object: Option<std::sync::Arc<str>>,
}

/// A node condition (`status.conditions[]`), e.g. `Ready` / `True`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeCondition {
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
}

/// A node with what its bound pods use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    pub name: String,
    pub labels: Labels,
    /// `metadata.annotations`.
    pub annotations: Labels,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    pub conditions: Vec<NodeCondition>,
    pub allocatable: Resources,
    /// Sum of the requests of the pods bound to it.
    pub requested: Resources,
    /// Sum of their [`Pod::non_zero_requests`] (kube-scheduler's
    /// `NodeInfo.NonZeroRequested`), what LeastAllocated scores.
    pub non_zero_requested: crate::resources::NonZero,
    /// Number of pods bound to it.
    pub pod_count: u32,
    /// Host ports in use.
    pub used_ports: Vec<HostPort>,
    /// The escape hatch: the whole Node as JSON, for plugins whose
    /// [`crate::Predicate::NODE_FIELDS`] has [`NodeFields::OBJECT`].
    pub object: Option<std::sync::Arc<str>>,
    /// The pods bound to it that carry any of the annotation keys in
    /// [`crate::Predicate::POD_ANNOTATION_KEYS`], with those annotations
    /// only, sorted by pod: device assignments such as which GPUs each
    /// pod took (set at Reserve).
    pub pod_annotations: Vec<PodAnnotations>,
    /// What a plugin derived from this node ([`Node::derived`]); empty in
    /// a clone and after [`Node::add_pod`].
    pub memo: NodeMemo,
}

/// One value derived from a node, kept with it: a node is replaced, not
/// changed, when its pods change (the host's assume, a sync into a
/// component), so the value lives exactly as long as what it was derived
/// from. Clones start empty; equality ignores it.
#[derive(Default)]
pub struct NodeMemo(std::sync::OnceLock<(std::any::TypeId, Memoized)>);

type Memoized = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl Clone for NodeMemo {
    fn clone(&self) -> Self {
        NodeMemo::default()
    }
}

impl PartialEq for NodeMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for NodeMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "NodeMemo(set)"
        } else {
            "NodeMemo(empty)"
        })
    }
}

/// Annotations of one pod bound to a node (the keys a plugin asked for).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodAnnotations {
    /// namespace/name.
    pub pod: String,
    pub annotations: Labels,
}

impl Node {
    /// `derive(self)`, computed at the first call and kept with the node
    /// until it changes: per-node state a plugin would otherwise rebuild
    /// for every pod, such as per-device usage parsed from
    /// [`Node::pod_annotations`]. `derive` must depend on the node alone.
    ///
    /// The value is kept under the type of `derive` itself (each `fn`
    /// item and closure has its own), so two derivations of one result
    /// type never share a value. One value per node: in-process plugins
    /// share nodes, and a second derivation asked of the same node is
    /// computed each time, not kept. Code that changes a node's fields in
    /// place must reset `memo` (as [`Node::add_pod`] does).
    pub fn derived<T, F>(&self, derive: F) -> std::sync::Arc<T>
    where
        T: std::any::Any + Send + Sync,
        F: FnOnce(&Node) -> T + 'static,
    {
        let key = std::any::TypeId::of::<F>();
        if let Some((k, v)) = self.memo.0.get() {
            if *k == key
                && let Ok(t) = v.clone().downcast::<T>()
            {
                return t;
            }
            return std::sync::Arc::new(derive(self));
        }
        let value = std::sync::Arc::new(derive(self));
        // A racing thread may have set it first: both values are equal.
        let _ = self.memo.0.set((key, value.clone() as Memoized));
        value
    }

    /// The node with one more pod on it (kube-scheduler's
    /// `NodeInfo.AddPod`, as far as filters read it): its requests, a pod,
    /// its host ports.
    pub fn add_pod(&mut self, requests: &crate::Resources, host_ports: &[HostPort]) {
        self.memo = NodeMemo::default();
        self.requested.add(requests);
        self.pod_count += 1;
        self.used_ports.extend_from_slice(host_ports);
    }
}

/// The node fields a plugin reads; the host sends only these to a Wasm
/// plugin (the name always), which keeps syncing cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeFields(u8);

/// The WIT flag names, e.g. "labels, taints", or "none".
impl std::fmt::Display for NodeFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = [
            (Self::LABELS, "labels"),
            (Self::TAINTS, "taints"),
            (Self::UNSCHEDULABLE, "unschedulable"),
            (Self::RESOURCES, "resources"),
            (Self::PORTS, "ports"),
            (Self::ANNOTATIONS, "annotations"),
            (Self::CONDITIONS, "conditions"),
            (Self::OBJECT, "object"),
        ];
        let mut any = false;
        for (flag, name) in names {
            if self.contains(flag) {
                f.write_str(if any { ", " } else { "" })?;
                f.write_str(name)?;
                any = true;
            }
        }
        if !any {
            f.write_str("none")?;
        }
        Ok(())
    }
}

impl NodeFields {
    pub const NONE: NodeFields = NodeFields(0);
    pub const LABELS: NodeFields = NodeFields(1);
    pub const TAINTS: NodeFields = NodeFields(2);
    pub const UNSCHEDULABLE: NodeFields = NodeFields(4);
    pub const RESOURCES: NodeFields = NodeFields(8);
    pub const PORTS: NodeFields = NodeFields(16);
    /// Contract 0.2 and later.
    pub const ANNOTATIONS: NodeFields = NodeFields(32);
    /// Contract 0.2 and later.
    pub const CONDITIONS: NodeFields = NodeFields(64);
    /// Every modelled field (not [`NodeFields::OBJECT`]).
    pub const ALL: NodeFields = NodeFields(127);
    /// Contract 0.2 and later: the whole Node as JSON ([`Node::object`]).
    /// Costly (a node's object is kilobytes): never part of `ALL`.
    pub const OBJECT: NodeFields = NodeFields(128);

    pub const fn union(self, other: NodeFields) -> NodeFields {
        NodeFields(self.0 | other.0)
    }

    pub const fn contains(self, other: NodeFields) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn from_bits(bits: u8) -> NodeFields {
        NodeFields(bits)
    }

    /// A copy of `node` holding only these fields (and the name).
    pub fn project(self, node: &Node) -> Node {
        Node {
            name: node.name.clone(),
            // Sent by key, not by flag: a plugin names the keys it reads.
            pod_annotations: node.pod_annotations.clone(),
            non_zero_requested: if self.contains(Self::RESOURCES) {
                node.non_zero_requested
            } else {
                Default::default()
            },
            object: if self.contains(Self::OBJECT) {
                node.object.clone()
            } else {
                None
            },
            annotations: if self.contains(Self::ANNOTATIONS) {
                node.annotations.clone()
            } else {
                Labels::default()
            },
            conditions: if self.contains(Self::CONDITIONS) {
                node.conditions.clone()
            } else {
                Vec::new()
            },
            labels: if self.contains(Self::LABELS) {
                node.labels.clone()
            } else {
                Labels::default()
            },
            taints: if self.contains(Self::TAINTS) {
                node.taints.clone()
            } else {
                Vec::new()
            },
            unschedulable: self.contains(Self::UNSCHEDULABLE) && node.unschedulable,
            allocatable: if self.contains(Self::RESOURCES) {
                node.allocatable.clone()
            } else {
                Resources::default()
            },
            requested: if self.contains(Self::RESOURCES) {
                node.requested.clone()
            } else {
                Resources::default()
            },
            pod_count: if self.contains(Self::RESOURCES) {
                node.pod_count
            } else {
                0
            },
            used_ports: if self.contains(Self::PORTS) {
                node.used_ports.clone()
            } else {
                Vec::new()
            },
            memo: NodeMemo::default(),
        }
    }
}

impl std::ops::BitOr for NodeFields {
    type Output = NodeFields;
    fn bitor(self, rhs: NodeFields) -> NodeFields {
        self.union(rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_is_kept_until_the_node_changes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        let calls = || CALLS.load(Ordering::SeqCst);
        let count = |n: &Node| {
            CALLS.fetch_add(1, Ordering::SeqCst);
            n.pod_count * 10
        };
        let mut node = Node {
            pod_count: 2,
            ..Default::default()
        };
        assert_eq!(*node.derived(count), 20);
        assert_eq!(*node.derived(count), 20);
        assert_eq!(calls(), 1);
        // Another derivation is computed, not kept, and does not evict,
        // even of the same result type.
        assert_eq!(*node.derived(|n| n.pod_count as u64), 2);
        assert_eq!(*node.derived(|n| n.pod_count + 1), 3);
        assert_eq!(*node.derived(count), 20);
        assert_eq!(calls(), 1);
        // A clone starts empty and compares equal.
        let copy = node.clone();
        assert_eq!(copy, node);
        assert_eq!(*copy.derived(count), 20);
        assert_eq!(calls(), 2);
        // add_pod changes the node: derived again.
        node.add_pod(&crate::Resources::default(), &[]);
        assert_eq!(*node.derived(count), 30);
        assert_eq!(calls(), 3);
    }

    #[test]
    fn node_fields_print_their_wit_names() {
        assert_eq!(NodeFields::NONE.to_string(), "none");
        assert_eq!(NodeFields::LABELS.to_string(), "labels");
        let two = NodeFields::TAINTS.union(NodeFields::PORTS);
        assert_eq!(two.to_string(), "taints, ports");
        assert_eq!(
            NodeFields::ALL.to_string(),
            "labels, taints, unschedulable, resources, ports, annotations, conditions"
        );
    }

    #[test]
    fn str_eq_matches_eq() {
        let words = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "topology.kubernetes.io/zone",
            "topology.kubernetes.io/zonf",
        ];
        for a in words {
            for b in words {
                assert_eq!(str_eq(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn labels_lookup_and_last_duplicate_wins() {
        let l = Labels::new(vec![
            ("topology.kubernetes.io/zone".into(), "a".into()),
            ("disk".into(), "ssd".into()),
            ("topology.kubernetes.io/zone".into(), "b".into()),
        ]);
        assert_eq!(l.len(), 2);
        assert_eq!(l.get("topology.kubernetes.io/zone"), Some("b"));
        assert_eq!(l.get_key(&LabelKey::new("disk")), Some("ssd"));
        assert_eq!(l.get("topology.kubernetes.io/region"), None);
        assert_eq!(l.get(""), None);
    }

    #[test]
    fn labels_iterate_in_key_order_whatever_order_keys_were_first_seen() {
        // Numbered in this order: "zz-first" before "aa-second".
        let _ = LabelKey::new("sdk-test/zz-first");
        let _ = LabelKey::new("sdk-test/aa-second");
        let l = Labels::new(vec![
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "2".into()),
            ("sdk-test/mm-new".into(), "3".into()),
        ]);
        let keys: Vec<&str> = l.iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            ["sdk-test/aa-second", "sdk-test/mm-new", "sdk-test/zz-first"]
        );
        let same = Labels::new(vec![
            ("sdk-test/mm-new".into(), "3".into()),
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "2".into()),
        ]);
        assert_eq!(l, same);
        let other = Labels::new(vec![
            ("sdk-test/mm-new".into(), "3".into()),
            ("sdk-test/zz-first".into(), "1".into()),
            ("sdk-test/aa-second".into(), "x".into()),
        ]);
        assert_ne!(l, other);
    }

    #[test]
    fn label_values_match_only_equal_text() {
        let key = LabelKey::new("disk");
        let l = Labels::new(vec![("disk".into(), "ssd".into())]);
        let found = l.get_value(&key).unwrap();
        assert_eq!(found.value, "ssd");
        assert!(LabelValue::new("ssd").matches(found));
        for other in ["", "ss", "ssd ", "SSD", "hdd", "ssdssdssd"] {
            assert!(!LabelValue::new(other).matches(found), "{other:?}");
        }
        // A key no label has ever had is simply absent.
        assert_eq!(
            l.get_value(&LabelKey::new("sdk-test/never-seen"))
                .map(|f| f.value),
            None
        );
        assert_eq!(l.get("sdk-test/never-seen-either"), None);
    }
}
