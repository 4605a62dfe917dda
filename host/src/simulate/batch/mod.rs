//! `sift simulate --mode batch`: Volcano's scheduler (v1.11; kube-batch
//! v0.5 before it) over the same workload, clock, cluster state and
//! report as the scheduler mode.
//!
//! Every `schedulePeriod` of simulated time ([`scheduler`]) a **session**
//! opens over the cluster as it is: jobs (PodGroups; a pod without
//! `scheduling.k8s.io/group-name` is a job of one), their tasks (pods),
//! queues and nodes, snapshotted from the [`cache`] ([`framework`]). The
//! configured **actions** run in order ([`actions`]): `allocate` places
//! whole gangs or nothing, `backfill` places best-effort pods. The
//! **plugins** of the tiers order queues, jobs and tasks and judge jobs
//! ([`plugins`]); `predicates` runs sift's filter plugins after the
//! idle-resource check ([`idle_fit`]), `nodeorder` its score plugins
//! ([`predicates`]). At [`close`], gang writes each PodGroup's condition,
//! the job's phase follows, and pods not bound carry Volcano's message.
//!
//! The layout is Volcano's `pkg/scheduler`, and so is the direction of its
//! imports: plugins and actions use the framework, never the reverse; the
//! framework receives the plugins built from a registry ([`plugins`] fills
//! it), and this file only wires the pieces together.
//!
//! Where kube-batch v0.5 and Volcano differ, sift follows Volcano: v0.5
//! has no Statement, so a gang that never becomes ready keeps its
//! tentative placements (hiding capacity) for the rest of the session;
//! here they are discarded at once. Deterministic rules where upstream is
//! random: ties between best nodes go to the first in node order (or a
//! seeded choice), the predicate scan order is the node order, and the
//! "origin" task of a FitError is the first by name. Sessions in which
//! nothing could change (no arrival or departure since a session that
//! bound nothing) are skipped: upstream they would only advance the
//! predicate scan's start node.

pub mod actions;
pub mod cache;
pub mod close;
pub mod error_cache;
pub mod framework;
pub mod idle_fit;
pub mod job;
pub mod node_rule;
pub mod plugins;
pub mod pod_number;
pub mod predicates;
pub mod resource;
pub mod scheduler;

pub use cache::BatchInput;
pub use predicates::{Schedulers, schedulers};
pub use scheduler::Options;

use super::Progress;
use super::report::{Outputs, Report};
use crate::cluster::ClusterState;
use crate::config::batch::Session as SessionConfig;
use crate::simulate::clock::Clock;
use anyhow::Result;

/// Replays the workload `events` (read as it goes) over `cluster` in
/// sessions; the report's pods and samples go to `outputs`. The session
/// loop gets every plugin sift implements through their registry.
#[allow(clippy::too_many_arguments)]
pub fn run(
    schedulers: &mut Schedulers,
    cluster: ClusterState,
    input: &BatchInput,
    events: &mut dyn Clock,
    config: &SessionConfig,
    options: &Options,
    outputs: Outputs,
    progress: &mut dyn Progress,
) -> Result<Report> {
    scheduler::run(
        schedulers,
        &plugins::registry(),
        cluster,
        input,
        events,
        config,
        options,
        outputs,
        progress,
    )
}
