//! NodeResourcesFit: the pod's requests must fit in what the node has left,
//! and the node must have room for one more pod.
//!
//! A request larger than the node's whole allocatable can never fit there,
//! so it is UnschedulableAndUnresolvable; otherwise Unschedulable (evicting
//! pods could make room).

use serde::Deserialize;
use sift_sdk::resources::is_extended_resource_name;
use sift_sdk::{
    Args, ClusterView, Code, Node, NodeFields, Pod, Predicate, Prepare, Status, export_predicate,
};
use std::borrow::Cow;
use std::collections::BTreeSet;

pub struct NodeResourcesFit {
    ignored_resources: BTreeSet<String>,
    ignored_resource_groups: BTreeSet<String>,
}

/// `NodeResourcesFitArgs` of KubeSchedulerConfiguration. Scoring fields
/// are accepted and ignored: sift only filters.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FitArgs {
    #[serde(default)]
    ignored_resources: Vec<String>,
    #[serde(default)]
    ignored_resource_groups: Vec<String>,
    #[allow(dead_code)]
    scoring_strategy: Option<serde::de::IgnoredAny>,
}

/// One resource the node lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsufficientResource {
    pub reason: Cow<'static, str>,
    /// More than the node's whole allocatable.
    pub unresolvable: bool,
}

impl Predicate for NodeResourcesFit {
    const NAME: &'static str = "NodeResourcesFit";
    const NODE_FIELDS: NodeFields = NodeFields::RESOURCES;
    type PodState = ();

    fn new(args: Args) -> Result<Self, String> {
        let args: FitArgs = args.parse()?;
        Ok(NodeResourcesFit {
            ignored_resources: args.ignored_resources.into_iter().collect(),
            ignored_resource_groups: args.ignored_resource_groups.into_iter().collect(),
        })
    }

    fn prepare(&self, _: &Pod, _cluster: &dyn ClusterView) -> Prepare<()> {
        Prepare::Proceed(())
    }

    fn filter(&self, pod: &Pod, _: &(), node: &Node) -> Status {
        let insufficient = self.insufficient_resources(pod, node);
        if insufficient.is_empty() {
            return Status::success();
        }
        let code = if insufficient.iter().any(|r| r.unresolvable) {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::new(code, insufficient.into_iter().map(|r| r.reason))
    }
}

impl NodeResourcesFit {
    /// kube-scheduler's `fitsRequest`: pod count, then cpu, memory,
    /// ephemeral storage, then scalar resources by name.
    pub fn insufficient_resources(&self, pod: &Pod, node: &Node) -> Vec<InsufficientResource> {
        let mut out = Vec::new();
        let alloc = &node.allocatable;
        let used = &node.requested;
        if i64::from(node.pod_count) + 1 > alloc.allowed_pod_number {
            out.push(InsufficientResource {
                reason: Cow::Borrowed("Too many pods"),
                unresolvable: false,
            });
        }
        let req = &pod.requests;
        if req.is_empty_request() {
            return out;
        }
        let mut check = |reason: &'static str, want: i64, allocatable: i64, requested: i64| {
            if want > 0 && want > allocatable.saturating_sub(requested) {
                out.push(InsufficientResource {
                    reason: Cow::Borrowed(reason),
                    unresolvable: want > allocatable,
                });
            }
        };
        check(
            "Insufficient cpu",
            req.milli_cpu,
            alloc.milli_cpu,
            used.milli_cpu,
        );
        check("Insufficient memory", req.memory, alloc.memory, used.memory);
        check(
            "Insufficient ephemeral-storage",
            req.ephemeral_storage,
            alloc.ephemeral_storage,
            used.ephemeral_storage,
        );
        for (name, want) in &req.scalar {
            if *want == 0 || self.is_ignored(name) {
                continue;
            }
            let allocatable = alloc.scalar(name);
            if *want > allocatable.saturating_sub(used.scalar(name)) {
                out.push(InsufficientResource {
                    reason: Cow::Owned(format!("Insufficient {name}")),
                    unresolvable: *want > allocatable,
                });
            }
        }
        out
    }

    fn is_ignored(&self, name: &str) -> bool {
        if !is_extended_resource_name(name) {
            return false;
        }
        let group = name.split('/').next().unwrap_or_default();
        self.ignored_resources.contains(name) || self.ignored_resource_groups.contains(group)
    }
}

export_predicate!(NodeResourcesFit);
