//! The bodies sift serve accepts, parsed and checked before anything is
//! applied: extender filter requests and informer-style cluster events.
//! Errors name the JSON path of the problem.

use super::extender::ExtenderArgs;
use crate::cluster::ClusterState;
use crate::input::volcano::{PodGroup, Queue};
use crate::input::{API_OBJECT_KINDS, ApiObject, Workload, kube};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Deserializes with the JSON path of the first problem in the error;
/// `path` is where `json` sits in the request body.
fn from_json<T: serde::de::DeserializeOwned>(json: &[u8], path: &str) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_slice(json);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        if path.is_empty() && !e.inner().is_data() {
            return format!("body is not JSON: {}", e.inner());
        }
        at_path(path, &e.path().to_string(), e.inner())
    })
}

/// As [`from_json`], from parsed JSON.
fn from_value<T: serde::de::DeserializeOwned>(value: Value, path: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| at_path(path, &e.path().to_string(), e.inner()))
}

fn at_path(path: &str, inner: &str, e: impl std::fmt::Display) -> String {
    let at = match (path.is_empty(), inner == ".") {
        (true, _) => inner.to_string(),
        (false, true) => path.to_string(),
        (false, false) => format!("{path}.{inner}"),
    };
    format!("{at}: {e}")
}

/// A filter request's pod and nodes, checked.
pub struct FilterRequest {
    pub pod: sift_sdk::Pod,
    /// The pod as sent: its whole object, for plugins that read it.
    pub pod_json: Box<RawValue>,
    pub nodes: RequestNodes,
}

/// What the request names the nodes by.
pub enum RequestNodes {
    /// `Nodes` (nodeCacheCapable: false): each node's model and its object
    /// as sent, to echo back.
    Objects(Vec<(sift_sdk::Node, Box<RawValue>)>),
    /// `NodeNames` (nodeCacheCapable: true).
    Names(Vec<String>),
}

/// Parses an extender filter request (`ExtenderArgs`); errors name the JSON
/// path of the problem, e.g. `Nodes.items[1].metadata.labels: ...`.
pub fn parse_filter_request(body: &[u8]) -> Result<FilterRequest, String> {
    let args: ExtenderArgs = from_json(body, "")?;
    let pod_json = args.pod;
    let pod: k8s::Pod = from_json(pod_json.get().as_bytes(), "Pod")?;
    let pod = kube::pod(&pod).map_err(|e| format!("Pod: {e:#}"))?;
    let nodes = match (args.nodes, args.node_names) {
        (Some(list), _) => {
            let mut out = Vec::with_capacity(list.items.len());
            for (i, item) in list.items.into_iter().enumerate() {
                let path = format!("Nodes.items[{i}]");
                let node: k8s::Node = from_json(item.get().as_bytes(), &path)?;
                let model = kube::node(&node).map_err(|e| format!("{path}: {e:#}"))?;
                if model.name.is_empty() {
                    return Err(format!("{path}.metadata.name: missing"));
                }
                out.push((model, item));
            }
            RequestNodes::Objects(out)
        }
        (None, Some(names)) => RequestNodes::Names(names),
        (None, None) => return Err("neither Nodes nor NodeNames is set".into()),
    };
    Ok(FilterRequest {
        pod,
        pod_json,
        nodes,
    })
}

/// What one watch event does to the cluster state, checked: applying it
/// cannot fail.
pub enum ClusterEvent {
    UpsertNode(Box<sift_sdk::Node>),
    DeleteNode(String),
    /// A pod whose resources parse.
    UpsertPod(Box<k8s::Pod>),
    DeletePod(Box<k8s::Pod>),
    /// A pod by "namespace/name" (a relist found it gone).
    DeletePodKey(String),
    /// Namespaces' labels are what pod affinity's namespaceSelector reads.
    UpsertNamespace(Box<k8s::Namespace>),
    DeleteNamespace(String),
    /// PodDisruptionBudgets, which preemption spares pods by; deleted by
    /// "namespace/name".
    UpsertBudget(Box<PodDisruptionBudget>),
    DeleteBudget(String),
    /// Services and controllers, which give pods their workload selector;
    /// deleted by kind, namespace and name.
    UpsertWorkload(Workload),
    DeleteWorkload(&'static str, String, String),
    /// Claims, volumes, classes and CSI objects, which plugins read whole;
    /// deleted by kind and key.
    UpsertApiObject(ApiObject),
    DeleteApiObject(&'static str, String),
    /// What only batch mode reads; the cluster state ignores it.
    Batch(BatchEvent),
    Bookmark,
}

/// Volcano's objects and PriorityClasses, as the watch brings them.
pub enum BatchEvent {
    UpsertPodGroup(Box<PodGroup>),
    /// By namespace/name.
    DeletePodGroup(String),
    UpsertQueue(Box<Queue>),
    DeleteQueue(String),
    UpsertPriorityClass(Box<PriorityClass>),
    DeletePriorityClass(String),
}

impl ClusterEvent {
    /// The event adding or updating `node` as plugins read it (with the
    /// whole object when a plugin asks for it); `Err` when sift cannot read it.
    pub fn upsert_node(node: &k8s::Node, node_objects: bool) -> anyhow::Result<ClusterEvent> {
        let mut model = kube::node(node)?;
        if node_objects {
            model.object = Some(kube::object_json(node));
        }
        Ok(ClusterEvent::UpsertNode(Box::new(model)))
    }

    /// The event adding or updating `pod`, once its resources parse.
    pub fn upsert_pod(pod: Box<k8s::Pod>) -> anyhow::Result<ClusterEvent> {
        kube::pod_resources(&pod)?;
        Ok(ClusterEvent::UpsertPod(pod))
    }
}

/// Applies checked events in order; returns how many changed something.
pub fn apply_cluster_events(state: &mut ClusterState, events: Vec<ClusterEvent>) -> usize {
    let mut changed = 0;
    for event in events {
        let did = match event {
            ClusterEvent::Bookmark | ClusterEvent::Batch(_) => false,
            ClusterEvent::UpsertNode(n) => state.upsert_node(*n),
            ClusterEvent::DeleteNode(name) => state.remove_node(&name),
            ClusterEvent::UpsertPod(p) => state.upsert_pod(&p).unwrap_or_else(|e| {
                tracing::error!("pod {} not applied: {e:#}", kube::pod_key(&p));
                false
            }),
            ClusterEvent::DeletePod(p) => state.remove_pod(&p),
            ClusterEvent::DeletePodKey(key) => state.remove_pod_key(&key),
            ClusterEvent::UpsertNamespace(ns) => state.upsert_namespace(&ns),
            ClusterEvent::DeleteNamespace(name) => state.remove_namespace(&name),
            ClusterEvent::UpsertBudget(pdb) => state.upsert_budget(&pdb),
            ClusterEvent::DeleteBudget(key) => state.remove_budget(&key),
            ClusterEvent::UpsertWorkload(w) => {
                state.edit_workloads(|ws| ws.upsert(&w));
                true
            }
            ClusterEvent::DeleteWorkload(kind, ns, name) => {
                let mut had = false;
                state.edit_workloads(|ws| had = ws.remove(kind, &ns, &name));
                had
            }
            ClusterEvent::UpsertApiObject(o) => state.edit_api_objects(|os| os.upsert(&o)),
            ClusterEvent::DeleteApiObject(kind, key) => {
                state.edit_api_objects(|os| os.remove(kind, &key))
            }
        };
        changed += usize::from(did);
    }
    changed
}

/// Parses a `/cluster` body: one watch event, a JSON array of them, or
/// events one after another (what `kubectl get --watch
/// --output-watch-events -o json` prints: concatenated objects; NDJSON is a
/// special case). Every event is checked here, so a body is applied whole
/// or not at all.
pub fn parse_cluster_events(body: &[u8]) -> Result<Vec<ClusterEvent>, String> {
    parse_cluster_events_keeping(body, false)
}

/// As [`parse_cluster_events`]; with `node_objects`, each node keeps its
/// whole object as JSON (for plugins that read it: the escape hatch).
pub fn parse_cluster_events_keeping(
    body: &[u8],
    node_objects: bool,
) -> Result<Vec<ClusterEvent>, String> {
    let mut values = Vec::new();
    for v in serde_json::Deserializer::from_slice(body).into_iter::<Value>() {
        values.push(v.map_err(|e| format!("body is not JSON: {e}"))?);
    }
    let events: Vec<(String, Value)> = match values.len() {
        0 => return Err("body is empty: expected watch events".into()),
        1 => match values.pop() {
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]"), v))
                .collect(),
            Some(v) => vec![(String::new(), v)],
            None => Vec::new(),
        },
        _ => values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("event {}", i + 1), v))
            .collect(),
    };
    let mut parsed = Vec::with_capacity(events.len());
    for (at, v) in events {
        let e: WatchEvent = from_value(v, &at)?;
        let kind = e.object.get("kind").and_then(Value::as_str).unwrap_or("");
        let object_at = if at.is_empty() {
            "object".to_string()
        } else {
            format!("{at}.object")
        };
        let deleted = match e.kind.as_str() {
            "BOOKMARK" => {
                parsed.push(ClusterEvent::Bookmark);
                continue;
            }
            "ADDED" | "MODIFIED" => false,
            "DELETED" => true,
            other => {
                return Err(format!(
                    "{at}{}type: {other:?} is not ADDED, MODIFIED, DELETED or BOOKMARK",
                    if at.is_empty() { "" } else { "." }
                ));
            }
        };
        let event = match kind {
            "Node" => {
                let node: k8s::Node = from_value(e.object, &object_at)?;
                if deleted {
                    ClusterEvent::DeleteNode(node.metadata.name.unwrap_or_default())
                } else {
                    let event = ClusterEvent::upsert_node(&node, node_objects)
                        .map_err(|e| format!("{object_at}: {e:#}"))?;
                    if matches!(&event, ClusterEvent::UpsertNode(m) if m.name.is_empty()) {
                        return Err(format!("{object_at}.metadata.name: missing"));
                    }
                    event
                }
            }
            "Pod" => {
                let pod: Box<k8s::Pod> = Box::new(from_value(e.object, &object_at)?);
                if deleted {
                    ClusterEvent::DeletePod(pod)
                } else {
                    ClusterEvent::upsert_pod(pod).map_err(|e| format!("{object_at}: {e:#}"))?
                }
            }
            "Namespace" => {
                let ns: k8s::Namespace = from_value(e.object, &object_at)?;
                let name = ns.metadata.name.clone().unwrap_or_default();
                if name.is_empty() {
                    return Err(format!("{object_at}.metadata.name: missing"));
                }
                if deleted {
                    ClusterEvent::DeleteNamespace(name)
                } else {
                    ClusterEvent::UpsertNamespace(Box::new(ns))
                }
            }
            "Service" | "ReplicationController" | "ReplicaSet" | "StatefulSet" => {
                let which = kind.to_string();
                let o = e.object;
                let w = match which.as_str() {
                    "Service" => Workload::Service(Box::new(from_value(o, &object_at)?)),
                    "ReplicationController" => {
                        Workload::ReplicationController(Box::new(from_value(o, &object_at)?))
                    }
                    "ReplicaSet" => Workload::ReplicaSet(Box::new(from_value(o, &object_at)?)),
                    _ => Workload::StatefulSet(Box::new(from_value(o, &object_at)?)),
                };
                let (meta, kind) = w.meta();
                let name = meta.name.clone().unwrap_or_default();
                if name.is_empty() {
                    return Err(format!("{object_at}.metadata.name: missing"));
                }
                if deleted {
                    let ns = meta.namespace.clone().unwrap_or_else(|| "default".into());
                    ClusterEvent::DeleteWorkload(kind, ns, name)
                } else {
                    ClusterEvent::UpsertWorkload(w)
                }
            }
            other if API_OBJECT_KINDS.iter().any(|(k, _)| *k == other) => {
                let other = other.to_string();
                let o = ApiObject::from_value(&other, e.object)
                    .unwrap_or_else(|| Err(anyhow::anyhow!("not an API object kind")))
                    .map_err(|err| format!("{object_at}: {err:#}"))?;
                if deleted {
                    ClusterEvent::DeleteApiObject(o.kind, o.key)
                } else {
                    ClusterEvent::UpsertApiObject(o)
                }
            }
            other => {
                return Err(format!(
                    "{object_at}.kind: {other:?} is not a kind sift reads (Node, Pod, Namespace, \
                     PodDisruptionBudget, Service, ReplicationController, ReplicaSet, StatefulSet, \
                     {})",
                    API_OBJECT_KINDS
                        .iter()
                        .map(|(k, _)| *k)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        parsed.push(event);
    }
    Ok(parsed)
}

/// A Kubernetes watch event, as `kubectl get -w --output-watch-events -o
/// json` prints it.
#[derive(Deserialize)]
struct WatchEvent {
    #[serde(rename = "type")]
    kind: String,
    object: Value,
}
