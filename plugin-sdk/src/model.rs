//! Kubernetes objects as filter predicates see them: a pod to place and the
//! nodes it may go to, reduced to the fields kube-scheduler's filters read
//! and in kube-scheduler's units (millicores, bytes).

use crate::resources::Resources;

/// Labels and how they are compared live in `labels.rs`; their paths
/// under `model` are the ones plugins have always used.
pub use crate::labels::{Found, LabelKey, LabelValue, Labels, str_eq};

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
    /// e.g. `apps/v1` (contract 0.5; empty from older hosts).
    pub api_version: String,
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
    /// Preferred node affinity terms (contract 0.4).
    pub preferred_node_affinity: Vec<WeightedSelectorTerm>,
    /// Preferred pod affinity terms (contract 0.4).
    pub preferred_pod_affinity: Vec<WeightedPodAffinityTerm>,
    /// Preferred pod anti-affinity terms (contract 0.4).
    pub preferred_pod_anti_affinity: Vec<WeightedPodAffinityTerm>,
    /// The images of its init containers, then its containers, as
    /// written (contract 0.4).
    pub images: Vec<String>,
    /// What the pod's workload selects, kube-scheduler's `DefaultSelector`
    /// (contract 0.5): the selectors of the Services selecting it and of
    /// its controlling ReplicationController in `match_labels`, its
    /// controlling ReplicaSet's or StatefulSet's in `match_expressions`.
    /// `None` when nothing narrower than every pod comes out.
    pub workload_selector: Option<LabelSelector>,
    /// Its volumes that can concern scheduling (contract 0.6; see
    /// [`Volume`]).
    pub volumes: Vec<Volume>,
    /// The escape hatch: the whole Pod as `kubectl get -o json` prints it,
    /// for fields this model lacks. Only for plugins that set
    /// [`crate::Plugin::POD_OBJECT`]; `None` otherwise.
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
    /// [`crate::Plugin::NODE_FIELDS`] has [`NodeFields::OBJECT`].
    pub object: Option<std::sync::Arc<str>>,
    /// The pods bound to it that carry any of the annotation keys in
    /// [`crate::Plugin::POD_ANNOTATION_KEYS`], with those annotations
    /// only, sorted by pod: device assignments such as which GPUs each
    /// pod took (set at Reserve).
    pub pod_annotations: Vec<PodAnnotations>,
    /// The images it holds (`status.images`), for plugins whose
    /// [`crate::Plugin::NODE_FIELDS`] has [`NodeFields::IMAGES`]. Shared:
    /// a node is copied whenever its pods change, its images are not.
    pub images: std::sync::Arc<[ContainerImage]>,
    /// The volumes of the pods bound to it that have any (see [`Volume`]),
    /// sorted by pod, for plugins whose [`crate::Plugin::NODE_FIELDS`] has
    /// [`NodeFields::VOLUMES`] (contract 0.6 and later).
    pub volumes: Vec<PodVolumes>,
    /// The features its kubelet declares (`status.declaredFeatures`), as
    /// written, for plugins whose [`crate::Plugin::NODE_FIELDS`] has
    /// [`NodeFields::DECLARED_FEATURES`] (contract 0.7 and later).
    pub declared_features: Vec<String>,
    /// What a plugin derived from this node ([`Node::derived`]); empty in
    /// a clone and after [`Node::add_pod`].
    pub memo: NodeMemo,
}

/// A cluster object a reserver writes (kube-scheduler's PreBind effects):
/// the whole object as it must be afterwards. Start from the object the
/// cluster view gave, keeping its
/// `metadata.resourceVersion`, so that a write racing another fails
/// instead of undoing it.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectWrite {
    /// One of the plugin's [`crate::Plugin::OBJECT_KINDS`].
    pub kind: String,
    pub object: serde_json::Value,
}

/// What a reserver decided on the chosen node: [`crate::Plugin::reserve`]'s
/// annotations and [`crate::Plugin::pre_bind`]'s writes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reservation {
    pub annotations: Vec<(String, String)>,
    pub writes: Vec<ObjectWrite>,
}

/// An image a node holds: its names (tags and digests, as the kubelet
/// reports them) and size in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContainerImage {
    pub names: Vec<String>,
    pub size_bytes: i64,
}

/// A preferred node affinity term: a node its `preference` matches adds
/// `weight` to NodeAffinity's score.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WeightedSelectorTerm {
    pub weight: i32,
    pub preference: SelectorTerm,
}

/// A preferred pod affinity or anti-affinity term with its weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WeightedPodAffinityTerm {
    pub weight: i32,
    pub term: PodAffinityTerm,
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

/// A volume of a pod (`spec.volumes[]`) that can concern scheduling: any
/// source but configMap, secret, downwardAPI, projected and emptyDir,
/// which no filter reads and nearly every pod has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Volume {
    pub name: String,
    /// The PersistentVolumeClaim it mounts, in the pod's namespace:
    /// `persistentVolumeClaim.claimName`, or for an `ephemeral` volume the
    /// claim Kubernetes creates for it, `<pod>-<volume>`. Empty otherwise.
    pub claim_name: String,
    /// An `ephemeral` volume: its claim belongs to the pod.
    pub ephemeral: bool,
    /// The volume as the pod spec writes it (JSON), for in-line sources
    /// (gcePersistentDisk, awsElasticBlockStore, rbd, iscsi, csi, ...).
    pub object: std::sync::Arc<str>,
}

impl Volume {
    /// The in-line source `key` (e.g. `"gcePersistentDisk"`), parsed.
    pub fn source(&self, key: &str) -> Option<serde_json::Value> {
        let mut v: serde_json::Value = serde_json::from_str(&self.object).ok()?;
        v.get_mut(key).map(serde_json::Value::take)
    }
}

/// The volumes of one pod bound to a node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodVolumes {
    /// namespace/name.
    pub pod: String,
    pub volumes: Vec<Volume>,
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
pub struct NodeFields(u16);

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
            (Self::IMAGES, "images"),
            (Self::VOLUMES, "volumes"),
            (Self::DECLARED_FEATURES, "declared-features"),
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
    /// Contract 0.4 and later: the images the node holds ([`Node::images`]).
    /// Kilobytes per node, read by ImageLocality alone: not part of `ALL`
    /// either.
    pub const IMAGES: NodeFields = NodeFields(256);
    /// Contract 0.6 and later: the volumes of the pods bound to the node
    /// ([`Node::volumes`]), read by the volume filters alone.
    pub const VOLUMES: NodeFields = NodeFields(512);
    /// Contract 0.7 and later: [`Node::declared_features`], read by
    /// NodeDeclaredFeatures alone.
    pub const DECLARED_FEATURES: NodeFields = NodeFields(1024);

    pub const fn union(self, other: NodeFields) -> NodeFields {
        NodeFields(self.0 | other.0)
    }

    pub const fn contains(self, other: NodeFields) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn bits(self) -> u16 {
        self.0
    }

    pub const fn from_bits(bits: u16) -> NodeFields {
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
            images: if self.contains(Self::IMAGES) {
                node.images.clone()
            } else {
                Default::default()
            },
            volumes: if self.contains(Self::VOLUMES) {
                node.volumes.clone()
            } else {
                Vec::new()
            },
            declared_features: if self.contains(Self::DECLARED_FEATURES) {
                node.declared_features.clone()
            } else {
                Vec::new()
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
}
