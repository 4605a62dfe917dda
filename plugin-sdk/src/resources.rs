//! Resource arithmetic as kube-scheduler does it: pod requests from
//! containers, and the integer `Resources` filters compare.

use crate::quantity::Quantity;
use std::collections::BTreeMap;

/// A Kubernetes `ResourceList`: resource name to quantity.
pub type ResourceList = BTreeMap<String, Quantity>;

/// kube-scheduler's `framework.Resource`: integers in the units filters use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// Millicores.
    pub milli_cpu: i64,
    /// Bytes.
    pub memory: i64,
    /// Bytes.
    pub ephemeral_storage: i64,
    /// The `pods` resource (meaningful in allocatable).
    pub allowed_pod_number: i64,
    /// Extended resources, hugepages and attachable volumes, sorted by name.
    pub scalar: Vec<(String, i64)>,
}

impl Resources {
    /// Converts a resource list as `framework.Resource.Add` does: cpu in
    /// millicores, others in whole units, names that are not "scalar"
    /// resources (e.g. a bare `foo`) dropped.
    pub fn from_list(list: &ResourceList) -> Resources {
        let mut r = Resources::default();
        for (name, q) in list {
            match name.as_str() {
                "cpu" => r.milli_cpu += q.milli_value(),
                "memory" => r.memory += q.value(),
                "ephemeral-storage" => r.ephemeral_storage += q.value(),
                "pods" => r.allowed_pod_number += q.value(),
                _ if is_scalar_resource_name(name) => r.scalar.push((name.clone(), q.value())),
                _ => {}
            }
        }
        r
    }

    /// The amount of a scalar resource, 0 when absent.
    pub fn scalar(&self, name: &str) -> i64 {
        // Names share long prefixes (`example.com/...`) and a component's
        // memcmp is a byte loop: a short list is scanned, rejecting on
        // length and last byte before comparing.
        if self.scalar.len() <= 8 {
            let last = name.as_bytes().last();
            return self
                .scalar
                .iter()
                .find(|(n, _)| n.len() == name.len() && n.as_bytes().last() == last && n == name)
                .map_or(0, |(_, v)| *v);
        }
        self.scalar
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .map(|i| self.scalar[i].1)
            .unwrap_or(0)
    }

    /// Adds `other` into `self` (summing the requests of bound pods).
    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_add(other.ephemeral_storage);
        self.allowed_pod_number = self
            .allowed_pod_number
            .saturating_add(other.allowed_pod_number);
        for (name, amount) in &other.scalar {
            match self.scalar.binary_search_by(|(n, _)| n.cmp(name)) {
                Ok(i) => self.scalar[i].1 = self.scalar[i].1.saturating_add(*amount),
                Err(i) => self.scalar.insert(i, (name.clone(), *amount)),
            }
        }
    }

    /// True when nothing is requested (the early exit of NodeResourcesFit).
    pub fn is_empty_request(&self) -> bool {
        self.milli_cpu == 0
            && self.memory == 0
            && self.ephemeral_storage == 0
            && self.scalar.is_empty()
    }
}

/// One init container's requests and whether it is a restartable
/// ("sidecar", `restartPolicy: Always`) init container.
#[derive(Clone, Debug, Default)]
pub struct InitContainer {
    pub requests: ResourceList,
    pub restartable: bool,
}

/// What [`pod_requests`] reads from a pod spec.
#[derive(Clone, Debug, Default)]
pub struct PodResourceSpec {
    pub containers: Vec<ResourceList>,
    pub init_containers: Vec<InitContainer>,
    /// `spec.resources.requests` (pod-level resources), if set.
    pub pod_level: Option<ResourceList>,
    /// `spec.overhead`.
    pub overhead: ResourceList,
}

/// A pod's effective requests, as `resourcehelper.PodRequests` computes them:
/// regular containers and restartable init containers run together; each
/// regular init container runs alone beside the sidecars started before it;
/// the pod needs the larger of the two phases, per resource. Pod-level
/// requests then replace the aggregate for cpu, memory and hugepages, and
/// pod overhead is added.
pub fn pod_requests(spec: &PodResourceSpec) -> ResourceList {
    let mut reqs = ResourceList::new();
    for c in &spec.containers {
        add_into(&mut reqs, c);
    }
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for init in &spec.init_containers {
        let phase = if init.restartable {
            add_into(&mut reqs, &init.requests);
            add_into(&mut sidecars, &init.requests);
            sidecars.clone()
        } else {
            let mut phase = init.requests.clone();
            add_into(&mut phase, &sidecars);
            phase
        };
        max_into(&mut init_peak, &phase);
    }
    max_into(&mut reqs, &init_peak);
    if let Some(pod_level) = &spec.pod_level {
        for (name, q) in pod_level {
            if is_supported_pod_level_resource(name) {
                reqs.insert(name.clone(), *q);
            }
        }
    }
    add_into(&mut reqs, &spec.overhead);
    reqs
}

fn add_into(into: &mut ResourceList, from: &ResourceList) {
    for (name, q) in from {
        let slot = into.entry(name.clone()).or_default();
        *slot = slot.saturating_add(*q);
    }
}

fn max_into(into: &mut ResourceList, from: &ResourceList) {
    for (name, q) in from {
        let slot = into.entry(name.clone()).or_default();
        if *q > *slot {
            *slot = *q;
        }
    }
}

/// Resources a pod may request at pod level (`spec.resources`).
pub fn is_supported_pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || is_hugepage_resource_name(name)
}

/// `hugepages-<size>`.
pub fn is_hugepage_resource_name(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// `attachable-volumes-<driver>`.
pub fn is_attachable_volume_resource_name(name: &str) -> bool {
    name.starts_with("attachable-volumes-")
}

/// A name in the `kubernetes.io/` namespace, e.g. `kubernetes.io/foo`.
pub fn is_prefixed_native_resource(name: &str) -> bool {
    name.contains("kubernetes.io/")
}

/// Native resources: unqualified names (`cpu`) and `kubernetes.io/` ones.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || is_prefixed_native_resource(name)
}

/// An extended resource such as `nvidia.com/gpu`: domain-qualified, not in
/// the `kubernetes.io/` namespace, and a valid qualified name once prefixed
/// with `requests.` (as quota would name it).
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}"))
}

/// kube-scheduler's "scalar" resources: extended, hugepages, prefixed native
/// and attachable volumes.
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || is_hugepage_resource_name(name)
        || is_prefixed_native_resource(name)
        || is_attachable_volume_resource_name(name)
}

/// Kubernetes' qualified name: an optional DNS-subdomain prefix and `/`,
/// then 1-63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric.
fn is_qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if p.is_empty() || p.len() > 253 || !p.split('.').all(label_ok) {
            return false;
        }
    }
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| alnum(b) || b == b'-' || b == b'_' || b == b'.')
        && alnum(name.as_bytes()[0])
        && alnum(name.as_bytes()[name.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn containers_sum_init_containers_max() {
        let spec = PodResourceSpec {
            containers: vec![list(&[("cpu", "1")]), list(&[("cpu", "2")])],
            init_containers: vec![InitContainer {
                requests: list(&[("cpu", "5"), ("memory", "1Gi")]),
                restartable: false,
            }],
            ..Default::default()
        };
        let r = Resources::from_list(&pod_requests(&spec));
        assert_eq!(r.milli_cpu, 5000);
        assert_eq!(r.memory, 1 << 30);
    }

    #[test]
    fn sidecars_run_alongside_everything_after_them() {
        // sidecar 1 cpu; then a regular init of 2 cpu runs beside it (3);
        // then containers 1 cpu run beside the sidecar (2). Peak is 3.
        let spec = PodResourceSpec {
            containers: vec![list(&[("cpu", "1")])],
            init_containers: vec![
                InitContainer {
                    requests: list(&[("cpu", "1")]),
                    restartable: true,
                },
                InitContainer {
                    requests: list(&[("cpu", "2")]),
                    restartable: false,
                },
            ],
            ..Default::default()
        };
        assert_eq!(Resources::from_list(&pod_requests(&spec)).milli_cpu, 3000);
    }

    #[test]
    fn pod_level_overrides_then_overhead_adds() {
        let spec = PodResourceSpec {
            containers: vec![list(&[("cpu", "1"), ("example.com/gpu", "1")])],
            pod_level: Some(list(&[("cpu", "3"), ("example.com/gpu", "9")])),
            overhead: list(&[("cpu", "250m")]),
            ..Default::default()
        };
        let r = Resources::from_list(&pod_requests(&spec));
        assert_eq!(r.milli_cpu, 3250);
        assert_eq!(r.scalar("example.com/gpu"), 1, "not a pod-level resource");
    }

    #[test]
    fn scalar_classification() {
        assert!(is_extended_resource_name("nvidia.com/gpu"));
        assert!(!is_extended_resource_name("kubernetes.io/foo"));
        assert!(!is_extended_resource_name("cpu"));
        assert!(is_scalar_resource_name("hugepages-2Mi"));
        assert!(is_scalar_resource_name("attachable-volumes-aws-ebs"));
        assert!(is_scalar_resource_name("kubernetes.io/foo"));
        assert!(!is_scalar_resource_name("foo"));
        let r = Resources::from_list(&list(&[("foo", "3"), ("example.com/bar", "2")]));
        assert_eq!(r.scalar, vec![("example.com/bar".to_string(), 2)]);
    }

    #[test]
    fn add_merges_scalars_sorted() {
        let mut a = Resources::from_list(&list(&[("b.io/x", "1"), ("cpu", "1")]));
        a.add(&Resources::from_list(&list(&[
            ("a.io/y", "2"),
            ("b.io/x", "3"),
        ])));
        assert_eq!(a.scalar("b.io/x"), 4);
        assert_eq!(a.scalar("a.io/y"), 2);
        assert_eq!(a.scalar[0].0, "a.io/y");
        assert_eq!(a.milli_cpu, 1000);
    }
}

/// CPU and memory as kube-scheduler's scoring counts them
/// (`NonZeroRequested`): a container that does not request cpu counts
/// 100m, one that does not request memory 200 MiB, so that pods without
/// requests still spread (`resourcehelper.PodRequests` with
/// `NonMissingContainerRequests`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonZero {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl NonZero {
    /// kube-scheduler's `DefaultMilliCPURequest`.
    pub const DEFAULT_MILLI_CPU: i64 = 100;
    /// kube-scheduler's `DefaultMemoryRequest` (200 MiB).
    pub const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

    pub fn add(&mut self, other: &NonZero) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
    }
}
