//! Kubernetes API objects (as `kubectl get -o json|yaml` prints them) turned
//! into the model predicates see. Fields sift does not read are accepted and
//! ignored; values it reads but cannot understand are errors naming the
//! field.

use anyhow::{Context, Result, anyhow};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KQuantity;
use sift_sdk::resources::{InitContainer, PodResourceSpec, ResourceList, Resources, pod_requests};
use sift_sdk::{
    HostPort, Labels, Node, Pod, Quantity, SelectorRequirement, SelectorTerm, Taint, Toleration,
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

/// `spec.nodeName`, if set.
pub fn bound_node(pod: &k8s::Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

fn labels(map: Option<&BTreeMap<String, String>>) -> Labels {
    map.map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn resource_list(map: Option<&BTreeMap<String, KQuantity>>, path: &str) -> Result<ResourceList> {
    let mut out = ResourceList::new();
    for (name, q) in map.into_iter().flatten() {
        let parsed = Quantity::parse(&q.0).map_err(|e| anyhow!("{path}.{name}: {e}"))?;
        out.insert(name.clone(), parsed);
    }
    Ok(out)
}

/// A pod's requests as kube-scheduler computes them.
pub fn pod_resources(pod: &k8s::Pod) -> Result<Resources> {
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(Resources::default());
    };
    let requests = |c: &k8s::Container, path: String| {
        resource_list(
            c.resources.as_ref().and_then(|r| r.requests.as_ref()),
            &format!("{path}.resources.requests"),
        )
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
    if let Some(r) = spec.resources.as_ref().and_then(|r| r.requests.as_ref())
        && !r.is_empty()
    {
        rs.pod_level = Some(resource_list(Some(r), "spec.resources.requests")?);
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
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    sidecars
        .chain(spec.containers.iter())
        .flat_map(|c| c.ports.iter().flatten())
        .filter(|p| p.host_port.unwrap_or(0) > 0)
        .map(|p| HostPort {
            port: p.host_port.unwrap_or(0),
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

fn requirement(r: &k8s::NodeSelectorRequirement) -> SelectorRequirement {
    SelectorRequirement {
        key: r.key.clone(),
        operator: r.operator.clone(),
        values: r.values.clone().unwrap_or_default(),
    }
}

/// The pod to place, in the predicates' model.
pub fn pod(pod: &k8s::Pod) -> Result<Pod> {
    let spec = pod.spec.as_ref();
    let required = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|sel| {
            sel.node_selector_terms
                .iter()
                .map(|t| SelectorTerm {
                    match_expressions: t
                        .match_expressions
                        .iter()
                        .flatten()
                        .map(requirement)
                        .collect(),
                    match_fields: t.match_fields.iter().flatten().map(requirement).collect(),
                })
                .collect()
        });
    Ok(Pod {
        name: pod.metadata.name.clone().unwrap_or_default(),
        namespace: pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        labels: labels(pod.metadata.labels.as_ref()),
        node_name: spec.and_then(|s| s.node_name.clone()).unwrap_or_default(),
        node_selector: labels(spec.and_then(|s| s.node_selector.as_ref())),
        required_node_affinity: required,
        tolerations: spec
            .and_then(|s| s.tolerations.as_ref())
            .into_iter()
            .flatten()
            .map(|t| Toleration {
                key: t.key.clone().unwrap_or_default(),
                operator: t.operator.clone().unwrap_or_default(),
                value: t.value.clone().unwrap_or_default(),
                effect: t.effect.clone().unwrap_or_default(),
                toleration_seconds: t.toleration_seconds,
            })
            .collect(),
        host_ports: pod_host_ports(pod),
        requests: pod_resources(pod).with_context(|| format!("pod {}", pod_key(pod)))?,
    })
}

/// A node without its pods' usage (see `snapshot` for that).
pub fn node(node: &k8s::Node) -> Result<Node> {
    let name = node.metadata.name.clone().unwrap_or_default();
    let spec = node.spec.as_ref();
    let allocatable = resource_list(
        node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
        "status.allocatable",
    )
    .with_context(|| format!("node {name}"))?;
    Ok(Node {
        name,
        labels: labels(node.metadata.labels.as_ref()),
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
    })
}
