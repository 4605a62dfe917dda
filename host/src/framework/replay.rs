//! A built [`Framework`] over a workload, in simulation: the workload's
//! virtual clock and in-memory binds. kube-scheduler's loop
//! ([`simulate::run`]) or Volcano's sessions ([`batch::run`]), one report
//! either way; `sift simulate` and simulation cases both come through here.

use super::{Framework, Runner};
use crate::cluster::ClusterState;
use crate::input::Objects;
use crate::input::workload::Events;
use crate::simulate::api::InMemory;
use crate::simulate::report::{Outputs, Report};
use crate::simulate::{self, Progress, batch};
use anyhow::{Result, bail};
use k8s_openapi::api::core::v1 as k8s;

/// How a replay runs, beyond the framework.
#[derive(Debug, Default)]
pub struct Settings {
    /// Scheduler mode: one attempt per pod (the FGD paper's replay).
    pub no_retry: bool,
    /// Scheduler mode: the pod (namespace/name) whose last attempt is
    /// explained.
    pub explain: Option<String>,
    /// Batch mode: stop after this many sessions.
    pub max_sessions: Option<u32>,
}

/// Replays `events` over `cluster`. `batch` holds what batch mode reads
/// besides the cluster state (PodGroups, Queues, PriorityClasses, the
/// bound pods as running tasks); scheduler mode ignores it.
#[allow(clippy::too_many_arguments)]
pub fn run(
    framework: &mut Framework,
    cluster: ClusterState,
    batch_input: &batch::BatchInput,
    events: &mut Events,
    settings: &Settings,
    outputs: Outputs,
    progress: &mut dyn Progress,
) -> Result<Report> {
    let scheduler_name = framework.scheduler_name().to_string();
    match &mut framework.runner {
        Runner::Scheduler(scheduler) => {
            let options = simulate::Options {
                no_retry: settings.no_retry,
                explain: settings.explain.clone(),
                scheduler_name: Some(scheduler_name),
            };
            let mut api = InMemory;
            simulate::run(
                scheduler, cluster, events, &mut api, &options, outputs, progress,
            )
        }
        Runner::Batch(b) => {
            let (schedulers, session) = &mut **b;
            let options = batch::Options {
                max_sessions: settings.max_sessions,
                scheduler_name: framework.configured_name.clone(),
            };
            batch::run(
                schedulers,
                cluster,
                batch_input,
                events,
                session,
                &options,
                outputs,
                progress,
            )
        }
        Runner::Filter(_) => bail!("a filter-only framework cannot replay a workload"),
    }
}

/// What batch mode reads from cluster objects besides the cluster state:
/// their PodGroups, Queues and PriorityClasses, and `bound` as the running
/// tasks of their jobs.
pub fn batch_input(objects: &Objects, bound: Vec<k8s::Pod>) -> batch::BatchInput {
    batch::BatchInput {
        pod_groups: objects.pod_groups.iter().map(|(o, _)| o.clone()).collect(),
        queues: objects.queues.iter().map(|(o, _)| o.clone()).collect(),
        priority_classes: objects
            .priority_classes
            .iter()
            .map(|(o, _)| o.clone())
            .collect(),
        bound_pods: bound,
    }
}
