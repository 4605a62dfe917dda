//! Where the readers put objects: [`Objects`], the kinds sift keeps and
//! how each is typed, and the rules the JSON (`read.rs`) and YAML
//! (`yaml.rs`) readers share (an object's kind, its List's item kind,
//! item locations, the nesting limit). Apart from `read.rs`, so that the
//! YAML reader, which `read.rs` calls, needs nothing from it.

use crate::input::volcano::{PodGroup, Queue};
use anyhow::{Result, bail};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

/// Where an object came from, for error messages.
#[derive(Clone, Debug)]
pub struct Origin {
    pub file: PathBuf,
    /// e.g. `document 2, items[14]`.
    pub location: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{} ({})", self.file.display(), self.location)
        }
    }
}

/// Nodes and pods read from input files, in file order.
#[derive(Default)]
pub struct Objects {
    pub nodes: Vec<(k8s::Node, Origin)>,
    pub pods: Vec<(k8s::Pod, Origin)>,
    /// Namespaces: their labels are what pod affinity's namespaceSelector
    /// selects on.
    pub namespaces: Vec<(k8s::Namespace, Origin)>,
    /// Batch mode's objects: Volcano PodGroups and Queues, and the
    /// PriorityClasses that give jobs and tasks their priority.
    pub pod_groups: Vec<(PodGroup, Origin)>,
    pub queues: Vec<(Queue, Origin)>,
    pub priority_classes: Vec<(PriorityClass, Origin)>,
    /// PodDisruptionBudgets, which preemption spares pods by.
    pub budgets: Vec<(PodDisruptionBudget, Origin)>,
    /// Services and controllers, which give pods their workload selector.
    pub workloads: Vec<(Workload, Origin)>,
    /// Objects plugins read whole through the cluster view (the volume
    /// filters' claims, volumes, classes and CSI objects).
    pub api_objects: Vec<(ApiObject, Origin)>,
    /// Objects of other kinds, skipped (e.g. ConfigMaps in a full dump).
    pub skipped: Vec<String>,
    /// When set, pods bound to a node go here as they are read instead of
    /// into `pods`: a big dump's bound pods then never exist all at once
    /// as typed objects (650,000 of them took 2 GB).
    pub bound_pods_to: Option<BoundPods>,
}

/// Takes one bound pod and where it was read.
pub type PodSink = dyn FnMut(k8s::Pod, &Origin) -> Result<()>;

/// Where [`Objects`] hands bound pods.
pub struct BoundPods(pub Box<PodSink>);

impl Objects {
    /// What the files held besides pods, for "holds no Pod" messages:
    /// e.g. " (found: 3 Node, Service web)".
    pub fn found(&self) -> String {
        let mut parts = Vec::new();
        if !self.nodes.is_empty() {
            parts.push(format!("{} Node", self.nodes.len()));
        }
        if !self.namespaces.is_empty() {
            parts.push(format!("{} Namespace", self.namespaces.len()));
        }
        if !self.pod_groups.is_empty() {
            parts.push(format!("{} PodGroup", self.pod_groups.len()));
        }
        if !self.queues.is_empty() {
            parts.push(format!("{} Queue", self.queues.len()));
        }
        if !self.budgets.is_empty() {
            parts.push(format!("{} PodDisruptionBudget", self.budgets.len()));
        }
        let mut workloads: std::collections::BTreeMap<&str, usize> = Default::default();
        for (w, _) in &self.workloads {
            *workloads.entry(w.meta().1).or_default() += 1;
        }
        for (o, _) in &self.api_objects {
            *workloads.entry(o.kind).or_default() += 1;
        }
        parts.extend(workloads.iter().map(|(kind, n)| format!("{n} {kind}")));
        parts.extend(self.skipped.iter().take(3).map(|s| {
            s.rsplit_once(": ")
                .map_or(s.as_str(), |(_, what)| what)
                .to_string()
        }));
        if self.skipped.len() > 3 {
            parts.push(format!("{} more", self.skipped.len() - 3));
        }
        if parts.is_empty() {
            " (it has no object)".to_string()
        } else {
            format!(" (found: {})", parts.join(", "))
        }
    }

    /// Files a typed object where it belongs.
    pub(super) fn keep(&mut self, kept: Kept, origin: Origin) -> Result<()> {
        match kept {
            Kept::Node(node) => self.nodes.push((*node, origin)),
            Kept::Pod(pod) => match &mut self.bound_pods_to {
                Some(sink) if crate::input::kube::bound_node(&pod).is_some() => {
                    (sink.0)(*pod, &origin)?
                }
                _ => self.pods.push((*pod, origin)),
            },
            Kept::Namespace(ns) => self.namespaces.push((*ns, origin)),
            Kept::PodGroup(pg) => self.pod_groups.push((*pg, origin)),
            Kept::Queue(q) => self.queues.push((*q, origin)),
            Kept::PriorityClass(pc) => self.priority_classes.push((*pc, origin)),
            Kept::PodDisruptionBudget(pdb) => self.budgets.push((*pdb, origin)),
            Kept::Workload(w) => self.workloads.push((w, origin)),
            Kept::Api(kind, value) => {
                let o =
                    ApiObject::new(kind, value).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
                self.api_objects.push((o, origin))
            }
        }
        Ok(())
    }
}

/// An object of a kind sift keeps, typed.
pub(super) enum Kept {
    Node(Box<k8s::Node>),
    Pod(Box<k8s::Pod>),
    Namespace(Box<k8s::Namespace>),
    PodGroup(Box<PodGroup>),
    Queue(Box<Queue>),
    PriorityClass(Box<PriorityClass>),
    PodDisruptionBudget(Box<PodDisruptionBudget>),
    Workload(Workload),
    /// An object plugins read whole, typed and printed back.
    Api(&'static str, Value),
}

/// The kinds plugins may read whole ([`ApiObject`]), with whether each is
/// namespaced.
pub const API_OBJECT_KINDS: &[(&str, bool)] = &[
    ("PersistentVolumeClaim", true),
    ("PersistentVolume", false),
    ("StorageClass", false),
    ("CSINode", false),
    ("CSIDriver", false),
    ("CSIStorageCapacity", true),
    ("VolumeAttachment", false),
    ("ResourceSlice", false),
    ("DeviceClass", false),
    ("ResourceClaim", true),
    ("ResourceClaimTemplate", true),
];

/// An object a plugin reads whole (contract 0.6's `sync-objects`): typed
/// on reading, so a bad field is reported with its path, then kept as the
/// JSON the types print.
#[derive(Clone, Debug)]
pub struct ApiObject {
    /// One of [`API_OBJECT_KINDS`].
    pub kind: &'static str,
    /// `namespace/name` (namespace `default` when unset) for namespaced
    /// kinds, else `name`.
    pub key: String,
    pub value: std::sync::Arc<Value>,
}

impl ApiObject {
    /// Types `value` as `kind` (a watch event's or a feed's object);
    /// `None` for a kind not in [`API_OBJECT_KINDS`]. Errors name the bad
    /// field or the missing name.
    pub fn from_value(kind: &str, value: Value) -> Option<Result<ApiObject>> {
        let kind = api_kind(kind)?;
        Some(
            api_typed(kind, value)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .and_then(|v| ApiObject::new(kind, v)),
        )
    }

    /// An object already typed and printed back: checks its name, makes
    /// its key.
    pub fn new(kind: &'static str, value: Value) -> Result<ApiObject> {
        let namespaced = API_OBJECT_KINDS.iter().any(|&(k, n)| k == kind && n);
        let meta = value.get("metadata");
        let field = |f: &str| meta.and_then(|m| m.get(f)).and_then(Value::as_str);
        let name = field("name").unwrap_or("");
        if name.is_empty() {
            bail!("{kind} has no metadata.name");
        }
        let key = if namespaced {
            format!("{}/{name}", field("namespace").unwrap_or("default"))
        } else {
            name.to_string()
        };
        Ok(ApiObject {
            kind,
            key,
            value: std::sync::Arc::new(value),
        })
    }
}

/// The `'static` name of a kind plugins read whole.
fn api_kind(kind: &str) -> Option<&'static str> {
    API_OBJECT_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(k, _)| *k)
}

/// Types an object of an API kind from `de` and prints it back to JSON:
/// fields the types do not know are dropped, bad ones reported with
/// their path.
fn api_typed<'de, D: serde::Deserializer<'de>>(
    kind: &str,
    de: D,
) -> Result<Value, serde_path_to_error::Error<D::Error>> {
    use k8s_openapi::api::resource::v1 as resource;
    use k8s_openapi::api::storage::v1 as storage;
    fn printed<'de, T: Deserialize<'de> + serde::Serialize, D: serde::Deserializer<'de>>(
        de: D,
    ) -> Result<Value, serde_path_to_error::Error<D::Error>> {
        let typed: T = serde_path_to_error::deserialize(de)?;
        // Printing typed API objects to JSON cannot fail.
        Ok(serde_json::to_value(typed).unwrap_or_default())
    }
    match kind {
        "PersistentVolumeClaim" => printed::<k8s::PersistentVolumeClaim, D>(de),
        "PersistentVolume" => printed::<k8s::PersistentVolume, D>(de),
        "StorageClass" => printed::<storage::StorageClass, D>(de),
        "CSINode" => printed::<storage::CSINode, D>(de),
        "CSIDriver" => printed::<storage::CSIDriver, D>(de),
        "CSIStorageCapacity" => printed::<storage::CSIStorageCapacity, D>(de),
        "VolumeAttachment" => printed::<storage::VolumeAttachment, D>(de),
        "ResourceSlice" => printed::<resource::ResourceSlice, D>(de),
        "DeviceClass" => printed::<resource::DeviceClass, D>(de),
        "ResourceClaim" => printed::<resource::ResourceClaim, D>(de),
        _ => printed::<resource::ResourceClaimTemplate, D>(de),
    }
}

/// A Service or a controller: what a pod's workload selector is made of
/// (see `cluster::workloads`).
#[derive(Clone, Debug)]
pub enum Workload {
    Service(Box<k8s::Service>),
    ReplicationController(Box<k8s::ReplicationController>),
    ReplicaSet(Box<apps::ReplicaSet>),
    StatefulSet(Box<apps::StatefulSet>),
}

impl Workload {
    /// Its metadata and kind.
    pub fn meta(&self) -> (&ObjectMeta, &'static str) {
        match self {
            Workload::Service(o) => (&o.metadata, "Service"),
            Workload::ReplicationController(o) => (&o.metadata, "ReplicationController"),
            Workload::ReplicaSet(o) => (&o.metadata, "ReplicaSet"),
            Workload::StatefulSet(o) => (&o.metadata, "StatefulSet"),
        }
    }
}

/// Types an object of `kind` straight from `de`, with the path of the
/// first bad field in the error; `None` for kinds sift skips.
pub(super) fn deserialize_kept<'de, D: serde::Deserializer<'de>>(
    kind: &str,
    de: D,
) -> Option<Result<Kept, serde_path_to_error::Error<D::Error>>> {
    fn typed<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
        de: D,
    ) -> Result<Box<T>, serde_path_to_error::Error<D::Error>> {
        serde_path_to_error::deserialize(de).map(Box::new)
    }
    Some(match kind {
        "Node" => typed(de).map(Kept::Node),
        "Pod" => typed(de).map(Kept::Pod),
        "Namespace" => typed(de).map(Kept::Namespace),
        "PodGroup" => typed(de).map(Kept::PodGroup),
        "Queue" => typed(de).map(Kept::Queue),
        "PriorityClass" => typed(de).map(Kept::PriorityClass),
        "PodDisruptionBudget" => typed(de).map(Kept::PodDisruptionBudget),
        "Service" => typed(de).map(|o| Kept::Workload(Workload::Service(o))),
        "ReplicationController" => {
            typed(de).map(|o| Kept::Workload(Workload::ReplicationController(o)))
        }
        "ReplicaSet" => typed(de).map(|o| Kept::Workload(Workload::ReplicaSet(o))),
        "StatefulSet" => typed(de).map(|o| Kept::Workload(Workload::StatefulSet(o))),
        _ => {
            let kind = api_kind(kind)?;
            api_typed(kind, de).map(|v| Kept::Api(kind, v))
        }
    })
}

/// Whether sift keeps objects of `kind` (else it skips them).
pub(super) fn is_kept(kind: &str) -> bool {
    matches!(
        kind,
        "Node"
            | "Pod"
            | "Namespace"
            | "PodGroup"
            | "Queue"
            | "PriorityClass"
            | "PodDisruptionBudget"
            | "Service"
            | "ReplicationController"
            | "ReplicaSet"
            | "StatefulSet"
    ) || API_OBJECT_KINDS.iter().any(|(k, _)| *k == kind)
}

/// An object's kind: its own `kind`, which must be a string, else the
/// kind its List implies.
pub(super) fn object_kind(
    kind: Option<&Value>,
    implied: Option<&str>,
    at: &Origin,
) -> Result<String> {
    match (kind, implied) {
        (Some(Value::String(k)), _) => Ok(k.clone()),
        (Some(other), _) => bail!("{at}: kind must be a string, found {}", type_name(other)),
        (None, Some(k)) => Ok(k.to_string()),
        (None, None) => {
            bail!(
                "{at}: object has no \"kind\" (expected Node, Pod, Namespace, PodGroup, Queue, PriorityClass, PodDisruptionBudget, Service, ReplicationController, ReplicaSet, StatefulSet, PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment or a List)"
            )
        }
    }
}

/// For a List kind (`List`, `NodeList`, ...), the kind its items have
/// when they say none (`None` for a plain `List`).
pub(super) fn list_item_kind(kind: &str) -> Option<Option<&str>> {
    kind.ends_with("List")
        .then(|| kind.strip_suffix("List").filter(|k| !k.is_empty()))
}

/// "items[3]", inside `location` if there is one.
pub(super) fn item_location(location: &str, i: usize) -> String {
    if location.is_empty() {
        format!("items[{i}]")
    } else {
        format!("{location}, items[{i}]")
    }
}

/// The JSON type of a value, for "found ..." messages.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The deepest nesting a YAML file may have, and Lists in a JSON file:
/// what the JSON reader allows (serde_json's recursion limit).
pub const MAX_FLOW_DEPTH: usize = 128;
