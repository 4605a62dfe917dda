//! Batch-scheduling objects: Volcano's `scheduling.volcano.sh/v1beta1`
//! PodGroup and Queue (kube-batch's `scheduling.incubator.k8s.io/v1alpha1`
//! spells them the same), as `kubectl get -o json|yaml` prints them. Only
//! the fields batch mode uses are typed; every other field is accepted and
//! ignored.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The annotation a pod joins its PodGroup by.
pub const GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";
/// The annotation (or label) naming a pod's role in its job (Volcano's
/// `batch.TaskSpecKey`), which `minTaskMember` counts by.
pub const TASK_SPEC_KEY: &str = "volcano.sh/task-spec";
/// The annotation naming the queue of a pod without a PodGroup (Volcano's
/// PodGroup controller reads it).
pub const QUEUE_NAME_ANNOTATION: &str = "scheduling.volcano.sh/queue-name";
/// The annotation overriding a task's priority within its job.
pub const TASK_PRIORITY_ANNOTATION: &str = "volcano.sh/task-priority";
/// The queue jobs go to when they name none (Volcano creates it).
pub const DEFAULT_QUEUE: &str = "default";

/// `scheduling.volcano.sh/v1beta1`: the group and version both CRDs are
/// served at, for the API server watch (kube-rs reads a kind's path from
/// its `Resource`).
macro_rules! volcano_resource {
    ($t:ty, $kind:literal, $plural:literal, $scope:ty) => {
        impl kube::Resource for $t {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                "scheduling.volcano.sh".into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                "v1beta1".into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

volcano_resource!(
    PodGroup,
    "PodGroup",
    "podgroups",
    k8s_openapi::NamespaceResourceScope
);
volcano_resource!(Queue, "Queue", "queues", k8s_openapi::ClusterResourceScope);

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroup {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodGroupSpec,
    #[serde(default)]
    pub status: PodGroupStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    /// Tasks that must be placed together (the gang); 0 when unset (the
    /// field is `omitempty`: kubectl leaves out a 0).
    pub min_member: Option<i32>,
    /// Per role (`volcano.sh/task-spec`), the tasks that must be placed.
    #[serde(default, deserialize_with = "crate::input::extender::null_as_default")]
    pub min_task_member: BTreeMap<String, i32>,
    pub queue: Option<String>,
    pub priority_class_name: Option<String>,
    /// Accepted; used by the enqueue action, which sift does not run.
    pub min_resources: Option<BTreeMap<String, Quantity>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupStatus {
    /// Pending, Inqueue, Running, Unknown, Completed (empty = Pending).
    pub phase: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Queue {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: QueueSpec,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueSpec {
    /// Share weight for proportion; 1 when unset or 0 (the CRD default,
    /// and Volcano's admission webhook sets a 0 weight to 1).
    pub weight: Option<i32>,
    /// Upper bound of the queue's resources (proportion's capability).
    #[serde(default, deserialize_with = "crate::input::extender::null_as_default")]
    pub capability: BTreeMap<String, Quantity>,
    #[serde(default)]
    pub guarantee: Guarantee,
    /// Higher first in proportion's queue order.
    pub priority: Option<i32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Guarantee {
    #[serde(default, deserialize_with = "crate::input::extender::null_as_default")]
    pub resource: BTreeMap<String, Quantity>,
}

impl PodGroup {
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or("default"),
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }

    pub fn min_member(&self) -> i32 {
        self.spec.min_member.unwrap_or(0)
    }

    pub fn queue(&self) -> &str {
        match self.spec.queue.as_deref() {
            Some(q) if !q.is_empty() => q,
            _ => DEFAULT_QUEUE,
        }
    }
}

impl Queue {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The weight as Volcano's admission leaves it: unset or 0 is 1, so a
    /// queue with weight 0 shares like one of weight 1 instead of starving.
    pub fn weight(&self) -> i32 {
        match self.spec.weight {
            None | Some(0) => 1,
            Some(w) => w,
        }
    }
}
