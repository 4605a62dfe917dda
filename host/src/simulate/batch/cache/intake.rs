//! Which pods batch mode takes (the cache's `responsibleForPod` and
//! scheduler names) and what status a pod's task starts with.

use super::super::job::TaskStatus;
use crate::input::kube;
use crate::input::volcano;
use k8s_openapi::api::core::v1 as k8s;

/// Scheduler names batch mode takes when none is configured.
const BATCH_SCHEDULERS: [&str; 3] = [kube::DEFAULT_SCHEDULER_NAME, "volcano", "kube-batch"];

/// Which pods are batch mode's.
pub struct Intake {
    scheduler_name: Option<String>,
}

impl Intake {
    /// Takes pods of `scheduler_name`, or (`None`) of the batch schedulers.
    pub fn new(scheduler_name: Option<String>) -> Intake {
        Intake { scheduler_name }
    }

    /// A pending pod is scheduled when its `spec.schedulerName` is the
    /// configured one, or (none configured) `volcano`, `kube-batch` or
    /// `default-scheduler` (so kubectl dumps and traces need no edit).
    /// Pods with scheduling gates are tasks too; allocate skips them.
    pub fn skips_pending(&self, pod: &k8s::Pod) -> Option<kube::SkipReason> {
        let name = kube::scheduler_name(pod);
        let ours = match &self.scheduler_name {
            Some(n) => name == n,
            None => BATCH_SCHEDULERS.contains(&name),
        };
        match kube::not_for_scheduler(pod, name) {
            Some(kube::SkipReason::Gated) | None if ours => None,
            Some(why) => Some(why),
            None => Some(kube::SkipReason::OtherScheduler),
        }
    }

    /// A placed (or finished) pod is a task of a job when it names a
    /// PodGroup or a batch scheduler: Volcano never makes jobs of other
    /// schedulers' pods (kube-system's, say), which only hold resources.
    pub fn owns_placed(&self, pod: &k8s::Pod) -> bool {
        let grouped = pod
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(volcano::GROUP_NAME_ANNOTATION));
        let name = kube::scheduler_name(pod);
        grouped
            || match &self.scheduler_name {
                Some(n) => name == n,
                None => name == "volcano" || name == "kube-batch",
            }
    }
}

/// A pod's task status (Volcano's `getTaskStatus`, without the
/// terminating states sift does not model).
pub fn status_of(pod: &k8s::Pod) -> TaskStatus {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    match phase {
        Some("Succeeded") => TaskStatus::Succeeded,
        Some("Failed") => TaskStatus::Failed,
        Some("Running") if kube::bound_node(pod).is_some() => TaskStatus::Running,
        _ if kube::bound_node(pod).is_some() => TaskStatus::Bound,
        _ => TaskStatus::Pending,
    }
}
