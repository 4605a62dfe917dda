//! Kubernetes API objects (as `kubectl get -o json|yaml` prints them) turned
//! into the model predicates see. Fields sift does not read are accepted and
//! ignored; values it reads but cannot understand are errors naming the
//! field.
//!
//! Objects read from the API server were defaulted by it; hand-written
//! ones were not. sift applies the API server's defaults that change what
//! a filter sees (`pkg/apis/core/v1/defaults.go`), which are idempotent:
//! a container's (and init container's) limit is its request where it has
//! none; pod-level cpu, memory and hugepages limits likewise; with
//! `hostNetwork` a container port's hostPort defaults to its containerPort;
//! a node without `status.allocatable` has its capacity allocatable. (Not
//! applied: pod-level hugepages requests aggregated from containers.)

use anyhow::{Context, Result, anyhow};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use sift_sdk::resources::{
    InitContainer, NonZero, PodResourceSpec, ResourceList, Resources, pod_requests,
};
use sift_sdk::{
    ContainerImage, HostPort, LabelSelector, Labels, Node, NodeCondition, OwnerReference, Pod,
    PodAffinityTerm, Quantity, SelectorRequirement, SelectorTerm, Taint, Toleration,
    TopologySpreadConstraint, WeightedPodAffinityTerm, WeightedSelectorTerm,
};
use std::collections::BTreeMap;

/// "namespace/name" of a pod, for messages.
pub fn pod_key(pod: &k8s::Pod) -> String {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    format!(
        "{ns}/{}",
        pod.metadata.name.as_deref().unwrap_or("<unnamed>")
    )
}

/// Whether a bound pod still holds its node's resources: every phase but
/// Succeeded and Failed.
pub fn pod_is_active(pod: &k8s::Pod) -> bool {
    !matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// kube-scheduler's default profile's scheduler name.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// Why kube-scheduler would not try to schedule a pending pod, if it
/// would not: its informer lists only pods not Succeeded or Failed, its
/// queue drops pods being deleted and pods of schedulers it has no profile
/// for (`spec.schedulerName`, defaulted to `default-scheduler`), and the
/// SchedulingGates PreEnqueue plugin holds gated pods back.
pub fn not_for_scheduler(pod: &k8s::Pod, scheduler_name: &str) -> Option<SkipReason> {
    let spec = pod.spec.as_ref();
    if !pod_is_active(pod) {
        return Some(SkipReason::Finished);
    }
    if pod.metadata.deletion_timestamp.is_some() {
        return Some(SkipReason::Deleting);
    }
    if self::scheduler_name(pod) != scheduler_name {
        return Some(SkipReason::OtherScheduler);
    }
    if spec
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|g| !g.is_empty())
    {
        return Some(SkipReason::Gated);
    }
    None
}

/// `spec.schedulerName`, defaulted to `default-scheduler`.
pub fn scheduler_name(pod: &k8s::Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduler_name.as_deref())
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_SCHEDULER_NAME)
}

/// See [`not_for_scheduler`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    Finished,
    Deleting,
    OtherScheduler,
    Gated,
}

impl SkipReason {
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Finished => "in phase Succeeded or Failed",
            SkipReason::Deleting => "being deleted (metadata.deletionTimestamp)",
            SkipReason::OtherScheduler => "for another scheduler (spec.schedulerName)",
            SkipReason::Gated => "held by spec.schedulingGates",
        }
    }
}

/// Pending pods not placed, counted by reason.
#[derive(Default, Debug)]
pub struct SkippedPods(BTreeMap<SkipReason, usize>);

impl SkippedPods {
    pub fn add(&mut self, why: SkipReason) {
        *self.0.entry(why).or_default() += 1;
    }

    pub fn total(&self) -> usize {
        self.0.values().sum()
    }

    /// Reasons with their counts, in a fixed order.
    pub fn iter(&self) -> impl Iterator<Item = (SkipReason, usize)> + '_ {
        self.0.iter().map(|(w, n)| (*w, *n))
    }

    pub fn count(&self, why: SkipReason) -> usize {
        self.0.get(&why).copied().unwrap_or(0)
    }
}

impl std::fmt::Display for SkippedPods {
    /// e.g. "2 in phase Succeeded or Failed, 1 held by spec.schedulingGates".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(why, n)| format!("{n} {}", why.describe()))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// `spec.nodeName`, if set.
pub fn bound_node(pod: &k8s::Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// `status.nominatedNodeName`, if set.
pub fn nominated_node(pod: &k8s::Pod) -> Option<&str> {
    pod.status
        .as_ref()
        .and_then(|s| s.nominated_node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// Labels (or annotations) in the model.
pub fn labels(map: Option<&BTreeMap<String, String>>) -> Labels {
    map.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

pub fn resource_list(
    map: Option<&BTreeMap<String, KQuantity>>,
    path: &str,
) -> Result<ResourceList> {
    let mut out = ResourceList::new();
    for (name, q) in map.into_iter().flatten() {
        let parsed = Quantity::parse(&q.0).map_err(|e| anyhow!("{path}.{name}: {e}"))?;
        out.insert(name.clone(), parsed);
    }
    Ok(out)
}

/// Requests, with the API server's defaulting: a resource that has a
/// limit and no request requests its limit.
fn requests_or_limits(r: Option<&k8s::ResourceRequirements>, path: &str) -> Result<ResourceList> {
    let mut out = resource_list(
        r.and_then(|r| r.requests.as_ref()),
        &format!("{path}.requests"),
    )?;
    for (name, q) in resource_list(r.and_then(|r| r.limits.as_ref()), &format!("{path}.limits"))? {
        out.entry(name).or_insert(q);
    }
    Ok(out)
}

/// A pod's requests as kube-scheduler computes them (after the API
/// server's defaulting, see the module's doc).
pub fn pod_resources(pod: &k8s::Pod) -> Result<Resources> {
    pod_resources_with(pod, false)
}

/// CPU and memory as kube-scheduler's scoring counts them: each container
/// (init containers included) that does not request cpu or memory counts
/// 100m / 200 MiB (`NonMissingContainerRequests`); pod-level requests and
/// overhead as for [`pod_resources`].
pub fn pod_non_zero(pod: &k8s::Pod) -> Result<NonZero> {
    let r = pod_resources_with(pod, true)?;
    Ok(NonZero {
        milli_cpu: r.milli_cpu,
        memory: r.memory,
    })
}

fn pod_resources_with(pod: &k8s::Pod, non_missing: bool) -> Result<Resources> {
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(Resources::default());
    };
    let requests = |c: &k8s::Container, path: String| {
        let mut list = requests_or_limits(c.resources.as_ref(), &format!("{path}.resources"))?;
        if non_missing {
            list.entry("cpu".into())
                .or_insert(Quantity::from_milli(NonZero::DEFAULT_MILLI_CPU));
            list.entry("memory".into())
                .or_insert(Quantity::from_units(NonZero::DEFAULT_MEMORY));
        }
        Ok::<_, anyhow::Error>(list)
    };
    let mut rs = PodResourceSpec::default();
    for (i, c) in spec.containers.iter().enumerate() {
        rs.containers
            .push(requests(c, format!("spec.containers[{i}]"))?);
    }
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        rs.init_containers.push(InitContainer {
            requests: requests(c, format!("spec.initContainers[{i}]"))?,
            restartable: c.restart_policy.as_deref() == Some("Always"),
        });
    }
    if let Some(r) = spec.resources.as_ref() {
        let mut pod_level = resource_list(r.requests.as_ref(), "spec.resources.requests")?;
        // Pod-level limits default pod-level requests only for the
        // resources pod-level resources support.
        for (name, q) in resource_list(r.limits.as_ref(), "spec.resources.limits")? {
            if name == "cpu" || name == "memory" || name.starts_with("hugepages-") {
                pod_level.entry(name).or_insert(q);
            }
        }
        if !pod_level.is_empty() {
            rs.pod_level = Some(pod_level);
        }
    }
    rs.overhead = resource_list(spec.overhead.as_ref(), "spec.overhead")?;
    Ok(Resources::from_list(&pod_requests(&rs)))
}

/// Host ports a pod holds: containers' and restartable init containers'
/// ports with hostPort > 0, protocol defaulted to TCP and hostIP to 0.0.0.0.
pub fn pod_host_ports(pod: &k8s::Pod) -> Vec<HostPort> {
    let Some(spec) = pod.spec.as_ref() else {
        return Vec::new();
    };
    let host_network = spec.host_network == Some(true);
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    sidecars
        .chain(spec.containers.iter())
        .flat_map(|c| c.ports.iter().flatten())
        .map(|p| {
            // With hostNetwork the API server defaults hostPort to
            // containerPort.
            let host_port = match p.host_port.unwrap_or(0) {
                0 if host_network => p.container_port,
                port => port,
            };
            (p, host_port)
        })
        .filter(|(_, host_port)| *host_port > 0)
        .map(|(p, host_port)| HostPort {
            port: host_port,
            protocol: p
                .protocol
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "TCP".into()),
            host_ip: p
                .host_ip
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "0.0.0.0".into()),
        })
        .collect()
}

/// A `metav1.LabelSelector` in the model, operators as written.
pub fn label_selector(s: &meta::LabelSelector) -> LabelSelector {
    LabelSelector {
        match_labels: s
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        match_expressions: s
            .match_expressions
            .iter()
            .flatten()
            .map(|r| SelectorRequirement {
                key: r.key.clone(),
                operator: r.operator.clone(),
                values: r.values.clone().unwrap_or_default(),
            })
            .collect(),
    }
}

fn pod_affinity_term(t: &k8s::PodAffinityTerm) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: t.label_selector.as_ref().map(label_selector),
        namespaces: t.namespaces.clone().unwrap_or_default(),
        namespace_selector: t.namespace_selector.as_ref().map(label_selector),
        topology_key: t.topology_key.clone(),
        match_label_keys: t.match_label_keys.clone().unwrap_or_default(),
        mismatch_label_keys: t.mismatch_label_keys.clone().unwrap_or_default(),
    }
}

fn requirement(r: &k8s::NodeSelectorRequirement) -> SelectorRequirement {
    SelectorRequirement {
        key: r.key.clone(),
        operator: r.operator.clone(),
        values: r.values.clone().unwrap_or_default(),
    }
}

/// The pod to place, in the predicates' model.
/// The pod's volumes that can concern scheduling: every source but those
/// no filter reads and nearly every pod has (configMap, secret,
/// downwardAPI, projected, emptyDir), so they cost nothing on the wire.
fn volumes(pod: &k8s::Pod) -> Vec<sift_sdk::Volume> {
    let pod_name = pod.metadata.name.as_deref().unwrap_or("");
    pod.spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter(|v| {
            v.config_map.is_none()
                && v.secret.is_none()
                && v.downward_api.is_none()
                && v.projected.is_none()
                && v.empty_dir.is_none()
        })
        .map(|v| {
            let (claim_name, ephemeral) = match (&v.persistent_volume_claim, &v.ephemeral) {
                (Some(c), _) => (c.claim_name.clone(), false),
                // The claim Kubernetes creates for a generic ephemeral
                // volume (`ephemeral.VolumeClaimName`).
                (None, Some(_)) => (format!("{pod_name}-{}", v.name), true),
                (None, None) => (String::new(), false),
            };
            sift_sdk::Volume {
                name: v.name.clone(),
                claim_name,
                ephemeral,
                // Printing a typed volume cannot fail.
                object: serde_json::to_string(v).unwrap_or_default().into(),
            }
        })
        .collect()
}

pub fn pod(pod: &k8s::Pod) -> Result<Pod> {
    let spec = pod.spec.as_ref();
    let required = required_node_affinity(spec);
    let affinity = spec.and_then(|s| s.affinity.as_ref());
    let required_terms = |terms: Option<&Vec<k8s::PodAffinityTerm>>| -> Vec<PodAffinityTerm> {
        terms.into_iter().flatten().map(pod_affinity_term).collect()
    };
    Ok(Pod {
        name: pod.metadata.name.clone().unwrap_or_default(),
        annotations: labels(pod.metadata.annotations.as_ref()),
        owner_references: pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .map(|o| OwnerReference {
                api_version: o.api_version.clone(),
                kind: o.kind.clone(),
                name: o.name.clone(),
                controller: o.controller.unwrap_or(false),
            })
            .collect(),
        priority: spec.and_then(|s| s.priority).unwrap_or(0),
        priority_class_name: spec
            .and_then(|s| s.priority_class_name.clone())
            .unwrap_or_default(),
        scheduler_name: spec
            .and_then(|s| s.scheduler_name.clone())
            .unwrap_or_default(),
        nominated_node_name: pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
            .unwrap_or_default(),
        terminating: pod.metadata.deletion_timestamp.is_some(),
        topology_spread_constraints: topology_spread_constraints(spec),
        pod_affinity: required_terms(affinity.and_then(|a| a.pod_affinity.as_ref()).and_then(
            |a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            },
        )),
        pod_anti_affinity: required_terms(
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        ),
        preferred_node_affinity: preferred_node_affinity(spec),
        preferred_pod_affinity: weighted_terms(
            affinity
                .and_then(|a| a.pod_affinity.as_ref())
                .and_then(|a| {
                    a.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        ),
        preferred_pod_anti_affinity: weighted_terms(
            affinity
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| {
                    a.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                }),
        ),
        images: spec
            .into_iter()
            .flat_map(|s| s.init_containers.iter().flatten().chain(&s.containers))
            .filter_map(|c| c.image.clone().filter(|i| !i.is_empty()))
            .collect(),
        namespace: pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        labels: labels(pod.metadata.labels.as_ref()),
        object: None,
        // The snapshot's Services and controllers give it (Cycle::new).
        workload_selector: None,
        volumes: volumes(pod),
        node_name: spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        node_selector: labels(spec.and_then(|s| s.node_selector.as_ref())),
        required_node_affinity: required,
        tolerations: tolerations(spec),
        host_ports: pod_host_ports(pod),
        requests: pod_resources(pod).with_context(|| format!("pod {}", pod_key(pod)))?,
        non_zero_requests: pod_non_zero(pod).with_context(|| format!("pod {}", pod_key(pod)))?,
    })
}

/// `requiredDuringSchedulingIgnoredDuringExecution` of the pod's node
/// affinity, as selector terms.
fn required_node_affinity(spec: Option<&k8s::PodSpec>) -> Option<Vec<SelectorTerm>> {
    spec.and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|sel| sel.node_selector_terms.iter().map(selector_term).collect())
}

fn selector_term(t: &k8s::NodeSelectorTerm) -> SelectorTerm {
    SelectorTerm {
        match_expressions: t
            .match_expressions
            .iter()
            .flatten()
            .map(requirement)
            .collect(),
        match_fields: t.match_fields.iter().flatten().map(requirement).collect(),
    }
}

/// `preferredDuringSchedulingIgnoredDuringExecution` of the pod's node
/// affinity.
fn preferred_node_affinity(spec: Option<&k8s::PodSpec>) -> Vec<WeightedSelectorTerm> {
    spec.and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .map(|t| WeightedSelectorTerm {
            weight: t.weight,
            preference: selector_term(&t.preference),
        })
        .collect()
}

fn weighted_terms(
    terms: Option<&Vec<k8s::WeightedPodAffinityTerm>>,
) -> Vec<WeightedPodAffinityTerm> {
    terms
        .into_iter()
        .flatten()
        .map(|t| WeightedPodAffinityTerm {
            weight: t.weight,
            term: pod_affinity_term(&t.pod_affinity_term),
        })
        .collect()
}

fn topology_spread_constraints(spec: Option<&k8s::PodSpec>) -> Vec<TopologySpreadConstraint> {
    spec.and_then(|s| s.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .map(|c| TopologySpreadConstraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key.clone(),
            when_unsatisfiable: c.when_unsatisfiable.clone(),
            label_selector: c.label_selector.as_ref().map(label_selector),
            min_domains: c.min_domains,
            node_affinity_policy: c.node_affinity_policy.clone(),
            node_taints_policy: c.node_taints_policy.clone(),
            match_label_keys: c.match_label_keys.clone().unwrap_or_default(),
        })
        .collect()
}

fn tolerations(spec: Option<&k8s::PodSpec>) -> Vec<Toleration> {
    spec.and_then(|s| s.tolerations.as_ref())
        .into_iter()
        .flatten()
        .map(|t| Toleration {
            key: t.key.clone().unwrap_or_default(),
            operator: t.operator.clone().unwrap_or_default(),
            value: t.value.clone().unwrap_or_default(),
            effect: t.effect.clone().unwrap_or_default(),
            toleration_seconds: t.toleration_seconds,
        })
        .collect()
}

/// A node without its pods' usage (see `snapshot` for that).
pub fn node(node: &k8s::Node) -> Result<Node> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let spec = node.spec.as_ref();
    // The API server defaults allocatable to capacity when it is unset.
    let status = node.status.as_ref();
    let (allocatable, field) = match status.and_then(|s| s.allocatable.as_ref()) {
        Some(a) => (Some(a), "status.allocatable"),
        None => (status.and_then(|s| s.capacity.as_ref()), "status.capacity"),
    };
    let allocatable = resource_list(allocatable, field).with_context(|| format!("node {name}"))?;
    Ok(Node {
        name,
        labels: labels(node.metadata.labels.as_ref()),
        annotations: labels(node.metadata.annotations.as_ref()),
        conditions: status
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .map(|c| NodeCondition {
                type_: c.type_.clone(),
                status: c.status.clone(),
            })
            .collect(),
        taints: spec
            .and_then(|s| s.taints.as_ref())
            .into_iter()
            .flatten()
            .map(|t| Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: t.effect.clone(),
            })
            .collect(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        allocatable: Resources::from_list(&allocatable),
        requested: Resources::default(),
        pod_count: 0,
        used_ports: Vec::new(),
        object: None,
        pod_annotations: Vec::new(),
        volumes: Vec::new(),
        declared_features: status
            .and_then(|s| s.declared_features.clone())
            .unwrap_or_default(),
        non_zero_requested: NonZero::default(),
        images: status
            .and_then(|s| s.images.as_ref())
            .into_iter()
            .flatten()
            .map(|i| ContainerImage {
                names: i.names.clone().unwrap_or_default(),
                size_bytes: i.size_bytes.unwrap_or(0),
            })
            .collect::<Vec<_>>()
            .into(),
        memo: Default::default(),
    })
}

/// The escape hatch's JSON of an object (`Pod::object`, `Node::object`):
/// what `kubectl get -o json` prints, less fields this build of the API
/// types does not know.
pub fn object_json<T: serde::Serialize>(obj: &T) -> std::sync::Arc<str> {
    // Serializing a typed API object cannot fail (no maps with non-string
    // keys); an empty object stands in if it ever did.
    serde_json::to_string(obj)
        .unwrap_or_else(|_| "{}".into())
        .into()
}

/// Which whole objects the configured plugins read (the escape hatch):
/// only those are kept and sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FullObjects {
    pub pod: bool,
    pub node: bool,
}

impl FullObjects {
    pub fn union(self, other: FullObjects) -> FullObjects {
        FullObjects {
            pod: self.pod || other.pod,
            node: self.node || other.node,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn pod_carries_what_contract_0_2_shows() {
        let p: k8s::Pod = from_json(serde_json::json!({
            "metadata": {
                "name": "web-1", "namespace": "shop",
                "labels": {"app": "web"},
                "annotations": {"gpu-models": "A100|H100"},
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7f", "uid": "u", "controller": true},
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "v"}
                ]
            },
            "spec": {
                "containers": [],
                "priority": 1000, "priorityClassName": "high", "schedulerName": "my-scheduler",
                "topologySpreadConstraints": [{
                    "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "minDomains": 3, "nodeTaintsPolicy": "Honor",
                    "matchLabelKeys": ["pod-template-hash"]
                }],
                "affinity": {
                    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                        "namespaceSelector": {},
                        "topologyKey": "kubernetes.io/hostname"
                    }]},
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "namespaces": ["shop", "other"],
                        "topologyKey": "kubernetes.io/hostname",
                        "mismatchLabelKeys": ["tenant"]
                    }]}
                }
            },
            "status": {"nominatedNodeName": "n3"}
        }));
        let m = pod(&p).unwrap();
        assert_eq!(m.annotations.get("gpu-models"), Some("A100|H100"));
        assert_eq!((m.priority, m.priority_class_name.as_str()), (1000, "high"));
        assert_eq!(m.scheduler_name, "my-scheduler");
        assert_eq!(m.nominated_node_name, "n3");
        assert!(m.terminating);
        assert_eq!(m.owner_references.len(), 2);
        assert!(m.owner_references[0].controller && !m.owner_references[1].controller);
        assert_eq!(m.owner_references[0].kind, "ReplicaSet");
        let c = &m.topology_spread_constraints[0];
        assert_eq!((c.max_skew, c.min_domains), (1, Some(3)));
        assert_eq!(c.node_affinity_policy, None);
        assert_eq!(c.node_taints_policy.as_deref(), Some("Honor"));
        assert_eq!(c.match_label_keys, ["pod-template-hash"]);
        let sel = c.label_selector.as_ref().unwrap();
        assert_eq!(sel.match_labels, [("app".to_string(), "web".to_string())]);
        let a = &m.pod_affinity[0];
        assert_eq!(a.namespace_selector, Some(LabelSelector::default()));
        assert!(a.namespaces.is_empty());
        assert_eq!(
            a.label_selector.as_ref().unwrap().match_expressions[0].operator,
            "Exists"
        );
        let anti = &m.pod_anti_affinity[0];
        assert_eq!(anti.namespaces, ["shop", "other"]);
        assert_eq!(anti.namespace_selector, None);
        assert_eq!(anti.mismatch_label_keys, ["tenant"]);
    }

    #[test]
    fn unset_fields_read_as_upstream_defaults() {
        let m = pod(&from_json(serde_json::json!({"metadata": {"name": "p"}}))).unwrap();
        assert_eq!(m.priority, 0);
        assert!(!m.terminating);
        assert!(m.topology_spread_constraints.is_empty());
        assert!(m.pod_affinity.is_empty() && m.pod_anti_affinity.is_empty());
        let n = node(&from_json(serde_json::json!({
            "metadata": {"name": "n", "annotations": {"a": "b"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        })))
        .unwrap();
        assert_eq!(n.annotations.get("a"), Some("b"));
        assert_eq!(n.conditions[0].type_, "Ready");
        assert_eq!(n.conditions[0].status, "True");
    }
}
